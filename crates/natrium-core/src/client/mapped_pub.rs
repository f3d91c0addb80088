//! A client's publish in an account with subject mappings: the subject is mapped first, as Go
//! maps it before the publish permission check and delivery (both see the new subject; the
//! pedantic subject check saw the original). A message whose weighted draw finds no
//! destination goes on, as in Go, with an empty subject that reaches nobody.

use nats_subject::Mapped;

use super::{Conn, Next};
use crate::deliver::Message;

impl Conn {
    /// [`Conn::on_pub`]'s rest when the account has mappings.
    pub(super) fn on_mapped_pub(&mut self, msg: &Message<'_>) -> Next {
        let mut subject = std::mem::take(&mut self.mapped_subject);
        let next = match self.account.map_subject(msg.subject, &mut subject) {
            Mapped::Unmatched => self.route_pub(msg, None),
            Mapped::To => {
                if self.trace {
                    tracing::trace!(
                        "{} - <<- [MAPPING {} -> {}]",
                        self.handle.log_prefix(),
                        String::from_utf8_lossy(msg.subject),
                        String::from_utf8_lossy(&subject)
                    );
                }
                let mapped = Message {
                    subject: &subject,
                    ..*msg
                };
                self.route_pub(&mapped, Some(msg.subject))
            }
            Mapped::Dropped => {
                // Go goes on with an empty subject: a publish allow list refuses it, otherwise
                // it is acknowledged, counted and delivered nowhere.
                if self.perms.can_publish(b"", &self.handle) {
                    self.ok();
                    self.handle.add_in(
                        1,
                        (msg.headers.map_or(0, <[u8]>::len) + msg.payload.len()) as u64,
                    );
                } else {
                    self.publish_violation(b"");
                }
                Next::Continue
            }
        };
        self.mapped_subject = subject;
        next
    }
}

//! A client's publish whose headers may ask for message tracing (`crate::deliver::trace`):
//! the trace is set up before the publish permission is checked, as Go does, so that a
//! refused publish is reported with its error; the finished event goes to the system
//! services, which publish it in the client's account.

use std::sync::Arc;

use super::{go_quote, Conn, Next};
use crate::deliver::trace::{self, MsgTracer, TracePlan};
use crate::deliver::Message;
use crate::events::ServerEvent;

impl Conn {
    /// [`Conn::on_pub`]'s rest for a message whose headers mention tracing; `mapped_from` is
    /// the subject as published when a subject mapping changed it (Go traces the message's
    /// arrival on it, then the mapping).
    #[cold]
    pub(super) fn on_traced_pub(&mut self, msg: &Message<'_>, mapped_from: Option<&[u8]>) -> Next {
        let block = msg.headers.unwrap_or_default();
        let tracer = match trace::plan(block, &self.account, &self.handle) {
            TracePlan::Untraced => None,
            TracePlan::Skip => return Next::Continue,
            TracePlan::Disable => {
                let headers = trace::disabled_headers(msg.headers);
                let msg = Message {
                    headers: Some(&headers),
                    ..*msg
                };
                return self.publish_checked(&msg, None);
            }
            TracePlan::Trace(intent) => {
                let system = Arc::ptr_eq(&self.account, &self.server.system_account());
                if !self.may_trace_to(intent.dest.as_bytes(), system) {
                    // The message is dropped with the destination's violation, as in Go.
                    self.publish_violation(intent.dest.as_bytes());
                    return Next::Continue;
                }
                let size = block.len() + msg.payload.len();
                let account = (Arc::clone(&self.account), system);
                let arrived_on = mapped_from.unwrap_or(msg.subject);
                let mut tracer = MsgTracer::new(*intent, account, &self.handle, arrived_on, size);
                if mapped_from.is_some() {
                    tracer.subject_mapped(msg.subject);
                }
                Some(tracer)
            }
        };
        self.publish_checked(msg, tracer)
    }

    /// Whether this client (in the system account or not) may have trace events published on
    /// `dest`.
    fn may_trace_to(&mut self, dest: &[u8], system: bool) -> bool {
        !trace::dest_reserved(dest, system) && self.perms.can_publish(dest, &self.handle)
    }

    /// The publish permission check and the publish, with `tracer` recording both.
    fn publish_checked(&mut self, msg: &Message<'_>, tracer: Option<Box<MsgTracer>>) -> Next {
        if !self.perms.can_publish(msg.subject, &self.handle) {
            self.publish_violation(msg.subject);
            if let Some(mut tracer) = tracer {
                tracer.set_ingress_error(format!(
                    "Permissions Violation for Publish to {}",
                    go_quote(msg.subject)
                ));
                self.send_trace(*tracer);
            }
            return Next::Continue;
        }
        self.ok();
        match tracer {
            None => {
                self.publisher.publish(&self.account, msg);
            }
            Some(tracer) => {
                if let Some(tracer) = self.publisher.publish_traced(&self.account, msg, tracer) {
                    self.send_trace(*tracer);
                }
            }
        }
        self.handle.add_in(
            1,
            (msg.headers.map_or(0, <[u8]>::len) + msg.payload.len()) as u64,
        );
        Next::Continue
    }

    /// An `HPUB` refused for its size, whose header block (as far as it was read) asks for a
    /// trace: Go reports the refusal to the trace destination before closing.
    #[cold]
    pub(super) fn trace_refused_payload(&mut self, op: &[u8]) {
        let Some((subject, header_len, total)) = hpub_args(op) else {
            return;
        };
        let after = memchr::memmem::find(op, b"\r\n")
            .map_or(&[][..], |at| op.get(at + 2..).unwrap_or_default());
        let block = after.get(..header_len).unwrap_or(after);
        if header_len == 0 || !trace::may_trace(block, self.account.traces_parent()) {
            return;
        }
        let TracePlan::Trace(intent) = trace::plan(block, &self.account, &self.handle) else {
            return;
        };
        let system = Arc::ptr_eq(&self.account, &self.server.system_account());
        if !self.may_trace_to(intent.dest.as_bytes(), system) {
            self.publish_violation(intent.dest.as_bytes());
            return;
        }
        let account = (Arc::clone(&self.account), system);
        let mut tracer = MsgTracer::new(*intent, account, &self.handle, subject, total);
        tracer.set_ingress_error("maximum payload exceeded".to_owned());
        self.send_trace(*tracer);
    }

    fn send_trace(&self, tracer: MsgTracer) {
        let events = &self.server.shared.events;
        if events.is_listened() {
            events.emit(ServerEvent::MsgTrace(std::sync::Arc::new(
                tracer.into_report(),
            )));
        }
    }
}

/// The subject, header size and total size of an `HPUB` control line at the start of `op`.
fn hpub_args(op: &[u8]) -> Option<(&[u8], usize, usize)> {
    let line = op.get(..memchr::memmem::find(op, b"\r\n")?)?;
    let mut args = line
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|a| !a.is_empty());
    if !args.next()?.eq_ignore_ascii_case(b"HPUB") {
        return None;
    }
    let args: Vec<&[u8]> = args.collect();
    let number = |a: &[u8]| std::str::from_utf8(a).ok()?.parse::<usize>().ok();
    match args.as_slice() {
        [subject, .., header_len, total] if args.len() >= 3 => {
            Some((subject, number(header_len)?, number(total)?))
        }
        _ => None,
    }
}

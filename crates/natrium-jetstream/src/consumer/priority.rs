//! Priority groups (ADR-42) as Go applies them to waiting pull requests: `overflow` serves a
//! request that set `min_pending` / `min_ack_pending` only once the consumer is that far
//! behind; `pinned_client` pins the group to one requester (its messages carry
//! `Nats-Pin-Id`, others get `423`) until it makes no request for `priority_timeout` or an
//! UNPIN; `prioritized` orders the queue by `priority` (in `super::pull`). Pure: times are
//! Unix nanoseconds passed in.

use serde::Serialize;

use super::config::PriorityPolicy;
use super::pull::{PriorityGroup, Waiting};

/// The header naming the pin on a pinned client's messages (Go's `JSPullRequestNatsPinId`).
pub const PIN_ID: &str = "Nats-Pin-Id";

/// The current pin of a `pinned_client` consumer (Go keeps one for the first group).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pin {
    /// Empty when nobody is pinned.
    pub id: String,
    /// Unix nanoseconds of the pinning.
    pub ts: i64,
    /// When the pin lapses unless its client asks again; 0 when not pinned.
    pub deadline: i64,
    /// The group the pinned request named.
    pub group: String,
}

impl Pin {
    pub fn is_set(&self) -> bool {
        !self.id.is_empty()
    }

    pub fn clear(&mut self) {
        *self = Pin::default();
    }

    /// Pins a new id (Go's `nuid`: 22 base-62 characters) for `ttl` nanoseconds.
    pub fn assign(&mut self, now: i64, ttl: i64, group: &str) {
        self.id = natrium_core::events::event_id();
        self.ts = now;
        self.deadline = now.saturating_add(ttl);
        group.clone_into(&mut self.group);
    }

    /// The lapse time, while pinned.
    pub fn due(&self) -> Option<i64> {
        self.is_set().then_some(self.deadline)
    }
}

/// A new request's check against the pin (Go's, on arrival): the pinned client's request
/// keeps the pin another `ttl`; another pin id is refused.
///
/// # Errors
/// The status text (`423 Nats-Pin-Id mismatch`).
pub fn on_arrival(pin: &mut Pin, group: &PriorityGroup, ttl: i64, now: i64) -> Result<(), String> {
    if !pin.is_set() {
        return Ok(());
    }
    if group.id == pin.id {
        pin.deadline = now.saturating_add(ttl);
        Ok(())
    } else if group.id.is_empty() {
        Ok(())
    } else {
        Err("423 Nats-Pin-Id mismatch".to_owned())
    }
}

/// What to do with the head request of the wait queue for the next message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// It takes the message (`true` when it was just pinned).
    Serve(bool),
    /// It waits: to the back of the queue.
    Cycle,
    /// It holds a pin id that is not the current one: `423 Nats-Wrong-Pin-Id`, removed.
    WrongPin,
}

/// Go's priority checks at the head of the queue: `npc` is the count of messages left to
/// deliver including this one, `ack_pending` the messages pending acks.
pub fn admit(
    policy: PriorityPolicy,
    pin: &mut Pin,
    ttl: i64,
    head: &Waiting,
    (npc, ack_pending): (u64, usize),
    now: i64,
) -> Admit {
    let group = head.group.as_ref();
    let id = group.map_or("", |g| g.id.as_str());
    let mut pinned = false;
    if policy == PriorityPolicy::PinnedClient {
        if !pin.is_set() {
            if !id.is_empty() {
                return Admit::WrongPin;
            }
            // Go pins only a request that names its group.
            if let Some(g) = group.filter(|g| !g.group.is_empty()) {
                pin.assign(now, ttl, &g.group);
                pinned = true;
            }
        } else if id.is_empty() {
            return Admit::Cycle;
        } else if id != pin.id {
            return Admit::WrongPin;
        }
    }
    if policy == PriorityPolicy::Overflow {
        if let Some(g) = group {
            let waits = g.min_pending > 0 || g.min_ack_pending > 0;
            let behind = (g.min_pending > 0
                && u64::try_from(g.min_pending).is_ok_and(|m| m <= npc))
                || (g.min_ack_pending > 0
                    && usize::try_from(g.min_ack_pending).is_ok_and(|m| m <= ack_pending));
            if waits && !behind {
                return Admit::Cycle;
            }
        }
    }
    Admit::Serve(pinned)
}

/// Go's `consumer_group_pinned` (with `pinned_id`) and `consumer_group_unpinned` (with
/// `reason`) advisories, after the typed-event fields.
#[derive(Serialize)]
pub struct PinAdvisory<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    pub account: &'a str,
    pub stream: &'a str,
    pub consumer: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub domain: &'a str,
    pub group: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
}

/// `headers` (a stored header block, maybe empty) with `Nats-Pin-Id: <id>` added.
pub fn with_pin_header(headers: &[u8], id: &str) -> Vec<u8> {
    let mut block = Vec::with_capacity(headers.len() + id.len() + 32);
    match headers.len() {
        n if n > 2 => block.extend_from_slice(headers.get(..n - 2).unwrap_or_default()),
        _ => block.extend_from_slice(b"NATS/1.0\r\n"),
    }
    block.extend_from_slice(format!("{PIN_ID}: {id}\r\n\r\n").as_bytes());
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumer::pull::NextRequest;

    fn waiting(group: PriorityGroup) -> Waiting {
        let req = NextRequest {
            batch: 1,
            group: Some(group),
            ..NextRequest::default()
        };
        Waiting::new("r", &req, 0)
    }

    fn grouped(id: &str) -> PriorityGroup {
        PriorityGroup {
            group: "A".into(),
            id: id.into(),
            ..PriorityGroup::default()
        }
    }

    #[test]
    fn consumer_priority_pins_first_and_refuses_others() {
        let policy = PriorityPolicy::PinnedClient;
        let mut pin = Pin::default();
        let first = admit(policy, &mut pin, 10, &waiting(grouped("")), (1, 0), 5);
        assert_eq!(first, Admit::Serve(true));
        assert_eq!(pin.group, "A");
        assert_eq!((pin.id.len(), pin.ts, pin.deadline), (22, 5, 15));
        let id = pin.id.clone();
        let other = admit(policy, &mut pin, 10, &waiting(grouped("")), (1, 0), 6);
        assert_eq!(other, Admit::Cycle);
        let wrong = admit(policy, &mut pin, 10, &waiting(grouped("x")), (1, 0), 6);
        assert_eq!(wrong, Admit::WrongPin);
        let same = admit(policy, &mut pin, 10, &waiting(grouped(&id)), (1, 0), 6);
        assert_eq!(same, Admit::Serve(false));
        assert_eq!(
            on_arrival(&mut pin, &grouped("x"), 10, 8).unwrap_err(),
            "423 Nats-Pin-Id mismatch"
        );
        on_arrival(&mut pin, &grouped(&id), 10, 8).unwrap();
        assert_eq!(pin.deadline, 18);
    }

    #[test]
    fn consumer_priority_overflow_thresholds() {
        let policy = PriorityPolicy::Overflow;
        let mut pin = Pin::default();
        let group = PriorityGroup {
            group: "A".into(),
            min_pending: 5,
            ..PriorityGroup::default()
        };
        let w = waiting(group);
        assert_eq!(admit(policy, &mut pin, 0, &w, (4, 0), 0), Admit::Cycle);
        assert_eq!(
            admit(policy, &mut pin, 0, &w, (5, 0), 0),
            Admit::Serve(false)
        );
        let acks = waiting(PriorityGroup {
            group: "A".into(),
            min_ack_pending: 2,
            ..PriorityGroup::default()
        });
        assert_eq!(admit(policy, &mut pin, 0, &acks, (0, 1), 0), Admit::Cycle);
        assert_eq!(
            admit(policy, &mut pin, 0, &acks, (0, 2), 0),
            Admit::Serve(false)
        );
    }

    #[test]
    fn consumer_priority_pin_header() {
        assert_eq!(
            with_pin_header(b"", "P"),
            b"NATS/1.0\r\nNats-Pin-Id: P\r\n\r\n"
        );
        assert_eq!(
            with_pin_header(b"NATS/1.0\r\nA: b\r\n\r\n", "P"),
            b"NATS/1.0\r\nA: b\r\nNats-Pin-Id: P\r\n\r\n"
        );
    }
}

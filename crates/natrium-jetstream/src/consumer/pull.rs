//! Pull requests as Go reads and queues them: the body of `CONSUMER.MSG.NEXT` (a bare count
//! or Go's `JSApiConsumerGetNextRequest`), the checks against the consumer's request limits
//! with Go's status texts, and the wait queue of requests (`max_waiting`) served one
//! message per request in turn. Pure: times are Unix nanoseconds passed in.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::Deserialize;

use super::config::{ConsumerConfig, PriorityPolicy};
use crate::config::decode_checked;
use crate::config::gotype::{GoStruct, GoType};

/// `Nats-Pending-Messages` / `Nats-Pending-Bytes` (Go's `JSPullRequestPending…`).
pub const PENDING_MSGS: &str = "Nats-Pending-Messages";
pub const PENDING_BYTES: &str = "Nats-Pending-Bytes";

/// A status-only header block: `NATS/1.0 <text>` and an empty line.
pub fn status(text: &str) -> Vec<u8> {
    format!("NATS/1.0 {text}\r\n\r\n").into_bytes()
}

/// A status with the request's pending counts (`408 Request Timeout`, `409 Message Size
/// Exceeds MaxBytes`, `409 Batch Completed`).
pub fn status_pending(text: &str, msgs: i64, bytes: i64) -> Vec<u8> {
    format!("NATS/1.0 {text}\r\n{PENDING_MSGS}: {msgs}\r\n{PENDING_BYTES}: {bytes}\r\n\r\n")
        .into_bytes()
}

/// `100 Idle Heartbeat` with the last consumer and stream sequences delivered.
pub fn idle_heartbeat(last_consumer: u64, last_stream: u64) -> Vec<u8> {
    format!(
        "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {last_consumer}\r\n\
         Nats-Last-Stream: {last_stream}\r\n\r\n"
    )
    .into_bytes()
}

/// The priority-group fields of a request (ADR-42).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PriorityGroup {
    pub group: String,
    pub min_pending: i64,
    pub min_ack_pending: i64,
    pub id: String,
    pub priority: i64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Wire {
    expires: i64,
    batch: i64,
    max_bytes: i64,
    no_wait: bool,
    idle_heartbeat: i64,
    #[serde(flatten)]
    group: PriorityGroup,
}

/// Go's `JSApiConsumerGetNextRequest` with its embedded `PriorityGroup`, for Go's wording of
/// a request it cannot decode.
static NEXT_REQUEST: GoStruct = GoStruct {
    name: "JSApiConsumerGetNextRequest",
    fields: &[
        ("expires", GoType::Int("time.Duration", 64)),
        ("batch", GoType::Int("int", 64)),
        ("max_bytes", GoType::Int("int", 64)),
        ("no_wait", GoType::Bool),
        ("idle_heartbeat", GoType::Int("time.Duration", 64)),
        ("PriorityGroup.group", GoType::Str),
        ("PriorityGroup.min_pending", GoType::Int("int64", 64)),
        ("PriorityGroup.min_ack_pending", GoType::Int("int64", 64)),
        ("PriorityGroup.id", GoType::Str),
        ("PriorityGroup.priority", GoType::Int("int", 64)),
    ],
};

/// The JSON request; as in Go, a `null` field leaves its zero value, and a body it cannot
/// decode is refused with `encoding/json`'s words.
fn decode_wire(body: &[u8]) -> Result<Wire, String> {
    // `json.Unmarshal` checks the whole body's syntax first, with its own words.
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        if err.is_eof() {
            return Err("unexpected end of JSON input".to_owned());
        }
        if err.to_string().starts_with("trailing characters") && err.line() == 1 {
            if let Some(c) = err.column().checked_sub(1).and_then(|at| body.get(at)) {
                return Err(format!(
                    "invalid character {} after top-level value",
                    natrium_gofmt::go_quote_rune(i64::from(*c))
                ));
            }
        }
    }
    decode_checked(body, &NEXT_REQUEST, "server.JSApiConsumerGetNextRequest").map_err(|err| {
        let text = err.description;
        let text = text.strip_prefix("invalid JSON: ").unwrap_or(&text);
        // `json.SyntaxError` says no offset.
        text.split(" at offset ").next().unwrap_or(text).to_owned()
    })
}

/// A decoded pull request (Go's `nextReqFromMsg`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NextRequest {
    /// Unix nanoseconds when it expires; 0 never.
    pub expires_at: i64,
    pub batch: i64,
    pub max_bytes: i64,
    pub no_wait: bool,
    /// Nanoseconds between idle heartbeats; 0 none.
    pub heartbeat: i64,
    /// Present for a JSON request.
    pub group: Option<PriorityGroup>,
}

/// Reads a request body received at `now`: empty is one message, a number is a batch, a
/// JSON object is the full request; anything else is one message, as in Go.
///
/// # Errors
/// The text after `400 Bad Request - `.
pub fn decode_next(body: &[u8], now: i64) -> Result<NextRequest, String> {
    let body = body.trim_ascii();
    let one = NextRequest {
        batch: 1,
        ..NextRequest::default()
    };
    match body.first() {
        None => Ok(one),
        Some(b'{') => {
            let wire = decode_wire(body)?;
            if wire.idle_heartbeat > 0 && wire.idle_heartbeat.saturating_mul(2) > wire.expires {
                return Err("heartbeat value too large".to_owned());
            }
            Ok(NextRequest {
                expires_at: if wire.expires == 0 {
                    0
                } else {
                    now.saturating_add(wire.expires)
                },
                batch: wire.batch,
                max_bytes: wire.max_bytes,
                no_wait: wire.no_wait,
                heartbeat: wire.idle_heartbeat,
                group: Some(wire.group),
            })
        }
        Some(_) => Ok(std::str::from_utf8(body)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(one, |batch| NextRequest {
                batch,
                ..NextRequest::default()
            })),
    }
}

/// Go's checks of a request against the consumer's limits, in Go's order: the status text
/// of the refusal (the pin's check follows, in `super::priority`).
pub fn check_limits(req: &NextRequest, config: &ConsumerConfig, now: i64) -> Result<(), String> {
    if config.max_batch > 0 && req.batch > config.max_batch {
        return Err(format!(
            "409 Exceeded MaxRequestBatch of {}",
            config.max_batch
        ));
    }
    if req.expires_at != 0
        && config.max_expires > 0
        && req.expires_at > now.saturating_add(config.max_expires)
    {
        return Err(format!(
            "409 Exceeded MaxRequestExpires of {}",
            natrium_gofmt::go_duration_nanos(config.max_expires)
        ));
    }
    if req.max_bytes > 0 && config.max_bytes > 0 && req.max_bytes > config.max_bytes {
        return Err(format!(
            "409 Exceeded MaxRequestMaxBytes of {}",
            config.max_bytes
        ));
    }
    let Some(group) = &req.group else {
        return Ok(());
    };
    let policy = config.priority_policy;
    if (group.min_pending != 0 || group.min_ack_pending != 0) && policy != PriorityPolicy::Overflow
    {
        return Err("400 Bad Request - Not a Overflow Priority consumer".to_owned());
    }
    if !group.id.is_empty() && policy != PriorityPolicy::PinnedClient {
        return Err("400 Bad Request - Not a Pinned Client Priority consumer".to_owned());
    }
    if !(0..=9).contains(&group.priority) {
        return Err("400 Bad Request - Priority must be between 0 and 9".to_owned());
    }
    if policy != PriorityPolicy::None {
        if group.group.is_empty() {
            return Err("400 Bad Request - Priority Group missing".to_owned());
        }
        if !config.priority_groups.contains(&group.group) {
            return Err("400 Bad Request - Invalid Priority Group".to_owned());
        }
    }
    Ok(())
}

/// A request waiting for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// Shared with every delivery to it (no copy per message).
    pub reply: Arc<str>,
    /// Messages still wanted (Go's `n`; may go below 1 for a request of batch 0).
    pub n: i64,
    /// Messages delivered to it.
    pub delivered: i64,
    /// Bytes left under its `max_bytes`; 0 no limit.
    pub bytes: i64,
    pub expires_at: i64,
    pub heartbeat: i64,
    /// When the next idle heartbeat is due; 0 none.
    pub heartbeat_at: i64,
    pub no_wait: bool,
    /// The priority-group fields of a JSON request.
    pub group: Option<PriorityGroup>,
}

impl Waiting {
    pub fn new(reply: &str, req: &NextRequest, now: i64) -> Self {
        Waiting {
            reply: Arc::from(reply),
            n: req.batch,
            delivered: 0,
            bytes: req.max_bytes,
            expires_at: req.expires_at,
            heartbeat: req.heartbeat,
            heartbeat_at: if req.heartbeat > 0 {
                now.saturating_add(req.heartbeat)
            } else {
                0
            },
            no_wait: req.no_wait,
            group: req.group.clone(),
        }
    }

    /// Its place in a prioritized queue: lower first; a request without the group's
    /// fields after all (Go's `MaxInt32`).
    fn priority(&self) -> i64 {
        self.group
            .as_ref()
            .map_or(i64::from(i32::MAX), |g| g.priority)
    }

    pub fn expired(&self, now: i64) -> bool {
        self.expires_at != 0 && now > self.expires_at
    }

    /// The earliest of its expiry and its next heartbeat.
    pub fn due(&self) -> Option<i64> {
        [self.expires_at, self.heartbeat_at]
            .into_iter()
            .filter(|t| *t != 0)
            .min()
    }
}

/// The wait queue: first in, first served, one message per request in turn (a request with
/// more to take goes to the back).
#[derive(Debug, Default)]
pub struct WaitQueue {
    pub queue: VecDeque<Waiting>,
}

impl WaitQueue {
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Messages the waiting requests still want (Go's batch pending).
    pub fn wanted(&self) -> i64 {
        // Batches are the requesters' numbers: saturate rather than overflow.
        self.queue
            .iter()
            .fold(0i64, |sum, w| sum.saturating_add(w.n))
    }

    /// Queues a request: at the back, or (`prioritized`) after every request of its
    /// priority or a lower one.
    pub fn push(&mut self, w: Waiting, prioritized: bool) {
        if prioritized {
            let at = self.queue.partition_point(|q| q.priority() <= w.priority());
            self.queue.insert(at, w);
        } else {
            self.queue.push_back(w);
        }
    }

    /// Takes one message for the head request; it stays while it wants more, at the back
    /// (`prioritized`: the back of its priority). Returns the reply subject and what the
    /// request still wants (messages, bytes). A request that stays has its next heartbeat
    /// set from `now`.
    pub fn pop(&mut self, now: i64, prioritized: bool) -> Option<(Arc<str>, i64, i64)> {
        let mut head = self.queue.pop_front()?;
        head.delivered = head.delivered.saturating_add(1);
        head.n = head.n.saturating_sub(1);
        let taken = (Arc::clone(&head.reply), head.n, head.bytes);
        if head.n > 0 {
            if head.heartbeat > 0 {
                head.heartbeat_at = now.saturating_add(head.heartbeat);
            }
            self.push(head, prioritized);
        }
        Some(taken)
    }

    /// Moves the head request to the back (Go's `cycle`).
    pub fn cycle(&mut self) {
        if let Some(head) = self.queue.pop_front() {
            self.queue.push_back(head);
        }
    }

    /// The earliest expiry or heartbeat of a waiting request.
    pub fn due(&self) -> Option<i64> {
        self.queue.iter().filter_map(Waiting::due).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_pull_request_errors_in_gos_words() {
        // Each as Go 2.15.2 answered it (after `400 Bad Request - `).
        let cases: [(&[u8], &str); 6] = [
            (
                br#"{"batch":"x"}"#,
                "json: cannot unmarshal string into Go struct field \
                 JSApiConsumerGetNextRequest.batch of type int",
            ),
            (
                br#"{"expires":"1s"}"#,
                "json: cannot unmarshal string into Go struct field \
                 JSApiConsumerGetNextRequest.expires of type time.Duration",
            ),
            (
                br#"{"group":5}"#,
                "json: cannot unmarshal number into Go struct field \
                 JSApiConsumerGetNextRequest.PriorityGroup.group of type string",
            ),
            (
                br#"{"min_pending":"a"}"#,
                "json: cannot unmarshal string into Go struct field \
                 JSApiConsumerGetNextRequest.PriorityGroup.min_pending of type int64",
            ),
            (br#"{"batch":1,"#, "unexpected end of JSON input"),
            (
                br#"{"batch":1}x"#,
                "invalid character 'x' after top-level value",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(decode_next(body, 0).unwrap_err(), want, "{body:?}");
        }
    }

    #[test]
    fn consumer_pull_request_forms() {
        assert_eq!(decode_next(b"", 0).unwrap().batch, 1);
        assert_eq!(decode_next(b" 10 ", 0).unwrap().batch, 10);
        assert_eq!(decode_next(b"x", 0).unwrap().batch, 1);
        let req = decode_next(
            br#"{"batch":5,"expires":2000,"max_bytes":9,"no_wait":true,"idle_heartbeat":1000}"#,
            100,
        )
        .unwrap();
        assert_eq!(
            (
                req.batch,
                req.expires_at,
                req.max_bytes,
                req.no_wait,
                req.heartbeat
            ),
            (5, 2100, 9, true, 1000)
        );
        assert_eq!(
            decode_next(br#"{"batch":1,"idle_heartbeat":10}"#, 0).unwrap_err(),
            "heartbeat value too large"
        );
        assert!(decode_next(br#"{"batch":"x"}"#, 0).is_err());
    }

    #[test]
    fn consumer_pull_limits_in_go_order() {
        let config = ConsumerConfig {
            max_batch: 2,
            max_expires: 1_000_000_000,
            max_bytes: 10,
            ..ConsumerConfig::default()
        };
        let req = |batch, expires_at, max_bytes| NextRequest {
            expires_at,
            batch,
            max_bytes,
            ..NextRequest::default()
        };
        assert_eq!(
            check_limits(&req(3, 0, 0), &config, 0).unwrap_err(),
            "409 Exceeded MaxRequestBatch of 2"
        );
        assert_eq!(
            check_limits(&req(1, 2_000_000_000, 0), &config, 0).unwrap_err(),
            "409 Exceeded MaxRequestExpires of 1s"
        );
        assert_eq!(
            check_limits(&req(1, 0, 11), &config, 0).unwrap_err(),
            "409 Exceeded MaxRequestMaxBytes of 10"
        );
        assert!(check_limits(&req(2, 1_000_000_000, 10), &config, 0).is_ok());
        let grouped = NextRequest {
            batch: 1,
            group: Some(PriorityGroup {
                id: "x".into(),
                ..PriorityGroup::default()
            }),
            ..NextRequest::default()
        };
        assert_eq!(
            check_limits(&grouped, &config, 0).unwrap_err(),
            "400 Bad Request - Not a Pinned Client Priority consumer"
        );
    }

    #[test]
    fn consumer_pull_wait_queue_round_robin() {
        let mut q = WaitQueue::default();
        let req = |batch| NextRequest {
            batch,
            ..NextRequest::default()
        };
        q.push(Waiting::new("a", &req(2), 0), false);
        q.push(Waiting::new("b", &req(1), 0), false);
        assert_eq!(q.wanted(), 3);
        assert_eq!(&*q.pop(0, false).unwrap().0, "a");
        assert_eq!(&*q.pop(0, false).unwrap().0, "b");
        assert_eq!(q.pop(0, false).unwrap(), ("a".into(), 0, 0));
        assert!(q.is_empty());
    }

    #[test]
    fn consumer_pull_wait_queue_extreme_batches_saturate() {
        let mut q = WaitQueue::default();
        let req = |batch| NextRequest {
            batch,
            ..NextRequest::default()
        };
        q.push(Waiting::new("max", &req(i64::MAX), 0), false);
        q.push(Waiting::new("max2", &req(i64::MAX), 0), false);
        q.push(Waiting::new("min", &req(i64::MIN), 0), false);
        assert_eq!(
            q.wanted(),
            i64::MAX.saturating_add(i64::MAX).saturating_add(i64::MIN)
        );
        assert_eq!(q.pop(0, false).unwrap().1, i64::MAX - 1);
        q.pop(0, false);
        assert_eq!(q.pop(0, false).unwrap(), ("min".into(), i64::MIN, 0));
    }

    #[test]
    fn consumer_pull_wait_queue_prioritized() {
        let mut q = WaitQueue::default();
        let req = |batch, priority| NextRequest {
            batch,
            group: Some(PriorityGroup {
                group: "A".into(),
                priority,
                ..PriorityGroup::default()
            }),
            ..NextRequest::default()
        };
        q.push(Waiting::new("low", &req(2, 1), 0), true);
        q.push(Waiting::new("high", &req(2, 0), 0), true);
        q.push(Waiting::new("high2", &req(1, 0), 0), true);
        let order: Vec<String> = (0..5)
            .filter_map(|_| q.pop(0, true))
            .map(|t| t.0.to_string())
            .collect();
        assert_eq!(order, ["high", "high2", "high", "low", "low"]);
    }

    #[test]
    fn consumer_pull_status_bytes() {
        assert_eq!(
            status("404 No Messages"),
            b"NATS/1.0 404 No Messages\r\n\r\n"
        );
        assert_eq!(
            status_pending("408 Request Timeout", 3, 0),
            b"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nNats-Pending-Bytes: 0\r\n\r\n"
        );
        assert_eq!(
            idle_heartbeat(4, 9),
            b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 4\r\nNats-Last-Stream: 9\r\n\r\n"
        );
    }
}

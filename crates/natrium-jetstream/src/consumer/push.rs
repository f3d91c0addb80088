//! Push delivery bookkeeping of one consumer, with Go's rules: whether the deliver subject
//! has interest, the flow-control window (Go's `pbytes`, `maxpb`, `fcid`, `fcsz`), the next
//! idle heartbeat and the inactivity deadline (also used by pull consumers with an
//! `inactive_threshold`). Pure: times are Unix nanoseconds passed in.

use std::fmt::Write as _;

/// Go's `JsFlowControlMaxPending`: the largest flow-control window.
pub const FC_MAX_PENDING: i64 = 32 * 1024 * 1024;

/// The status of a flow-control request.
pub const FC_REQUEST: &[u8] = b"NATS/1.0 100 FlowControl Request\r\n\r\n";

/// What a consumer keeps for push delivery and inactivity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushState {
    /// The deliver subject has interest in the account (Go's `active`).
    pub active: bool,
    /// Bytes sent since the last answered flow control (Go's `pbytes`).
    pub pbytes: i64,
    /// The current window: 0 without flow control (Go's `maxpb`); it starts at a sixteenth
    /// of [`FC_MAX_PENDING`] and doubles with each answer.
    pub maxpb: i64,
    /// The reply subject of the outstanding flow-control request (Go's `fcid`).
    pub fcid: Option<String>,
    /// The bytes the outstanding request accounts for (Go's `fcsz`).
    pub fcsz: i64,
    /// When the next idle heartbeat is due (push consumers with `idle_heartbeat`).
    pub hb_due: Option<i64>,
    /// When the consumer is deleted if still inactive (`inactive_threshold`).
    pub delete_due: Option<i64>,
    /// The last pull request or delivery of a pull consumer (Go's `waiting.last`).
    pub last_active: i64,
    /// A counter making flow-control reply subjects distinct.
    pub fc_count: u64,
    /// Delivery waits until then (`rate_limit_bps`, `replay_policy: original`).
    pub resume_at: Option<i64>,
    /// The rate limit's bucket: bytes available, as of `bucket_at`.
    pub tokens: i64,
    pub bucket_at: i64,
    /// `replay_policy: original`: replaying the messages up to this stream sequence.
    pub replay_until: Option<u64>,
    /// The timestamp of the last message delivered while replaying (Go's `lts`).
    pub last_ts: i64,
    /// The sequence whose replay delay was waited for.
    pub waited: Option<u64>,
    /// The sequence the rate limit counted and made wait.
    pub paid: Option<u64>,
}

impl PushState {
    /// Flow control is on: the window starts small.
    pub fn start_flow_control(&mut self) {
        if self.maxpb == 0 {
            self.maxpb = (FC_MAX_PENDING / 16).max(1);
        }
    }

    /// Go pauses a push consumer past its window.
    pub fn stalled(&self) -> bool {
        self.maxpb > 0 && self.pbytes > self.maxpb
    }

    /// Counts a delivery of `size` bytes; `true` when a flow-control request must follow
    /// (Go's `needFlowControl`: past half the window with none outstanding, or, when acks
    /// ride on the answers (`ack_policy: flow_control`), `at_max_pending`: the consumer
    /// reached `max_ack_pending` and only an answer can release it).
    pub fn sent(&mut self, size: i64, at_max_pending: bool) -> bool {
        if self.maxpb == 0 {
            return false;
        }
        self.pbytes = self.pbytes.saturating_add(size);
        if self.fcid.is_none() {
            return self.pbytes > self.maxpb / 2 || at_max_pending;
        }
        if self.pbytes - self.fcsz >= self.maxpb {
            self.fcsz = self.fcsz.saturating_add(size);
        }
        false
    }

    /// Records a flow-control request sent with reply `fcid`.
    pub fn requested(&mut self, fcid: String) {
        self.fcsz = self.pbytes;
        self.fcid = Some(fcid);
    }

    /// The client answered on `subject`: `true` when it was the outstanding request (the
    /// window grows, the bytes it covered are released).
    pub fn answered(&mut self, subject: &str) -> bool {
        if self.fcid.as_deref() != Some(subject) {
            return false;
        }
        if self.maxpb < FC_MAX_PENDING {
            self.maxpb = self.maxpb.saturating_mul(2).min(FC_MAX_PENDING);
        }
        self.pbytes = (self.pbytes - self.fcsz).max(0);
        self.fcid = None;
        self.fcsz = 0;
        true
    }

    /// The next flow-control reply subject (Go's v1 form `$JS.FC.<stream>.<consumer>.<4>`,
    /// four base-62 characters; with `v2`, `<domain>.<account hash>` after `$JS.FC.`).
    pub fn next_fc_reply(
        &mut self,
        v2: Option<&str>,
        stream: &str,
        consumer: &str,
        seed: u64,
    ) -> String {
        const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        self.fc_count = self.fc_count.wrapping_add(1);
        let mut n = seed ^ self.fc_count.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut out = match v2 {
            Some(prefix) => format!("$JS.FC.{prefix}.{stream}.{consumer}."),
            None => format!("$JS.FC.{stream}.{consumer}."),
        };
        for _ in 0..4 {
            let i = usize::try_from(n % 62).unwrap_or(0);
            out.push(char::from(DIGITS.get(i).copied().unwrap_or(b'0')));
            n /= 62;
        }
        out
    }
}

impl PushState {
    /// Counts `size` bytes sent under a rate of `bps` bits a second with a bucket of `burst`
    /// bytes (Go's token bucket: full at first); returns the nanoseconds to wait before the
    /// next delivery.
    pub fn pace(&mut self, now: i64, size: i64, bps: u64, burst: i64) -> i64 {
        const SEC: i128 = 1_000_000_000;
        let rate = i128::from(bps / 8).max(1);
        let burst = burst.max(1);
        if self.bucket_at == 0 {
            self.tokens = burst;
        } else {
            let refill = i128::from(now.saturating_sub(self.bucket_at).max(0)) * rate / SEC;
            let refill = i64::try_from(refill).unwrap_or(i64::MAX);
            self.tokens = self.tokens.saturating_add(refill).min(burst);
        }
        self.bucket_at = now;
        self.tokens -= size.min(burst);
        if self.tokens >= 0 {
            return 0;
        }
        i64::try_from(i128::from(-self.tokens) * SEC / rate).unwrap_or(i64::MAX)
    }

    /// `replay_policy: original`: the wait before delivering a message stored at `ts`
    /// (sequence `seq`) to keep the stored spacing (Go waits only past a millisecond).
    pub fn replay_delay(&mut self, seq: u64, ts: i64) -> i64 {
        let replaying = self.replay_until.is_some_and(|last| seq <= last);
        if !replaying || self.last_ts == 0 || self.waited == Some(seq) {
            return 0;
        }
        let delay = ts.saturating_sub(self.last_ts);
        if delay > 1_000_000 {
            self.waited = Some(seq);
            delay
        } else {
            0
        }
    }
}

/// `100 Idle Heartbeat` with the last sequences, and `Nats-Consumer-Stalled` with the
/// outstanding flow-control reply when there is one.
pub fn heartbeat(last_consumer: u64, last_stream: u64, stalled: Option<&str>) -> Vec<u8> {
    let mut text = format!(
        "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {last_consumer}\r\n\
         Nats-Last-Stream: {last_stream}\r\n"
    );
    if let Some(fc) = stalled {
        let _ = write!(text, "Nats-Consumer-Stalled: {fc}\r\n");
    }
    text.push_str("\r\n");
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_push_flow_control_window() {
        let mut p = PushState::default();
        assert!(!p.sent(1 << 30, true), "no window without flow control");
        p = PushState::default();
        p.start_flow_control();
        let window = FC_MAX_PENDING / 16;
        assert!(!p.sent(window / 2, false));
        assert!(p.sent(1, false));
        let fc = p.next_fc_reply(None, "S", "C", 7);
        assert!(fc.starts_with("$JS.FC.S.C.") && fc.len() == "$JS.FC.S.C.".len() + 4);
        p.requested(fc.clone());
        assert!(!p.stalled());
        assert!(!p.sent(window - 1, true), "one request at a time");
        assert!(p.stalled());
        assert!(!p.answered("$JS.FC.S.C.zzzz"));
        assert!(p.answered(&fc));
        assert_eq!(p.maxpb, window * 2);
        assert_eq!(p.pbytes, window - 1);
        assert!(p.fcid.is_none());
        // Past a whole window beyond the outstanding request, Go counts it in the request.
        p.requested("$JS.FC.S.C.abcd".to_owned());
        assert!(!p.sent(window * 2, false));
        assert!(p.answered("$JS.FC.S.C.abcd"));
        assert_eq!(p.pbytes, 0);
        // At max_ack_pending a request goes however small the bytes sent.
        assert!(p.sent(1, true));
    }

    #[test]
    fn consumer_push_rate_limit_and_replay() {
        let mut p = PushState::default();
        let sec = 1_000_000_000;
        // 8,000 bits a second is 1,000 bytes; the bucket holds 1,500.
        assert_eq!(p.pace(sec, 1000, 8000, 1500), 0);
        assert_eq!(p.pace(sec, 1000, 8000, 1500), sec / 2);
        assert_eq!(p.pace(sec + sec / 2, 1000, 8000, 1500), sec);
        p.replay_until = Some(3);
        assert_eq!(p.replay_delay(1, 10 * sec), 0);
        p.last_ts = 10 * sec;
        assert_eq!(p.replay_delay(2, 12 * sec), 2 * sec);
        assert_eq!(p.replay_delay(2, 12 * sec), 0, "waited for once");
        assert_eq!(p.replay_delay(4, 20 * sec), 0, "past the replay");
    }

    #[test]
    fn consumer_push_heartbeat_bytes() {
        assert_eq!(
            heartbeat(3, 9, None),
            b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 9\r\n\r\n"
        );
        assert_eq!(
            heartbeat(0, 0, Some("$JS.FC.S.C.ab12")),
            b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 0\r\n\
              Nats-Consumer-Stalled: $JS.FC.S.C.ab12\r\n\r\n"
        );
    }
}

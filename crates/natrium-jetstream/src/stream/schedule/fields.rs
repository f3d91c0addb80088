//! The schedule headers of one message (ADR-51), read once from its header block, and the
//! values Go derives from them (zone, next fire, TTL).

use nats_proto::headers::Headers;

use super::pattern::{self, Next};
use super::zone::Zone;

pub const SCHEDULE: &[u8] = b"Nats-Schedule";
pub const TIME_ZONE: &[u8] = b"Nats-Schedule-Time-Zone";
pub const SCHEDULE_TTL: &[u8] = b"Nats-Schedule-TTL";
pub const SCHEDULE_ROLLUP: &[u8] = b"Nats-Schedule-Rollup";
pub const TARGET: &[u8] = b"Nats-Schedule-Target";
pub const SOURCE: &[u8] = b"Nats-Schedule-Source";
/// On a produced message: the schedule's subject.
pub const SCHEDULER: &[u8] = b"Nats-Scheduler";
/// On a produced message: the next fire (RFC 3339), or [`PURGE`] after the last.
pub const SCHEDULE_NEXT: &[u8] = b"Nats-Schedule-Next";
pub const PURGE: &[u8] = b"purge";

/// Schedule headers of a message; a header present with an empty value reads as `Some("")`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ScheduleFields<'a> {
    pub pattern: Option<&'a [u8]>,
    pub time_zone: Option<&'a [u8]>,
    pub ttl: Option<&'a [u8]>,
    pub rollup: Option<&'a [u8]>,
    pub target: Option<&'a [u8]>,
    pub source: Option<&'a [u8]>,
    pub scheduler: Option<&'a [u8]>,
    pub next: Option<&'a [u8]>,
}

/// Whether a block can hold any schedule header (all share the `Nats-Schedule` prefix): a
/// cheap test before parsing, since every published message with headers passes here.
pub fn mentions_schedule(block: &[u8]) -> bool {
    block.windows(SCHEDULE.len()).any(|w| w == SCHEDULE)
}

/// A schedule header Go refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    TimeZone,
    Pattern,
    Ttl,
}

impl<'a> ScheduleFields<'a> {
    pub fn read(block: &'a [u8]) -> Self {
        if !mentions_schedule(block) {
            return Self::default();
        }
        let Ok(headers) = Headers::parse(block) else {
            return Self::default();
        };
        Self {
            pattern: headers.get(SCHEDULE),
            time_zone: headers.get(TIME_ZONE),
            ttl: headers.get(SCHEDULE_TTL),
            rollup: headers.get(SCHEDULE_ROLLUP),
            target: headers.get(TARGET),
            source: headers.get(SOURCE),
            scheduler: headers.get(SCHEDULER),
            next: headers.get(SCHEDULE_NEXT),
        }
    }

    /// The schedule's zone: `None` without the header, an error when it is empty or unknown.
    pub fn zone(&self) -> Result<Option<Zone>, Invalid> {
        let Some(name) = self.time_zone else {
            return Ok(None);
        };
        if name.is_empty() {
            return Err(Invalid::TimeZone);
        }
        let name = std::str::from_utf8(name).map_err(|_| Invalid::TimeZone)?;
        Zone::load(name).map(Some).ok_or(Invalid::TimeZone)
    }

    /// The next fire after `ts_ns` (Go's `nextMessageSchedule`): `Ok(None)` when the message
    /// is no schedule.
    pub fn next(&self, ts_ns: i64, now_ns: i64) -> Result<Option<Next>, Invalid> {
        let zone = self.zone()?;
        let text =
            std::str::from_utf8(self.pattern.unwrap_or_default()).map_err(|_| Invalid::Pattern)?;
        pattern::next(text, zone.as_ref(), ts_ns, now_ns)
    }

    /// `Nats-Schedule-TTL` as Go accepts it: absent or empty, `never`, a Go duration of at
    /// least a second, or a non-negative number of seconds. The raw text when valid.
    pub fn ttl(&self) -> Result<Option<&'a [u8]>, Invalid> {
        let Some(ttl) = self.ttl.filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        let text = std::str::from_utf8(ttl).map_err(|_| Invalid::Ttl)?;
        if text.eq_ignore_ascii_case("never") {
            return Ok(Some(ttl));
        }
        let valid = match natrium_gofmt::parse_go_duration(text) {
            Ok(ns) => ns >= 1_000_000_000,
            Err(_) => !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()),
        };
        if valid {
            Ok(Some(ttl))
        } else {
            Err(Invalid::Ttl)
        }
    }

    /// A non-empty value.
    pub fn text(value: Option<&'a [u8]>) -> Option<&'a [u8]> {
        value.filter(|v| !v.is_empty())
    }
}

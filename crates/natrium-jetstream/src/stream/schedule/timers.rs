//! One stream's pending schedules: the newest schedule message per subject and when it fires,
//! in one ordered set, so one timer serves them all (Go keeps them in a hashed wheel). A
//! schedule whose message has gone (deleted, expired, purged) is dropped when it comes due.

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;

/// Go never fires sooner than this after arming its timer, so that a busy stream is not
/// interrupted at every publish.
pub const FIRE_DELAY_MIN_NS: i64 = 250_000_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    seq: u64,
    /// Unix ns of the next fire; `None` while the fire is being stored.
    at_ns: Option<i64>,
}

/// The schedules and the timer's deadline.
#[derive(Debug, Default)]
pub struct Timers {
    by_subject: HashMap<Bytes, Entry>,
    subject_of: HashMap<u64, Bytes>,
    due: BTreeSet<(i64, u64)>,
    /// When the armed timer fires; a later wish does not push it back (Go's rule: a timer
    /// always re-armed later would never fire).
    deadline: Option<i64>,
    /// A schedule was added or moved since the timer was last armed.
    changed: bool,
}

impl Timers {
    /// The schedule of `subject` is now the message `seq`, due at `at_ns`.
    pub fn add(&mut self, seq: u64, subject: &[u8], at_ns: i64) {
        self.remove_subject(subject);
        let subject = Bytes::copy_from_slice(subject);
        self.subject_of.insert(seq, subject.clone());
        self.by_subject.insert(
            subject,
            Entry {
                seq,
                at_ns: Some(at_ns),
            },
        );
        self.due.insert((at_ns, seq));
        self.changed = true;
    }

    /// The schedule of `subject` (if any) fires next at `at_ns`.
    pub fn update(&mut self, subject: &[u8], at_ns: i64) {
        if let Some(entry) = self.by_subject.get_mut(subject) {
            if let Some(old) = entry.at_ns {
                self.due.remove(&(old, entry.seq));
            }
            entry.at_ns = Some(at_ns);
            self.due.insert((at_ns, entry.seq));
            self.changed = true;
        }
    }

    pub fn remove_subject(&mut self, subject: &[u8]) {
        if let Some(entry) = self.by_subject.remove(subject) {
            if let Some(at) = entry.at_ns {
                self.due.remove(&(at, entry.seq));
            }
            self.subject_of.remove(&entry.seq);
        }
    }

    pub fn remove_seq(&mut self, seq: u64) {
        if let Some(subject) = self.subject_of.get(&seq).cloned() {
            self.remove_subject(&subject);
        }
    }

    /// Whether the schedule of `subject` is the message `seq` and waits to be stored.
    pub fn is_in_flight(&self, subject: &[u8], seq: u64) -> bool {
        self.by_subject
            .get(subject)
            .is_some_and(|e| e.seq == seq && e.at_ns.is_none())
    }

    /// Takes out what is due at `now_ns` (marked in flight), in order of schedule sequence.
    pub fn take_due(&mut self, now_ns: i64) -> Vec<(u64, i64)> {
        let mut due = Vec::new();
        while let Some(&(at, seq)) = self.due.first() {
            if at > now_ns {
                break;
            }
            self.due.pop_first();
            due.push((seq, at));
            if let Some(entry) = self
                .subject_of
                .get(&seq)
                .and_then(|s| self.by_subject.get_mut(s))
            {
                entry.at_ns = None;
            }
        }
        due.sort_unstable();
        self.deadline = None;
        due
    }

    /// When to wake next (Unix ns), at least [`FIRE_DELAY_MIN_NS`] from `now_ns`.
    pub fn arm(&mut self, now_ns: i64) -> Option<i64> {
        self.changed = false;
        let Some(&(next, _)) = self.due.first() else {
            self.deadline = None;
            return None;
        };
        let wish = next.max(now_ns.saturating_add(FIRE_DELAY_MIN_NS));
        match self.deadline {
            Some(deadline) if deadline <= wish => Some(deadline),
            _ => {
                self.deadline = Some(wish);
                Some(wish)
            }
        }
    }

    /// Whether the timer needs re-arming (and clears the note).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    pub fn len(&self) -> usize {
        self.by_subject.len()
    }

    /// Every schedule, by sequence, as the store's schedule index keeps them (`None`: in
    /// flight).
    pub fn entries(&self) -> Vec<natrium_store::ScheduleEntry> {
        let mut entries: Vec<_> = self
            .by_subject
            .iter()
            .map(|(subject, e)| natrium_store::ScheduleEntry {
                seq: e.seq,
                subject: subject.clone(),
                at_ns: e.at_ns,
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.seq);
        entries
    }

    pub fn is_empty(&self) -> bool {
        self.by_subject.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn schedule_timers_one_per_subject_in_order() {
        let mut t = Timers::default();
        t.add(1, b"a", 3000 * MS);
        t.add(2, b"b", 1000 * MS);
        t.add(3, b"a", 2000 * MS);
        assert_eq!(t.len(), 2);
        assert_eq!(t.arm(0), Some(1000 * MS));
        assert_eq!(t.take_due(2500 * MS), vec![(2, 1000 * MS), (3, 2000 * MS)]);
        assert!(t.is_in_flight(b"a", 3));
        assert_eq!(t.arm(2500 * MS), None);
        t.update(b"a", 4000 * MS);
        assert!(!t.is_in_flight(b"a", 3));
        assert_eq!(t.arm(2500 * MS), Some(4000 * MS));
        t.remove_seq(3);
        t.remove_subject(b"b");
        assert_eq!(t.len(), 0);
        assert_eq!(t.arm(2500 * MS), None);
    }

    #[test]
    fn schedule_timers_min_delay_and_no_push_back() {
        let mut t = Timers::default();
        t.add(1, b"a", 0);
        // Due now: not before 250ms.
        assert_eq!(t.arm(1000 * MS), Some(1250 * MS));
        // Re-armed later: the first deadline stands.
        assert_eq!(t.arm(1100 * MS), Some(1250 * MS));
        // A sooner schedule does not go under the minimum either, nor above the deadline.
        t.add(2, b"b", 0);
        assert_eq!(t.arm(1200 * MS), Some(1250 * MS));
    }
}

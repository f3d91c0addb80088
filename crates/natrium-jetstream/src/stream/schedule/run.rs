//! The stream task's side of schedules: when to wake, and firing what is due through the
//! stream's normal ingest (limits, retention, republish and consumers apply as to any
//! published message).

use std::time::Duration;

use crate::clock::now_ns;
use crate::stream::ingest::Outcome;
use crate::stream::Stream;

impl Stream {
    /// How long until a schedule is due, if one is pending (the schedules are built from
    /// the store on the first call).
    pub(crate) fn until_next_schedule(&self) -> Option<Duration> {
        let mut core = self.core.lock();
        let core = &mut *core;
        let now = now_ns();
        core.ingest
            .scheduler
            .ensure(&core.config, &mut *core.ingest.store, now);
        let at = core.ingest.scheduler.arm(now)?;
        Some(Duration::from_nanos(
            at.saturating_sub(now).max(0).unsigned_abs(),
        ))
    }

    /// Stores the messages of the schedules due now, one at a time, as published messages.
    pub(crate) fn fire_schedules(&self) {
        let interest = crate::consumer::retention::interest_filters(self);
        let mut core = self.core.lock();
        let now = now_ns();
        let fires = {
            let ingest = &mut core.ingest;
            ingest.scheduler.fire(&*ingest.store, now)
        };
        for fire in &fires {
            core.ingest.scheduler.producing = true;
            self.ingest_batch(
                &mut core,
                std::slice::from_ref(&fire.delivery),
                interest.as_deref(),
            );
            core.ingest.scheduler.producing = false;
            let taken = core.outcomes.first().is_some_and(Outcome::is_stored);
            let core = &mut *core;
            let ingest = &mut core.ingest;
            ingest
                .scheduler
                .settle(fire, taken, &core.config, &mut *ingest.store);
        }
    }
}

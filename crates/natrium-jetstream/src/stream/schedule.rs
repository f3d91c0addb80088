//! Message schedules (ADR-51) as Go v2.15.2 has them: a message with `Nats-Schedule` on a
//! stream with `allow_msg_schedules` is checked ([`publish`]) and stored as the schedule of
//! its subject; the stream's scheduler ([`scheduler`], timers in [`timers`]) fires it at its
//! times ([`pattern`], [`cron`] in the zones of [`zone`]), each fire storing the message
//! [`produce`] builds through the stream's normal ingest ([`run`]). Headers in [`fields`];
//! the rebuild at open from the store's schedule index and the messages after it in
//! [`recover`].

pub mod cron;
pub mod fields;
pub mod pattern;
pub mod produce;
pub mod publish;
mod recover;
mod run;
pub mod scheduler;
pub mod timers;
pub mod zone;

pub use scheduler::Scheduler;

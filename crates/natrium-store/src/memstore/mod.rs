//! The memory store: [`MemStore`] for streams, [`MemConsumerStore`] for consumers.

mod batch;
mod body;
mod bulk;
mod consumer;
mod enforce;
mod links;
mod query;
mod seqmap;
mod state;
mod store;
mod subjects;
mod ttl;

pub use body::{MemBody, MsgBody};
pub(crate) use bulk::{Bounds, RestoredMsg};
pub use consumer::MemConsumerStore;
pub(crate) use state::Removal;
pub use store::MemStore;

#[cfg(test)]
mod tests;

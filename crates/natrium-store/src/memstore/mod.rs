//! The memory store: [`MemStore`] for streams, [`MemConsumerStore`] for consumers.

mod consumer;
mod enforce;
mod query;
mod state;
mod store;
mod subjects;
mod ttl;

pub use consumer::MemConsumerStore;
pub use store::MemStore;

#[cfg(test)]
mod tests;

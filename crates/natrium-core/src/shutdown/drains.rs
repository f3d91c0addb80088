//! The drains services register for shutdown's drain phase (see `crate::shutdown`). Kept apart
//! from the shutdown sequence so that the server's shared state can hold them without
//! importing the sequence, which imports the server.

use std::future::Future;
use std::pin::Pin;

use parking_lot::Mutex;

/// One service's drain: run once, in the drain phase.
pub(crate) type Drain = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// The drains registered so far, each with the name its warning gives.
#[derive(Default)]
pub(crate) struct DrainHooks(Mutex<Vec<(&'static str, Drain)>>);

impl DrainHooks {
    pub(crate) fn add(&self, name: &'static str, drain: Drain) {
        self.0.lock().push((name, drain));
    }

    /// Takes every drain registered so far.
    pub(crate) fn take(&self) -> Vec<(&'static str, Drain)> {
        std::mem::take(&mut *self.0.lock())
    }
}

//! The connection kit: what a listener needs to serve connections, for the client and
//! websocket listeners here and for listeners in other crates.
//!
//! - [`accept`]: the accept loop with back-off, stopped by lame duck mode and shutdown.

pub mod accept;

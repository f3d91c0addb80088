//! Pure decoders for the bytes a TLS listener does not control: certificate and key files
//! (PEM) and the certificates peers present (DER, X.509). No I/O, no runtime: the fuzz target
//! `tls_decoders` links this crate alone.
//!
//! Layout:
//! - [`pem`]: PEM blocks, with Go's base64 rules.
//! - [`der`]: a bounded DER reader (tags, lengths, OIDs).
//! - [`x509`]: what a peer certificate says, as Go's `crypto/x509` reports it: the subject in
//!   Go's forms (attribute order, escaping), alternative names, validity and fingerprints.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::dbg_macro,
    clippy::print_stdout,
    clippy::print_stderr
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod der;
pub mod pem;
pub mod x509;

pub use x509::{NameAttribute, PeerCert};

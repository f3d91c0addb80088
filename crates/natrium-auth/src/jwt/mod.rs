//! NATS JWTs for operator mode (decentralized authentication): [`decode`] checks a token's
//! shape and signature, [`claims`] reads operator, account and user claims and translates
//! them into accounts and permissions, [`verify`] holds the trusted operators and preloaded
//! accounts and decides on a client's user JWT.

pub mod claims;
pub mod decode;
pub mod verify;

pub use claims::{AccountNats, Claims, OperatorNats, UserNats};
pub use decode::{decode, undecorate, DecodeError, TOKEN_BYTES_MAX};
pub use verify::{JwtAuth, JwtConfigError, JwtUser, Refusal};

#[cfg(test)]
mod tests;

//! The JSON documents of the stream API and Go's rules for them.
//!
//! - [`stream`]: `StreamConfig` with Go's field names and encodings.
//! - [`check`]: defaults and checks for create and update, with [`context`] (what they need to
//!   know) and the parts [`sources`], [`subjects`], [`mapping`], [`update`].
//! - [`metadata`]: the versioning keys of the metadata map.
//! - [`decode`], [`scan`], [`gotype`]: request bodies decoded with Go's errors.
//! - [`gojson`]: responses encoded with Go's escapes; [`gotime`]: Go's JSON times.

pub mod check;
pub mod context;
pub mod decode;
pub mod gojson;
pub mod gotime;
pub mod gotype;
pub mod limits;
pub mod mapping;
pub mod metadata;
mod reject;
pub mod scan;
mod sources;
pub mod stream;
mod subjects;
mod update;

pub use check::check_stream_config;
pub use context::{CheckContext, StreamLookup, API_LEVEL, SERVER_VERSION};
pub use decode::{decode_checked, decode_request, decode_stream_request, StreamConfigRequest};
pub use gojson::to_go_json;
pub use metadata::{required_api_level, stored_metadata, with_dynamic_metadata};
pub use stream::StreamConfig;
#[cfg(test)]
mod tests;

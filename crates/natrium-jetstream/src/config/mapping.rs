//! Whether a subject mapping (a stream's, mirror's or source's `subject_transform`, or a
//! republish) can be built, with Go's error texts: `invalid subject`, or `invalid mapping
//! destination: <why> in <token>`. The syntax, the mapping functions and the texts are
//! `nats_subject`'s, shared with the engine that applies the mappings.

use nats_subject::SubjectTransform;

pub use nats_subject::{validate_mapping, TransformError as MappingError};

/// Go's `NewSubjectTransform` (not strict): whether `src` can be mapped to `dest`.
///
/// # Errors
/// Go's error for the first problem found.
pub fn new_subject_transform(src: &str, dest: &str) -> Result<(), MappingError> {
    SubjectTransform::mapping(src, dest).map(|_| ())
}

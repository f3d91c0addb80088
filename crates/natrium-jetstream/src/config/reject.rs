//! The two error shapes most stream checks answer with: Go's `JSStreamInvalidConfigF`
//! (500/10052, the reason as the description) and `JSPedanticErrF` (400/10157).

use std::fmt::Display;

use crate::errors::{table, ApiError};

/// 10052 with `reason` as the description.
pub(crate) fn invalid(reason: impl Display) -> ApiError {
    table::STREAM_INVALID_CONFIG_F.with(&[("err", &reason)])
}

/// 10157, `pedantic mode: <reason>`.
pub(crate) fn pedantic(reason: impl Display) -> ApiError {
    table::PEDANTIC.with(&[("err", &reason)])
}

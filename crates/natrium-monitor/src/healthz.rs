//! `/healthz` without JetStream, shared by the HTTP endpoint and the `HEALTHZ` system request.
//!
//! The boolean parameters (`js-enabled`, `js-enabled-only`, `js-server-only`, `js-meta-only`,
//! `details`) are decoded with Go's 400 texts; `stream` needs `account` and `consumer` needs
//! `stream` (400); then `{"status":"ok"}`, or 500 with Go's error while the client listener is
//! not open. With `details` errors are listed under `errors` instead of `error`.

use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};

const NOT_READY: &str = "failed to be ready for connections after 1ms: server";

#[derive(Serialize)]
pub struct HealthError {
    #[serde(rename = "type")]
    kind: &'static str,
    error: String,
}

#[derive(Serialize)]
pub struct Health {
    status: &'static str,
    /// Only the system request reports it; the HTTP endpoint's status line carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<HealthError>,
}

/// The document and the HTTP status it goes out with.
pub struct HealthReport {
    pub code: u16,
    pub doc: Health,
}

pub fn check(server: &Server, q: &Query) -> Result<HealthReport, QueryError> {
    let mut details = false;
    for key in [
        "js-enabled",
        "js-enabled-only",
        "js-server-only",
        "js-meta-only",
        "details",
    ] {
        details |= q.bool(key)? && key == "details";
    }
    let given = |key: &str| q.get(key).is_some_and(|v| !v.is_empty());
    let failure = if !given("account") && given("stream") {
        Some((
            400,
            "BAD_REQUEST",
            "\"account\" must not be empty when checking stream health",
        ))
    } else if !given("stream") && given("consumer") {
        Some((
            400,
            "BAD_REQUEST",
            "\"stream\" must not be empty when checking consumer health",
        ))
    } else if server.is_accepting() {
        None
    } else {
        Some((500, "CONNECTION", NOT_READY))
    };
    let Some((code, kind, text)) = failure else {
        return Ok(HealthReport {
            code: 200,
            doc: Health {
                status: "ok",
                status_code: None,
                error: None,
                errors: Vec::new(),
            },
        });
    };
    tracing::warn!("Healthcheck failed: {text:?}");
    let (error, errors) = if details {
        let errors = vec![HealthError {
            kind,
            error: text.to_owned(),
        }];
        (None, errors)
    } else {
        (Some(text.to_owned()), Vec::new())
    };
    Ok(HealthReport {
        code,
        doc: Health {
            status: "error",
            status_code: None,
            error,
            errors,
        },
    })
}

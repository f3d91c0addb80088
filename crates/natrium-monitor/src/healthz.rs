//! `/healthz`, shared by the HTTP endpoint and the `HEALTHZ` system request.
//!
//! The boolean parameters (`js-enabled`, `js-enabled-only`, `js-server-only`, `js-meta-only`,
//! `details`) are decoded with Go's 400 texts; `stream` needs `account` and `consumer` needs
//! `stream` (400); 500 with Go's error while the client listener is not open. Then, as Go's
//! single server does, unless `js-server-only` or JetStream is off: with `js-enabled-only`
//! nothing more; else the store directory is scanned (`natrium_core::report`), every account
//! directory must name an account and every stream directory a running stream (503,
//! `"status":"unavailable"`), and a named account, stream or consumer must be there (404).
//! With `details` errors are listed under `errors` instead of `error`, and the status is
//! `error`.
//!
//! Ours, not Go's: a stream whose recovery dropped damaged records still serves what
//! survived, so it does not fail the check (a readiness probe would keep the server out of
//! rotation for good); with `details` it is listed under `warnings`, in the shape of `errors`,
//! a key Go's clients ignore.

use natrium_core::report::{JsHealthFilter, JsHealthProblem};
use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};

const NOT_READY: &str = "failed to be ready for connections after 1ms: server";

#[derive(Serialize)]
pub struct HealthError {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    account: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    stream: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    consumer: String,
    error: String,
}

impl HealthError {
    fn new(kind: &'static str, error: String) -> Self {
        Self {
            kind,
            account: String::new(),
            stream: String::new(),
            consumer: String::new(),
            error,
        }
    }
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<HealthError>,
}

/// The document and the HTTP status it goes out with.
pub struct HealthReport {
    pub code: u16,
    pub doc: Health,
}

/// What the checks found: errors with the status code they set, and warnings.
struct Findings {
    details: bool,
    /// Go's `status` when an error is given without details.
    status: &'static str,
    code: Option<u16>,
    errors: Vec<HealthError>,
    warnings: Vec<HealthError>,
}

impl Findings {
    fn fail(&mut self, code: Option<u16>, status: &'static str, err: HealthError) {
        self.code = code.or(self.code);
        self.status = status;
        self.errors.push(err);
    }

    fn report(self) -> HealthReport {
        let failed = !self.errors.is_empty();
        let code = self.code.unwrap_or(if failed { 503 } else { 200 });
        let (status, error, errors) = match (failed, self.details) {
            (false, _) => ("ok", None, Vec::new()),
            (true, true) => ("error", None, self.errors),
            (true, false) => {
                let first = self.errors.into_iter().next().map(|e| e.error);
                (self.status, first, Vec::new())
            }
        };
        if let Some(text) = &error {
            tracing::warn!("Healthcheck failed: {text:?}");
        } else if !errors.is_empty() {
            tracing::warn!("Healthcheck failed: {} errors", errors.len());
        }
        HealthReport {
            code,
            doc: Health {
                status,
                status_code: None,
                error,
                errors,
                warnings: if self.details {
                    self.warnings
                } else {
                    Vec::new()
                },
            },
        }
    }
}

pub fn check(server: &Server, q: &Query) -> Result<HealthReport, QueryError> {
    let mut flags = [false; 5];
    for (flag, key) in flags.iter_mut().zip([
        "js-enabled",
        "js-enabled-only",
        "js-server-only",
        "js-meta-only",
        "details",
    ]) {
        *flag = q.bool(key)?;
    }
    let [js_enabled, js_enabled_only, js_server_only, _, details] = flags;
    if js_enabled {
        tracing::warn!("Healthcheck: js-enabled deprecated, use js-enabled-only instead");
    }
    let given = |key: &str| q.get(key).filter(|v| !v.is_empty());
    let (account, stream, consumer) = (given("account"), given("stream"), given("consumer"));
    let mut found = Findings {
        details,
        status: "error",
        code: None,
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let bad = |text: &str| HealthError::new("BAD_REQUEST", text.to_owned());
    if account.is_none() && stream.is_some() {
        let text = "\"account\" must not be empty when checking stream health";
        found.fail(Some(400), "error", bad(text));
    } else if stream.is_none() && consumer.is_some() {
        let text = "\"stream\" must not be empty when checking consumer health";
        found.fail(Some(400), "error", bad(text));
    } else if !server.is_accepting() {
        let err = HealthError::new("CONNECTION", NOT_READY.to_owned());
        found.fail(Some(500), "error", err);
    } else if !js_server_only && !js_enabled_only && !js_enabled {
        let filter = JsHealthFilter {
            account: account.as_deref().unwrap_or_default(),
            stream: stream.as_deref().unwrap_or_default(),
            consumer: consumer.as_deref().unwrap_or_default(),
        };
        jetstream(server, filter, &mut found);
    }
    Ok(found.report())
}

/// Go's single-server JetStream checks over the reporter's scan.
fn jetstream(server: &Server, filter: JsHealthFilter<'_>, found: &mut Findings) {
    const NA: &str = "unavailable";
    let Some(js) = server.jetstream_report() else {
        return;
    };
    let scan = js.health(filter);
    for problem in scan.problems {
        let lost = matches!(problem, JsHealthProblem::StreamLostData { .. });
        let err = problem_error(problem);
        if lost {
            found.warnings.push(err);
        } else {
            found.fail(None, NA, err);
            if !found.details {
                return;
            }
        }
    }
    let (account, stream, consumer) = (filter.account, filter.stream, filter.consumer);
    let missing = if !account.is_empty() && !scan.account_found {
        let text = format!("JetStream account {account:?} not found");
        Some(HealthError {
            account: account.to_owned(),
            ..HealthError::new("ACCOUNT", text)
        })
    } else if !stream.is_empty() && !scan.stream_found {
        let text = format!("JetStream stream {stream:?} not found on account {account:?}");
        Some(HealthError {
            account: account.to_owned(),
            stream: stream.to_owned(),
            ..HealthError::new("STREAM", text)
        })
    } else if !consumer.is_empty() && !scan.consumer_found {
        let text = format!(
            "JetStream consumer {consumer:?} not found for stream {stream:?} on account {account:?}"
        );
        Some(HealthError {
            account: account.to_owned(),
            stream: stream.to_owned(),
            consumer: consumer.to_owned(),
            ..HealthError::new("CONSUMER", text)
        })
    } else {
        None
    };
    if let Some(err) = missing {
        // Go reports only the missing asset, whatever else the scan found.
        found.errors.clear();
        found.fail(Some(404), NA, err);
    }
}

fn problem_error(problem: JsHealthProblem) -> HealthError {
    match problem {
        JsHealthProblem::AccountUnresolved { account } => HealthError {
            error: format!("JetStream account '{account}' could not be resolved"),
            account,
            ..HealthError::new("ACCOUNT", String::new())
        },
        JsHealthProblem::StreamNotRecovered { account, stream } => HealthError {
            error: format!("JetStream stream '{account} > {stream}' could not be recovered"),
            account,
            stream,
            ..HealthError::new("STREAM", String::new())
        },
        JsHealthProblem::StreamWriteError {
            account,
            stream,
            error,
        } => HealthError {
            error: format!("JetStream stream '{account} > {stream}' write error: {error}"),
            account,
            stream,
            ..HealthError::new("STREAM", String::new())
        },
        JsHealthProblem::StreamLostData {
            account,
            stream,
            msgs,
            bytes,
        } => HealthError {
            error: format!(
                "JetStream stream '{account} > {stream}' lost {msgs} messages ({bytes} bytes) \
                 in recovery"
            ),
            account,
            stream,
            ..HealthError::new("STREAM", String::new())
        },
    }
}

//! [`ServerOptions`]: the configuration tree applied to Go's option names, aliases, defaults and
//! value checks.
//!
//! Loading follows Go's order: parse (first syntax error wins), refuse an empty file, then apply
//! every top-level key, collecting all problems. Go separates warnings (an integer where a
//! duration string is expected, read as seconds) from errors; both print warnings first, a
//! normal start only prints warnings, and `-t` fails on them ([`LoadedConfig::strict`]).
//!
//! Values are stored with Go's types (signed integers, `i32` for sizes Go keeps in `int32`) so
//! that everything Go accepts is accepted. Zero values that Go replaces by defaults at startup
//! are replaced by [`ServerOptions::apply_baseline`], which [`crate::merge`] calls after the
//! command line has been applied. Paths stay as written: relative ones resolve against the
//! working directory, as in Go.

mod apply;
mod convert;
mod feature_flags;
mod jetstream_options;
mod server_options;
mod tls;
mod websocket;

pub use apply::{add_tag, AUTHORIZATION_NOT_SUPPORTED_YET, NOT_SUPPORTED_YET};
pub use feature_flags::{feature_flags_banner, feature_flags_in_force, FEATURE_FLAG_DEFAULTS};
pub use jetstream_options::{
    BatchLimits, JetStreamLimits, JetStreamOptions, SyncPolicy, REQUEST_QUEUE_LIMIT_DEFAULT,
};
pub use server_options::{ServerOptions, UserOption};
pub(crate) use tls::override_from_flags as tls_from_flags;
pub use tls::{supported_cipher_suites, supported_curves, TlsOptions, TlsVersion};
pub use websocket::WebsocketOptions;

use crate::error::ConfError;
use crate::lang::{self, Map};

/// A loaded configuration file: the options, Go's warnings, and Go's digest of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// The options (defaults for everything the file does not set; no baseline applied).
    pub options: ServerOptions,
    /// Problems Go only warns about on a normal start (printed one per line, no prefix).
    pub warnings: Vec<ConfError>,
    /// `sha256:<hex>`, as in Go's `configuration file … is valid (sha256:…)`.
    pub digest: String,
}

impl LoadedConfig {
    /// `-t` semantics: Go fails on warnings too.
    pub fn strict(self) -> Result<LoadedConfig, ConfError> {
        if self.warnings.is_empty() {
            return Ok(self);
        }
        let warnings = self.warnings;
        Err(ConfError::combine(warnings, Vec::new()).unwrap_or(ConfError::Many(Vec::new())))
    }
}

impl ServerOptions {
    /// Reads, parses and applies the file at `path`. Warnings are returned, not printed.
    pub fn load(path: &str) -> Result<LoadedConfig, ConfError> {
        let map = lang::parse_file(path)?;
        Self::from_map(&map, path)
    }

    /// [`ServerOptions::load`] keeping only the options (warnings are dropped; use `load` to
    /// print them as Go does).
    pub fn from_file(path: &str) -> Result<ServerOptions, ConfError> {
        Self::load(path).map(|loaded| loaded.options)
    }

    /// Applies an already parsed tree read from `file` on top of the defaults.
    pub fn from_map(map: &Map, file: &str) -> Result<LoadedConfig, ConfError> {
        if map.is_empty() {
            return Err(ConfError::Empty { file: file.into() });
        }
        let mut options = ServerOptions {
            config_file: Some(file.to_owned()),
            ..Self::default()
        };
        let (warnings, errors) = apply::apply(&mut options, map);
        if !errors.is_empty() {
            return Err(ConfError::combine(warnings, errors).unwrap_or(ConfError::Many(Vec::new())));
        }
        Ok(LoadedConfig {
            options,
            warnings,
            digest: lang::config_digest(map),
        })
    }

    /// The checks Go makes when the server starts (after baseline), with Go's wording.
    pub fn validate(&self) -> Result<(), ConfError> {
        if let Some(tls) = self.tls.as_ref().filter(|t| t.pos.is_none()) {
            // The `--tls*` flags name no file position; Go checks these two first.
            let missing = if tls.cert_file.is_empty() {
                Some("TLS Server certificate must be present and valid")
            } else if tls.key_file.is_empty() {
                Some("TLS Server private key must be present and valid")
            } else {
                None
            };
            if let Some(message) = missing {
                return Err(ConfError::Validation {
                    message: message.to_owned(),
                });
            }
        }
        if i64::from(self.max_payload) > self.max_pending {
            return Err(ConfError::Validation {
                message: format!(
                    "max_payload ({}) cannot be higher than max_pending ({})",
                    self.max_payload, self.max_pending
                ),
            });
        }
        if !self.operators.is_empty() {
            // Go checks operator mode before the authorization settings.
            validate_operator_mode(self)?;
            if !self.no_auth_user.is_empty() {
                return Err(ConfError::Validation {
                    message: "no_auth_user not compatible with Trusted Operator".to_owned(),
                });
            }
            validate_jetstream_domain(self)?;
            return websocket::validate(self);
        }
        if !self.no_auth_user.is_empty() {
            server_options::validate_no_auth_user_named(self, &self.no_auth_user)?;
        }
        let system = self.system_account.as_str();
        let known =
            matches!(system, "" | "$SYS" | "$G") || self.accounts.iter().any(|a| a.name == system);
        if !self.no_system_account && !known {
            return Err(ConfError::Validation {
                message: "error resolving system account: account missing".to_owned(),
            });
        }
        validate_jetstream_domain(self)?;
        // Go checks the websocket block last.
        websocket::validate(self)
    }
}

/// Go checks the JetStream domain even while JetStream is off: it must make a valid subject.
fn validate_jetstream_domain(o: &ServerOptions) -> Result<(), ConfError> {
    if o.jetstream_domain.is_empty() {
        return Ok(());
    }
    let subject = format!("$JS.{}.API.>", o.jetstream_domain);
    if nats_subject::is_valid_subject(subject.as_bytes()) {
        return Ok(());
    }
    Err(ConfError::Validation {
        message: format!(
            "invalid domain name: derived {} is not a valid subject",
            natrium_gofmt::go_quote(&subject)
        ),
    })
}

/// Go's checks of operator mode at start (`validateTrustedOperators`).
fn validate_operator_mode(o: &ServerOptions) -> Result<(), ConfError> {
    let fail = |message: &str| {
        Err(ConfError::Validation {
            message: message.to_owned(),
        })
    };
    if !o.resolver_memory {
        return fail("operators require an account resolver to be configured");
    }
    if !o.accounts.is_empty() {
        return fail("operators do not allow Accounts to be configured directly");
    }
    if !o.users.is_empty() {
        return fail("operators do not allow users to be configured directly");
    }
    if !o.system_account.is_empty() {
        let named: Vec<String> = o
            .operators
            .iter()
            .filter_map(|jwt| {
                natrium_auth::jwt::decode::<natrium_auth::jwt::OperatorNats>(jwt).ok()
            })
            .map(|c| c.nats.system_account)
            .collect();
        if named.iter().any(|s| !s.is_empty()) && !named.contains(&o.system_account) {
            return fail("system_account in config and operator JWT must be identical");
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "accounts_tests.rs"]
mod accounts_tests;

#[cfg(test)]
#[path = "inert_tests.rs"]
mod inert_tests;

#[cfg(test)]
#[path = "mappings_tests.rs"]
mod mappings_tests;

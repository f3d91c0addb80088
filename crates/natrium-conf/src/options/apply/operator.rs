//! Operator mode options: `operator` (trusted operator JWTs, inline or in files), `resolver`
//! (only `MEMORY` is implemented) and `resolver_preload` (account JWTs by public key), read and
//! checked with Go's messages. The JWTs are decoded here so that `-t` refuses bad ones, as Go's
//! does.

use natrium_auth::jwt::{decode, undecorate, AccountNats, OperatorNats};

use super::Report;
use crate::lang::{source, Entry, Value};
use crate::options::ServerOptions;

/// Every inline JWT starts with the base64 of `{"`.
const JWT_PREFIX: &str = "eyJ";

/// `operator` (aliases `operators`, `root`, `roots`, `root_operator`, `root_operators`).
pub(super) fn operators(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let names: Vec<String> = match &e.node.value {
        Value::Str(s) => vec![s.clone()],
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                let Value::Str(s) = &item.value else {
                    report.invalid(
                        e,
                        "error parsing operators: unsupported type *conf.token where string is \
                         expected"
                            .to_owned(),
                    );
                    return;
                };
                out.push(s.clone());
            }
            out
        }
        other => {
            report.invalid(
                e,
                format!(
                    "error parsing operators: unsupported type {}",
                    other.go_type_name()
                ),
            );
            return;
        }
    };
    for name in names {
        match read_operator(&name) {
            Ok(jwt) => o.operators.push(jwt),
            Err(why) => report.invalid(e, format!("error parsing operator JWT: {why}")),
        }
    }
}

/// A file holding the operator JWT (decorated or not), or the JWT itself.
fn read_operator(name: &str) -> Result<String, String> {
    let text = match source::read(name) {
        Ok(text) => text,
        Err(_) if name.starts_with(JWT_PREFIX) => name.to_owned(),
        Err(err) => return Err(err.to_string()),
    };
    let jwt = undecorate(&text).to_owned();
    decode::<OperatorNats>(&jwt).map_err(|e| e.to_string())?;
    Ok(jwt)
}

/// `resolver` (aliases `account_resolver`, `accounts_resolver`).
pub(super) fn resolver(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    match &e.node.value {
        Value::Str(s) => {
            let upper = s.to_ascii_uppercase();
            if upper.contains("MEM") {
                o.resolver_memory = true;
            } else if upper.contains("URL") {
                report.not_supported(e, format!("{} URL", e.key));
            } else {
                report.invalid(
                    e,
                    "error parsing account resolver, should be MEM or  URL(\"url\") or a map \
                     containing dir and type state=[FULL|CACHE])"
                        .to_owned(),
                );
            }
        }
        Value::Map(_) => report.not_supported(e, format!("{} (directory)", e.key)),
        other => report.invalid(
            e,
            format!(
                "error parsing operator resolver, wrong type {}",
                other.go_type_name()
            ),
        ),
    }
}

/// `resolver_preload { ACCOUNT_PUBLIC_KEY: account_jwt, … }`.
pub(super) fn preload(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let Value::Map(map) = &e.node.value else {
        report.invalid(
            e,
            "preload should be a map of account_public_key:account_jwt".to_owned(),
        );
        return;
    };
    o.resolver_preload.clear();
    for entry in map {
        let Value::Str(jwt) = &entry.node.value else {
            report.invalid(entry, "preload map value should be a string JWT".to_owned());
            continue;
        };
        if decode::<AccountNats>(jwt).is_err() {
            report.invalid(entry, "invalid account JWT".to_owned());
            continue;
        }
        o.resolver_preload.push((entry.key.clone(), jwt.clone()));
    }
}

//! The `accounts` block: a list of names, or a map of account blocks with `users`, `nkey`,
//! `default_permissions`, `limits`, `exports`, `imports` and `mappings`, read with Go's
//! messages.
//!
//! Reading happens in two steps, as in Go. First every account block is read on its own
//! (errors carry the position of the offending key). Then, only if nothing went wrong so far,
//! exports and imports are linked across accounts ([`super::account_links`]); those errors
//! carry the position of the `accounts` key itself, as Go's do.
//!
//! Users defined in an account join [`ServerOptions::users`] with their account set, so that
//! authentication sees one list; names and nkeys must be unique across all of it.

use std::collections::HashSet;

use natrium_auth::account::{is_public_account_key, AccountLimits, AccountSpec};
use natrium_gofmt::go_quote;

use super::account_items::{exports, imports, ImportDraft};
use super::perms::permissions;
use super::{convert, users, Report};
use crate::error::ConfError;
use crate::lang::{Entry, Value};
use crate::options::{ServerOptions, UserOption};

/// Go's name of the global account, which configuration may not define.
pub(super) const GLOBAL_ACCOUNT: &str = "$G";

/// Exports and imports read from every account, waiting to be linked.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) imports: Vec<(usize, ImportDraft)>,
}

/// Applies the `accounts` key.
pub(super) fn parse(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    match &e.node.value {
        Value::Array(items) => names(o, items, report),
        Value::Map(map) => {
            let mut pending = Pending::default();
            let mut seen: HashSet<String> = o
                .users
                .iter()
                .map(|u| {
                    if u.nkey.is_empty() {
                        u.username.clone()
                    } else {
                        u.nkey.clone()
                    }
                })
                .collect();
            for entry in map {
                account(o, entry, &mut seen, &mut pending, report);
            }
            if report.errors.is_empty() {
                super::account_links::link(o, e, pending, report);
            }
        }
        // Go ignores any other value.
        _ => {}
    }
}

/// `accounts [A, B]`: accounts with nothing but a name.
fn names(o: &mut ServerOptions, items: &[crate::lang::Node], report: &mut Report) {
    let mut seen = HashSet::new();
    for item in items {
        let name = match convert::string(&item.value) {
            Ok(name) => name,
            Err(message) => {
                report.invalid_node_pos(item, message);
                continue;
            }
        };
        if name == GLOBAL_ACCOUNT {
            report.invalid_node_pos(item, format!("{} is a Reserved Account", go_quote(&name)));
            continue;
        }
        if !seen.insert(name.clone()) {
            report.invalid_node_pos(item, format!("Duplicate Account Entry: {name}"));
            continue;
        }
        o.accounts.push(AccountSpec {
            name,
            ..AccountSpec::default()
        });
    }
}

/// One account block.
fn account(
    o: &mut ServerOptions,
    e: &Entry,
    seen: &mut HashSet<String>,
    pending: &mut Pending,
    report: &mut Report,
) {
    if e.node.used_as_variable() {
        return;
    }
    let Value::Map(block) = &e.node.value else {
        report.invalid(e, "Expected map entries for accounts".to_owned());
        return;
    };
    if e.key == GLOBAL_ACCOUNT {
        report.invalid(e, format!("{} is a Reserved Account", go_quote(&e.key)));
        return;
    }
    let index = o.accounts.len();
    let mut spec = AccountSpec {
        name: e.key.clone(),
        ..AccountSpec::default()
    };
    let mut account_users: Vec<UserOption> = Vec::new();
    let mut users_entry: Option<&Entry> = None;
    let mut defaults = None;
    for field in block {
        let key = field.key.to_ascii_lowercase();
        match key.as_str() {
            "nkey" => match &field.node.value {
                Value::Str(nk) if is_public_account_key(nk) => {}
                other => report.invalid(
                    field,
                    format!(
                        "Not a valid public nkey for an account: {}",
                        convert::go_q(other)
                    ),
                ),
            },
            "users" => {
                users_entry = Some(field);
                if let Value::Array(_) = field.node.value {
                    account_users = users(field, report);
                } else {
                    // Go hands its user reader the bare value here, so no position.
                    report.errors.push(ConfError::Unpositioned {
                        message: format!(
                            "Expected users field to be an array, got {}",
                            convert::go_plus_v(&field.node.value)
                        ),
                    });
                }
            }
            "default_permissions" => defaults = permissions(field, report),
            "limits" => limits(&mut spec.limits, field, report),
            "exports" => spec.exports = exports(field, report),
            "msg_trace" | "trace_dest" => {
                super::msg_trace::parse(&mut spec.msg_trace, field, report);
            }
            "jetstream" => spec.jetstream = super::jetstream::account(field, report),
            "imports" => {
                for draft in imports(field, report) {
                    pending.imports.push((index, draft));
                }
            }
            "mappings" | "maps" => super::mappings::parse(&mut spec.mappings, field, report),
            _ if field.node.used_as_variable() => {}
            _ => report.unknown(field),
        }
    }
    o.accounts.push(spec);
    let Some(users_at) = users_entry.filter(|_| !account_users.is_empty()) else {
        return;
    };
    if !o.username.is_empty() {
        report.invalid(
            users_at,
            "Can not have a single user/pass and accounts".to_owned(),
        );
        return;
    }
    if !o.authorization.is_empty() {
        report.invalid(users_at, "Can not have a token and accounts".to_owned());
        return;
    }
    // Go checks nkey users before named ones.
    account_users.sort_by_key(|u| u.nkey.is_empty());
    for mut user in account_users {
        let (id, what) = if user.nkey.is_empty() {
            (user.username.clone(), "user")
        } else {
            (user.nkey.clone(), "nkey")
        };
        if !seen.insert(id.clone()) {
            report.invalid(
                users_at,
                format!("Duplicate {what} {} detected", go_quote(&id)),
            );
            continue;
        }
        if user.permissions.is_none() {
            user.permissions.clone_from(&defaults);
        }
        user.account.clone_from(&e.key);
        o.users.push(user);
    }
}

/// `limits { max_connections, max_subscriptions, max_payload, max_leafnodes }`.
fn limits(out: &mut AccountLimits, e: &Entry, report: &mut Report) {
    let Value::Map(map) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Expected account limits to be a map/struct, got {}",
                convert::go_plus_v(&e.node.value)
            ),
        );
        return;
    };
    for field in map {
        let slot = match field.key.to_ascii_lowercase().as_str() {
            "max_connections" | "max_conn" => &mut out.max_connections,
            "max_subscriptions" | "max_subs" => &mut out.max_subscriptions,
            "max_payload" | "max_pay" => &mut out.max_payload,
            "max_leafnodes" | "max_leafs" => &mut out.max_leafnodes,
            _ if field.node.used_as_variable() => continue,
            _ => {
                report.invalid(
                    field,
                    format!(
                        "Unknown field {} parsing account limits",
                        go_quote(&field.key)
                    ),
                );
                continue;
            }
        };
        match convert::int(&field.node.value) {
            // Go keeps these in an int32.
            Ok(n) => *slot = i64::from(n as i32),
            Err(message) => report.invalid(field, message),
        }
    }
}

/// `system_account` / `system`.
pub(super) fn system_account(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    match &e.node.value {
        Value::Str(name) => o.system_account.clone_from(name),
        _ => report.invalid(e, "system account name must be a string".to_owned()),
    }
}

impl Report {
    /// An error at a value's own position (an array item).
    pub(super) fn invalid_node_pos(&mut self, node: &crate::lang::Node, message: String) {
        self.errors.push(ConfError::Invalid {
            pos: node.pos.clone(),
            message,
        });
    }
}

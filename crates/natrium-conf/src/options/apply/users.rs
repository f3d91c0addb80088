//! `users = [ {user, password, nkey, permissions}, ... ]`, in `authorization` blocks and in
//! accounts.

use super::super::convert::{string_into, Report};
use super::perms::permissions;
use crate::lang::{Entry, Value};
use crate::options::UserOption;

/// Keys of a `users` entry Go knows, other than the name and password, not implemented yet.
const USER_NOT_SUPPORTED_YET: &[&str] = &[
    "allowed_connection_types",
    "connection_types",
    "clients",
    "proxy_required",
    "account",
];

/// `users = [ {user, password}, ... ]`.
pub(super) fn users(e: &Entry, report: &mut Report) -> Vec<UserOption> {
    let Value::Array(items) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Expected users field to be an array, got {}",
                e.node.value.go_type_name()
            ),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Map(fields) = &item.value else {
            report.invalid(
                e,
                format!(
                    "Expected user entry to be a map/struct, got {}",
                    item.value.go_type_name()
                ),
            );
            continue;
        };
        let mut user = UserOption::default();
        for field in fields {
            let key = field.key.to_ascii_lowercase();
            if matches!(key.as_str(), "user" | "username") {
                string_into(&mut user.username, field, report);
            } else if matches!(key.as_str(), "pass" | "password") {
                string_into(&mut user.password, field, report);
            } else if matches!(key.as_str(), "permission" | "permissions" | "authorization") {
                user.permissions = permissions(field, report);
            } else if key == "nkey" {
                string_into(&mut user.nkey, field, report);
            } else if USER_NOT_SUPPORTED_YET.contains(&key.as_str()) {
                report.not_supported(field, format!("{}.{}", e.key, field.key));
            } else if !field.node.used_as_variable() {
                report.unknown(field);
            }
        }
        out.push(user);
    }
    out
}

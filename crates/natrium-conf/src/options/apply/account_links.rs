//! Linking accounts once all are read, in Go's order: stream exports, service exports, stream
//! imports, service imports. Each error names the `accounts` key's position, as Go's do, and
//! reads like Go's (`Error adding stream import "s.>": stream import not authorized`).

use std::collections::HashSet;

use natrium_auth::account::{export_allows, ExportKind, Import, ImportGraph, ImportKind};
use natrium_gofmt::go_quote;
use nats_subject::{is_literal, is_valid_subject, SubjectTransform};

use super::account_items::ImportDraft;
use super::accounts::Pending;
use super::import_mapping::check_service_mapping;
use super::Report;
use crate::lang::Entry;
use crate::options::ServerOptions;

/// Go's `ErrInvalidSubject`.
const INVALID_SUBJECT: &str = "sublist: invalid subject";

pub(super) fn link(o: &mut ServerOptions, at: &Entry, pending: Pending, report: &mut Report) {
    let names: HashSet<String> = o.accounts.iter().map(|a| a.name.clone()).collect();
    for stream in [true, false] {
        check_exports(o, at, &names, stream, report);
    }
    let mut graph = ImportGraph::new(&o.accounts);
    let (streams, services): (Vec<_>, Vec<_>) =
        pending.imports.into_iter().partition(|(_, d)| !d.service);
    for (index, draft) in streams.into_iter().chain(services) {
        let what = if draft.service { "service" } else { "stream" };
        if !names.contains(&draft.account) {
            report.invalid(
                at,
                format!(
                    "{} account not defined for {what} import",
                    go_quote(&draft.account)
                ),
            );
            continue;
        }
        let result = if draft.service {
            service_import(o, index, &draft, &mut graph)
        } else {
            stream_import(o, index, &draft, &mut graph)
        };
        match result {
            Ok(import) => {
                if let Some(account) = o.accounts.get_mut(index) {
                    account.imports.push(import);
                }
            }
            Err(why) => report.invalid(
                at,
                format!(
                    "Error adding {what} import {}: {why}",
                    go_quote(&draft.subject)
                ),
            ),
        }
    }
}

fn check_exports(
    o: &ServerOptions,
    at: &Entry,
    names: &HashSet<String>,
    stream: bool,
    report: &mut Report,
) {
    let what = if stream { "stream" } else { "service" };
    for export in o.accounts.iter().flat_map(|a| &a.exports) {
        if matches!(export.kind, ExportKind::Stream) != stream {
            continue;
        }
        for name in export.accounts.iter().flatten() {
            if !names.contains(name) {
                report.invalid(
                    at,
                    format!("{} account not defined for {what} export", go_quote(name)),
                );
            }
        }
        let position = export.token_position as usize;
        if position > 0 && export.subject.split('.').nth(position - 1) != Some("*") {
            report.invalid(
                at,
                format!(
                    "Error adding {what} export {}: {INVALID_SUBJECT}",
                    go_quote(&export.subject)
                ),
            );
        }
    }
}

/// The exports of the account named `name`.
fn exporter<'a>(o: &'a ServerOptions, name: &str) -> &'a [natrium_auth::account::Export] {
    o.accounts
        .iter()
        .find(|a| a.name == name)
        .map_or(&[][..], |a| a.exports.as_slice())
}

fn importer_name(o: &ServerOptions, index: usize) -> &str {
    o.accounts.get(index).map_or("", |a| a.name.as_str())
}

fn stream_import(
    o: &ServerOptions,
    index: usize,
    d: &ImportDraft,
    graph: &mut ImportGraph,
) -> Result<Import, String> {
    let importer = importer_name(o, index);
    let exports = exporter(o, &d.account);
    if !export_allows(exports, false, importer, &d.subject) {
        return Err("stream import not authorized".to_owned());
    }
    let local = if d.prefix.is_empty() {
        if d.to.is_empty() {
            d.subject.clone()
        } else {
            d.to.clone()
        }
    } else {
        if !is_literal(d.prefix.as_bytes()) {
            return Err("stream import prefix can not contain wildcard tokens".to_owned());
        }
        let dot = if d.prefix.ends_with('.') { "" } else { "." };
        format!("{}{dot}{}", d.prefix, d.subject)
    };
    let import = Import {
        account: d.account.clone(),
        subject: d.subject.clone(),
        local,
        kind: ImportKind::Stream {
            allow_trace: d.allow_trace,
        },
    };
    graph.add(importer, &import).map_err(|e| e.to_string())?;
    if !is_literal(d.subject.as_bytes())
        && import.local != import.subject
        && SubjectTransform::new(import.subject.as_bytes(), import.local.as_bytes()).is_err()
    {
        return Err(format!(
            "failed to create mapping transform for stream import subject from {} to {}: \
             invalid subject",
            go_quote(&import.subject),
            go_quote(&import.local)
        ));
    }
    let duplicate = o.accounts.get(index).is_some_and(|a| {
        a.imports
            .iter()
            .any(|i| !i.is_service() && i.account == d.account && i.subject == d.subject)
    });
    if duplicate {
        return Err("stream import already exists".to_owned());
    }
    Ok(import)
}

fn service_import(
    o: &ServerOptions,
    index: usize,
    d: &ImportDraft,
    graph: &mut ImportGraph,
) -> Result<Import, String> {
    let importer = importer_name(o, index);
    let local = if d.to.is_empty() {
        d.subject.clone()
    } else {
        d.to.clone()
    };
    if !is_valid_subject(local.as_bytes()) || !is_valid_subject(d.subject.as_bytes()) {
        return Err(INVALID_SUBJECT.to_owned());
    }
    if !export_allows(exporter(o, &d.account), true, importer, &d.subject) {
        return Err("service import not authorized".to_owned());
    }
    let import = Import {
        account: d.account.clone(),
        subject: d.subject.clone(),
        local,
        kind: ImportKind::Service { share: d.share },
    };
    graph.add(importer, &import).map_err(|e| e.to_string())?;
    // Go checks only when the exported subject has wildcards: a literal one is a fixed target.
    if !is_literal(import.subject.as_bytes()) && import.local != import.subject {
        if let Err(e) = check_service_mapping(&import.local, &import.subject) {
            return Err(format!(
                "failed to create mapping transform for service import subject from {} to {}: \
                 {e}",
                go_quote(&import.local),
                go_quote(&import.subject)
            ));
        }
    }
    Ok(import)
}

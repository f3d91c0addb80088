//! The cross-account part of a publish (see `crate::account::links`): stream forwards to
//! importers, requests into exporters with a response mapping, and responses routed back.
//!
//! Only accounts with links get here, so this path may allocate (a request's new header and
//! reply subject) where the local path must not. Deliveries in another account are matched
//! with a second small cache, for the one other account the publisher last reached.
//!
//! Counting follows Go's `/accstatz`: a delivery counts as sent by the account whose index
//! matched it, except that stream forwards count for the exporting account (Go matches them
//! there, through shadow subscriptions).

use std::sync::Arc;
use std::time::Instant;

use nats_proto::headers::{write_adding_field, Headers, NATS_REQUEST_INFO};
use nats_subject::Mapped;
use serde::Serialize;

use super::trace::deliver::ImportTrace;
use super::{Message, Publisher};
use crate::account::links::{Links, ServiceForward, StreamForward};
use crate::account::responses::Pending;
use crate::account::Account;

/// Accounts a message may cross, one request or response hop after another, before it is
/// dropped. The configuration refuses import cycles as Go does; this stops any it missed.
pub const IMPORT_HOPS_MAX: u8 = 8;

/// The reply suffix of Go's fast batch publish, whose original reply a request keeps.
const FAST_BATCH_SUFFIX: &[u8] = b".$FI";

impl Publisher {
    /// Does what `account`'s links ask for `msg`; returns the deliveries made. With `seen`,
    /// `msg` is a delivery routed by its subject and stream importers see it on `seen` (a
    /// JetStream message keeps its stored subject across a stream import, as Go's shadow
    /// subscriptions deliver it).
    pub(super) fn cross_account(
        &mut self,
        account: &Arc<Account>,
        links: &Links<Account>,
        msg: &Message<'_>,
        seen: Option<&[u8]>,
        hops: u8,
    ) -> usize {
        if hops >= IMPORT_HOPS_MAX {
            tracing::debug!(
                "Dropping message on {:?} after {hops} account hops",
                String::from_utf8_lossy(msg.subject)
            );
            return 0;
        }
        if links.responds && account.responses.owns(msg.subject) {
            return self.route_response(account, msg, hops);
        }
        let mut delivered = 0;
        for forward in links.streams.iter().filter(|f| f.matches(msg.subject)) {
            delivered += self.forward_stream(forward, msg, seen);
        }
        for forward in links.services.iter().filter(|f| f.matches(msg.subject)) {
            delivered += self.forward_request(account, forward, msg, hops);
        }
        delivered
    }

    /// Delivers in `target` only (no further links), for subscribers matching `msg`. With
    /// `credit`, the deliveries count for that account instead of the publisher's.
    fn deliver_in(
        &mut self,
        target: &Arc<Account>,
        msg: &Message<'_>,
        credit: Option<&Account>,
    ) -> usize {
        self.deliver_in_by(target, msg.subject, msg, credit)
    }

    /// As [`Self::deliver_in`], for the subscribers matching `route`.
    fn deliver_in_by(
        &mut self,
        target: &Arc<Account>,
        route: &[u8],
        msg: &Message<'_>,
        credit: Option<&Account>,
    ) -> usize {
        let result = self.lookup_foreign(target, route);
        if result.plain.is_empty() && result.queues.is_empty() {
            return 0;
        }
        let payload_len = msg.headers.map_or(0, <[u8]>::len) + msg.payload.len();
        self.set_template(msg, payload_len);
        let before = self.batch;
        let n = self.deliver_matches(&result, msg, payload_len);
        if !self.finished_subs.is_empty() {
            self.remove_finished(target);
        }
        if let Some(account) = credit {
            let msgs = self.batch.out_msgs - before.out_msgs;
            let bytes = self.batch.out_bytes - before.out_bytes;
            account.stats.add_out(msgs, bytes);
            self.foreign_out.out_msgs += msgs;
            self.foreign_out.out_bytes += bytes;
        }
        n
    }

    /// Delivers in `target` and follows its own links.
    fn route(&mut self, target: &Arc<Account>, msg: &Message<'_>, hops: u8) -> usize {
        let mut n = self.deliver_in(target, msg, Some(target));
        if let Some(links) = target.links() {
            n += self.cross_account(target, &links, msg, None, hops);
        }
        n
    }

    fn forward_stream(
        &mut self,
        forward: &StreamForward<Account>,
        msg: &Message<'_>,
        seen: Option<&[u8]>,
    ) -> usize {
        let Some(importer) = forward.to.upgrade() else {
            return 0;
        };
        let mut subject = std::mem::take(&mut self.scratch);
        let mapped = forward.mapping.apply(msg.subject, &mut subject);
        let route = if mapped { &subject[..] } else { msg.subject };
        let m = Message {
            subject: seen.unwrap_or(route),
            ..*msg
        };
        self.trace_enter_export(forward, &importer);
        let n = self.deliver_in_by(&importer, route, &m, None);
        self.trace_leave_export();
        self.scratch = subject;
        n
    }

    fn forward_request(
        &mut self,
        importer: &Arc<Account>,
        forward: &ServiceForward<Account>,
        msg: &Message<'_>,
        hops: u8,
    ) -> usize {
        let Some(exporter) = forward.to.upgrade() else {
            return 0;
        };
        let mut subject = Vec::new();
        let mapped = forward.mapping.apply(msg.subject, &mut subject);
        // The exporter's own subject mappings apply to the imported request, as in Go.
        let mut remapped = Vec::new();
        let to = if mapped { &subject[..] } else { msg.subject };
        let to = match exporter.map_subject(to, &mut remapped) {
            Mapped::Unmatched => to,
            Mapped::To => &remapped[..],
            Mapped::Dropped => return 0,
        };
        let reply = msg.reply.map(|reply| {
            exporter.responses.register(Pending {
                requester: Arc::downgrade(importer),
                reply: reply.into(),
                kind: forward.response,
                threshold: forward.threshold,
                last: Instant::now(),
            })
        });
        let mut headers = Some(self.request_headers(importer, forward.share, msg));
        let allow = forward.allow_trace;
        let traced = self.trace_service_import(&exporter, importer, msg, to, allow, &mut headers);
        let stop = matches!(traced, ImportTrace::Stop);
        let m = Message {
            subject: to,
            reply: reply.as_deref(),
            headers: headers.as_deref(),
            payload: msg.payload,
        };
        let n = if stop {
            0
        } else {
            self.route(&exporter, &m, hops + 1)
        };
        self.trace_import_done(&exporter, traced);
        // A trace-only request is answered by nobody: its reply mapping goes too.
        if n == 0 || self.trace_only() {
            if let Some(reply) = &reply {
                exporter.responses.cancel(reply);
            }
        }
        n
    }

    fn route_response(&mut self, exporter: &Arc<Account>, msg: &Message<'_>, hops: u8) -> usize {
        // Go ends a chunked response on a message with neither headers nor payload.
        let last_chunk = msg.payload.is_empty() && msg.headers.is_none();
        let Some(route) = exporter
            .responses
            .route(msg.subject, last_chunk, Instant::now())
        else {
            return 0;
        };
        let mut headers = None;
        let traced = self.trace_service_import(
            &route.requester,
            exporter,
            msg,
            &route.reply,
            false,
            &mut headers,
        );
        let stop = matches!(traced, ImportTrace::Stop);
        let m = Message {
            subject: &route.reply,
            reply: None,
            headers: headers.as_deref().or(msg.headers),
            ..*msg
        };
        let n = if stop {
            0
        } else {
            self.route(&route.requester, &m, hops + 1)
        };
        self.trace_import_done(&route.requester, traced);
        if n == 0 {
            exporter.responses.cancel(msg.subject);
        }
        n
    }

    /// The request's header block with `Nats-Request-Info` describing the requester, as Go
    /// adds it when a request crosses into another account. A request that already carries
    /// one (it crossed before) keeps it.
    fn request_headers(&self, importer: &Account, share: bool, msg: &Message<'_>) -> Vec<u8> {
        let headers = msg.headers;
        let has_info = headers
            .and_then(|h| Headers::parse(h).ok())
            .is_some_and(|h| h.get(NATS_REQUEST_INFO).is_some());
        if has_info {
            return headers.unwrap_or_default().to_vec();
        }
        let mut info = self.request_info(importer, share);
        // A fast batch publish (a reply ending in `.$FI`) is read from its reply, which the
        // exporter only sees mapped: Go passes the original along.
        info.reply = msg
            .reply
            .filter(|r| r.len() > FAST_BATCH_SUFFIX.len() && r.ends_with(FAST_BATCH_SUFFIX))
            .map(|r| String::from_utf8_lossy(r).into_owned());
        let json = serde_json::to_vec(&info).unwrap_or_default();
        let mut out = Vec::with_capacity(headers.map_or(0, <[u8]>::len) + json.len() + 40);
        write_adding_field(&mut out, headers, NATS_REQUEST_INFO, &json);
        out
    }

    pub(super) fn request_info(&self, importer: &Account, share: bool) -> RequestInfo {
        let client = self
            .origin
            .as_ref()
            .filter(|o| std::ptr::eq(Arc::as_ptr(&o.account), importer))
            .map(|o| &o.client);
        let mut info = RequestInfo {
            acc: importer.name.clone(),
            rtt: client.map_or(0, |c| c.activity.rtt_nanos()),
            ..RequestInfo::default()
        };
        if let (true, Some(c)) = (share, client) {
            let meta = c.meta.lock();
            info.start = Some(
                c.started
                    .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
            );
            info.host = Some(c.addr.ip().to_string());
            info.id = Some(c.cid);
            info.user = Some(meta.auth_user.clone()).filter(|s| !s.is_empty());
            info.name = Some(meta.name.clone()).filter(|s| !s.is_empty());
            info.lang = Some(meta.lang.clone()).filter(|s| !s.is_empty());
            info.ver = Some(meta.version.clone()).filter(|s| !s.is_empty());
            info.server = self.server.as_deref().map(str::to_owned);
            info.kind = Some("Client");
            info.client_type = Some(c.client_type());
        }
        info
    }
}

/// Go's `ClientInfo` as a request crossing accounts carries it, fields in Go's order.
#[derive(Debug, Default, Serialize)]
pub(super) struct RequestInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    acc: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lang: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ver: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    rtt: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::account::Accounts;
    use crate::stats::ServerStats;
    use natrium_auth::account::{
        AccountSpec, Export, ExportKind, Import, ImportKind, ResponseType,
        RESPONSE_THRESHOLD_DEFAULT,
    };

    fn service(subject: &str) -> Export {
        Export {
            subject: subject.into(),
            kind: ExportKind::Service {
                response: ResponseType::Singleton,
                threshold: RESPONSE_THRESHOLD_DEFAULT,
                allow_trace: false,
            },
            accounts: None,
            token_position: 0,
        }
    }

    fn import(account: &str, subject: &str, local: &str) -> Import {
        Import {
            account: account.into(),
            subject: subject.into(),
            local: local.into(),
            kind: ImportKind::Service { share: false },
        }
    }

    /// Two accounts importing each other's service under each other's subject: a request
    /// would bounce forever; the hop limit ends it (the configuration check refuses this
    /// setup, the runtime must survive it anyway).
    #[test]
    fn deliver_import_cycle_stops_at_the_hop_limit() {
        let a = AccountSpec {
            name: "A".into(),
            exports: vec![service("y")],
            imports: vec![import("B", "x", "y")],
            ..AccountSpec::default()
        };
        let b = AccountSpec {
            name: "B".into(),
            exports: vec![service("x")],
            imports: vec![import("A", "y", "x")],
            ..AccountSpec::default()
        };
        let config = crate::config::CoreConfig {
            accounts: vec![a, b],
            no_system_account: true,
            ..crate::config::CoreConfig::default()
        };
        let accounts = Accounts::build(&config).expect("accounts");
        let a = Arc::clone(accounts.get("A").expect("A"));
        let b = Arc::clone(accounts.get("B").expect("B"));
        let mut publisher = Publisher::new(1, Arc::new(ServerStats::default()));
        let msg = Message {
            subject: b"y",
            reply: Some(b"_INBOX.1"),
            headers: None,
            payload: b"ping",
        };
        assert_eq!(publisher.publish(&a, &msg), 0);
        // Nothing was delivered, so no response mapping survives.
        assert!(a.responses.is_empty() && b.responses.is_empty());
    }
}

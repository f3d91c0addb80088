//! The events the system services publish, from what the runtime reports
//! (`natrium_core::events`) and from the heartbeat:
//!
//! - `$SYS.ACCOUNT.<acc>.CONNECT` and `.DISCONNECT`, then the account's connection count on
//!   `$SYS.ACCOUNT.<acc>.SERVER.CONNS` and `$SYS.SERVER.ACCOUNT.<acc>.CONNS` (not for `$G`, as
//!   Go does not count the global account);
//! - `$SYS.SERVER.<id>.CLIENT.AUTH.ERR` for a client refused at authentication: the disconnect
//!   event's document, reason `Authentication Failure`;
//! - `$SYS.SERVER.<id>.LAMEDUCK` and `$SYS.SERVER.<id>.SHUTDOWN`: the bare `server` object;
//! - the `statsz` document of the heartbeat and of `STATSZ` requests;
//! - message trace events, on the destination the traced message named, in its account.

use natrium_core::account::GLOBAL_ACCOUNT;
use natrium_core::closed::ClosedConn;
use natrium_core::deliver::trace::{Compression, MsgTraceEvent, TraceReport};
use natrium_core::events::{ConnectedClient, ServerEvent};
use natrium_core::stats::ServerStats;

use super::account::conns_event;
use super::payload::{
    event_id, AccountStat, ClientInfo, ConnectEvent, DisconnectEvent, MsgBytes, ServerHeader,
    Statsz, CONNECT_EVENT_TYPE, DISCONNECT_EVENT_TYPE,
};
use super::service::Services;
use crate::process;
use crate::varz::rfc3339;

impl Services {
    pub(super) fn event(&mut self, event: ServerEvent) {
        let id = self.server.id().to_owned();
        match event {
            ServerEvent::Connected(client) => self.connected(&client),
            ServerEvent::Disconnected(closed) => {
                let account = closed.account.clone();
                let subject = format!("$SYS.ACCOUNT.{account}.DISCONNECT");
                if !self.wanted(&subject) {
                    self.account_conns(&account);
                    return;
                }
                let doc = self.disconnect_doc(&closed);
                self.account_conns(&account);
                self.publish_json(&subject, &doc);
            }
            ServerEvent::AuthFailed(closed) => {
                let subject = format!("$SYS.SERVER.{id}.CLIENT.AUTH.ERR");
                if self.wanted(&subject) {
                    let doc = self.disconnect_doc(&closed);
                    self.publish_json(&subject, &doc);
                }
            }
            ServerEvent::LameDuck => {
                let doc = self.identity.stamp();
                self.publish_json(&format!("$SYS.SERVER.{id}.LAMEDUCK"), &doc);
            }
            ServerEvent::ShuttingDown(ack) => {
                let doc = self.identity.stamp();
                self.publish_json(&format!("$SYS.SERVER.{id}.SHUTDOWN"), &doc);
                ack.done();
            }
            ServerEvent::MsgTrace(report) => self.msg_trace(&report),
            // Go has no system event for these; the per-account subscriptions follow the
            // registry at the next heartbeat.
            ServerEvent::Account(_) => {}
        }
    }

    /// A traced message's event: published in the publisher's account, stamped like every
    /// system event (Go sends it through the same loop).
    fn msg_trace(&mut self, report: &TraceReport) {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            server: ServerHeader,
            #[serde(flatten)]
            event: &'a MsgTraceEvent,
        }
        let doc = Doc {
            server: self.identity.stamp(),
            event: &report.event,
        };
        let Ok(body) = serde_json::to_vec(&doc) else {
            return;
        };
        let (account, dest) = (&report.account, &report.dest);
        let encoded = match report.compression {
            Compression::None => return self.client.publish_in(account, dest, None, &body),
            Compression::Gzip => gzip(&body).map(|b| ("gzip", b)),
            Compression::Snappy => snappy(&body).map(|b| ("snappy", b)),
            Compression::Identity => Ok(("identity", body)),
        };
        match encoded {
            Ok((name, body)) => {
                let headers = format!("NATS/1.0\r\nContent-Encoding: {name}\r\n\r\n");
                self.client
                    .publish_with_headers(account, dest, headers.as_bytes(), &body);
            }
            Err(e) => tracing::warn!("Could not compress a message trace event: {e}"),
        }
    }

    /// Whether anyone would receive an event on `subject`. If not, the event is not built (its
    /// JSON is most of a connection's cost when clients come and go and nothing listens), but
    /// its sequence number is spent, so subscribers see the numbers they would have seen.
    fn wanted(&mut self, subject: &str) -> bool {
        if self.client.has_interest(subject) {
            return true;
        }
        self.identity.skip_stamp();
        false
    }

    fn connected(&mut self, client: &ConnectedClient) {
        let account = client.account.clone();
        self.serve_account(&account);
        let subject = format!("$SYS.ACCOUNT.{account}.CONNECT");
        if !self.wanted(&subject) {
            self.account_conns(&account);
            return;
        }
        let meta = client.meta.clone();
        let info = ClientInfo {
            start: Some(rfc3339(client.started)),
            host: client.addr.ip().to_string(),
            id: client.cid,
            acc: account.clone(),
            user: meta.auth_user,
            name: meta.name,
            lang: meta.lang,
            ver: meta.version,
            name_tag: account.clone(),
            kind: "Client".to_owned(),
            client_type: client.client_type.to_owned(),
            ..ClientInfo::default()
        };
        let doc = ConnectEvent {
            kind: CONNECT_EVENT_TYPE,
            id: event_id(),
            timestamp: rfc3339(chrono::Utc::now()),
            server: self.identity.stamp(),
            client: info,
        };
        self.account_conns(&account);
        self.publish_json(&subject, &doc);
    }

    fn disconnect_doc(&self, closed: &ClosedConn) -> DisconnectEvent {
        let account = &closed.account;
        let info = ClientInfo {
            start: Some(rfc3339(closed.started)),
            host: closed.addr.ip().to_string(),
            id: closed.cid,
            acc: account.clone(),
            user: closed.meta.auth_user.clone(),
            name: closed.meta.name.clone(),
            lang: closed.meta.lang.clone(),
            ver: closed.meta.version.clone(),
            rtt: closed.rtt_nanos,
            stop: Some(rfc3339(closed.stopped)),
            name_tag: account.clone(),
            kind: "Client".to_owned(),
            client_type: closed.client_type.to_owned(),
        };
        DisconnectEvent {
            kind: DISCONNECT_EVENT_TYPE,
            id: event_id(),
            timestamp: rfc3339(closed.stopped),
            server: self.identity.stamp(),
            client: info,
            // From the client's side, as Go reports it: what it sent is what the server read.
            sent: MsgBytes {
                msgs: closed.out_msgs,
                bytes: closed.out_bytes,
            },
            received: MsgBytes {
                msgs: closed.in_msgs,
                bytes: closed.in_bytes,
            },
            reason: closed.reason.as_str(),
        }
    }

    /// The account's connection count, on both subjects Go publishes it on.
    fn account_conns(&mut self, account: &str) {
        if account == GLOBAL_ACCOUNT {
            return;
        }
        let Some(stat) = self
            .server
            .accounts()
            .iter()
            .find(|a| a.name == account)
            .map(|a| AccountStat::of(a))
        else {
            return;
        };
        let server_subject = format!("$SYS.SERVER.ACCOUNT.{account}.CONNS");
        let account_subject = format!("$SYS.ACCOUNT.{account}.SERVER.CONNS");
        if !self.client.has_interest(&server_subject) && !self.wanted(&account_subject) {
            return;
        }
        let doc = conns_event(&self.identity, stat);
        self.publish_json(&server_subject, &doc);
        self.publish_json(&account_subject, &doc);
    }

    pub(super) fn statsz(&self) -> Statsz {
        let server = &self.server;
        let stats = server.stats();
        let load = ServerStats::load;
        let sent = MsgBytes {
            msgs: load(&stats.out_msgs),
            bytes: load(&stats.out_bytes),
        };
        let received = MsgBytes {
            msgs: load(&stats.in_msgs),
            bytes: load(&stats.in_bytes),
        };
        let cores = process::cores();
        Statsz {
            start: rfc3339(server.started()),
            mem: process::resident_bytes(),
            cores,
            cpu: 0.0,
            connections: server.num_clients(),
            total_connections: load(&stats.total_connections),
            active_accounts: server
                .accounts()
                .iter()
                .filter(|a| a.stats.conns() > 0)
                .count(),
            subscriptions: server.num_subscriptions(),
            sent,
            sent_to_clients: sent,
            received,
            received_from_clients: received,
            slow_consumers: load(&stats.slow_consumers),
            active_servers: 1,
            gomaxprocs: cores,
        }
    }
}

fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body)?;
    encoder.finish()
}

/// Snappy's framing format, as Go writes it (its S2 writer in Snappy-compatible mode).
fn snappy(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut encoder = snap::write::FrameEncoder::new(Vec::new());
    encoder.write_all(body)?;
    encoder.into_inner().map_err(|e| e.error().kind().into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::Read as _;

    #[test]
    fn msg_trace_event_compressed_readably() {
        let body = br#"{"server":{},"events":[]}"#.repeat(20);
        let framed = super::snappy(&body).unwrap();
        // Snappy's stream identifier chunk, as Go's writer starts its stream.
        assert!(framed.starts_with(b"\xff\x06\x00\x00sNaPpY"));
        let mut back = Vec::new();
        snap::read::FrameDecoder::new(&framed[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, body);
        let zipped = super::gzip(&body).unwrap();
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&zipped[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, body);
    }
}

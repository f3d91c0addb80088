//! The system services task: an internal client in the system account, its request handlers,
//! the client event publisher and the `STATSZ` heartbeat (first after 250 ms, then doubling up
//! to every 10 s, as Go paces it).

use std::time::Duration;

use natrium_core::closed::ClosedConn;
use natrium_core::events::ClientEvent;
use natrium_core::internal::{InboundMsg, InternalClient};
use natrium_core::stats::ServerStats;
use natrium_core::Server;
use tokio::sync::mpsc;

use super::payload::{
    event_id, AccountConnsEvent, AccountStat, ClientInfo, ConnectEvent, DisconnectEvent, MsgBytes,
    ServerIdentity, Statsz, StatszMsg, ACCOUNT_CONNS_TYPE, CONNECT_EVENT_TYPE,
    DISCONNECT_EVENT_TYPE,
};
use super::requests::{self, Endpoint, RequestOptions};
use crate::http::MonitorSettings;
use crate::query::Query;
use crate::varz::{rfc3339, HttpInfo};
use crate::{process, subsz, varz};

const STATSZ_FIRST: Duration = Duration::from_millis(250);
const STATSZ_EVERY: Duration = Duration::from_secs(10);

struct Services {
    server: Server,
    client: InternalClient,
    identity: ServerIdentity,
    http: Option<MonitorSettings>,
}

/// Starts the system account's services; they stop with the server.
pub fn start_system_services(server: &Server, http: Option<MonitorSettings>) {
    if !server.has_system_account() {
        return;
    }
    let Some(events) = server.client_events() else {
        return;
    };
    let (client, inbox) = InternalClient::start(server, server.system_account());
    let identity = ServerIdentity::new(
        server.name().to_owned(),
        server.config().host.clone(),
        server.id().to_owned(),
    );
    let mut services = Services {
        server: server.clone(),
        client,
        identity,
        http,
    };
    for subject in requests::subjects(server.id()) {
        services.client.subscribe(&subject);
    }
    let owner = server.clone();
    server.spawn_service(async move {
        services.run(inbox, events, &owner).await;
    });
}

impl Services {
    async fn run(
        &mut self,
        mut inbox: mpsc::Receiver<InboundMsg>,
        mut events: mpsc::Receiver<ClientEvent>,
        server: &Server,
    ) {
        let mut every = STATSZ_FIRST;
        let mut heartbeat = Box::pin(tokio::time::sleep(every));
        loop {
            tokio::select! {
                () = server.shutting_down() => break,
                Some(msg) = inbox.recv() => self.request(&msg),
                Some(event) = events.recv() => self.client_event(event),
                () = &mut heartbeat => {
                    let subject = format!("$SYS.SERVER.{}.STATSZ", self.server.id());
                    let doc = StatszMsg { server: self.identity.stamp(), statsz: self.statsz() };
                    self.publish_json(&subject, &doc);
                    every = (every * 2).min(STATSZ_EVERY);
                    heartbeat.as_mut().reset(tokio::time::Instant::now() + every);
                }
            }
        }
    }

    fn publish_json<T: serde::Serialize>(&mut self, subject: &str, doc: &T) {
        if let Ok(body) = serde_json::to_vec(doc) {
            self.client.publish(subject, None, &body);
        }
    }

    fn request(&mut self, msg: &InboundMsg) {
        let Some(reply) = msg.reply.as_deref() else {
            return;
        };
        let Some(endpoint) = requests::parse_subject(&msg.subject, self.server.id()) else {
            return;
        };
        let body = match RequestOptions::parse(endpoint, &msg.payload) {
            Ok(opts) if !opts.selects(&self.identity) => return,
            Ok(opts) => self.answer(endpoint, &opts.query),
            Err(err) => requests::bad_body_reply(&self.identity, err.0),
        };
        self.client.publish(reply, None, &body);
    }

    fn answer(&self, endpoint: Endpoint, q: &Query) -> Vec<u8> {
        let id = &self.identity;
        let server = &self.server;
        let result = match endpoint {
            Endpoint::Statsz => {
                let doc = StatszMsg {
                    server: id.stamp(),
                    statsz: self.statsz(),
                };
                return serde_json::to_vec(&doc).unwrap_or_default();
            }
            Endpoint::Varz => Ok(requests::reply(id, varz::varz(server, self.http_info()))),
            Endpoint::Connz => crate::connz::ConnzOptions::parse(q)
                .map(|o| requests::reply(id, crate::connz::connz(server, &o))),
            Endpoint::Subsz => {
                subsz::SubszOptions::parse(q).map(|o| requests::reply(id, subsz::subsz(server, &o)))
            }
            Endpoint::Healthz => crate::healthz::check(server, q).map(|mut report| {
                report.doc.status_code = Some(report.code);
                requests::reply(id, report.doc)
            }),
            Endpoint::Routez => Ok(requests::reply(id, crate::cluster::routez(server))),
            Endpoint::Gatewayz => Ok(requests::reply(id, crate::cluster::gatewayz(server))),
            Endpoint::Leafz => Ok(requests::reply(id, crate::cluster::leafz(server))),
            Endpoint::Jsz => Ok(requests::reply(id, crate::cluster::jsz(server))),
            Endpoint::Accountz => {
                crate::accounts::accountz(server, q).map(|doc| requests::reply(id, doc))
            }
            // Go answers IDZ with the bare identity, without the envelope.
            Endpoint::Idz => {
                let doc = serde_json::json!({ "name": id.name, "host": id.host, "id": id.id });
                return serde_json::to_vec(&doc).unwrap_or_default();
            }
        };
        result.unwrap_or_else(|err| requests::failed_reply(id, err.0))
    }

    fn http_info(&self) -> HttpInfo {
        match &self.http {
            Some(http) => HttpInfo {
                host: http.host.clone(),
                port: if http.tls { 0 } else { i64::from(http.port) },
                https_port: if http.tls { i64::from(http.port) } else { 0 },
                base_path: http.base_path.clone(),
                req_stats: std::collections::BTreeMap::new(),
            },
            None => HttpInfo {
                host: String::new(),
                port: 0,
                https_port: 0,
                base_path: String::new(),
                req_stats: std::collections::BTreeMap::new(),
            },
        }
    }

    fn statsz(&self) -> Statsz {
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

    fn client_event(&mut self, event: ClientEvent) {
        let (account, subject_kind) = match &event {
            ClientEvent::Connected(client) => (client.account.clone(), "CONNECT"),
            ClientEvent::Disconnected(closed) => (closed.account.clone(), "DISCONNECT"),
        };
        let now = chrono::Utc::now();
        let subject = format!("$SYS.ACCOUNT.{account}.{subject_kind}");
        if !self.client.has_interest(&subject) {
            // Nobody would receive it: the connection count still goes out if wanted, and the
            // event only counts its sequence number (its JSON is most of a connection's cost
            // when clients come and go and nothing listens).
            self.account_conns(&account);
            self.identity.skip_stamp();
            return;
        }
        match event {
            ClientEvent::Connected(client) => {
                let meta = client.meta;
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
                    timestamp: rfc3339(now),
                    server: self.identity.stamp(),
                    client: info,
                };
                self.account_conns(&account);
                self.publish_json(&subject, &doc);
            }
            ClientEvent::Disconnected(closed) => {
                let doc = self.disconnect_doc(&closed, &account);
                self.account_conns(&account);
                self.publish_json(&subject, &doc);
            }
        }
    }

    fn disconnect_doc(&self, closed: &ClosedConn, account: &str) -> DisconnectEvent {
        let info = ClientInfo {
            start: Some(rfc3339(closed.started)),
            host: closed.addr.ip().to_string(),
            id: closed.cid,
            acc: account.to_owned(),
            user: closed.meta.auth_user.clone(),
            name: closed.meta.name.clone(),
            lang: closed.meta.lang.clone(),
            ver: closed.meta.version.clone(),
            rtt: closed.rtt_nanos,
            stop: Some(rfc3339(closed.stopped)),
            name_tag: account.to_owned(),
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
        let Some(acc) = self.server.account(account).cloned() else {
            return;
        };
        let server_subject = format!("$SYS.SERVER.ACCOUNT.{account}.CONNS");
        let account_subject = format!("$SYS.ACCOUNT.{account}.SERVER.CONNS");
        if !self.client.has_interest(&server_subject) && !self.client.has_interest(&account_subject)
        {
            self.identity.skip_stamp();
            return;
        }
        let load = natrium_core::account::AccountStats::load;
        let conns = acc.stats.conns();
        let stat = AccountStat {
            acc: account.to_owned(),
            name: account.to_owned(),
            conns,
            leafnodes: 0,
            total_conns: conns,
            num_subscriptions: acc.sublist.count() as u64,
            // Go's direction: what the account's clients were sent, and what they published.
            sent: MsgBytes {
                msgs: load(&acc.stats.out_msgs),
                bytes: load(&acc.stats.out_bytes),
            }
            .into(),
            received: MsgBytes {
                msgs: load(&acc.stats.in_msgs),
                bytes: load(&acc.stats.in_bytes),
            }
            .into(),
            slow_consumers: load(&acc.stats.slow_consumers),
        };
        let doc = AccountConnsEvent {
            kind: ACCOUNT_CONNS_TYPE,
            id: event_id(),
            timestamp: rfc3339(chrono::Utc::now()),
            server: self.identity.stamp(),
            stat,
        };
        self.publish_json(&server_subject, &doc);
        self.publish_json(&account_subject, &doc);
    }
}

//! The system services task: an internal client in the system account (also subscribed in
//! every other account for the requests Go imports there), its request handlers, the event
//! publisher (see [`super::events`]) and the `STATSZ` heartbeat (first after 250 ms, then
//! doubling up to every 10 s, as Go paces it).
//!
//! Each subscription is recorded with the handler it feeds ([`Route`]), so that a request
//! matching two of them (`$SYS.REQ.ACCOUNT.PING.STATZ` also matches
//! `$SYS.REQ.ACCOUNT.*.STATZ`) is told apart as Go tells its handlers apart. An answer is
//! published into the account the request came from.
//!
//! Accounts come and go (operator mode registers them on first use, a reload may replace
//! them): the per-account subscriptions are brought in line with the registry at start, when
//! a client connects to an account not yet served, and at each heartbeat.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use natrium_core::account::Account;
use natrium_core::events::ServerEvent;
use natrium_core::internal::{InboundMsg, InternalClient};
use natrium_core::Server;
use tokio::sync::mpsc;

use super::account::{self as acc, AccountReq};
use super::payload::{ServerIdentity, StatszMsg};
use super::requests::{self, Endpoint, RequestOptions};
use super::user;
use crate::http::MonitorSettings;
use crate::query::Query;
use crate::varz::HttpInfo;
use crate::{subsz, varz};

const STATSZ_FIRST: Duration = Duration::from_millis(250);
const STATSZ_EVERY: Duration = Duration::from_secs(10);

/// `$SYS.REQ.USER.INFO`, which every account may ask.
const USER_INFO: &str = "$SYS.REQ.USER.INFO";

/// Which handler a subscription feeds.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// `$SYS.REQ.SERVER.PING[.<EP>]`, `$SYS.REQ.SERVER.<id>.<EP>`.
    Server,
    /// `$SYS.REQ.ACCOUNT.*.<KIND>` (the account from the subject), or with `None`
    /// `$SYS.REQ.ACCOUNT.PING.STATZ` (every account).
    Account(Option<AccountReq>),
    /// `$SYS.REQ.USER.*.INFO`, asked directly in the system account.
    UserDirect,
    /// `$SYS.REQ.USER.INFO`, in any account.
    UserInfo,
    /// A request another account makes about itself.
    Imported(AccountReq),
}

pub(super) struct Services {
    pub(super) server: Server,
    pub(super) client: InternalClient,
    pub(super) identity: ServerIdentity,
    http: Option<MonitorSettings>,
    routes: BTreeMap<u64, Route>,
    /// The subscriptions in each account other than the system account, with the account
    /// object they were made in.
    imported: HashMap<String, (Arc<Account>, Vec<u64>)>,
}

/// Starts the system account's services; they stop with the server.
pub fn start_system_services(server: &Server, http: Option<MonitorSettings>) {
    if !server.has_system_account() {
        return;
    }
    let events = server.events();
    let (client, inbox) = InternalClient::start(server, server.system_account());
    let config = server.config();
    let identity = ServerIdentity::new(
        server.name().to_owned(),
        config.host.clone(),
        server.id().to_owned(),
    )
    .with_description(config.tags.clone(), config.metadata.clone())
    .with_server(server.clone());
    let mut services = Services {
        server: server.clone(),
        client,
        identity,
        http,
        routes: BTreeMap::new(),
        imported: HashMap::new(),
    };
    services.subscribe_system();
    services.reconcile_imports();
    let owner = server.clone();
    server.spawn_service(async move {
        services.run(inbox, events, &owner).await;
    });
}

impl Services {
    fn subscribe_system(&mut self) {
        let mut subjects: Vec<(String, Route)> = requests::subjects(self.server.id())
            .into_iter()
            .map(|s| (s, Route::Server))
            .collect();
        subjects.extend(
            acc::system_subjects()
                .into_iter()
                .map(|(s, req)| (s, Route::Account(req))),
        );
        subjects.push(("$SYS.REQ.USER.*.INFO".to_owned(), Route::UserDirect));
        subjects.push((USER_INFO.to_owned(), Route::UserInfo));
        let system = self.server.system_account();
        for (subject, route) in subjects {
            if let Some(sid) = self.client.subscribe_in(&system, &subject) {
                self.routes.insert(sid, route);
            }
        }
    }

    /// Subscribes in `account` to the requests it may make about itself.
    fn import_into(&mut self, account: &Arc<Account>) {
        self.drop_imports(&account.name);
        let mut sids = Vec::with_capacity(acc::IMPORTED.len() + 1);
        let wanted = acc::IMPORTED
            .iter()
            .map(|&(subject, req)| (subject, Route::Imported(req)))
            .chain([(USER_INFO, Route::UserInfo)]);
        for (subject, route) in wanted {
            if let Some(sid) = self.client.subscribe_in(account, subject) {
                self.routes.insert(sid, route);
                sids.push(sid);
            }
        }
        self.imported
            .insert(account.name.clone(), (Arc::clone(account), sids));
    }

    fn drop_imports(&mut self, name: &str) {
        if let Some((_, sids)) = self.imported.remove(name) {
            for sid in sids {
                self.client.unsubscribe(sid);
                self.routes.remove(&sid);
            }
        }
    }

    /// Whether `account` is served by the subscriptions made in this very object.
    fn is_served(&self, account: &Arc<Account>) -> bool {
        self.imported
            .get(&account.name)
            .is_some_and(|(known, _)| Arc::ptr_eq(known, account))
    }

    /// Brings the per-account subscriptions in line with the accounts in use.
    pub(super) fn reconcile_imports(&mut self) {
        let system = self.server.system_account();
        let accounts: Vec<Arc<Account>> = self
            .server
            .accounts()
            .iter()
            .filter(|a| a.is_registered() && !Arc::ptr_eq(a, &system))
            .map(Arc::clone)
            .collect();
        let live: HashSet<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
        let gone: Vec<String> = self
            .imported
            .keys()
            .filter(|name| !live.contains(name.as_str()))
            .cloned()
            .collect();
        for name in gone {
            self.drop_imports(&name);
        }
        for account in &accounts {
            if !self.is_served(account) {
                self.import_into(account);
            }
        }
    }

    /// Serves the account a client just connected to, if it is new to us.
    pub(super) fn serve_account(&mut self, name: &str) {
        let Some(account) = self.server.account(name) else {
            return;
        };
        if !self.is_served(&account) && !Arc::ptr_eq(&account, &self.server.system_account()) {
            self.import_into(&account);
        }
    }

    async fn run(
        &mut self,
        mut inbox: mpsc::Receiver<InboundMsg>,
        mut events: mpsc::Receiver<ServerEvent>,
        server: &Server,
    ) {
        let mut every = STATSZ_FIRST;
        let mut heartbeat = Box::pin(tokio::time::sleep(every));
        loop {
            tokio::select! {
                () = server.shutting_down() => break,
                Some(msg) = inbox.recv() => self.request(&msg),
                Some(event) = events.recv() => self.event(event),
                () = &mut heartbeat => {
                    let subject = format!("$SYS.SERVER.{}.STATSZ", self.server.id());
                    let doc = StatszMsg { server: self.identity.stamp(), statsz: self.statsz() };
                    self.publish_json(&subject, &doc);
                    self.reconcile_imports();
                    every = (every * 2).min(STATSZ_EVERY);
                    heartbeat.as_mut().reset(tokio::time::Instant::now() + every);
                }
            }
        }
    }

    pub(super) fn publish_json<T: serde::Serialize>(&mut self, subject: &str, doc: &T) {
        if let Ok(body) = serde_json::to_vec(doc) {
            self.client.publish(subject, None, &body);
        }
    }

    fn request(&mut self, msg: &InboundMsg) {
        // Subjects the services answer are text; a request whose subject or reply is not
        // UTF-8 matched only through a wildcard and is not one of theirs.
        let (Some(reply), Ok(subject)) = (
            msg.reply
                .as_deref()
                .and_then(|r| std::str::from_utf8(r).ok()),
            std::str::from_utf8(&msg.subject),
        ) else {
            return;
        };
        let (Some(&route), Some(account)) = (
            self.routes.get(&msg.sid),
            self.client.account_of(msg.sid).map(Arc::clone),
        ) else {
            return;
        };
        let (server, id, body) = (&self.server, &self.identity, &msg.payload[..]);
        let answer = match route {
            Route::Server => self.server_request(subject, body),
            Route::Account(Some(req)) => match acc::subject_account(subject) {
                Ok(name) => acc::answer(server, id, Some(name), req, body),
                Err(err) => Some(requests::failed_reply(id, err.0)),
            },
            Route::Account(None) => acc::answer(server, id, None, AccountReq::Statz, body),
            Route::Imported(req) => acc::answer(server, id, Some(&account.name), req, body),
            Route::UserInfo => Some(user::answer(server, id, msg.headers.as_deref(), false)),
            Route::UserDirect => Some(user::answer(server, id, msg.headers.as_deref(), true)),
        };
        if let Some(answer) = answer {
            self.client.publish_in(&account, reply, None, &answer);
        }
    }

    /// `$SYS.REQ.SERVER.…`; `None` when the filters exclude this server.
    fn server_request(&self, subject: &str, body: &[u8]) -> Option<Vec<u8>> {
        let endpoint = requests::parse_subject(subject, self.server.id())?;
        match RequestOptions::parse(endpoint, body) {
            Ok(opts) if !opts.selects(&self.identity) => None,
            Ok(opts)
                if endpoint == Endpoint::Jsz && crate::jsz::skips(&self.server, &opts.query) =>
            {
                None
            }
            Ok(opts) => Some(self.answer(endpoint, &opts.query)),
            Err(err) => Some(requests::bad_body_reply(&self.identity, err.0)),
        }
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
            Endpoint::Jsz => crate::jsz::JszOptions::parse(q)
                .and_then(|o| crate::jsz::jsz(server, &o))
                .map(|doc| requests::reply(id, doc)),
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

    /// `/varz`'s `http` part, with the HTTP listener's request counts.
    fn http_info(&self) -> HttpInfo {
        match &self.http {
            Some(http) => HttpInfo {
                host: http.host.clone(),
                port: if http.tls { 0 } else { http.port },
                https_port: if http.tls { http.port } else { 0 },
                base_path: http.base_path.clone(),
                req_stats: http.req_stats.snapshot(),
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
}

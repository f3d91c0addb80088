//! JetStream tests' common steps, shared by the `jetstream_*` test files (each includes this
//! file with `#[path]`): a server (ours, or Go's for a differential run) on its own
//! configuration and store directory, logins whose password is the user's name, API requests
//! answered within a bounded wait, and times normalised for comparing documents.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;

use natrium_tests::ServerProcess;
use serde_json::Value;

/// How long an answer may take.
pub const WAIT: Duration = Duration::from_secs(10);

/// A server with its configuration file and store under `dir`, removed with it.
pub struct JsServer {
    pub name: &'static str,
    pub server: ServerProcess,
    pub dir: tempfile::TempDir,
}

impl JsServer {
    /// Ours (`go` false) or Go's (`None` when not installed) on `config(<dir>/store)`, written
    /// to `<dir>/js.conf`, with client and monitoring ports chosen by the system.
    pub fn start(
        name: &'static str,
        go: bool,
        config: impl Fn(&Path) -> String,
    ) -> Option<JsServer> {
        Self::start_in(tempfile::tempdir().expect("tempdir"), name, go, config)
    }

    /// As [`JsServer::start`], in `dir` (a restart keeps its store).
    pub fn start_in(
        dir: tempfile::TempDir,
        name: &'static str,
        go: bool,
        config: impl Fn(&Path) -> String,
    ) -> Option<JsServer> {
        std::fs::write(conf_path(dir.path()), config(&dir.path().join("store")))
            .expect("write config");
        let server = launch(dir.path(), go)?;
        Some(JsServer { name, server, dir })
    }

    /// The store's `jetstream` directory.
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("store").join("jetstream")
    }
}

fn conf_path(dir: &Path) -> PathBuf {
    dir.join("js.conf")
}

/// Starts ours or Go's on the configuration already in `dir`.
pub fn launch(dir: &Path, go: bool) -> Option<ServerProcess> {
    let conf = conf_path(dir);
    let conf = conf.to_str().expect("utf-8 path").to_owned();
    let args = ["-c", &conf, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    if go {
        ServerProcess::start_go(&args)
    } else {
        Some(ServerProcess::start(&args))
    }
}

/// Three accounts: the system account (`sys`), `A` with JetStream (`a`), `B` without (`b`).
pub fn three_accounts(store: &Path) -> String {
    format!(
        "accounts {{\n\
           SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
           A {{ jetstream: enabled, users [ {{user: a, password: a}} ] }}\n\
           B {{ users [ {{user: b, password: b}} ] }}\n\
         }}\n\
         system_account: SYS\n\
         jetstream {{ store_dir: \"{}\" }}\n",
        store.display()
    )
}

/// Ours with JetStream on, storing in `dir`, from the command line alone.
pub fn start_js(dir: &Path) -> ServerProcess {
    let dir = dir.display().to_string();
    ServerProcess::start(&["-js", "-sd", &dir])
}

/// Ours, then Go's when installed, each on `config`.
pub fn ours_then_go(config: impl Fn(&Path) -> String) -> Vec<JsServer> {
    let mut out: Vec<JsServer> = JsServer::start("ours", false, &config)
        .into_iter()
        .collect();
    match JsServer::start("go", true, &config) {
        Some(go) => out.push(go),
        None => eprintln!("Go nats-server not installed: checked against ours alone"),
    }
    out
}

/// A client of `user`, whose password is its name.
pub async fn login(server: &ServerProcess, user: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(user.into(), user.into())
        .connect(server.url())
        .await
        .unwrap_or_else(|e| panic!("{user} connects: {e}"))
}

/// The JSON answer to a request on `subject`.
pub async fn request(client: &async_nats::Client, subject: &str, body: impl AsRef<[u8]>) -> Value {
    let body = bytes::Bytes::copy_from_slice(body.as_ref());
    let reply = tokio::time::timeout(WAIT, client.request(subject.to_owned(), body))
        .await
        .unwrap_or_else(|_| panic!("{subject}: timed out"))
        .unwrap_or_else(|e| panic!("{subject}: {e}"));
    serde_json::from_slice(&reply.payload).expect("JSON reply")
}

/// Times and dates differ between runs: each becomes a marker saying whether it was Go's zero
/// time; `also` names more fields to replace by a marker of their own name.
pub fn normalise_times(value: &mut Value, also: &[&str]) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if matches!(key.as_str(), "created" | "ts" | "first_ts" | "last_ts") {
                    let zero = field.as_str() == Some("0001-01-01T00:00:00Z");
                    *field = Value::from(if zero { "zero" } else { "time" });
                } else if also.contains(&key.as_str()) {
                    *field = Value::from(key.as_str());
                } else {
                    normalise_times(field, also);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| normalise_times(v, also)),
        _ => {}
    }
}

/// Whether anything answers on `subject` before a later request `INFO` is answered (the API
/// answers in order, so a silent verb has had its turn by then).
pub async fn answered(client: &async_nats::Client, subject: &str) -> bool {
    answered_with(client, subject, "{}").await
}

/// As [`answered`], for a request with `body`.
pub async fn answered_with(client: &async_nats::Client, subject: &str, body: &str) -> bool {
    let inbox = client.new_inbox();
    let mut replies = client.subscribe(inbox.clone()).await.expect("subscribe");
    client
        .publish_with_reply(subject.to_owned(), inbox, body.to_owned().into())
        .await
        .expect("publish");
    let _ = request(client, "$JS.API.INFO", "").await;
    client.flush().await.expect("flush");
    tokio::time::timeout(Duration::from_millis(50), replies.next())
        .await
        .is_ok()
}

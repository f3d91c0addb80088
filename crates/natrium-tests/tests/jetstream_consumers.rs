//! JetStream consumers through the API: create (durable, ephemeral, pull, push), info, names,
//! list, pause, update, delete and recovery after a restart, with `async-nats` and raw
//! requests; and the same exchanges run against Go's server (when installed), their JSON
//! compared once times are normalised, for the create, info and list documents and every
//! error the requests provoke.

use std::path::{Path, PathBuf};
use std::time::Duration;

use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "jetstream_consumers/cases.rs"]
mod cases;

const WAIT: Duration = Duration::from_secs(10);

/// A server with its own store directory, removed with it.
struct Js {
    name: &'static str,
    server: ServerProcess,
    dir: tempfile::TempDir,
}

fn config(store: &Path) -> String {
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

fn conf_path(dir: &Path) -> PathBuf {
    dir.join("js.conf")
}

fn launch(dir: &Path, go: bool) -> Option<ServerProcess> {
    let conf = conf_path(dir);
    let conf = conf.to_str().expect("utf-8 path").to_owned();
    let args = ["-c", &conf, "-a", "127.0.0.1", "-p", "-1"];
    if go {
        ServerProcess::start_go(&args)
    } else {
        Some(ServerProcess::start(&args))
    }
}

fn start(name: &'static str, go: bool) -> Option<Js> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(conf_path(dir.path()), config(&dir.path().join("store"))).expect("config");
    let server = launch(dir.path(), go)?;
    Some(Js { name, server, dir })
}

/// Ours, then Go's when installed.
fn servers() -> Vec<Js> {
    let mut out: Vec<Js> = start("ours", false).into_iter().collect();
    match start("go", true) {
        Some(go) => out.push(go),
        None => eprintln!("Go nats-server not installed: checked against ours alone"),
    }
    out
}

async fn login(server: &ServerProcess, user: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(user.into(), user.into())
        .connect(server.url())
        .await
        .expect("connect")
}

async fn request(client: &async_nats::Client, subject: &str, body: &str) -> Value {
    let msg = tokio::time::timeout(
        WAIT,
        client.request(subject.to_owned(), body.to_owned().into()),
    )
    .await
    .expect("answer in time")
    .expect("answer");
    serde_json::from_slice(&msg.payload).expect("json")
}

/// Times differ between runs and servers: each becomes a marker; so does the time left of a
/// pause.
fn normalise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "created" | "ts" | "first_ts" | "last_ts" => {
                        let zero = field.as_str() == Some("0001-01-01T00:00:00Z");
                        *field = Value::from(if zero { "zero" } else { "time" });
                    }
                    "pause_remaining" => *field = Value::from("remaining"),
                    // The server's name.
                    "leader" => *field = Value::from("server"),
                    _ => normalise(field),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// Runs the cases against one server: every answer, normalised.
async fn run_cases(js: &Js) -> Vec<(String, Value)> {
    let a = login(&js.server, "a").await;
    let b = login(&js.server, "b").await;
    let mut out = Vec::new();
    for case in cases::all() {
        let client = if case.account_b { &b } else { &a };
        if let Some(subject) = case.publish {
            let ack = request(client, subject, "payload").await;
            assert!(ack.get("error").is_none(), "{}: {ack}", js.name);
            continue;
        }
        let subject = format!("$JS.API.{}", case.verb);
        let mut answer = request(client, &subject, &case.body).await;
        normalise(&mut answer);
        out.push((format!("{} {}", case.verb, abbreviated(&case.body)), answer));
    }
    out
}

fn abbreviated(body: &str) -> String {
    body.chars().take(160).collect()
}

#[tokio::test]
async fn jetstream_consumers_answer_create_info_list_and_errors_like_go() {
    let mut runs = Vec::new();
    for js in servers() {
        runs.push((js.name, run_cases(&js).await));
    }
    let (_, ours) = &runs[0];
    for (label, answer) in ours {
        assert!(answer.get("type").is_some(), "{label}: {answer}");
    }
    if let Some((_, go)) = runs.get(1) {
        assert_eq!(ours.len(), go.len());
        let mut diffs = Vec::new();
        for ((label, mine), (_, theirs)) in ours.iter().zip(go) {
            if mine != theirs {
                diffs.push(format!("{label}\n  ours: {mine}\n  go:   {theirs}"));
            }
        }
        assert!(
            diffs.is_empty(),
            "{} differences:\n{}",
            diffs.len(),
            diffs.join("\n")
        );
    }
}

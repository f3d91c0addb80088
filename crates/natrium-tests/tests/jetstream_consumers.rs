//! JetStream consumers through the API: create (durable, ephemeral, pull, push), info, names,
//! list, pause, update, delete and recovery after a restart, with `async-nats` and raw
//! requests; and the same exchanges run against Go's server (when installed), their JSON
//! compared once times are normalised, for the create, info and list documents and every
//! error the requests provoke.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

#[path = "jetstream_consumers/cases.rs"]
mod cases;
#[path = "support/jetstream.rs"]
mod support;
use support::{launch, login, request, JsServer as Js};

fn config(store: &Path) -> String {
    support::three_accounts(store)
}

fn start(name: &'static str, go: bool) -> Option<Js> {
    Js::start(name, go, config)
}

fn servers() -> Vec<Js> {
    support::ours_then_go(config)
}

/// Times differ between runs and servers, and so do the time left of a pause and the
/// server's name: each becomes a marker.
fn normalise(value: &mut Value) {
    support::normalise_times(value, &["pause_remaining", "leader"]);
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

/// A server of ours alone, for the client and restart tests.
fn ours() -> Js {
    start("ours", false).expect("our server")
}

#[tokio::test]
async fn jetstream_consumer_lifecycle_through_the_client() {
    use async_nats::jetstream::consumer::{pull, push, AckPolicy, DeliverPolicy};
    use futures::TryStreamExt;

    let js = ours();
    let client = login(&js.server, "a").await;
    let context = async_nats::jetstream::new(client.clone());
    let stream = context
        .create_stream(async_nats::jetstream::stream::Config {
            name: "ORDERS".into(),
            subjects: vec!["orders.>".into()],
            ..Default::default()
        })
        .await
        .expect("stream");
    for subject in ["orders.new", "orders.new", "orders.paid"] {
        context
            .publish(subject, "x".into())
            .await
            .expect("publish")
            .await
            .expect("ack");
    }

    // A durable pull consumer on one subject, with Go's defaults filled in.
    let mut durable: async_nats::jetstream::consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("NEW".into()),
            filter_subject: "orders.new".into(),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .expect("durable");
    let info = durable.info().await.expect("info").clone();
    assert_eq!(info.name, "NEW");
    assert_eq!(info.num_pending, 2);
    assert_eq!(info.config.ack_wait, Duration::from_secs(30));
    assert_eq!(info.config.max_ack_pending, 1000);
    assert_eq!(info.config.max_waiting, 512);

    // An ephemeral gets an 8-character name; a push consumer delivers to its subject.
    let ephemeral: async_nats::jetstream::consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            deliver_policy: DeliverPolicy::Last,
            ..Default::default()
        })
        .await
        .expect("ephemeral");
    let name = ephemeral.cached_info().name.clone();
    assert_eq!(name.len(), 8, "{name}");
    assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
    assert_eq!(ephemeral.cached_info().num_pending, 1);
    let push: async_nats::jetstream::consumer::PushConsumer = stream
        .create_consumer(push::Config {
            durable_name: Some("PUSH".into()),
            deliver_subject: "deliver.push".into(),
            ..Default::default()
        })
        .await
        .expect("push");
    assert_eq!(
        push.cached_info().config.deliver_subject.as_deref(),
        Some("deliver.push")
    );

    let mut names: Vec<String> = stream.consumer_names().try_collect().await.expect("names");
    names.sort();
    let mut want = vec!["NEW".to_owned(), "PUSH".to_owned(), name.clone()];
    want.sort();
    assert_eq!(names, want);
    let listed: Vec<_> = stream.consumers().try_collect().await.expect("list");
    assert_eq!(listed.len(), 3);
    assert_eq!(
        stream
            .clone()
            .info()
            .await
            .expect("stream info")
            .state
            .consumer_count,
        3
    );

    update_pause_and_delete(&client, &stream).await;
}

/// Updates, pauses and deletes consumers `NEW` and `PUSH` of `ORDERS`.
async fn update_pause_and_delete(
    client: &async_nats::Client,
    stream: &async_nats::jetstream::stream::Stream,
) {
    use async_nats::jetstream::consumer::{pull, AckPolicy};
    // An update changes what may change and refuses the rest.
    stream
        .update_consumer(pull::Config {
            durable_name: Some("NEW".into()),
            filter_subject: "orders.new".into(),
            ack_policy: AckPolicy::Explicit,
            description: Some("new orders".into()),
            ..Default::default()
        })
        .await
        .expect("update");
    let refused = stream
        .update_consumer(pull::Config {
            durable_name: Some("NEW".into()),
            ack_policy: AckPolicy::None,
            ..Default::default()
        })
        .await;
    assert!(refused.is_err());
    let info = stream.consumer_info("NEW").await.expect("info");
    assert_eq!(info.config.description.as_deref(), Some("new orders"));

    // Pause and resume.
    let paused = request(
        client,
        "$JS.API.CONSUMER.PAUSE.ORDERS.NEW",
        r#"{"pause_until":"2099-01-01T00:00:00Z"}"#,
    )
    .await;
    assert_eq!(paused["paused"], true, "{paused}");
    let info = request(client, "$JS.API.CONSUMER.INFO.ORDERS.NEW", "").await;
    assert_eq!(info["paused"], true, "{info}");
    let resumed = request(client, "$JS.API.CONSUMER.PAUSE.ORDERS.NEW", "").await;
    assert_eq!(resumed["paused"], false, "{resumed}");

    // Delete.
    assert!(
        stream
            .delete_consumer("PUSH")
            .await
            .expect("delete")
            .success
    );
    assert!(stream.consumer_info("PUSH").await.is_err());
    let account = request(client, "$JS.API.INFO", "").await;
    assert_eq!(account["consumers"], 2, "{account}");
}

#[tokio::test]
async fn jetstream_consumer_durable_is_recovered_after_a_restart() {
    let mut js = ours();
    let client = login(&js.server, "a").await;
    for (name, storage) in [("FILE", "file"), ("MEM", "memory")] {
        let body = format!(r#"{{"name":"{name}","subjects":["{name}.>"],"storage":"{storage}"}}"#);
        let created = request(&client, &format!("$JS.API.STREAM.CREATE.{name}"), &body).await;
        assert!(created.get("error").is_none(), "{created}");
        let body = format!(
            r#"{{"stream_name":"{name}","config":{{"durable_name":"D","ack_policy":"explicit","description":"kept"}}}}"#
        );
        let created = request(&client, &format!("$JS.API.CONSUMER.CREATE.{name}.D"), &body).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    let body = r#"{"stream_name":"FILE","config":{"ack_policy":"explicit"}}"#;
    let ephemeral = request(&client, "$JS.API.CONSUMER.CREATE.FILE.EPH", body).await;
    assert!(ephemeral.get("error").is_none(), "{ephemeral}");
    let body = r#"{"stream_name":"FILE","config":{"durable_name":"GONE"}}"#;
    request(&client, "$JS.API.CONSUMER.CREATE.FILE.GONE", body).await;
    let before = request(&client, "$JS.API.CONSUMER.INFO.FILE.D", "").await;
    let obs = js.dir.path().join("store/jetstream/A/streams/FILE/obs");
    assert!(obs.join("D/meta.dat").exists());
    let deleted = request(&client, "$JS.API.CONSUMER.DELETE.FILE.GONE", "").await;
    assert_eq!(deleted["success"], true, "{deleted}");
    assert!(!obs.join("GONE").exists());
    drop(client);

    js.server.kill();
    js.server = launch(js.dir.path(), false).expect("restart");
    let client = login(&js.server, "a").await;
    let after = request(&client, "$JS.API.CONSUMER.INFO.FILE.D", "").await;
    assert_eq!(after["created"], before["created"], "{after}");
    assert_eq!(after["config"], before["config"], "{after}");
    // Go recovers an ephemeral as an ephemeral (its inactivity removes it later).
    let names = request(&client, "$JS.API.CONSUMER.NAMES.FILE", "").await;
    assert_eq!(
        names["consumers"],
        serde_json::json!(["D", "EPH"]),
        "{names}"
    );
    let eph = request(&client, "$JS.API.CONSUMER.INFO.FILE.EPH", "").await;
    assert_eq!(eph["config"], ephemeral["config"], "{eph}");
    // A memory stream, and its consumers, do not outlive the server.
    let gone = request(&client, "$JS.API.CONSUMER.INFO.MEM.D", "").await;
    assert_eq!(gone["error"]["err_code"], 10059, "{gone}");
    assert!(js
        .server
        .log_text()
        .contains("Recovering 2 consumers for stream - 'A > FILE'"));
}

/// The consumer advisories one server sends for a fixed exchange, ids and times normalised.
async fn consumer_advisories(js: &Js) -> Vec<(String, Value)> {
    use futures::StreamExt;
    let client = login(&js.server, "a").await;
    let mut sub = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.>")
        .await
        .expect("subscribe");
    client.flush().await.expect("flush");
    for (verb, body) in [
        ("STREAM.CREATE.S", r#"{"name":"S","subjects":["s.>"]}"#),
        (
            "CONSUMER.CREATE.S.D",
            r#"{"stream_name":"S","config":{"durable_name":"D"}}"#,
        ),
        (
            "CONSUMER.CREATE.S.P",
            r#"{"stream_name":"S","config":{"pause_until":"2099-01-01T00:00:00Z","priority_policy":"overflow","priority_groups":["g"]}}"#,
        ),
        (
            "CONSUMER.PAUSE.S.D",
            r#"{"pause_until":"2098-01-01T00:00:00Z"}"#,
        ),
        ("CONSUMER.PAUSE.S.D", ""),
        ("CONSUMER.UNPIN.S.P", r#"{"group":"g"}"#),
        ("CONSUMER.DELETE.S.D", ""),
    ] {
        let answer = request(&client, &format!("$JS.API.{verb}"), body).await;
        assert!(
            answer.get("error").is_none(),
            "{}: {verb}: {answer}",
            js.name
        );
    }
    let mut out = Vec::new();
    while let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(300), sub.next()).await {
        let mut body: Value = serde_json::from_slice(&msg.payload).expect("json");
        body["id"] = Value::from("id");
        body["timestamp"] = Value::from("time");
        out.push((msg.subject.to_string(), body));
    }
    out
}

#[tokio::test]
async fn jetstream_consumer_advisories_like_go() {
    let mut runs = Vec::new();
    for js in servers() {
        runs.push(consumer_advisories(&js).await);
    }
    let kinds: Vec<&str> = runs[0]
        .iter()
        .filter_map(|(_, body)| body["type"].as_str())
        .collect();
    assert!(
        kinds.contains(&"io.nats.jetstream.advisory.v1.consumer_action"),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"io.nats.jetstream.advisory.v1.consumer_pause"),
        "{kinds:?}"
    );
    if let Some(go) = runs.get(1) {
        assert_eq!(&runs[0], go);
    }
}

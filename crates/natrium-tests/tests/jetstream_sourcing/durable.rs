//! Durable sourcing of interest and work-queue origins (ADR-58/60, API level 4): the origin
//! makes the consumer a source or mirror asks for a durable with `ack_policy: flow_control`, so its
//! messages go only once the source stored them, and after a kill -9 in the middle of the
//! copy everything arrives exactly once and the origin ends empty; the consumer's info and
//! the origin's and source's state are compared with Go's.

use std::time::{Duration, Instant};

use async_nats::jetstream;
use serde_json::Value;

use super::support::{self, normalise_times, request, JsServer};
use super::{js_conf, wait_msgs, WAIT};

const N: u64 = 3_000;

async fn create(client: &async_nats::Client, name: &str, config: &str) {
    let created = request(client, &format!("$JS.API.STREAM.CREATE.{name}"), config).await;
    assert!(created["error"].is_null(), "{created}");
}

async fn publish_all(js: &jetstream::Context, subject: &str, from: u64, to: u64) {
    let mut acks = Vec::new();
    for i in from..to {
        acks.push(
            js.publish(subject.to_owned(), format!("{i}").into())
                .await
                .unwrap(),
        );
    }
    for ack in acks {
        ack.await.unwrap();
    }
}

/// The origin's one consumer: its name and info, the parts that differ between runs
/// (deliver subject, times) replaced.
async fn origin_consumer(client: &async_nats::Client, origin: &str) -> Value {
    let names = request(client, &format!("$JS.API.CONSUMER.NAMES.{origin}"), "").await;
    let name = names["consumers"][0]
        .as_str()
        .expect("one consumer")
        .to_owned();
    let mut info = request(
        client,
        &format!("$JS.API.CONSUMER.INFO.{origin}.{name}"),
        "",
    )
    .await;
    normalise_times(&mut info, &["last_active", "deliver_subject", "ts"]);
    info
}

/// Waits until the origin's consumer acknowledged everything (its stream then empty).
async fn wait_acked(client: &async_nats::Client, origin: &str, last: u64) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let info = origin_consumer(client, origin).await;
        if info["ack_floor"]["stream_seq"].as_u64() == Some(last) {
            return info;
        }
        assert!(
            Instant::now() < deadline,
            "{origin} never acked {last}: {info}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `origin` holds no message; its info then. Go's server may keep some in a work
/// queue for good: a kill -9 between a consumer's stored ack floor and the removals its acks
/// made leaves them (Go looks for such orphans at recovery in interest streams only), so
/// Go's run gets its info as it is after a short wait.
async fn emptied(client: &async_nats::Client, origin: &str, go: bool) -> Value {
    let deadline = Instant::now() + if go { Duration::from_secs(3) } else { WAIT };
    loop {
        let info = request(client, &format!("$JS.API.STREAM.INFO.{origin}"), "").await;
        if info["state"]["messages"] == 0 {
            return info;
        }
        if go && Instant::now() > deadline {
            return info;
        }
        assert!(Instant::now() < deadline, "{origin} kept messages: {info}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Ours against Go's, without what depends on timing (deliveries counted again after the
/// kill; Go's `num_ack_pending` after the kill sometimes counts entries below its own ack
/// floor, ours is checked to be 0) and without a stream state Go left orphans in (see
/// [`emptied`]).
fn compare(ours: &[Value], go: &[Value]) {
    let strip = |d: &Value| {
        let mut d = d.clone();
        if let Some(map) = d.as_object_mut() {
            let timed = [
                "delivered",
                "ack_floor",
                "num_redelivered",
                "num_ack_pending",
            ];
            for key in timed.iter().chain(&["cluster"]) {
                map.remove(*key);
            }
        }
        d
    };
    assert_eq!(ours.len(), go.len());
    for (a, b) in ours.iter().zip(go) {
        if b.get("first_seq").is_some() && b["messages"] != 0 {
            eprintln!("Go kept orphaned work-queue messages after kill -9: {b}");
            continue;
        }
        let (a, b) = (strip(a), strip(b));
        let differ: Vec<String> = a
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, v)| b.get(k.as_str()) != Some(v))
            .map(|(k, v)| format!("{k}: ours {v}, Go {}", b[k.as_str()]))
            .collect();
        assert_eq!(a, b, "{differ:?}");
    }
}

/// Every origin message copied once, in order: the copy's n-th payload is `n - 1`.
async fn check_copy(client: &async_nats::Client, name: &str) {
    let info = wait_msgs(client, name, N).await;
    assert_eq!(
        info["state"]["last_seq"], N,
        "{name}: a duplicate took a sequence"
    );
    for seq in [1, N / 3, N] {
        let body = format!("{{\"seq\":{seq}}}");
        let msg = request(client, &format!("$JS.API.STREAM.MSG.GET.{name}"), body).await;
        let data = msg["message"]["data"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(data, base64(&format!("{}", seq - 1)), "{name} at {seq}");
    }
}

fn base64(text: &str) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(T[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One run: a work-queue origin and an interest origin, each sourced, the server killed
/// with -9 once both copies started; what the origins' consumers and streams say at the end.
async fn run(go: bool) -> Option<Vec<Value>> {
    let mut server = JsServer::start(if go { "go" } else { "ours" }, go, js_conf)?;
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    // The work queue keeps its messages until some consumer takes them: its source starts
    // by catching up. The interest origin keeps messages only for consumers that exist: its
    // source's consumer is waited for before publishing.
    create(
        &client,
        "W",
        r#"{"name":"W","subjects":["w.>"],"retention":"workqueue"}"#,
    )
    .await;
    publish_all(&js, "w.x", 0, N / 2).await;
    create(
        &client,
        "I",
        r#"{"name":"I","subjects":["i.>"],"retention":"interest"}"#,
    )
    .await;
    create(&client, "SI", r#"{"name":"SI","sources":[{"name":"I"}]}"#).await;
    let deadline = Instant::now() + WAIT;
    while request(&client, "$JS.API.CONSUMER.NAMES.I", "").await["consumers"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        assert!(Instant::now() < deadline, "no sourcing consumer on I");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut created = origin_consumer(&client, "I").await;
    created["name"] = Value::from("name");
    // A mirror of the interest origin too: a message leaves it once both copies have it.
    create(&client, "MI", r#"{"name":"MI","mirror":{"name":"I"}}"#).await;
    let deadline = Instant::now() + WAIT;
    while request(&client, "$JS.API.CONSUMER.NAMES.I", "").await["consumers"]
        .as_array()
        .is_none_or(|names| names.len() < 2)
    {
        assert!(Instant::now() < deadline, "no mirroring consumer on I");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    create(&client, "SW", r#"{"name":"SW","sources":[{"name":"W"}]}"#).await;
    publish_all(&js, "i.x", 0, N / 2).await;
    for copy in ["SW", "SI"] {
        let deadline = Instant::now() + WAIT;
        let subject = format!("$JS.API.STREAM.INFO.{copy}");
        while request(&client, &subject, "").await["state"]["messages"] == 0 {
            assert!(Instant::now() < deadline, "{copy} copied nothing");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    drop(client);
    server.server.kill();
    server.server = support::launch(server.dir.path(), go)?;
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    publish_all(&js, "w.x", N / 2, N).await;
    publish_all(&js, "i.x", N / 2, N).await;
    check_copy(&client, "SW").await;
    check_copy(&client, "SI").await;
    check_copy(&client, "MI").await;
    let mut out = vec![created];
    for origin in ["W", "I"] {
        let mut consumer = wait_acked(&client, origin, N).await;
        consumer["name"] = Value::from("name");
        consumer["config"]["name"] = Value::from("name");
        consumer["config"]["durable_name"] = Value::from("name");
        out.push(consumer);
        let mut info = emptied(&client, origin, go).await;
        normalise_times(&mut info, &[]);
        out.push(info["state"].clone());
    }
    Some(out)
}

#[tokio::test]
async fn jetstream_sourcing_durable_origins_survive_kill_as_go() {
    let ours = run(false).await.unwrap();
    let cfg = &ours[0]["config"];
    assert_eq!(cfg["ack_policy"], "flow_control", "{cfg}");
    assert_eq!(cfg["durable_name"], cfg["name"]);
    assert!(
        cfg.get("direct").is_none() && cfg["sourcing"] == true,
        "{cfg}"
    );
    for consumer in [&ours[1], &ours[3]] {
        assert_eq!(consumer["num_ack_pending"], 0, "{consumer}");
        assert_eq!(consumer["num_pending"], 0, "{consumer}");
    }
    let Some(go) = run(true).await else {
        return;
    };
    compare(&ours, &go);
}

/// A source naming the user's own durable (`consumer { name, deliver_subject }`): the durable
/// is reset, not created, and must acknowledge through flow control; killed with -9 in the
/// middle of the copy, everything arrives once. A durable with explicit acks is refused
/// with Go's error in the source's info.
async fn run_user_durable(go: bool) -> Option<Vec<Value>> {
    let mut server = JsServer::start(if go { "go" } else { "ours" }, go, js_conf)?;
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    create(
        &client,
        "W",
        r#"{"name":"W","subjects":["w.>"],"retention":"workqueue"}"#,
    )
    .await;
    publish_all(&js, "w.x", 0, N / 2).await;
    let durables = [
        ("D", "w.>", "flow_control", "src.d"),
        ("E", "e.>", "explicit", "src.e"),
    ];
    for (name, filter, ack, deliver) in durables {
        let body = format!(
            r#"{{"stream_name":"W","config":{{"durable_name":"{name}","filter_subject":"{filter}","deliver_subject":"{deliver}","ack_policy":"{ack}","max_ack_pending":100}}}}"#
        );
        let subject = format!("$JS.API.CONSUMER.CREATE.W.{name}");
        let created = request(&client, &subject, body).await;
        assert!(created["error"].is_null(), "{created}");
    }
    let source = |name: &str, deliver: &str| {
        format!(r#"{{"name":"W","consumer":{{"name":"{name}","deliver_subject":"{deliver}"}}}}"#)
    };
    let sw = format!(r#"{{"name":"SW","sources":[{}]}}"#, source("D", "src.d"));
    create(&client, "SW", &sw).await;
    let sx = format!(r#"{{"name":"SX","sources":[{}]}}"#, source("E", "src.e"));
    create(&client, "SX", &sx).await;
    let deadline = Instant::now() + WAIT;
    while request(&client, "$JS.API.STREAM.INFO.SW", "").await["state"]["messages"] == 0 {
        assert!(Instant::now() < deadline, "SW copied nothing");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(client);
    server.server.kill();
    server.server = support::launch(server.dir.path(), go)?;
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    publish_all(&js, "w.x", N / 2, N).await;
    check_copy(&client, "SW").await;
    let mut d = wait_acked_named(&client, "W", "D", N).await;
    normalise_times(&mut d, &["last_active", "ts"]);
    let mut out = vec![d];
    let deadline = Instant::now() + WAIT;
    let refused = loop {
        let info = request(&client, "$JS.API.STREAM.INFO.SX", "").await;
        if !info["sources"][0]["error"].is_null() {
            break info["sources"][0]["error"].clone();
        }
        assert!(Instant::now() < deadline, "SX never refused: {info}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    out.push(refused);
    let mut sw = request(&client, "$JS.API.STREAM.INFO.SW", "").await;
    normalise_times(&mut sw, &["active"]);
    out.push(sw["sources"].clone());
    let mut w = emptied(&client, "W", go).await;
    normalise_times(&mut w, &[]);
    out.push(w["state"].clone());
    Some(out)
}

async fn wait_acked_named(
    client: &async_nats::Client,
    stream: &str,
    name: &str,
    last: u64,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let info = request(
            client,
            &format!("$JS.API.CONSUMER.INFO.{stream}.{name}"),
            "",
        )
        .await;
        if info["ack_floor"]["stream_seq"].as_u64() == Some(last) {
            return info;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never acked {last}: {info}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn jetstream_sourcing_user_durable_survives_kill_as_go() {
    let ours = run_user_durable(false).await.unwrap();
    assert_eq!(ours[0]["num_ack_pending"], 0, "{}", ours[0]);
    assert_eq!(
        ours[1]["description"], "stream source consumer requires flow control ack policy",
        "{}",
        ours[1]
    );
    let Some(go) = run_user_durable(true).await else {
        return;
    };
    compare(&ours, &go);
}

/// The durable names on each origin, once they settle on `expect` (ours) or after the wait.
async fn durables(client: &async_nats::Client, expect: &[usize]) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let mut out = Vec::new();
        for origin in ["I", "J"] {
            let names = request(client, &format!("$JS.API.CONSUMER.NAMES.{origin}"), "").await;
            out.push(names["consumers"].clone());
        }
        let counts: Vec<usize> = out
            .iter()
            .map(|n| n.as_array().map_or(0, Vec::len))
            .collect();
        if counts == expect || Instant::now() > deadline {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A source removed by an update, and a mirror promoted to a plain stream, ask their
/// interest origins to delete the durables they had (a message would otherwise be kept for
/// them for ever); a source still configured keeps its own.
#[tokio::test]
async fn jetstream_sourcing_update_retires_durables_as_go() {
    let mut runs = Vec::new();
    for server in support::ours_then_go(js_conf) {
        let client = async_nats::connect(server.server.url()).await.unwrap();
        for name in ["I", "J"] {
            let lower = name.to_lowercase();
            let config =
                format!(r#"{{"name":"{name}","subjects":["{lower}.>"],"retention":"interest"}}"#);
            create(&client, name, &config).await;
        }
        create(&client, "M", r#"{"name":"M","mirror":{"name":"J"}}"#).await;
        let sources = r#"{"name":"S","sources":[{"name":"I"},{"name":"J"}]}"#;
        create(&client, "S", sources).await;
        let before = durables(&client, &[1, 2]).await;
        for (name, config) in [
            ("S", r#"{"name":"S","sources":[{"name":"J"}]}"#),
            ("M", r#"{"name":"M"}"#),
        ] {
            let subject = format!("$JS.API.STREAM.UPDATE.{name}");
            let updated = request(&client, &subject, config).await;
            assert!(updated["error"].is_null(), "{updated}");
        }
        runs.push((before, durables(&client, &[0, 1]).await));
    }
    let (before, after) = &runs[0];
    assert_eq!(before[1].as_array().map(Vec::len), Some(2), "{before:?}");
    assert_eq!(after[0], serde_json::json!([]), "{after:?}");
    assert_eq!(
        after[1], before[0],
        "the remaining source keeps its durable"
    );
    if let [ours, go] = &runs[..] {
        assert_eq!(ours, go);
    }
}

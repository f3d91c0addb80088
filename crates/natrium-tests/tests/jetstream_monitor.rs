//! JetStream in monitoring, against the Go server where it is installed: `/jsz` with its
//! options, `/varz`'s `jetstream` section, `/healthz` with the JetStream options and the store
//! directory checks, and the `JSZ` system requests. Both servers get the same streams and
//! messages; documents are compared by shape (keys and JSON types) and by every value that
//! is not identity, time or machine dependent. Without Go, our values are checked alone.
//!
//! Also ours alone: a stream whose recovery dropped a damaged record is listed under
//! `warnings` by `/healthz?details=true`, and the check stays `ok`.

use std::path::Path;
use std::time::Duration;

use natrium_tests::json::{comparable_shape, shape_of};
use natrium_tests::raw::http_get;
use natrium_tests::ServerProcess;
use serde_json::{json, Value};

#[path = "support/jetstream.rs"]
mod support;
use support::{login, request as ask, JsServer};

fn config(store: &Path) -> String {
    format!(
        "authorization {{ users [ {{user: a, password: a}} ] }}\n\
         accounts {{ SYS {{ users [ {{user: sys, password: sys}} ] }} }}\n\
         system_account: SYS\n\
         jetstream {{ store_dir: \"{}\" }}\n",
        store.display()
    )
}

fn servers() -> Vec<JsServer> {
    support::ours_then_go(config)
}

/// Two streams (file and memory) and three acknowledged messages.
async fn populate(server: &ServerProcess) {
    let client = login(server, "a").await;
    for (name, body) in [
        ("ORDERS", r#"{"name":"ORDERS","subjects":["orders.>"]}"#),
        (
            "MEM",
            r#"{"name":"MEM","subjects":["mem.>"],"storage":"memory"}"#,
        ),
    ] {
        let created = ask(&client, &format!("$JS.API.STREAM.CREATE.{name}"), body).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    for (subject, payload) in [
        ("orders.1", "hello"),
        ("orders.2", "hello2"),
        ("mem.1", "x"),
    ] {
        let ack = ask(&client, subject, payload).await;
        assert!(ack.get("seq").is_some(), "{ack}");
    }
    // One consumer on each stream: Go lists streams in no set order, and the shapes compared
    // take an array's first element.
    for stream in ["ORDERS", "MEM"] {
        let body = format!(
            r#"{{"stream_name":"{stream}","config":{{"durable_name":"D","ack_policy":"explicit"}}}}"#
        );
        let subject = format!("$JS.API.CONSUMER.CREATE.{stream}.D");
        let created = ask(&client, &subject, &body).await;
        assert!(created.get("error").is_none(), "{created}");
    }
}

/// Status code and body of a GET on the monitoring port.
fn http(server: &ServerProcess, path: &str) -> (u16, String) {
    http_get(server.monitor_port.expect("monitor port"), path)
}

fn json_of(server: &ServerProcess, path: &str) -> Value {
    let (code, body) = http(server, path);
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// The values of a `/jsz` document that do not depend on identity, time or the machine:
/// totals, and per account and stream (sorted by name) the usage, state and configuration.
fn jsz_values(doc: &Value) -> Value {
    let stream = |s: &Value| {
        let state = &s["state"];
        json!({
            "name": s["name"], "config": s["config"],
            "state": [state["messages"], state["bytes"], state["first_seq"], state["last_seq"],
                      state["num_subjects"], state["consumer_count"]],
            "consumers": s["consumer_detail"].as_array().map(|l| l.iter().map(|c| json!([
                c["stream_name"], c["name"], c["config"], c["delivered"], c["ack_floor"],
                c["num_ack_pending"], c["num_pending"], c["num_waiting"]])).collect::<Vec<_>>()),
        })
    };
    let account = |a: &Value| {
        let mut streams: Vec<Value> = a["stream_detail"]
            .as_array()
            .map(|l| l.iter().map(stream).collect())
            .unwrap_or_default();
        streams.sort_by_key(|s| s["name"].to_string());
        json!({
            "name": a["name"], "id": a["id"], "memory": a["memory"], "storage": a["storage"],
            "reserved": [a["reserved_memory"], a["reserved_storage"]], "api": a["api"],
            "streams": streams,
        })
    };
    let accounts: Vec<Value> = doc["account_details"]
        .as_array()
        .map(|l| l.iter().map(account).collect())
        .unwrap_or_default();
    json!({
        "memory": doc["memory"], "storage": doc["storage"], "accounts": doc["accounts"],
        "api": doc["api"], "limits": doc["limits"], "streams": doc["streams"],
        "streams_leader": doc["streams_leader"], "consumers": doc["consumers"],
        "messages": doc["messages"], "bytes": doc["bytes"], "total": doc["total"],
        "disabled": doc["disabled"], "sync": [doc["config"]["sync_interval"],
        doc["config"]["strict"]], "details": accounts,
    })
}

const JSZ_QUERIES: [&str; 10] = [
    "",
    "?accounts=true",
    "?streams=true",
    "?streams=true&config=true",
    "?consumers=true&config=true",
    "?consumers=true",
    "?acc=$G&streams=true",
    "?acc=nope",
    "?offset=1&limit=1&streams=true",
    "?raft=true&streams=true&leader-only=true&stream-leader-only=true",
];

#[tokio::test]
async fn jetstream_monitor_jsz_matches_go() {
    let servers = servers();
    let mut answers: Vec<Vec<(Vec<String>, Value)>> = Vec::new();
    for js in &servers {
        populate(&js.server).await;
        let docs = JSZ_QUERIES
            .iter()
            .map(|q| {
                let doc = json_of(&js.server, &format!("/jsz{q}"));
                (shape_of(&doc), jsz_values(&doc))
            })
            .collect();
        answers.push(docs);
        let (code, body) = http(&js.server, "/jsz?offset=x");
        assert_eq!(
            (code, body.as_str()),
            (
                400,
                "Error decoding int for 'offset': strconv.Atoi: parsing \"x\": invalid syntax"
            ),
            "{}",
            js.name
        );
    }
    let ours = &answers[0];
    let full = &ours[3].1;
    assert_eq!(
        (&full["streams"], &full["messages"], &full["bytes"]),
        (&json!(2), &json!(3), &json!(109))
    );
    assert_eq!(full["details"][0]["streams"][1]["name"], "ORDERS");
    assert_eq!(full["details"][0]["reserved"], json!([u64::MAX, u64::MAX]));
    assert!(ours[0].1["details"].as_array().is_some_and(Vec::is_empty));
    assert!(ours[8].1["details"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(ours[9].1["streams_leader"], 2);
    let consumers = &ours[5].1["details"][0]["streams"][1]["consumers"];
    assert_eq!(consumers[0][1], "D", "{consumers}");
    assert!(
        consumers[0][2].is_null(),
        "no config unless asked: {consumers}"
    );
    if let Some(go) = answers.get(1) {
        for ((q, (shape_a, values_a)), (shape_b, values_b)) in JSZ_QUERIES.iter().zip(ours).zip(go)
        {
            assert_eq!(shape_a, shape_b, "/jsz{q}: keys and types");
            assert_eq!(values_a, values_b, "/jsz{q}: values");
        }
    }
}

/// Keys in document order (the section's own, as served pretty-printed by both servers).
fn jetstream_keys(varz: &str) -> Vec<String> {
    let start = varz.find("\"jetstream\": {").expect("jetstream section");
    let mut depth = 0;
    let mut keys = Vec::new();
    for line in varz[start..].lines() {
        let trimmed = line.trim_start();
        if let Some(key) = trimmed.strip_prefix('"').and_then(|k| k.split_once("\":")) {
            keys.push(format!("{depth}:{}", key.0));
        }
        depth += line.matches('{').count();
        depth -= line.matches('}').count();
        if depth == 0 {
            break;
        }
    }
    keys
}

#[tokio::test]
async fn jetstream_monitor_varz_section_matches_go() {
    let servers = servers();
    let mut seen = Vec::new();
    for js in &servers {
        populate(&js.server).await;
        let (_, raw) = http(&js.server, "/varz");
        let varz: Value = serde_json::from_str(&raw).expect("varz");
        let section = varz["jetstream"].clone();
        assert_eq!(
            section["config"]["store_dir"],
            js.store().display().to_string(),
            "{}",
            js.name
        );
        let stats = section["stats"].clone();
        seen.push((jetstream_keys(&raw), shape_of(&section), stats));
    }
    assert_eq!(seen[0].2["accounts"], 1);
    assert_eq!(
        (&seen[0].2["memory"], &seen[0].2["storage"]),
        (&json!(22), &json!(87))
    );
    if let [ours, go] = seen.as_slice() {
        assert_eq!(ours.0, go.0, "jetstream keys in order");
        assert_eq!(ours.1, go.1, "jetstream keys and types");
        assert_eq!(ours.2, go.2, "jetstream stats");
    }
}

const HEALTHZ_QUERIES: [&str; 12] = [
    "",
    "?js-enabled-only=true",
    "?js-server-only=true",
    "?account=$G",
    "?account=NOPE",
    "?details=true&account=NOPE",
    "?account=$G&stream=ORDERS",
    "?account=$G&stream=NOPE",
    "?details=true&account=$G&stream=NOPE",
    "?account=$G&stream=ORDERS&consumer=C",
    "?details=true&account=$G&stream=ORDERS&consumer=C",
    "?account=$G&stream=ORDERS&consumer=D",
];

#[tokio::test]
async fn jetstream_monitor_healthz_matches_go() {
    let servers = servers();
    let mut seen = Vec::new();
    for js in &servers {
        // Before any stream: no account directory yet.
        let empty = http(&js.server, "/healthz?account=$G");
        populate(&js.server).await;
        let mut answers: Vec<(u16, String)> = vec![empty];
        answers.extend(
            HEALTHZ_QUERIES
                .iter()
                .map(|q| http(&js.server, &format!("/healthz{q}"))),
        );
        // A stream directory no stream was recovered from.
        std::fs::create_dir_all(js.store().join("$G/streams/GHOST")).expect("ghost dir");
        answers.push(http(&js.server, "/healthz"));
        answers.push(http(&js.server, "/healthz?details=true"));
        answers.push(http(&js.server, "/healthz?js-enabled-only=true"));
        seen.push(answers);
    }
    let ours = &seen[0];
    assert_eq!(
        ours[0],
        (
            404,
            r#"{"status":"unavailable","error":"JetStream account \"$G\" not found"}"#.into()
        )
    );
    assert_eq!(ours[1], (200, r#"{"status":"ok"}"#.into()));
    assert_eq!(
        ours[HEALTHZ_QUERIES.len() + 1],
        (
            503,
            r#"{"status":"unavailable","error":"JetStream stream '$G \u003e GHOST' could not be recovered"}"#
                .into()
        )
    );
    if let Some(go) = seen.get(1) {
        for (i, (a, b)) in ours.iter().zip(go).enumerate() {
            assert_eq!(a, b, "healthz answer {i}");
        }
    }
}

#[tokio::test]
async fn jetstream_monitor_system_jsz_matches_go() {
    let requests = [
        ("$SYS.REQ.SERVER.PING.JSZ", "{}"),
        (
            "$SYS.REQ.SERVER.PING.JSZ",
            r#"{"accounts":true,"streams":true,"config":true}"#,
        ),
        (
            "$SYS.REQ.SERVER.PING.JSZ",
            r#"{"leader_only":true,"account":"$G"}"#,
        ),
        ("$SYS.REQ.ACCOUNT.$G.JSZ", "{}"),
        (
            "$SYS.REQ.ACCOUNT.$G.JSZ",
            r#"{"streams":true,"config":true}"#,
        ),
        ("$SYS.REQ.ACCOUNT.SYS.JSZ", "{}"),
        ("$SYS.REQ.ACCOUNT.NOPE.JSZ", "{}"),
        (
            "$SYS.REQ.SERVER.PING.HEALTHZ",
            r#"{"js-enabled-only":true}"#,
        ),
        (
            "$SYS.REQ.SERVER.PING.HEALTHZ",
            r#"{"account":"$G","stream":"NOPE"}"#,
        ),
    ];
    let servers = servers();
    let mut seen = Vec::new();
    for js in &servers {
        populate(&js.server).await;
        let sys = login(&js.server, "sys").await;
        let mut answers = Vec::new();
        for (subject, body) in requests {
            let reply = ask(&sys, subject, body).await;
            assert_eq!(reply["server"]["jetstream"], true, "{}: {subject}", js.name);
            let data = &reply["data"];
            let values = if data.get("server_id").is_some() {
                jsz_values(data)
            } else if data.get("stream_detail").is_some() || data.get("id").is_some() {
                jsz_values(&json!({ "account_details": [data] }))["details"].clone()
            } else {
                data.clone()
            };
            answers.push((comparable_shape(&reply), values, reply["error"].clone()));
        }
        seen.push(answers);
    }
    let ours = &seen[0];
    assert_eq!(ours[0].1["streams"], 2);
    assert_eq!(
        ours[5].2,
        json!({"code": 500, "description": "account \"SYS\" not jetstream enabled"})
    );
    assert_eq!(
        ours[6].2,
        json!({"code": 500, "description": "account \"NOPE\" not found"})
    );
    if let Some(go) = seen.get(1) {
        for ((request, a), b) in requests.iter().zip(ours).zip(go) {
            assert_eq!(a, b, "{request:?}");
        }
    }
}

/// Flips one byte of `needle`'s first occurrence in a stream's block files.
fn damage(stream_dir: &Path, needle: &[u8]) {
    let msgs = stream_dir.join("msgs");
    for entry in std::fs::read_dir(&msgs).expect("msgs dir") {
        let path = entry.expect("entry").path();
        let mut bytes = std::fs::read(&path).expect("read block");
        if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
            bytes[at] ^= 0x40;
            std::fs::write(&path, bytes).expect("write block");
            return;
        }
    }
    panic!("{needle:?} not found under {}", msgs.display());
}

/// Ours with stream `LOSSY` holding `n` acknowledged messages `payload-MARK<i>:`, then
/// stopped: killed, or cleanly (which writes `index.dat`).
async fn stopped_with_lossy_stream(n: usize, kill: bool) -> JsServer {
    let mut js = JsServer::start("ours", false, config).expect("ours");
    let client = login(&js.server, "a").await;
    let body = r#"{"name":"LOSSY","subjects":["lossy.>"]}"#;
    ask(&client, "$JS.API.STREAM.CREATE.LOSSY", body).await;
    for i in 1..=n {
        ask(&client, "lossy.x", format!("payload-MARK{i}:")).await;
    }
    drop(client);
    if kill {
        js.server.kill();
    } else {
        js.server.signal("TERM");
        assert!(js.server.wait_exit(support::WAIT).is_some());
    }
    js
}

#[tokio::test]
async fn jetstream_monitor_healthz_warns_of_data_lost_in_recovery() {
    // Acknowledged messages are synced: a kill keeps them all.
    let js = stopped_with_lossy_stream(3, true).await;
    damage(&js.store().join("$G/streams/LOSSY"), b"payload-MARK2:");
    let server = support::launch(js.dir.path(), false).expect("restart");
    assert_eq!(
        http(&server, "/healthz"),
        (200, r#"{"status":"ok"}"#.into())
    );
    let (code, body) = http(&server, "/healthz?details=true");
    assert_eq!(code, 200, "{body}");
    let doc: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(doc["status"], "ok");
    let warning = &doc["warnings"][0];
    assert_eq!(
        (&warning["type"], &warning["account"], &warning["stream"]),
        (&json!("STREAM"), &json!("$G"), &json!("LOSSY"))
    );
    let text = warning["error"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("JetStream stream '$G > LOSSY' lost 1 messages"),
        "{text}"
    );
    let jsz = json_of(&server, "/jsz?streams=true");
    let state = &jsz["account_details"][0]["stream_detail"][0]["state"];
    assert_eq!(state["lost"]["msgs"], json!([2]), "{state}");
    assert_eq!(state["messages"], 2);
}

/// After a clean stop `index.dat` is written and a reopen trusts the bytes it covers: a byte
/// flipped in the middle of a block is found by the scrub that follows, which logs it as
/// recovery does and reports it in `/healthz` and the stream's state.
#[tokio::test]
async fn jetstream_monitor_healthz_warns_of_data_lost_behind_the_index() {
    let js = stopped_with_lossy_stream(20, false).await;
    let stream_dir = js.store().join("$G/streams/LOSSY");
    assert!(
        stream_dir.join("msgs/index.dat").exists(),
        "written on stop"
    );
    damage(&stream_dir, b"payload-MARK10:");
    let server = support::launch(js.dir.path(), false).expect("restart");
    assert!(
        server.wait_for_log(
            "JetStream stream '$G > LOSSY' lost data in msgs/0000000001.blk: sequences [(10, 10)]",
            support::WAIT
        ),
        "{}",
        server.log_text()
    );
    let deadline = std::time::Instant::now() + support::WAIT;
    let doc = loop {
        let (code, body) = http(&server, "/healthz?details=true");
        assert_eq!(code, 200, "{body}");
        let doc: Value = serde_json::from_str(&body).expect("json");
        if doc["warnings"][0]["stream"] == "LOSSY" || std::time::Instant::now() > deadline {
            break doc;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let text = doc["warnings"][0]["error"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("JetStream stream '$G > LOSSY' lost 1 messages"),
        "{doc}"
    );
    let jsz = json_of(&server, "/jsz?streams=true");
    let state = &jsz["account_details"][0]["stream_detail"][0]["state"];
    assert_eq!(state["lost"]["msgs"], json!([10]), "{state}");
    assert_eq!(state["messages"], 19);
}

/// Damage that appears while the server runs is found when a read meets it: the message is
/// reported lost, and Natrium's `DATA_LOST` advisory names the file and the sequences.
#[tokio::test]
async fn jetstream_monitor_damage_met_while_serving_is_advised() {
    // Restarted, nothing of the stream is cached: a read goes to the disk.
    let js = stopped_with_lossy_stream(20, false).await;
    let server = support::launch(js.dir.path(), false).expect("restart");
    let client = login(&server, "a").await;
    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.STREAM.DATA_LOST.LOSSY")
        .await
        .expect("subscribe");
    client.flush().await.expect("flush");
    damage(&js.store().join("$G/streams/LOSSY"), b"payload-MARK10:");
    let got = ask(&client, "$JS.API.STREAM.MSG.GET.LOSSY", r#"{"seq":10}"#).await;
    assert!(got.get("error").is_some(), "{got}");
    let advisory = tokio::time::timeout(support::WAIT, futures::StreamExt::next(&mut advisories))
        .await
        .expect("advisory in time")
        .expect("advisory");
    let doc: Value = serde_json::from_slice(&advisory.payload).expect("json");
    assert_eq!(
        doc["type"],
        "io.natrium.jetstream.advisory.v1.stream_data_lost"
    );
    assert_eq!(
        (&doc["stream"], &doc["file"], &doc["lost"]),
        (
            &json!("LOSSY"),
            &json!("msgs/0000000001.blk"),
            &json!([[10, 10]])
        )
    );
    let info = ask(&client, "$JS.API.STREAM.INFO.LOSSY", "").await;
    assert_eq!(info["state"]["messages"], 19, "{info}");
}

/// A pull consumer reading past a record damaged while the server runs gets every other
/// message, in order: the damaged one is reported lost, not delivered, and does not stop it.
#[tokio::test]
async fn jetstream_monitor_consumer_reads_past_a_record_lost_while_serving() {
    use async_nats::jetstream::consumer::pull::Config;
    let js = stopped_with_lossy_stream(20, false).await;
    let server = support::launch(js.dir.path(), false).expect("restart");
    damage(&js.store().join("$G/streams/LOSSY"), b"payload-MARK10:");
    let client = login(&server, "a").await;
    let stream = async_nats::jetstream::new(client)
        .get_stream("LOSSY")
        .await
        .expect("stream");
    let consumer = stream
        .create_consumer(Config {
            durable_name: Some("READER".into()),
            ..Default::default()
        })
        .await
        .expect("consumer");
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + support::WAIT;
    while seen.len() < 19 && tokio::time::Instant::now() < deadline {
        let mut batch = consumer
            .batch()
            .max_messages(20)
            .expires(Duration::from_millis(500))
            .messages()
            .await
            .expect("batch");
        while let Some(Ok(msg)) = futures::StreamExt::next(&mut batch).await {
            seen.push(String::from_utf8_lossy(&msg.payload).into_owned());
        }
    }
    let want: Vec<String> = (1..=20)
        .filter(|i| *i != 10)
        .map(|i| format!("payload-MARK{i}:"))
        .collect();
    assert_eq!(seen, want);
}

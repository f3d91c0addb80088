//! JetStream streams through the official Rust client (`async-nats`) and raw `$JS.API`
//! requests against our binary: create, info, list, publish with acks and expectations,
//! message get and delete, purge, delete, and streams surviving kill -9.

use std::time::Duration;

use async_nats::jetstream::{self, context::Publish, stream};
use futures::TryStreamExt;
use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{request, start_js as start, WAIT};

#[tokio::test]
async fn jetstream_stream_lifecycle_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    assert!(server.log_text().contains("Starting JetStream"));
    assert!(server.log_text().contains(&format!(
        "Store Directory: \"{}/jetstream\"",
        dir.path().display()
    )));
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    let info = js.query_account().await.unwrap();
    assert_eq!(info.streams, 0);

    let mut stream = js
        .create_stream(stream::Config {
            name: "ORDERS".into(),
            subjects: vec!["orders.>".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(stream.cached_info().config.max_messages, -1);
    for i in 0..10 {
        let ack = js
            .publish(format!("orders.{}", i % 3), format!("order {i}").into())
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!((ack.stream.as_str(), ack.sequence), ("ORDERS", i + 1));
    }
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, 10);
    assert_eq!(
        (info.state.first_sequence, info.state.last_sequence),
        (1, 10)
    );

    let msg = stream.get_raw_message(4).await.unwrap();
    assert_eq!(
        (msg.subject.as_str(), &msg.payload[..]),
        ("orders.0", &b"order 3"[..])
    );
    let last = stream
        .get_last_raw_message_by_subject("orders.1")
        .await
        .unwrap();
    assert_eq!(last.sequence, 8);
    assert!(stream.delete_message(4).await.unwrap());
    assert!(stream.get_raw_message(4).await.is_err());

    let names: Vec<String> = js.stream_names().try_collect().await.unwrap();
    assert_eq!(names, ["ORDERS"]);
    let purged = stream.purge().filter("orders.2").await.unwrap();
    assert_eq!(purged.purged, 3);
    assert_eq!(stream.info().await.unwrap().state.messages, 6);
    assert!(js.delete_stream("ORDERS").await.unwrap().success);
    assert!(js.get_stream("ORDERS").await.is_err());
}

#[tokio::test]
async fn jetstream_publish_expectations_and_dedup_answer_like_go() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    js.create_stream(stream::Config {
        name: "P".into(),
        subjects: vec!["p.>".into()],
        max_message_size: 100,
        storage: stream::StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let publish = |subject: &'static str, headers: &[(&str, &str)], body: &'static str| {
        let mut map = async_nats::HeaderMap::new();
        for (k, v) in headers {
            map.insert(*k, *v);
        }
        let client = client.clone();
        async move {
            let msg = client
                .request_with_headers(subject, map, body.into())
                .await
                .unwrap();
            String::from_utf8(msg.payload.to_vec()).unwrap()
        }
    };
    assert_eq!(
        publish("p.a", &[("Nats-Msg-Id", "1")], "x").await,
        r#"{"stream":"P","seq":1}"#
    );
    assert_eq!(
        publish("p.a", &[("Nats-Msg-Id", "1")], "x").await,
        r#"{"stream":"P","seq":1,"duplicate": true}"#
    );
    let refused = |code: u16, err: u16, text: &str| {
        format!(
            r#"{{"error":{{"code":{code},"err_code":{err},"description":"{text}"}},"stream":"P","seq":0}}"#
        )
    };
    assert_eq!(
        publish("p.a", &[], &"z".repeat(101).leak()[..]).await,
        refused(400, 10054, "message size exceeds maximum allowed")
    );
    assert_eq!(
        publish("p.a", &[("Nats-Expected-Last-Sequence", "5")], "x").await,
        refused(400, 10071, "wrong last sequence: 1")
    );
    assert_eq!(
        publish("p.a", &[("Nats-Expected-Stream", "Q")], "x").await,
        refused(400, 10060, "expected stream does not match")
    );
    assert_eq!(
        publish("p.a", &[("Nats-Expected-Last-Msg-Id", "zz")], "x").await,
        refused(400, 10070, "wrong last msg ID: 1")
    );
    assert_eq!(
        publish("p.b", &[("Nats-Expected-Last-Subject-Sequence", "3")], "x").await,
        refused(400, 10071, "wrong last sequence: 0")
    );
    assert_eq!(
        publish("p.b", &[("Nats-Rollup", "sub")], "x").await,
        refused(500, 10111, "rollup not permitted")
    );
    assert_eq!(
        publish("p.b", &[("Nats-TTL", "5s")], "x").await,
        refused(400, 10166, "per-message TTL is disabled")
    );
    let ack = js
        .send_publish(
            "p.c",
            Publish::build()
                .payload("ok".into())
                .expected_last_sequence(1),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.sequence, 2);
}

#[tokio::test]
async fn jetstream_rollup_keeps_only_the_newest_of_its_subject_or_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    let mut stream = js
        .create_stream(stream::Config {
            name: "R".into(),
            subjects: vec!["r.>".into()],
            allow_rollup: true,
            max_messages_per_subject: 5,
            discard: stream::DiscardPolicy::New,
            ..Default::default()
        })
        .await
        .unwrap();
    for subject in ["r.a", "r.b", "r.a", "r.c"] {
        js.publish(subject, "v".into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let rollup = |kind: &'static str| {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Rollup", kind);
        headers
    };
    // A KV purge marker: the newest of `r.a` only, the other subjects kept.
    let ack = js
        .publish_with_headers("r.a", rollup("sub"), "".into())
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.sequence, 5);
    let state = stream.info().await.unwrap().state.clone();
    assert_eq!((state.messages, state.last_sequence), (3, 5));
    assert!(stream.get_raw_message(1).await.is_err());
    assert!(stream.get_raw_message(3).await.is_err());
    assert_eq!(
        stream.get_raw_message(2).await.unwrap().subject.as_str(),
        "r.b"
    );

    js.publish_with_headers("r.z", rollup("all"), "".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let state = stream.info().await.unwrap().state.clone();
    assert_eq!((state.messages, state.first_sequence), (1, 6));
}

#[tokio::test]
async fn jetstream_api_errors_answer_like_go() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let created = request(
        &client,
        "$JS.API.STREAM.CREATE.S1",
        r#"{"name":"S1","subjects":["foo.>"]}"#,
    )
    .await;
    assert_eq!(created["did_create"], true);
    assert_eq!(created["config"]["duplicate_window"], 120_000_000_000_i64);
    assert_eq!(created["config"]["metadata"]["_nats.level"], "5");
    let err = |code: i64, err_code: i64, description: &str| serde_json::json!({"code": code, "err_code": err_code, "description": description});
    let overlap = request(
        &client,
        "$JS.API.STREAM.CREATE.S2",
        r#"{"name":"S2","subjects":["foo.bar"]}"#,
    )
    .await;
    assert_eq!(
        overlap["error"],
        err(400, 10065, "subjects overlap with an existing stream")
    );
    let mismatch = request(&client, "$JS.API.STREAM.CREATE.S3", r#"{"name":"S4"}"#).await;
    assert_eq!(
        mismatch["error"],
        err(400, 10056, "stream name in subject does not match request")
    );
    let missing = request(&client, "$JS.API.STREAM.INFO.NOPE", "").await;
    assert_eq!(missing["error"], err(404, 10059, "stream not found"));
    assert_eq!(
        (missing["total"].clone(), missing["limit"].clone()),
        (0.into(), 0.into())
    );
    let changed = request(
        &client,
        "$JS.API.STREAM.CREATE.S1",
        r#"{"name":"S1","subjects":["foo.>"],"max_msgs":5}"#,
    )
    .await;
    assert_eq!(
        changed["error"],
        err(
            400,
            10058,
            "stream name already in use with a different configuration"
        )
    );
    let gone = request(&client, "$JS.API.STREAM.MSG.DELETE.S1", r#"{"seq":9}"#).await;
    assert_eq!(gone["error"], err(500, 10057, "no message found"));
    let info = request(&client, "$JS.API.INFO", "").await;
    assert_eq!(
        info["type"],
        "io.nats.jetstream.api.v1.account_info_response"
    );
    assert_eq!(info["api"]["level"], 5);
    assert_eq!(info["streams"], 1);
}

#[tokio::test]
async fn jetstream_acked_messages_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    js.create_stream(stream::Config {
        name: "DURABLE".into(),
        subjects: vec!["d.>".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    // Many publishes in flight at once: they share syncs, and every ack counts.
    let mut acks = Vec::new();
    for i in 0..500 {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("id-{i}").as_str());
        acks.push(
            js.publish_with_headers(format!("d.{}", i % 7), headers, format!("m{i}").into())
                .await
                .unwrap(),
        );
    }
    let mut acked = 0;
    for ack in acks {
        ack.await.unwrap();
        acked += 1;
    }
    server.kill();
    drop(client);
    let server = start(dir.path());
    assert!(server
        .log_text()
        .contains("Restored 500 messages for stream '$G > DURABLE'"));
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let stream = js.get_stream("DURABLE").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, acked);
    for seq in [1, 250, 500] {
        let msg = stream.get_raw_message(seq).await.unwrap();
        let i = seq - 1;
        assert_eq!(&msg.payload[..], format!("m{i}").as_bytes());
        let id = msg
            .headers
            .get(async_nats::header::NATS_MESSAGE_ID)
            .map(|v| v.as_str().to_owned());
        assert_eq!(id.as_deref(), Some(format!("id-{i}").as_str()));
    }
}

/// A config file turning JetStream on under `dir`, encrypted with `key` (and `prev_key`).
fn encrypted_config(dir: &std::path::Path, key: &str, prev: Option<&str>) -> String {
    let prev = prev
        .map(|p| format!("\n  prev_key: \"{p}\""))
        .unwrap_or_default();
    let conf = dir.join(format!("js-{key}.conf"));
    let text = format!(
        "listen: 127.0.0.1:-1\njetstream {{\n  store_dir: \"{}\"\n  key: \"{key}\"\n  cipher: aes{prev}\n}}\n",
        dir.join("store").display()
    );
    std::fs::write(&conf, text).unwrap();
    conf.display().to_string()
}

/// Every file under `dir`, read whole.
fn all_file_bytes(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_file_bytes(&path));
        } else {
            out.push(std::fs::read(&path).unwrap());
        }
    }
    out
}

#[tokio::test]
async fn jetstream_encrypted_stream_survives_kill_9_and_key_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let conf = encrypted_config(dir.path(), "s3cr3t-one", None);
    let mut server = ServerProcess::start(&["-c", &conf]);
    assert!(server.log_text().contains("Encryption:      AES"));
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    js.create_stream(stream::Config {
        name: "SECRET".into(),
        subjects: vec!["secret".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    for i in 0..50 {
        js.publish("secret", format!("plaintext-payload-{i}").into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    server.kill();
    drop(client);
    for bytes in all_file_bytes(&dir.path().join("store")) {
        assert!(!bytes.windows(17).any(|w| w == b"plaintext-payload"));
        assert!(!bytes.windows(6).any(|w| w == b"SECRET"));
    }

    // The wrong key opens nothing and changes nothing.
    let before = all_file_bytes(&dir.path().join("store"));
    let wrong = encrypted_config(dir.path(), "wrong-key", None);
    let server = ServerProcess::start(&["-c", &wrong]);
    let client = async_nats::connect(server.url()).await.unwrap();
    assert!(jetstream::new(client).get_stream("SECRET").await.is_err());
    drop(server);
    assert_eq!(all_file_bytes(&dir.path().join("store")), before);

    // The new key with the old one as prev_key opens it.
    let rotated = encrypted_config(dir.path(), "s3cr3t-two", Some("s3cr3t-one"));
    let server = ServerProcess::start(&["-c", &rotated]);
    assert!(server
        .log_text()
        .contains("Restored 50 messages for stream '$G > SECRET'"));
    let client = async_nats::connect(server.url()).await.unwrap();
    let stream = jetstream::new(client).get_stream("SECRET").await.unwrap();
    let msg = stream.get_raw_message(50).await.unwrap();
    assert_eq!(&msg.payload[..], b"plaintext-payload-49");
}

#[tokio::test]
async fn jetstream_per_account_config_and_limits_like_go() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("accounts.conf");
    std::fs::write(
        &conf,
        format!(
            "listen: 127.0.0.1:-1\njetstream {{ store_dir: \"{}\" }}\naccounts {{\n  \
             A {{ users: [{{user: a, password: a}}], jetstream {{ max_streams: 1, max_memory: 1M }} }}\n  \
             B {{ users: [{{user: b, password: b}}] }}\n}}\n",
            dir.path().join("store").display()
        ),
    )
    .unwrap();
    let server = ServerProcess::start(&["-c", &conf.display().to_string()]);
    let login = |user: &str| {
        async_nats::ConnectOptions::with_user_and_password(user.into(), user.into())
            .connect(server.url())
    };
    let a = login("a").await.unwrap();
    let info = request(&a, "$JS.API.INFO", "").await;
    assert_eq!(info["limits"]["max_streams"], 1);
    assert_eq!(info["limits"]["max_memory"], 1_000_000);
    assert_eq!(info["api"]["total"], 0);
    let x = request(
        &a,
        "$JS.API.STREAM.CREATE.X",
        r#"{"name":"X","storage":"memory"}"#,
    )
    .await;
    assert_eq!(x["did_create"], true);
    let y = request(
        &a,
        "$JS.API.STREAM.CREATE.Y",
        r#"{"name":"Y","storage":"memory"}"#,
    )
    .await;
    assert_eq!(
        y["error"],
        serde_json::json!({"code": 400, "err_code": 10027, "description": "maximum number of streams reached"})
    );
    let b = login("b").await.unwrap();
    let off = request(&b, "$JS.API.INFO", "").await;
    assert_eq!(
        off,
        serde_json::json!({
            "type": "io.nats.jetstream.api.v1.account_info_response",
            "error": {"code": 503, "err_code": 10039, "description": "JetStream not enabled for account"}
        })
    );
}

async fn next_advisory(sub: &mut async_nats::Subscriber) -> (String, Value) {
    use futures::StreamExt;
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    let doc: Value = serde_json::from_slice(&msg.payload).unwrap();
    (msg.subject.to_string(), doc)
}

#[tokio::test]
async fn jetstream_advisories_and_domain_api_like_go() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("domain.conf");
    std::fs::write(
        &conf,
        format!(
            "listen: 127.0.0.1:-1\njetstream {{ store_dir: \"{}\", domain: hub }}\n",
            dir.path().join("store").display()
        ),
    )
    .unwrap();
    let server = ServerProcess::start(&["-c", &conf.display().to_string()]);
    assert!(server.log_text().contains("Domain:          hub"));
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut advisories = client.subscribe("$JS.EVENT.ADVISORY.>").await.unwrap();
    client.flush().await.unwrap();
    let created = request(
        &client,
        "$JS.hub.API.STREAM.CREATE.ADV",
        r#"{"name":"ADV","storage":"memory"}"#,
    )
    .await;
    assert_eq!(created["did_create"], true);
    let (subject, action) = next_advisory(&mut advisories).await;
    assert_eq!(subject, "$JS.EVENT.ADVISORY.STREAM.CREATED.ADV");
    assert_eq!(
        action["type"],
        "io.nats.jetstream.advisory.v1.stream_action"
    );
    assert_eq!(
        (action["stream"].clone(), action["action"].clone()),
        ("ADV".into(), "create".into())
    );
    assert_eq!(action["domain"], "hub");
    assert_eq!(action["id"].as_str().unwrap().len(), 22);
    let (subject, audit) = next_advisory(&mut advisories).await;
    assert_eq!(subject, "$JS.EVENT.ADVISORY.API");
    assert_eq!(audit["type"], "io.nats.jetstream.advisory.v1.api_audit");
    assert_eq!(audit["subject"], "$JS.hub.API.STREAM.CREATE.ADV");
    assert_eq!(audit["client"]["acc"], "$G");
    let response: Value = serde_json::from_str(audit["response"].as_str().unwrap()).unwrap();
    assert_eq!(response["did_create"], true);
    let ack = client.request("ADV", "x".into()).await.unwrap();
    assert_eq!(
        &ack.payload[..],
        br#"{"stream":"ADV","domain":"hub","seq":1}"#
    );
}

#[tokio::test]
async fn jetstream_first_seq_starts_a_new_stream_there() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let created = request(
        &client,
        "$JS.API.STREAM.CREATE.F",
        r#"{"name":"F","subjects":["f"],"first_seq":100}"#,
    )
    .await;
    assert_eq!(created["config"]["first_seq"], 100);
    assert_eq!(created["state"]["first_seq"], 100);
    let ack = client.request("f", "x".into()).await.unwrap();
    assert_eq!(&ack.payload[..], br#"{"stream":"F","seq":100}"#);
    server.kill();
    drop(client);
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let info = request(&client, "$JS.API.STREAM.INFO.F", "").await;
    assert_eq!(
        (
            info["state"]["first_seq"].clone(),
            info["state"]["last_seq"].clone()
        ),
        (100.into(), 100.into())
    );
}

/// Requests with `Nats-Required-Api-Level` and the cluster-only verbs, answered as Go 2.15.2
/// answered them on this machine (2026-11-24).
#[tokio::test]
async fn jetstream_api_level_and_cluster_verbs_like_go() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let ask = |level: &'static str, subject: &'static str| {
        let client = client.clone();
        async move {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Required-Api-Level", level);
            let msg = client
                .request_with_headers(subject, headers, "".into())
                .await
                .unwrap();
            serde_json::from_slice::<Value>(&msg.payload).unwrap()
        }
    };
    let too_high = serde_json::json!({"code": 412, "err_code": 10185, "description": "JetStream minimum api level required"});
    for level in ["99", "abc"] {
        assert_eq!(
            ask(level, "$JS.API.INFO").await["error"],
            too_high,
            "{level}"
        );
        let info = ask(level, "$JS.API.STREAM.INFO.NOPE").await;
        assert_eq!(
            (info["error"].clone(), info["total"].clone()),
            (too_high.clone(), 0.into())
        );
    }
    for level in ["5", ""] {
        assert!(
            ask(level, "$JS.API.INFO").await.get("error").is_none(),
            "{level}"
        );
    }
    let clustered = serde_json::json!({"code": 503, "err_code": 10010, "description": "JetStream clustering support required"});
    let stepdown = request(&client, "$JS.API.STREAM.LEADER.STEPDOWN.S", "").await;
    assert_eq!(
        stepdown["type"],
        "io.nats.jetstream.api.v1.stream_leader_stepdown_response"
    );
    assert_eq!(stepdown["error"], clustered);
    let remove = request(&client, "$JS.API.STREAM.PEER.REMOVE.S", r#"{"peer":"x"}"#).await;
    assert_eq!(
        remove["type"],
        "io.nats.jetstream.api.v1.stream_remove_peer_response"
    );
    assert_eq!(remove["error"], clustered);
}

/// kill -9 at each step of start-up and recovery, again and again: every stream stays
/// recoverable and every acknowledged message stays.
#[tokio::test]
async fn jetstream_repeated_kill_9_during_start_up_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    for name in ["A", "B"] {
        js.create_stream(stream::Config {
            name: name.into(),
            subjects: vec![format!("{name}.>")],
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let mut acks = Vec::new();
    for i in 0..2000 {
        let subject = if i % 2 == 0 { "A.x" } else { "B.y" };
        acks.push(js.publish(subject, format!("m{i}").into()).await.unwrap());
    }
    for ack in acks {
        ack.await.unwrap();
    }
    server.kill();
    drop(client);
    let store = dir.path().display().to_string();
    let args: Vec<String> = ["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", &store]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    for round in 0..3 {
        for step in [
            "Starting JetStream",
            "Starting restore for stream '$G > A'",
            "Starting restore for stream '$G > B'",
            "Took",
        ] {
            let mut victim =
                ServerProcess::spawn(&natrium_tests::natrium_path(), &args, None).unwrap();
            assert!(victim.wait_for_log(step, WAIT), "round {round}: {step}");
            victim.kill();
        }
    }
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    for name in ["A", "B"] {
        let mut stream = js.get_stream(name).await.unwrap();
        let info = stream.info().await.unwrap();
        assert_eq!(info.state.messages, 1000, "{name}");
        assert_eq!(info.state.last_sequence, 1000, "{name}");
    }
}

/// Polls `STREAM.INFO` until the stream holds `want` messages (bounded by `WAIT`).
async fn wait_for_messages(client: &async_nats::Client, stream: &str, want: u64) -> bool {
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        let info = request(client, &format!("$JS.API.STREAM.INFO.{stream}"), "").await;
        if info["state"]["messages"] == want {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn jetstream_max_age_and_message_ttl_expire() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let aged = request(
        &client,
        "$JS.API.STREAM.CREATE.AGED",
        r#"{"name":"AGED","storage":"memory","max_age":400000000}"#,
    )
    .await;
    assert_eq!(aged["did_create"], true);
    let ttl = request(
        &client,
        "$JS.API.STREAM.CREATE.TTL",
        r#"{"name":"TTL","allow_msg_ttl":true}"#,
    )
    .await;
    assert_eq!(ttl["did_create"], true);
    client.request("AGED", "old".into()).await.unwrap();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-TTL", "1s");
    client
        .request_with_headers("TTL", headers, "brief".into())
        .await
        .unwrap();
    client.request("TTL", "kept".into()).await.unwrap();
    assert!(wait_for_messages(&client, "AGED", 0).await, "max_age");
    assert!(wait_for_messages(&client, "TTL", 1).await, "Nats-TTL");
    let info = request(&client, "$JS.API.STREAM.INFO.TTL", "").await;
    assert_eq!(info["state"]["first_seq"], 2);
}

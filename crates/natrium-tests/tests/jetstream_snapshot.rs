//! Stream snapshots and restores over the raw `$JS.API` protocol, as `nats stream backup` and
//! `nats stream restore` drive them: chunks acknowledged through their reply subjects, the
//! closing message's status header, chunks sent as requests and the final empty message
//! answered with the stream's info. Round trips of file and memory streams, refusals with
//! Go's errors, a restarted server, and the answers compared with the Go server's.

use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use bytes::Bytes;
use natrium_tests::ServerProcess;
use serde_json::{json, Value};

use support::WAIT;

#[path = "support/jetstream.rs"]
mod support;
use support::start_js as start;

#[path = "support/snapshot.rs"]
mod snap;
use snap::{request, request_raw, restore, snapshot};

async fn publish(
    client: &async_nats::Client,
    subject: &str,
    headers: Option<(&str, &str)>,
    body: &str,
) {
    let msg = match headers {
        Some((k, v)) => {
            let mut map = HeaderMap::new();
            map.insert(k, v);
            client
                .request_with_headers(subject.to_owned(), map, body.to_owned().into())
                .await
        }
        None => {
            client
                .request(subject.to_owned(), body.to_owned().into())
                .await
        }
    };
    let ack: Value = serde_json::from_slice(&msg.unwrap().payload).unwrap();
    assert!(ack.get("error").is_none(), "{ack}");
}

/// A stream with headers, deleted sequences at its start, middle and end, and 300 messages
/// of incompressible bytes (several chunks).
async fn fill(client: &async_nats::Client, name: &str, storage: &str) {
    let config = json!({"name": name, "subjects": [format!("{name}.>")], "storage": storage});
    let created = request(client, &format!("$JS.API.STREAM.CREATE.{name}"), &config).await;
    assert!(created.get("error").is_none(), "{created}");
    for i in 0..300u32 {
        let body: String = (0..200)
            .map(|j| char::from(b'a' + ((i * 7919 + j * 104_729) % 26) as u8))
            .collect();
        let header = (i % 3 == 0).then_some(("X-Order", "yes"));
        publish(client, &format!("{name}.{}", i % 5), header, &body).await;
    }
    for seq in [1, 2, 150, 151, 300] {
        let del = request(
            client,
            &format!("$JS.API.STREAM.MSG.DELETE.{name}"),
            &json!({"seq": seq}),
        )
        .await;
        assert_eq!(del["success"], true, "{del}");
    }
}

async fn info(client: &async_nats::Client, name: &str) -> Value {
    request(client, &format!("$JS.API.STREAM.INFO.{name}"), &Value::Null).await
}

/// Every sequence of the stream as `STREAM.MSG.GET` answers it.
async fn messages(client: &async_nats::Client, name: &str, last: u64) -> Vec<Value> {
    let mut all = Vec::new();
    for seq in 1..=last + 1 {
        let got = request(
            client,
            &format!("$JS.API.STREAM.MSG.GET.{name}"),
            &json!({"seq": seq}),
        )
        .await;
        all.push(got);
    }
    all
}

#[tokio::test]
async fn jetstream_snapshot_restore_round_trip_file_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    for storage in ["file", "memory"] {
        let name = format!("RT_{storage}");
        fill(&client, &name, storage).await;
        let before = info(&client, &name).await;
        let msgs_before = messages(&client, &name, 300).await;
        let ask = json!({"chunk_size": 1024, "window_size": 4096});
        let snap = snapshot(&client, &name, ask, true).await;
        let response = &snap.response;
        assert_eq!(
            response["type"],
            "io.nats.jetstream.api.v1.stream_snapshot_response"
        );
        assert_eq!(response["state"], before["state"], "{response}");
        assert_eq!(response["config"]["name"], name.as_str());
        // Full chunks carry Go's ack subject; only the last, short one has none.
        let (last, full) = snap.chunks.split_last().unwrap();
        assert!(full.len() > 4, "several chunks: {}", snap.chunks.len());
        for (i, (reply, chunk)) in full.iter().enumerate() {
            assert_eq!(chunk.len(), 1024);
            let reply = reply.as_deref().unwrap();
            assert!(
                reply.starts_with(&format!("$JS.SNAPSHOT.ACK.{name}.")),
                "{reply}"
            );
            assert!(reply.ends_with(&format!(".1024.{}", i + 1)), "{reply}");
        }
        assert!(last.0.is_none() && !last.1.is_empty());
        assert_eq!(snap.end.0, Some(204));

        let deleted = request(
            &client,
            &format!("$JS.API.STREAM.DELETE.{name}"),
            &Value::Null,
        )
        .await;
        assert_eq!(deleted["success"], true);
        let done = restore(&client, &response["config"], &snap.data(), 4000).await;
        assert_eq!(
            done["type"],
            "io.nats.jetstream.api.v1.stream_create_response"
        );
        assert!(done.get("error").is_none(), "{done}");
        let after = info(&client, &name).await;
        assert_eq!(done["state"], after["state"], "{done}");
        assert_eq!(after["config"], before["config"]);
        // As Go's: the restored stream keeps the archived stream's creation time.
        assert_eq!(after["created"], before["created"], "{after}");
        assert_eq!(messages(&client, &name, 300).await, msgs_before);
        // The last sequence was deleted: as Go's restore does, the last time becomes the
        // last stored message's.
        let (mut want, mut got) = (before["state"].clone(), after["state"].clone());
        assert_eq!(got["last_ts"], msgs_before[298]["message"]["time"]);
        want["last_ts"] = Value::Null;
        got["last_ts"] = Value::Null;
        assert_eq!(got, want);
    }
    let staging = dir.path().join("jetstream/$G/__snapshots__");
    assert!(std::fs::read_dir(&staging).map_or(true, |mut d| d.next().is_none()));
    assert!(server
        .log_text()
        .contains("Starting snapshot for stream '$G > RT_file'"));
    assert!(server.log_text().contains("Completed restore of "));
}

#[tokio::test]
async fn jetstream_restored_stream_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "KEEP", "file").await;
    let snap = snapshot(&client, "KEEP", json!({}), true).await;
    // One short chunk: no ack subject and a closing message without a status.
    assert_eq!(snap.chunks.len(), 1);
    assert!(snap.chunks[0].0.is_none());
    assert_eq!(snap.end, (None, None));
    request(&client, "$JS.API.STREAM.DELETE.KEEP", &Value::Null).await;
    let done = restore(&client, &snap.response["config"], &snap.data(), 64 * 1024).await;
    assert!(done.get("error").is_none(), "{done}");
    let before = info(&client, "KEEP").await;
    let msgs_before = messages(&client, "KEEP", 300).await;
    server.kill();
    drop(client);
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let after = info(&client, "KEEP").await;
    assert_eq!(after["state"], before["state"]);
    assert_eq!(after["config"], before["config"]);
    assert_eq!(messages(&client, "KEEP", 300).await, msgs_before);
}

/// The answers that carry no times or ids, byte for byte.
async fn refusals(client: &async_nats::Client) -> Vec<String> {
    let create = json!({"name": "HAVE", "subjects": ["have.>"]});
    request(client, "$JS.API.STREAM.CREATE.HAVE", &create).await;
    let cases: [(&str, Bytes); 9] = [
        (
            "$JS.API.STREAM.SNAPSHOT.NOPE",
            r#"{"deliver_subject":"x"}"#.into(),
        ),
        ("$JS.API.STREAM.SNAPSHOT.HAVE", Bytes::new()),
        ("$JS.API.STREAM.SNAPSHOT.HAVE", "{}".into()),
        (
            "$JS.API.STREAM.SNAPSHOT.HAVE",
            r#"{"deliver_subject":"a.*"}"#.into(),
        ),
        (
            "$JS.API.STREAM.SNAPSHOT.HAVE",
            r#"{"deliver_subject":"x","jsck":1}"#.into(),
        ),
        ("$JS.API.STREAM.RESTORE.R1", Bytes::new()),
        (
            "$JS.API.STREAM.RESTORE.R1",
            r#"{"config":{"name":"R2"},"state":{}}"#.into(),
        ),
        (
            "$JS.API.STREAM.RESTORE.HAVE",
            r#"{"config":{"name":"HAVE","subjects":["h2.>"]}}"#.into(),
        ),
        (
            "$JS.API.STREAM.RESTORE.R1",
            r#"{"config":{"name":"R1","max_age":-1}}"#.into(),
        ),
    ];
    let mut out = Vec::new();
    for (subject, body) in cases {
        let got = request_raw(client, subject, body).await;
        out.push(String::from_utf8(got.to_vec()).unwrap());
    }
    out
}

#[tokio::test]
async fn jetstream_snapshot_and_restore_refusals_match_go() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let ours = refusals(&client).await;
    let expected = [
        r#"{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}"#,
        r#"{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10003,"description":"bad request"}}"#,
        r#"{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10003,"description":"bad request"}}"#,
        r#"{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10015,"description":"deliver subject not valid"}}"#,
    ];
    for (got, want) in ours.iter().zip(expected) {
        assert_eq!(got, want);
    }
    assert!(ours[4].contains("\"err_code\":10025"), "{}", ours[4]);
    assert_eq!(
        ours[5],
        r#"{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":400,"err_code":10003,"description":"bad request"},"deliver_subject":""}"#
    );
    assert!(ours[6].contains("\"err_code\":10056"), "{}", ours[6]);
    assert!(ours[7].contains("\"err_code\":10130"), "{}", ours[7]);
    if let Some(go_server) = {
        let go_dir = tempfile::tempdir().unwrap();
        let go_dir_s = go_dir.path().display().to_string();
        ServerProcess::start_go(&["-js", "-sd", &go_dir_s]).map(|s| (s, go_dir))
    } {
        let go_client = async_nats::connect(go_server.0.url()).await.unwrap();
        assert_eq!(ours, refusals(&go_client).await);
    }
}

#[tokio::test]
async fn jetstream_restore_refuses_bad_archives_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "SRC", "file").await;
    let snap = snapshot(&client, "SRC", json!({"chunk_size": 1024}), true).await;
    let data = snap.data();
    let config = json!({"name": "BAD", "subjects": ["bad.>"]});
    let truncated = &data[..data.len() / 2];
    let mut flipped = data.clone();
    let at = flipped.len() / 3;
    flipped[at] ^= 0x55;
    for bad in [&b"garbage garbage garbage"[..], truncated, &flipped, &[]] {
        let done = restore(&client, &config, bad, 700).await;
        assert_eq!(
            done["type"],
            "io.nats.jetstream.api.v1.stream_create_response"
        );
        assert_eq!(done["error"]["err_code"], 10062, "{done}");
        assert!(
            done["error"]["description"]
                .as_str()
                .unwrap()
                .starts_with("restore failed: "),
            "{done}"
        );
        assert_eq!(info(&client, "BAD").await["error"]["err_code"], 10059);
    }
    let account = dir.path().join("jetstream/$G");
    assert!(!account.join("streams/BAD").exists());
    let staging = account.join("__snapshots__");
    assert!(std::fs::read_dir(&staging).map_or(true, |mut d| d.next().is_none()));
    assert!(server.log_text().contains("Restore failed for "));
}

#[tokio::test]
async fn jetstream_abandoned_restore_cleans_up_after_go_inactivity_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "SRC", "file").await;
    let snap = snapshot(&client, "SRC", json!({}), true).await;
    let body = json!({"config": {"name": "GONE", "subjects": ["gone.>"]}});
    let answer = request(&client, "$JS.API.STREAM.RESTORE.GONE", &body).await;
    let deliver = answer["deliver_subject"].as_str().unwrap().to_owned();
    // All but the end: the first compressed frames decode, the archive stays incomplete.
    let most = Bytes::copy_from_slice(&snap.data()[..snap.data().len() - 10]);
    assert!(request_raw(&client, &deliver, most).await.is_empty());
    let staging = dir.path().join("jetstream/$G/__snapshots__");
    let staged = || std::fs::read_dir(&staging).is_ok_and(|mut d| d.next().is_some());
    // The chunk is acknowledged as it is taken; the staging appears once it is decoded.
    let deadline = Instant::now() + WAIT;
    while !staged() {
        assert!(Instant::now() < deadline, "restore not staged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server gives up after 5 s without a chunk: its staging goes, its subject too.
    let deadline = Instant::now() + Duration::from_secs(15);
    while staged() {
        assert!(Instant::now() < deadline, "staging not removed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let late = client.request(deliver, Bytes::from_static(b"x")).await;
    assert!(late.is_err(), "no responder once abandoned");
    assert_eq!(info(&client, "GONE").await["error"]["err_code"], 10059);
}

#[tokio::test]
async fn jetstream_snapshot_without_acks_ends_with_no_flow_response() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "SLOW", "file").await;
    let began = Instant::now();
    let ask = json!({"chunk_size": 1024, "window_size": 4096});
    let snap = snapshot(&client, "SLOW", ask, false).await;
    // A window of four chunks, then Go's 5 s wait for an ack.
    assert_eq!(snap.chunks.len(), 4);
    assert!(began.elapsed() >= Duration::from_secs(5));
    assert_eq!(snap.end, (Some(408), Some("No Flow Response".to_owned())));
    assert!(server.wait_for_log("Snapshot for stream '$G > SLOW' failed after ", WAIT));
}

/// Publishing goes on during a snapshot: the archive holds exactly the messages up to the
/// last sequence of the snapshot's state, identical, and the restore is that stream.
#[tokio::test]
async fn jetstream_snapshot_while_publishing_is_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "LIVE", "file").await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let publisher = {
        let (client, stop) = (client.clone(), std::sync::Arc::clone(&stop));
        tokio::spawn(async move {
            let mut n = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                publish(&client, &format!("LIVE.{}", n % 5), None, "during").await;
                n += 1;
            }
            n
        })
    };
    let ask = json!({"chunk_size": 1024, "window_size": 2048});
    let snap = snapshot(&client, "LIVE", ask, true).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let published = publisher.await.unwrap();
    assert!(published > 0);
    let last = snap.response["state"]["last_seq"].as_u64().unwrap();
    let source = messages(&client, "LIVE", last).await;

    let other_dir = tempfile::tempdir().unwrap();
    let other = start(other_dir.path());
    let other_client = async_nats::connect(other.url()).await.unwrap();
    let done = restore(&other_client, &snap.response["config"], &snap.data(), 8192).await;
    assert!(done.get("error").is_none(), "{done}");
    assert_eq!(done["state"]["last_seq"].as_u64(), Some(last));
    assert_eq!(
        done["state"]["messages"],
        snap.response["state"]["messages"]
    );
    let restored = messages(&other_client, "LIVE", last).await;
    assert_eq!(restored[..last as usize], source[..last as usize]);
    assert_eq!(restored[last as usize]["error"]["err_code"], 10037);
}

/// A restore larger than the server may store is refused with Go's 10047 and leaves nothing.
#[tokio::test]
async fn jetstream_restore_over_storage_limit_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    fill(&client, "BIG", "file").await;
    let snap = snapshot(&client, "BIG", json!({}), true).await;

    let small = tempfile::tempdir().unwrap();
    let conf = small.path().join("small.conf");
    let store = small.path().join("store");
    let text = format!(
        "jetstream {{ store_dir: \"{}\", max_file_store: 20000 }}\n",
        store.display()
    );
    std::fs::write(&conf, text).unwrap();
    let conf = conf.to_str().unwrap();
    let target = ServerProcess::start(&["-c", conf, "-a", "127.0.0.1", "-p", "-1"]);
    let target_client = async_nats::connect(target.url()).await.unwrap();
    let done = restore(&target_client, &snap.response["config"], &snap.data(), 8192).await;
    assert_eq!(
        done["error"],
        json!({"code": 500, "err_code": 10047, "description": "insufficient storage resources available"})
    );
    assert_eq!(
        info(&target_client, "BIG").await["error"]["err_code"],
        10059
    );
    let account = store.join("jetstream/$G");
    assert!(!account.join("streams/BIG").exists());
    let staging = account.join("__snapshots__");
    assert!(std::fs::read_dir(&staging).map_or(true, |mut d| d.next().is_none()));
}

/// A snapshot and a restore on `client`'s server: the snapshot response, the snapshot's
/// ending, and the restore's final answer.
async fn backup_and_restore(
    client: &async_nats::Client,
) -> (Value, (Option<u16>, Option<String>), Value) {
    fill(client, "DIFF", "file").await;
    let snap = snapshot(client, "DIFF", json!({"chunk_size": 1024}), true).await;
    request(client, "$JS.API.STREAM.DELETE.DIFF", &Value::Null).await;
    let done = restore(client, &snap.response["config"], &snap.data(), 4096).await;
    (snap.response.clone(), snap.end.clone(), done)
}

/// The documents of a whole backup and restore have Go's shape, key for key.
#[tokio::test]
async fn jetstream_snapshot_and_restore_documents_shaped_like_go() {
    let go_dir = tempfile::tempdir().unwrap();
    let go_dir_s = go_dir.path().display().to_string();
    let Some(go) = ServerProcess::start_go(&["-js", "-sd", &go_dir_s]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ours = start(dir.path());
    let ours = backup_and_restore(&async_nats::connect(ours.url()).await.unwrap()).await;
    let theirs = backup_and_restore(&async_nats::connect(go.url()).await.unwrap()).await;
    let shape = natrium_tests::json::comparable_shape;
    assert_eq!(shape(&ours.0), shape(&theirs.0));
    assert_eq!(ours.1, theirs.1);
    assert_eq!(shape(&ours.2), shape(&theirs.2));
    assert_eq!(ours.0["state"]["messages"], theirs.0["state"]["messages"]);
    assert_eq!(
        ours.2["state"]["num_deleted"],
        theirs.2["state"]["num_deleted"]
    );
}

/// Natrium reads only its own archives (`docs/store-format.md` §13): a snapshot taken from
/// Go's server is refused as a bad archive, with nothing left behind.
#[tokio::test]
async fn jetstream_restore_refuses_a_go_snapshot_and_leaves_nothing() {
    let go_dir = tempfile::tempdir().unwrap();
    let store = go_dir.path().to_string_lossy().into_owned();
    let args = ["-js", "-sd", store.as_str(), "-a", "127.0.0.1", "-p", "-1"];
    let Some(go) = ServerProcess::start_go(&args) else {
        return;
    };
    let go_client = async_nats::connect(go.url()).await.unwrap();
    fill(&go_client, "GOS", "file").await;
    let snap = snapshot(&go_client, "GOS", json!({"chunk_size": 1024}), true).await;
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let done = restore(&client, &snap.response["config"], &snap.data(), 700).await;
    assert_eq!(done["error"]["err_code"], 10062, "{done}");
    assert_eq!(info(&client, "GOS").await["error"]["err_code"], 10059);
    let account = dir.path().join("jetstream/$G");
    assert!(!account.join("streams/GOS").exists());
}

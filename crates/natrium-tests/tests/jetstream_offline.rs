//! Streams kept offline (ADR-44): a stored stream whose config requires a higher API level
//! than the server's, or holds a field it does not know, is not started after a restart but
//! listed with its reason, refused with 10194 where Go's single server refuses, left
//! unanswered where Go lets the request time out, and removable; a stream with such a
//! consumer is stopped, and the consumer answered for with its own reason (10195). The stored
//! config is edited between two runs; the texts are Go v2.15.2's, and the consumer's case is
//! run against Go's binary too (its `meta.inf` holds the consumer's config at the top level).

use std::path::Path;
use std::time::{Duration, Instant};

use natrium_store::io::StdFs;
use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{answered_with, normalise_times, request, start_js, JsServer};

const REASON: &str = "unsupported - required API level: 99, current API level: 5";

/// Rewrites the stored config of stream `name` under `store` with `edit`.
fn edit_stored_config(store: &Path, name: &str, edit: impl FnOnce(&mut Value)) {
    let dir = store.join("jetstream/$G/streams").join(name);
    let meta = natrium_store::filestore::meta::load_stream_meta(&StdFs, &dir)
        .expect("readable")
        .expect("meta.dat");
    let mut doc: Value = serde_json::from_slice(&meta).expect("json");
    edit(&mut doc["config"]);
    let body = serde_json::to_vec(&doc).expect("json");
    natrium_store::filestore::meta::save_stream_meta(&StdFs, &dir, &body).expect("saved");
}

#[tokio::test]
async fn jetstream_offline_stream_listed_refused_and_removable() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    for (name, subject) in [("OFF", "off.>"), ("ON", "on.>")] {
        let body = format!(r#"{{"name":"{name}","subjects":["{subject}"],"storage":"file"}}"#);
        let created = request(&client, &format!("$JS.API.STREAM.CREATE.{name}"), body).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    let ack = request(&client, "off.1", "x").await;
    assert_eq!(ack["seq"], 1, "{ack}");
    drop(client);
    drop(server);
    edit_stored_config(dir.path(), "OFF", |config| {
        config["metadata"]["_nats.req.level"] = "99".into();
    });

    let server = ServerProcess::start(&["-js", "-sd", &dir.path().display().to_string()]);
    let client = async_nats::connect(server.url()).await.unwrap();
    assert!(
        server
            .log_text()
            .contains(&format!("Detected unsupported stream '$G > OFF': {REASON}")),
        "{}",
        server.log_text()
    );
    let info = request(&client, "$JS.API.STREAM.INFO.OFF", "").await;
    assert_eq!(info["error"]["err_code"], 10194, "{info}");
    assert_eq!(
        info["error"]["description"],
        format!("stream is offline: {REASON}")
    );
    let names = request(&client, "$JS.API.STREAM.NAMES", "").await;
    assert_eq!(
        names["streams"],
        serde_json::json!(["OFF", "ON"]),
        "{names}"
    );
    let list = request(&client, "$JS.API.STREAM.LIST", "").await;
    assert_eq!(list["total"], 2, "{list}");
    assert_eq!(list["streams"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list["missing"], serde_json::json!(["OFF"]), "{list}");
    assert_eq!(list["offline"]["OFF"], REASON, "{list}");
    // As Go: the stored config again (metadata aside) answers with the offline stream, which
    // stays offline; another config is refused as the name taken.
    let again = request(
        &client,
        "$JS.API.STREAM.CREATE.OFF",
        r#"{"name":"OFF","subjects":["off.>"]}"#,
    )
    .await;
    assert_eq!(again["did_create"], true, "{again}");
    assert_eq!(
        again["config"]["metadata"]["_nats.req.level"], "99",
        "{again}"
    );
    let other = request(
        &client,
        "$JS.API.STREAM.CREATE.OFF",
        r#"{"name":"OFF","subjects":["other"]}"#,
    )
    .await;
    assert_eq!(other["error"]["err_code"], 10058, "{other}");
    let overlap = request(
        &client,
        "$JS.API.STREAM.CREATE.X",
        r#"{"name":"X","subjects":["off.x"]}"#,
    )
    .await;
    assert_eq!(overlap["error"]["err_code"], 10065, "{overlap}");
    let consumer = request(
        &client,
        "$JS.API.CONSUMER.CREATE.OFF",
        r#"{"stream_name":"OFF","config":{"ack_policy":"none"}}"#,
    )
    .await;
    assert_eq!(consumer["error"]["err_code"], 10194, "{consumer}");
    let seq = r#"{"seq":1}"#;
    assert!(!answered_with(&client, "$JS.API.STREAM.MSG.GET.OFF", seq).await);
    assert!(answered_with(&client, "$JS.API.STREAM.MSG.GET.ON", seq).await);
    // Go checks the request before it finds the stream offline.
    let bad = request(&client, "$JS.API.STREAM.MSG.GET.OFF", "{}").await;
    assert_eq!(bad["error"]["err_code"], 10003, "{bad}");

    let deleted = request(&client, "$JS.API.STREAM.DELETE.OFF", "").await;
    assert_eq!(deleted["success"], true, "{deleted}");
    assert!(!dir.path().join("jetstream/$G/streams/OFF").exists());
    let names = request(&client, "$JS.API.STREAM.NAMES", "").await;
    assert_eq!(names["streams"], serde_json::json!(["ON"]), "{names}");
}

#[tokio::test]
async fn jetstream_offline_stream_with_an_unknown_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let created = request(
        &client,
        "$JS.API.STREAM.CREATE.F",
        r#"{"name":"F","subjects":["f"],"storage":"file"}"#,
    )
    .await;
    assert!(created.get("error").is_none(), "{created}");
    drop(client);
    drop(server);
    edit_stored_config(dir.path(), "F", |config| {
        config["from_the_future"] = true.into();
    });
    let server = ServerProcess::start(&["-js", "-sd", &dir.path().display().to_string()]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let info = request(&client, "$JS.API.STREAM.INFO.F", "").await;
    assert_eq!(
        info["error"]["description"],
        "stream is offline: decoding error: json: unknown field \"from_the_future\"",
        "{info}"
    );
}

#[tokio::test]
async fn jetstream_offline_stream_stopped_for_an_unsupported_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let created = request(
        &client,
        "$JS.API.STREAM.CREATE.C",
        r#"{"name":"C","subjects":["c"],"storage":"file"}"#,
    )
    .await;
    assert!(created.get("error").is_none(), "{created}");
    let consumer = request(
        &client,
        "$JS.API.CONSUMER.CREATE.C.D",
        r#"{"stream_name":"C","config":{"durable_name":"D","ack_policy":"explicit"}}"#,
    )
    .await;
    assert!(consumer.get("error").is_none(), "{consumer}");
    drop(client);
    drop(server);
    require_level_99(&dir.path().join("jetstream"), false);

    let server = ServerProcess::start(&["-js", "-sd", &dir.path().display().to_string()]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let log = server.log_text();
    assert!(
        log.contains(&format!(
            "Detected unsupported consumer '$G > C > D': {REASON}"
        )),
        "{log}"
    );
    assert!(
        log.contains("Stopping unsupported stream '$G > C'"),
        "{log}"
    );
    let info = request(&client, "$JS.API.STREAM.INFO.C", "").await;
    assert_eq!(
        info["error"]["description"], "stream is offline: stopped - unsupported consumer \"D\"",
        "{info}"
    );
}

/// Sets `_nats.req.level` 99 in the stored config of consumer `C > D` of `$G` under `store`
/// (the `jetstream` directory), in Go's format (`go`) or ours.
fn require_level_99(store: &Path, go: bool) {
    let odir = store.join("$G/streams/C/obs/D");
    if go {
        let file = odir.join("meta.inf");
        let mut doc: Value =
            serde_json::from_slice(&std::fs::read(&file).expect("meta.inf")).expect("json");
        doc["metadata"]["_nats.req.level"] = "99".into();
        std::fs::write(&file, serde_json::to_vec(&doc).expect("json")).expect("written");
        return;
    }
    let meta = natrium_store::filestore::meta::load_consumer_meta(&StdFs, &odir)
        .expect("readable")
        .expect("meta.dat");
    let mut doc: Value = serde_json::from_slice(&meta).expect("json");
    doc["config"]["metadata"]["_nats.req.level"] = "99".into();
    let body = serde_json::to_vec(&doc).expect("json");
    natrium_store::filestore::meta::save_consumer_meta(&StdFs, &odir, &body).expect("saved");
}

fn store_only(store: &Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
}

/// What `/jsz` shows of the streams, without identities and times.
fn jsz_values(server: &ServerProcess) -> Value {
    let port = server.monitor_port.expect("monitoring port");
    let doc = natrium_tests::raw::http_get_json(port, "/jsz?consumers=true&config=true");
    let streams: Vec<Value> = doc["account_details"][0]["stream_detail"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let state = &s["state"];
            serde_json::json!({
                "name": s["name"], "config": s["config"], "consumers": s["consumer_detail"],
                "state": [state["messages"], state["bytes"], state["first_seq"],
                          state["last_seq"], state["num_subjects"], state["consumer_count"]],
            })
        })
        .collect();
    let totals = ["streams", "consumers", "messages", "bytes", "storage"].map(|k| &doc[k]);
    serde_json::json!({ "totals": totals, "streams": streams })
}

/// Whether the API audit of a held answer comes when the answer does (Go sends both late).
async fn audit_held(client: &async_nats::Client) -> bool {
    use futures::StreamExt as _;
    let mut audits = client.subscribe("$JS.EVENT.ADVISORY.API").await.unwrap();
    client.flush().await.unwrap();
    let began = Instant::now();
    let audit = async {
        let audit = tokio::time::timeout(support::WAIT, audits.next()).await;
        (audit, began.elapsed())
    };
    let (_, (audit, at)) = tokio::join!(request(client, "$JS.API.CONSUMER.INFO.C.D", ""), audit);
    assert!(matches!(audit, Ok(Some(_))), "an audit");
    at >= Duration::from_millis(400)
}

/// The answer to a request, and whether it was held back (Go's half-second delay).
async fn timed(client: &async_nats::Client, subject: &str, body: &str) -> (Value, bool) {
    let began = Instant::now();
    let answer = request(client, subject, body).await;
    (answer, began.elapsed() >= Duration::from_millis(400))
}

/// Stream `C` (one message) with durable consumers `A`, `D` and `E`, `D` then edited to need
/// API level 99, restarted: what each verb answers.
async fn offline_consumer_answers(go: bool) -> Option<Vec<(String, Value)>> {
    let js = JsServer::start(if go { "go" } else { "ours" }, go, store_only)?;
    let client = async_nats::connect(js.server.url()).await.unwrap();
    let body = r#"{"name":"C","subjects":["c"],"storage":"file"}"#;
    let created = request(&client, "$JS.API.STREAM.CREATE.C", body).await;
    assert!(created.get("error").is_none(), "{created}");
    assert_eq!(request(&client, "c", "x").await["seq"], 1);
    for name in ["A", "D", "E"] {
        let body = format!(
            r#"{{"stream_name":"C","config":{{"durable_name":"{name}","ack_policy":"explicit"}}}}"#
        );
        let made = request(&client, &format!("$JS.API.CONSUMER.CREATE.C.{name}"), body).await;
        assert!(made.get("error").is_none(), "{made}");
    }
    drop(client);
    let JsServer { name, server, dir } = js;
    drop(server);
    require_level_99(&dir.path().join("store/jetstream"), go);
    let js = JsServer::start_in(dir, name, go, store_only)?;
    let client = async_nats::connect(js.server.url()).await.unwrap();
    let mut out = Vec::new();
    let create = r#"{"stream_name":"C","config":{"durable_name":"D","ack_policy":"explicit"}}"#;
    for (subject, body) in [
        ("STREAM.INFO.C", ""),
        ("STREAM.LIST", ""),
        ("STREAM.NAMES", ""),
        ("CONSUMER.INFO.C.D", ""),
        ("CONSUMER.INFO.C.A", ""),
        ("CONSUMER.INFO.C.E", ""),
        ("CONSUMER.LIST.C", ""),
        ("CONSUMER.NAMES.C", ""),
        ("CONSUMER.CREATE.C.D", create),
        (
            "CONSUMER.CREATE.C",
            r#"{"stream_name":"C","config":{"ack_policy":"none"}}"#,
        ),
        ("STREAM.UPDATE.C", r#"{"name":"C","subjects":["c"]}"#),
        ("STREAM.PURGE.C", ""),
        ("STREAM.MSG.DELETE.C", r#"{"seq":1}"#),
        ("STREAM.MSG.DELETE.C", ""),
        ("STREAM.SNAPSHOT.C", r#"{"deliver_subject":"snap.x"}"#),
        (
            "STREAM.CREATE.C",
            r#"{"name":"C","subjects":["c"],"storage":"file"}"#,
        ),
        ("STREAM.CREATE.C", r#"{"name":"C","subjects":["d"]}"#),
        ("STREAM.CREATE.X", r#"{"name":"X","subjects":["c"]}"#),
        ("CONSUMER.DELETE.C.D", ""),
        ("CONSUMER.INFO.C.D", ""),
        ("CONSUMER.LIST.C", r#"{"offset":1}"#),
        ("STREAM.INFO.C", ""),
    ] {
        let (mut answer, held) = timed(&client, &format!("$JS.API.{subject}"), body).await;
        normalise_times(&mut answer, &[]);
        out.push((format!("{subject} held:{held}"), answer));
    }
    for (subject, body) in [
        ("STREAM.MSG.GET.C", r#"{"seq":1}"#),
        ("STREAM.MSG.GET.C", "{}"),
        ("CONSUMER.PAUSE.C.D", "{}"),
        ("CONSUMER.UNPIN.C.D", r#"{"group":"g"}"#),
        ("CONSUMER.RESET.C.D", "{}"),
    ] {
        let silent = !answered_with(&client, &format!("$JS.API.{subject}"), body).await;
        out.push((format!("{subject} {body} silent"), silent.into()));
    }
    out.push(("jsz".into(), jsz_values(&js.server)));
    out.push(("audit held".into(), audit_held(&client).await.into()));
    let log = js.server.log_text();
    let mut at = 0;
    // In Go's order: the stream starts, then stops at the consumer it can not run.
    for line in [
        "Restored 1 messages for stream '$G > C'",
        "Recovering 3 consumers for stream - '$G > C'",
        "Detected unsupported consumer '$G > C > D': unsupported - required API level: 99, current API level: 5",
        "Stopping unsupported stream '$G > C'",
        "Error adding consumer '$G > C > E': stream not valid (10096)",
    ] {
        let found = log.get(at..).and_then(|rest| rest.find(line));
        assert!(found.is_some(), "{}: {line} not in order in {log}", js.name);
        at += found.unwrap_or_default();
    }
    drop(client);
    let JsServer { name, server, dir } = js;
    drop(server);
    let js = JsServer::start_in(dir, name, go, store_only)?;
    let client = async_nats::connect(js.server.url()).await.unwrap();
    let info = request(&client, "$JS.API.STREAM.INFO.C", "").await;
    out.push(("STREAM.INFO.C after a restart".into(), info));
    Some(out)
}

#[tokio::test]
async fn jetstream_offline_consumer_answers_as_go() {
    let ours = offline_consumer_answers(false).await.expect("ours runs");
    let stopped = "stream is offline: stopped - unsupported consumer \"D\"";
    let find = |label: &str| {
        let found = ours.iter().find(|(l, _)| l == label);
        found.map_or_else(|| panic!("{label} in {ours:?}"), |(_, v)| v.clone())
    };
    assert_eq!(
        find("STREAM.INFO.C held:true")["error"]["description"],
        stopped
    );
    let info = find("CONSUMER.INFO.C.D held:true");
    assert_eq!(info["error"]["err_code"], 10195, "{info}");
    assert_eq!(
        info["error"]["description"],
        format!("consumer is offline: {REASON}")
    );
    assert_eq!(
        find("CONSUMER.INFO.C.A held:false")["error"]["err_code"],
        10014
    );
    let list = find("CONSUMER.LIST.C held:false");
    assert_eq!(list["missing"], serde_json::json!(["D"]), "{list}");
    assert_eq!(list["offline"]["D"], REASON, "{list}");
    assert_eq!(
        find("CONSUMER.NAMES.C held:false")["consumers"],
        serde_json::json!(["D"])
    );
    assert_eq!(
        find("CONSUMER.CREATE.C.D held:true")["error"]["description"],
        stopped
    );
    assert_eq!(find("CONSUMER.DELETE.C.D held:false")["success"], true);
    assert_eq!(find(r#"STREAM.MSG.GET.C {"seq":1} silent"#), true);
    assert_eq!(find("audit held"), true);
    assert_eq!(find("STREAM.MSG.GET.C {} silent"), false);
    let Some(go) = offline_consumer_answers(true).await else {
        eprintln!("Go nats-server not installed: checked against ours alone");
        return;
    };
    for ((label, ours), (go_label, go)) in ours.iter().zip(&go) {
        assert_eq!(label, go_label, "ours {ours}, Go {go}");
        assert_eq!(ours, go, "{label}");
    }
    assert_eq!(ours.len(), go.len());
}

#[tokio::test]
async fn jetstream_offline_stream_keeps_its_unsupported_consumers() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let body = r#"{"name":"C","subjects":["c"],"storage":"file"}"#;
    let created = request(&client, "$JS.API.STREAM.CREATE.C", body).await;
    assert!(created.get("error").is_none(), "{created}");
    for name in ["D", "E"] {
        let body = format!(
            r#"{{"stream_name":"C","config":{{"durable_name":"{name}","ack_policy":"explicit"}}}}"#
        );
        let made = request(&client, &format!("$JS.API.CONSUMER.CREATE.C.{name}"), body).await;
        assert!(made.get("error").is_none(), "{made}");
    }
    drop(client);
    drop(server);
    edit_stored_config(dir.path(), "C", |config| {
        config["metadata"]["_nats.req.level"] = "99".into();
    });
    require_level_99(&dir.path().join("jetstream"), false);
    let store = dir.path().display().to_string();
    let server = ServerProcess::start(&["-js", "-sd", &store, "-m", "-1"]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let log = server.log_text();
    let recovering = log.find("Recovering 2 consumers for stream - '$G > C'");
    let not_added = log.find("Error adding consumer '$G > C > E': stream not valid (10096)");
    assert!(recovering.is_some() && recovering < not_added, "{log}");
    assert!(!log.contains("Stopping unsupported stream"), "{log}");
    // As Go v2.15.2 was seen to answer (its stored config's checksum rewritten).
    let other = request(&client, "$JS.API.CONSUMER.INFO.C.E", "").await;
    assert_eq!(other["error"]["err_code"], 10014, "{other}");
    let gone = request(&client, "$JS.API.CONSUMER.DELETE.C.E", "").await;
    assert_eq!(gone["error"]["err_code"], 10014, "{gone}");
    let list = request(&client, "$JS.API.CONSUMER.LIST.C", "").await;
    assert_eq!(list["total"], 1, "{list}");
    assert_eq!(list["missing"], serde_json::json!(["D"]), "{list}");
    let jsz = jsz_values(&server);
    assert_eq!(jsz["totals"], serde_json::json!([1, 0, 0, 0, 0]), "{jsz}");
    assert_eq!(
        jsz["streams"][0]["state"],
        serde_json::json!([0, 0, 0, 0, null, 0]),
        "{jsz}"
    );
    assert_eq!(
        jsz["streams"][0]["config"]["metadata"]["_nats.req.level"],
        "99"
    );
    let info = request(&client, "$JS.API.CONSUMER.INFO.C.D", "").await;
    assert_eq!(
        info["error"]["description"],
        format!("consumer is offline: {REASON}"),
        "{info}"
    );
    let names = request(&client, "$JS.API.CONSUMER.NAMES.C", "").await;
    assert_eq!(names["consumers"], serde_json::json!(["D"]), "{names}");
    let info = request(&client, "$JS.API.STREAM.INFO.C", "").await;
    assert_eq!(
        info["error"]["description"],
        format!("stream is offline: {REASON}"),
        "{info}"
    );
}

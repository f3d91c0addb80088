//! Streams kept offline (ADR-44): a stored stream whose config requires a higher API level
//! than the server's, or holds a field it does not know, is not started after a restart but
//! listed with its reason, refused with 10194 where Go's single server refuses, left
//! unanswered where Go lets the request time out, and removable. The stored config is edited
//! between two runs of our binary; the texts are Go v2.15.2's.

use std::path::Path;

use natrium_store::io::StdFs;
use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{answered, request, start_js};

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
    let again = request(
        &client,
        "$JS.API.STREAM.CREATE.OFF",
        r#"{"name":"OFF","subjects":["off.>"]}"#,
    )
    .await;
    assert_eq!(again["error"]["err_code"], 10058, "{again}");
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
    assert!(!answered(&client, "$JS.API.STREAM.MSG.GET.OFF").await);
    assert!(answered(&client, "$JS.API.STREAM.MSG.GET.ON").await);

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
    let odir = dir.path().join("jetstream/$G/streams/C/obs/D");
    let meta = natrium_store::filestore::meta::load_consumer_meta(&StdFs, &odir)
        .expect("readable")
        .expect("meta.dat");
    let mut doc: Value = serde_json::from_slice(&meta).expect("json");
    doc["config"]["metadata"]["_nats.req.level"] = "99".into();
    let body = serde_json::to_vec(&doc).expect("json");
    natrium_store::filestore::meta::save_consumer_meta(&StdFs, &odir, &body).expect("saved");

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

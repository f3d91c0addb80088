//! JetStream resource limits of accounts and of the server: the stream count, `max_consumers`,
//! `max_bytes_required` and the per-stream byte limits, reservations of `max_bytes` against
//! the account's and the server's memory and storage (given back on delete and update),
//! publishes refused at the account's limit and over the server's, and the usage that
//! `$JS.API.INFO` and `/jsz` report, also after a restart.
//!
//! Every scenario runs against our binary and, where installed, against the Go server with
//! the same configuration; both must give Go's exact error JSON.

use std::path::Path;

use natrium_tests::raw::http_get_json;
use serde_json::{json, Value};

#[path = "support/jetstream.rs"]
mod support;
use support::{login, request as ask, JsServer, WAIT};

/// Account A: two memory streams' worth of limits; B: `max_bytes` required and capped per
/// stream; C: unlimited, bound only by the server's 10000 bytes of memory.
fn config(store: &Path) -> String {
    format!(
        "jetstream {{ store_dir: \"{}\", max_memory_store: 10000, max_file_store: 100000 }}\n\
         accounts {{\n\
           A {{ jetstream {{ max_mem: 2000, max_file: 5000, max_streams: 3, max_consumers: 7 }}\n\
                users [ {{user: a, password: a}} ] }}\n\
           B {{ jetstream {{ max_mem: 1000, max_file: 50000, max_bytes_required: true,\n\
                memory_max_stream_bytes: 500, store_max_stream_bytes: 3000 }}\n\
                users [ {{user: b, password: b}} ] }}\n\
           C {{ jetstream: enabled, users [ {{user: c, password: c}} ] }}\n\
           SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
         }}\n\
         system_account: SYS\n",
        store.display()
    )
}

fn servers() -> Vec<JsServer> {
    support::ours_then_go(config)
}

/// Creates (or updates, with `verb` UPDATE) stream `name` with `config`; the answer.
async fn stream(client: &async_nats::Client, verb: &str, name: &str, config: &Value) -> Value {
    let mut config = config.clone();
    config["name"] = json!(name);
    let subject = format!("$JS.API.STREAM.{verb}.{name}");
    ask(client, &subject, config.to_string()).await
}

async fn info(client: &async_nats::Client) -> Value {
    ask(client, "$JS.API.INFO", "").await
}

fn error(code: u16, err_code: u16, description: &str) -> Value {
    json!({"code": code, "err_code": err_code, "description": description})
}

fn memory_exceeded() -> Value {
    error(500, 10028, "insufficient memory resources available")
}

fn storage_exceeded() -> Value {
    error(500, 10047, "insufficient storage resources available")
}

fn ok(answer: &Value, what: &str) {
    assert!(answer.get("error").is_none(), "{what}: {answer}");
}

#[tokio::test]
async fn jetstream_limits_stream_count_and_consumers() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        let file = json!({"subjects": [], "storage": "file"});
        for name in ["S1", "S2", "S3"] {
            let mut cfg = file.clone();
            cfg["subjects"] = json!([name.to_lowercase()]);
            ok(&stream(&a, "CREATE", name, &cfg).await, js.name);
        }
        let refused = stream(&a, "CREATE", "S4", &json!({"subjects": ["s4"]})).await;
        let expected = error(400, 10027, "maximum number of streams reached");
        assert_eq!(refused["error"], expected, "{}: {refused}", js.name);
        // The same create again is not a new stream.
        let again = json!({"subjects": ["s1"], "storage": "file"});
        ok(&stream(&a, "CREATE", "S1", &again).await, js.name);

        ok(&ask(&a, "$JS.API.STREAM.DELETE.S3", "").await, js.name);
        let cfg = json!({"subjects": ["s3"], "max_consumers": 8});
        let refused = stream(&a, "CREATE", "S3", &cfg).await;
        let expected = error(400, 10026, "maximum consumers limit reached");
        assert_eq!(refused["error"], expected, "{}: {refused}", js.name);
        let cfg = json!({"subjects": ["s3"], "max_consumers": 7});
        ok(&stream(&a, "CREATE", "S3", &cfg).await, js.name);
        let limits = &info(&a).await["limits"];
        assert_eq!(
            *limits,
            json!({"max_memory": 2000, "max_storage": 5000, "max_streams": 3,
                   "max_consumers": 7, "max_ack_pending": -1, "memory_max_stream_bytes": -1,
                   "storage_max_stream_bytes": -1, "max_bytes_required": false}),
            "{}",
            js.name
        );
    }
}

#[tokio::test]
async fn jetstream_limits_reservations_given_back() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        let mem = |subject: &str, max_bytes: i64| json!({"subjects": [subject], "storage": "memory", "max_bytes": max_bytes});
        ok(&stream(&a, "CREATE", "M1", &mem("m1", 1500)).await, js.name);
        let refused = stream(&a, "CREATE", "M2", &mem("m2", 600)).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );
        ok(&stream(&a, "CREATE", "M2", &mem("m2", 500)).await, js.name);
        // Without max_bytes a stream needs one byte, and none is left.
        let refused = stream(&a, "CREATE", "M3", &mem("m3", -1)).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );
        let account = info(&a).await;
        assert_eq!(account["reserved_memory"], 2000, "{}: {account}", js.name);
        assert_eq!(account["reserved_storage"], 0, "{}: {account}", js.name);

        // An update needs room only for what it adds.
        let refused = stream(&a, "UPDATE", "M1", &mem("m1", 1501)).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );
        ok(&stream(&a, "UPDATE", "M1", &mem("m1", 1000)).await, js.name);
        assert_eq!(info(&a).await["reserved_memory"], 1500, "{}", js.name);
        ok(&stream(&a, "CREATE", "M3", &mem("m3", 500)).await, js.name);
        let refused = stream(&a, "CREATE", "M4", &mem("m4", 1)).await;
        assert_eq!(
            refused["error"],
            error(400, 10027, "maximum number of streams reached")
        );

        // A delete gives its reservation back.
        ok(&ask(&a, "$JS.API.STREAM.DELETE.M2", "").await, js.name);
        ok(&ask(&a, "$JS.API.STREAM.DELETE.M3", "").await, js.name);
        assert_eq!(info(&a).await["reserved_memory"], 1000, "{}", js.name);
        ok(&stream(&a, "CREATE", "M2", &mem("m2", 1000)).await, js.name);

        // Files have their own budget.
        let file = json!({"subjects": ["f1"], "storage": "file", "max_bytes": 5001});
        let refused = stream(&a, "CREATE", "F1", &file).await;
        assert_eq!(
            refused["error"],
            storage_exceeded(),
            "{}: {refused}",
            js.name
        );
    }
}

#[tokio::test]
async fn jetstream_limits_max_bytes_required_and_capped() {
    for js in servers() {
        let b = login(&js.server, "b").await;
        let cfg = |storage: &str, max_bytes: Option<i64>| {
            let mut cfg = json!({"subjects": ["b1"], "storage": storage});
            if let Some(n) = max_bytes {
                cfg["max_bytes"] = json!(n);
            }
            cfg
        };
        let required = error(
            400,
            10113,
            "account requires a stream config to have max bytes set",
        );
        let capped = error(
            400,
            10122,
            "stream max bytes exceeds account limit max stream bytes",
        );
        let refused = stream(&b, "CREATE", "B1", &cfg("file", None)).await;
        assert_eq!(refused["error"], required, "{}: {refused}", js.name);
        let refused = stream(&b, "CREATE", "B1", &cfg("file", Some(3001))).await;
        assert_eq!(refused["error"], capped, "{}: {refused}", js.name);
        let refused = stream(&b, "CREATE", "B1", &cfg("memory", Some(501))).await;
        assert_eq!(refused["error"], capped, "{}: {refused}", js.name);
        // The account's reservation is checked before the per-stream cap.
        let refused = stream(&b, "CREATE", "B1", &cfg("memory", Some(1001))).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );

        ok(
            &stream(&b, "CREATE", "B1", &cfg("file", Some(3000))).await,
            js.name,
        );
        let refused = stream(&b, "UPDATE", "B1", &cfg("file", Some(3001))).await;
        assert_eq!(refused["error"], capped, "{}: {refused}", js.name);
        let refused = stream(&b, "UPDATE", "B1", &cfg("file", None)).await;
        assert_eq!(refused["error"], required, "{}: {refused}", js.name);
        let account = info(&b).await;
        assert_eq!(
            (&account["reserved_storage"], &account["streams"]),
            (&json!(3000), &json!(1)),
            "{}: {account}",
            js.name
        );
    }
}

#[tokio::test]
async fn jetstream_limits_server_reservations() {
    for js in servers() {
        let c = login(&js.server, "c").await;
        let mem = |max_bytes: i64| json!({"subjects": ["c1"], "storage": "memory", "max_bytes": max_bytes});
        ok(&stream(&c, "CREATE", "C1", &mem(9000)).await, js.name);
        // The unlimited account is bound by the server's 10000 bytes.
        let mut other = mem(1001);
        other["subjects"] = json!(["c2"]);
        let refused = stream(&c, "CREATE", "C2", &other).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );
        other["max_bytes"] = json!(1000);
        ok(&stream(&c, "CREATE", "C2", &other).await, js.name);
        let refused = stream(&c, "UPDATE", "C1", &mem(9001)).await;
        assert_eq!(
            refused["error"],
            memory_exceeded(),
            "{}: {refused}",
            js.name
        );

        let monitor = js.server.monitor_port.expect("monitor port");
        let jsz = http_get_json(monitor, "/jsz?accounts=true");
        assert_eq!(jsz["reserved_memory"], 10000, "{}: {jsz}", js.name);
        let details = jsz["account_details"].as_array().expect("account details");
        let reserved: Vec<(&Value, &Value, &Value)> = details
            .iter()
            .map(|a| (&a["name"], &a["reserved_memory"], &a["reserved_storage"]))
            .collect();
        assert_eq!(
            reserved,
            [
                (&json!("A"), &json!(2000), &json!(5000)),
                (&json!("B"), &json!(1000), &json!(50000)),
                (&json!("C"), &json!(u64::MAX), &json!(u64::MAX)),
            ],
            "{}",
            js.name
        );
        ok(&ask(&c, "$JS.API.STREAM.DELETE.C1", "").await, js.name);
        let jsz = http_get_json(monitor, "/jsz");
        assert_eq!(jsz["reserved_memory"], 1000, "{}: {jsz}", js.name);

        // Files fill up the same way. A config that names no storage is checked against
        // neither until it is defaulted: its own error comes first.
        let full = json!({"subjects": ["f1"], "storage": "file", "max_bytes": 100_000});
        ok(&stream(&c, "CREATE", "F1", &full).await, js.name);
        let bad = json!({"subjects": ["f2.*.>.a"], "max_bytes": 1});
        let refused = stream(&c, "CREATE", "F2", &bad).await;
        let invalid = error(500, 10052, "invalid subject");
        assert_eq!(refused["error"], invalid, "{}: {refused}", js.name);
        let bad = json!({"subjects": ["f2.*.>.a"], "storage": "file", "max_bytes": 1});
        let refused = stream(&c, "CREATE", "F2", &bad).await;
        assert_eq!(
            refused["error"],
            storage_exceeded(),
            "{}: {refused}",
            js.name
        );
        let refused = stream(&c, "CREATE", "F2", &json!({"subjects": ["f2"]})).await;
        assert_eq!(
            refused["error"],
            storage_exceeded(),
            "{}: {refused}",
            js.name
        );
    }
}

#[tokio::test]
async fn jetstream_limits_publish_refused_at_the_account_limit() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        ok(
            &stream(&a, "CREATE", "F1", &json!({"subjects": ["f1"]})).await,
            js.name,
        );
        // Each record is 22 + 2 + 1000 + 8 = 1032 bytes; the account may store 5000.
        let payload = vec![b'x'; 1000];
        for seq in 1..=4 {
            let ack = ask(&a, "f1", payload.clone()).await;
            assert_eq!(ack, json!({"stream": "F1", "seq": seq}), "{}", js.name);
        }
        let refused = ask(&a, "f1", payload.clone()).await;
        assert_eq!(
            refused,
            json!({"error": error(400, 10002, "resource limits exceeded for account"),
                   "stream": "F1", "seq": 0}),
            "{}",
            js.name
        );
        assert!(
            js.server.wait_for_log(
                "[WRN] JetStream file resource limits exceeded for account: \"A\"",
                WAIT
            ),
            "{}",
            js.name
        );
        let account = info(&a).await;
        assert_eq!(account["storage"], 4128, "{}: {account}", js.name);
        ok(&ask(&a, "$JS.API.STREAM.PURGE.F1", "").await, js.name);
        assert_eq!(info(&a).await["storage"], 0, "{}", js.name);
        let ack = ask(&a, "f1", payload).await;
        assert_eq!(ack, json!({"stream": "F1", "seq": 5}), "{}", js.name);
        assert_eq!(info(&a).await["storage"], 1032, "{}", js.name);
        // The stream's bytes leave the account with it.
        ok(&ask(&a, "$JS.API.STREAM.DELETE.F1", "").await, js.name);
        assert_eq!(info(&a).await["storage"], 0, "{}", js.name);
    }
}

#[tokio::test]
async fn jetstream_limits_publish_refused_over_the_server_limit() {
    for js in servers() {
        let c = login(&js.server, "c").await;
        let cfg = json!({"subjects": ["c1"], "storage": "memory"});
        ok(&stream(&c, "CREATE", "C1", &cfg).await, js.name);
        // Memory records of 2 + 3000 + 16 bytes: the fourth takes the server over 10000, and
        // only then is the next refused.
        let payload = vec![b'x'; 3000];
        for seq in 1..=4 {
            let ack = ask(&c, "c1", payload.clone()).await;
            assert_eq!(ack, json!({"stream": "C1", "seq": seq}), "{}", js.name);
        }
        let refused = ask(&c, "c1", payload).await;
        assert_eq!(
            refused,
            json!({"error": error(503, 10023, "insufficient resources"),
                   "stream": "C1", "seq": 0}),
            "{}",
            js.name
        );
        assert!(
            js.server.wait_for_log(
                "[ERR] JetStream memory resource limits exceeded for server",
                WAIT
            ),
            "{}",
            js.name
        );
        let account = info(&c).await;
        assert_eq!(account["memory"], 12072, "{}: {account}", js.name);
        let jsz = http_get_json(js.server.monitor_port.expect("monitor"), "/jsz");
        assert_eq!(jsz["memory"], 12072, "{}: {jsz}", js.name);
    }
}

#[tokio::test]
async fn jetstream_limits_usage_recovered_after_restart() {
    for mut js in servers() {
        let a = login(&js.server, "a").await;
        let cfg = json!({"subjects": ["f1"], "max_bytes": 3000});
        ok(&stream(&a, "CREATE", "F1", &cfg).await, js.name);
        ok(&ask(&a, "f1", vec![b'x'; 1000]).await, js.name);
        drop(a);
        js.server.kill();
        let go = js.name == "go";
        let js = JsServer::start_in(js.dir, js.name, go, config).expect("restarts");
        let a = login(&js.server, "a").await;
        let account = info(&a).await;
        assert_eq!(
            (&account["storage"], &account["reserved_storage"]),
            (&json!(1032), &json!(3000)),
            "{}: {account}",
            js.name
        );
        let jsz = http_get_json(js.server.monitor_port.expect("monitor"), "/jsz");
        assert_eq!(
            (&jsz["storage"], &jsz["reserved_storage"]),
            (&json!(1032), &json!(3000)),
            "{}: {jsz}",
            js.name
        );
        // The recovered reservation counts against the account.
        let cfg = json!({"subjects": ["f2"], "max_bytes": 2001});
        let refused = stream(&a, "CREATE", "F2", &cfg).await;
        assert_eq!(
            refused["error"],
            storage_exceeded(),
            "{}: {refused}",
            js.name
        );
    }
}

#[test]
fn jetstream_limits_accounts_must_fit_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store");
    // A's 9500 bytes of memory and B's 1000 do not fit in 10000.
    let text = config(&store).replace("max_mem: 2000", "max_mem: 9500");
    let conf = dir.path().join("js.conf");
    std::fs::write(&conf, text).expect("write config");
    let conf = conf.to_str().expect("utf-8 path");
    let args = ["-c", conf, "-a", "127.0.0.1", "-p", "-1"];
    let mut binaries = vec![natrium_tests::process::natrium_path()];
    binaries.extend(natrium_tests::process::go_server_path());
    for binary in binaries {
        let out = natrium_tests::process::run_to_exit(&binary, &args, None, &[], WAIT);
        assert_eq!(out.code, Some(1), "{}", out.stderr);
        assert!(
            out.stderr.contains(
                "[FTL] Can't start JetStream: Error enabling jetstream on configured accounts: \
                 insufficient memory resources available (10028)"
            ),
            "{}",
            out.stderr
        );
    }
}

/// `limits { default_max_consumers }` caps a stream's consumers when neither the stream nor
/// its account sets a limit (Go's default is 1,000); a stream's own `max_consumers` wins.
#[tokio::test]
async fn jetstream_limits_default_max_consumers() {
    let config = |store: &Path| {
        format!(
            "jetstream {{ store_dir: \"{}\", limits {{ default_max_consumers: 2 }} }}\n",
            store.display()
        )
    };
    for js in support::ours_then_go(config) {
        let client = async_nats::connect(js.server.url()).await.expect("connect");
        for (name, extra) in [("D", ""), ("S", r#","max_consumers":3"#)] {
            let body = format!(r#"{{"name":"{name}","subjects":["{name}.>"]{extra}}}"#);
            ok(
                &ask(&client, &format!("$JS.API.STREAM.CREATE.{name}"), body).await,
                js.name,
            );
        }
        let create = |stream: &'static str, n: usize| {
            let client = client.clone();
            async move {
                let body =
                    format!(r#"{{"stream_name":"{stream}","config":{{"durable_name":"c{n}"}}}}"#);
                ask(
                    &client,
                    &format!("$JS.API.CONSUMER.CREATE.{stream}.c{n}"),
                    body,
                )
                .await
            }
        };
        for n in 0..2 {
            ok(&create("D", n).await, js.name);
        }
        let refused = create("D", 2).await;
        assert_eq!(
            refused["error"],
            error(400, 10026, "maximum consumers limit reached"),
            "{}",
            js.name
        );
        for n in 0..3 {
            ok(&create("S", n).await, js.name);
        }
        assert_eq!(
            create("S", 3).await["error"]["err_code"],
            10026,
            "{}",
            js.name
        );
    }
}

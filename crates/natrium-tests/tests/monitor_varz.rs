//! `/varz` against the Go server, field by field: for a default server and for one with TLS
//! and websocket configured, every key at every depth must exist on both sides, in the same
//! order, with the same JSON type (integer and float told apart), and the same value except
//! for the few listed in [`VALUES_DIFFER`]. No key may be missing on either side.

use natrium_tests::{ServerProcess, TestCerts};
use serde_json::Value;

/// Key paths whose values differ by nature, each with the reason. Only values: the keys must
/// be there on both servers.
const VALUES_DIFFER: [(&str, &str); 12] = [
    (".server_id", "generated per process"),
    (".server_name", "the server id by default"),
    (".go", "Go's runtime version; ours names Natrium"),
    (".port", "a random client port"),
    (".websocket.port", "a random websocket port"),
    (".start", "start time"),
    (".now", "request time"),
    (".uptime", "a second may tick between the two requests"),
    (".mem", "resident memory"),
    (".cpu", "CPU load"),
    (".config_load_time", "start time"),
    (
        ".subscriptions",
        "Go subscribes for services Natrium does not run yet (docs/system-events.md)",
    ),
];

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path with its type and, for leaves, its value.
fn flatten(value: &Value, path: &str, out: &mut Vec<(String, &'static str, Option<Value>)>) {
    out.push((path.to_owned(), json_type(value), None));
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(v, &format!("{path}[{i}]"), out);
            }
        }
        leaf => {
            if let Some(last) = out.last_mut() {
                last.2 = Some(leaf.clone());
            }
        }
    }
}

/// The keys of a pretty-printed document in document order with their depth (both servers
/// indent by two spaces), so that order and nesting are compared too.
fn key_order(pretty: &str) -> Vec<(usize, String)> {
    pretty
        .lines()
        .filter_map(|line| {
            let trimmed = line.trim_start();
            let key = trimmed.strip_prefix('"')?.split_once("\":")?.0;
            Some((line.len() - trimmed.len(), key.to_owned()))
        })
        .collect()
}

/// Raw `/varz` text as served (for the key order, which `serde_json::Value` does not keep).
fn varz_raw(server: &ServerProcess) -> String {
    use std::io::{Read, Write};
    let port = server.monitor_port.expect("monitor port");
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .write_all(b"GET /varz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    raw.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
}

fn compare(case: &str, ours: &ServerProcess, go: &ServerProcess) {
    let (ours_raw, go_raw) = (varz_raw(ours), varz_raw(go));
    assert_eq!(
        key_order(&ours_raw),
        key_order(&go_raw),
        "{case}: keys, order and nesting"
    );
    let parse = |t: &str| serde_json::from_str::<Value>(t).expect("varz json");
    let (a, b) = (parse(&ours_raw), parse(&go_raw));
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    flatten(&a, "", &mut fa);
    flatten(&b, "", &mut fb);
    let paths =
        |f: &[(String, &str, Option<Value>)]| f.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&fa), paths(&fb), "{case}: key paths");
    for ((path, type_a, value_a), (_, type_b, value_b)) in fa.iter().zip(&fb) {
        assert_eq!(
            type_a, type_b,
            "{case}: type of {path}: {value_a:?} vs {value_b:?}"
        );
        if !VALUES_DIFFER.iter().any(|(p, _)| p == path) {
            assert_eq!(value_a, value_b, "{case}: value of {path}");
        }
    }
}

#[test]
fn monitor_varz_fields_match_go() {
    let args = ["-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    let Some(go) = ServerProcess::start_go(&args) else {
        eprintln!("Go nats-server not installed: differential /varz test skipped");
        return;
    };
    compare("default", &ServerProcess::start(&args), &go);
}

#[test]
fn monitor_varz_fields_match_go_with_tls_and_websocket() {
    let certs = TestCerts::generate();
    let body = format!(
        "http: 127.0.0.1:-1\nwebsocket {{\n  listen: \"127.0.0.1:-1\"\n  no_tls: true\n  compression: true\n}}\n{}",
        certs.tls_block("  timeout: 3")
    );
    let conf = certs.config("varz.conf", &body);
    let Some(go) = ServerProcess::start_go(&["-c", &conf]) else {
        eprintln!("Go nats-server not installed: differential /varz test skipped");
        return;
    };
    compare(
        "tls and websocket",
        &ServerProcess::start(&["-c", &conf]),
        &go,
    );
}

/// Configured feature flags, tags, metadata and a disabled JetStream block: `/varz` shows the
/// flags in force (Go's defaults under the configured known ones; unknown names left out).
#[test]
fn monitor_varz_fields_match_go_with_inert_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("varz.conf");
    std::fs::write(
        &conf,
        "http: 127.0.0.1:-1\nserver_tags: [\"Region:EU\", \"az:1\"]\n\
         server_metadata { team: core }\njetstream { enabled: false }\n\
         feature_flags { js_ack_fc_v2: true, js_raft_delete_range: false, unknown: true }\n",
    )
    .expect("write config");
    let conf = conf.to_str().expect("path");
    let args = ["-c", conf, "-a", "127.0.0.1", "-p", "-1"];
    let Some(go) = ServerProcess::start_go(&args) else {
        eprintln!("Go nats-server not installed: differential /varz test skipped");
        return;
    };
    compare("inert options", &ServerProcess::start(&args), &go);
}

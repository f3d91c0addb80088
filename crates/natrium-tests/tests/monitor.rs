//! Monitoring endpoints against the Go server: the same situation (client `c1` with `foo.*`
//! and the queue subscription `bar q`, one message, one closed client) on both, then each
//! endpoint's JSON compared for shape (keys, nesting, types) and deterministic values.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use natrium_tests::raw::{http_get_json, wait_until};
use natrium_tests::{RawClient, ServerProcess};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(20);
const ARGS: [&str; 6] = ["-a", "127.0.0.1", "-p", "-1", "-m", "-1"];

/// Keys whose values must be equal on both servers (the rest differ by nature: ids, times,
/// ports, cids, process figures; `pending_bytes` depends on when Go's PING timer fires).
const EQUAL_KEYS: [&str; 22] = [
    "num_connections",
    "total",
    "offset",
    "limit",
    "kind",
    "type",
    "ip",
    "in_msgs",
    "out_msgs",
    "in_bytes",
    "out_bytes",
    "subscriptions",
    "name",
    "lang",
    "version",
    "subject",
    "qgroup",
    "sid",
    "msgs",
    "reason",
    "account",
    "status",
];

struct Situation {
    server: ServerProcess,
    _c1: RawClient,
}

fn sync(client: &mut RawClient, bytes: &[u8]) -> String {
    client.send(bytes);
    client.send(b"PING\r\n");
    client.read_until(b"PONG\r\n")
}

/// Starts a server and builds the situation of the recorded Go samples.
fn situation(server: ServerProcess) -> Situation {
    let port = server.monitor_port.expect("monitor port");
    let mut c1 = RawClient::connect(&server.addr());
    let connect =
        "CONNECT {\"verbose\":false,\"name\":\"c1\",\"lang\":\"py\",\"version\":\"1.0\"}\r\n";
    sync(&mut c1, connect.as_bytes());
    let got = sync(
        &mut c1,
        b"SUB foo.* 1\r\nSUB bar q 2\r\nPUB foo.x 2\r\nhi\r\n",
    );
    assert!(got.contains("MSG foo.x 1 2"), "{got}");
    let mut gone = RawClient::connect(&server.addr());
    sync(&mut gone, b"CONNECT {\"verbose\":false}\r\n");
    drop(gone);
    assert!(wait_until(WAIT, || {
        http_get_json(port, "/connz?state=closed")["total"] == 1
    }));
    Situation { server, _c1: c1 }
}

fn both() -> Option<(Situation, Situation)> {
    let Some(go) = ServerProcess::start_go(&ARGS) else {
        eprintln!("Go nats-server not installed: differential monitor test skipped");
        return None;
    };
    Some((situation(ServerProcess::start(&ARGS)), situation(go)))
}

/// `GET path`: status code and body.
fn http_get(port: u16, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect monitor");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let (_, body) = raw.split_once("\r\n\r\n").expect("header end");
    (status, body.to_owned())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Same keys, nesting and types everywhere; equal values under [`EQUAL_KEYS`].
fn compare(path: &str, ours: &Value, go: &Value, skip: &[&str]) {
    assert_eq!(kind(ours), kind(go), "{path}: {ours} vs {go}");
    match (ours, go) {
        (Value::Object(a), Value::Object(b)) => {
            let keys_a: Vec<_> = a.keys().filter(|k| !skip.contains(&k.as_str())).collect();
            let keys_b: Vec<_> = b.keys().filter(|k| !skip.contains(&k.as_str())).collect();
            assert_eq!(keys_a, keys_b, "{path}: keys");
            for (key, value) in a {
                if skip.contains(&key.as_str()) {
                    continue;
                }
                let sub = format!("{path}.{key}");
                if EQUAL_KEYS.contains(&key.as_str()) {
                    assert_eq!(value, &b[key], "{sub}");
                }
                compare(&sub, value, &b[key], skip);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: length");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x.is_string() {
                    assert_eq!(x, y, "{path}[{i}]");
                }
                compare(&format!("{path}[{i}]"), x, y, skip);
            }
        }
        _ => {}
    }
}

/// Go lists a connection's subscriptions (and its accounts) in map order: sort them (by sid, else subject).
fn normalise(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let unordered = ["accounts", "account_statz"];
                if key.starts_with("subscriptions_list") || unordered.contains(&key.as_str()) {
                    if let Value::Array(items) = value {
                        items.sort_by_key(|i| {
                            i.get("sid")
                                .map_or_else(|| i.to_string(), ToString::to_string)
                        });
                    }
                }
                normalise(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

fn compare_endpoint(ours: &Situation, go: &Situation, path: &str, skip: &[&str]) {
    let mut a = http_get_json(ours.server.monitor_port.expect("port"), path);
    let mut b = http_get_json(go.server.monitor_port.expect("port"), path);
    normalise(&mut a);
    normalise(&mut b);
    compare(path, &a, &b, skip);
}

#[test]
fn monitor_connz_matches_go() {
    let Some((ours, go)) = both() else { return };
    for path in [
        "/connz",
        "/connz?subs=1",
        "/connz?subs=detail",
        "/connz?state=closed",
        "/connz?state=all&sort=cid",
        "/connz?state=all&sort=msgs_from",
        "/connz?state=closed&sort=stop",
        "/connz?state=closed&sort=reason",
        "/connz?sort=subs&subs=detail",
        "/connz?sort=rtt",
        "/connz?sort=idle&sort=last",
        "/connz?offset=1",
        "/connz?limit=1&state=all",
        "/connz?state=any&offset=1&limit=5",
    ] {
        compare_endpoint(&ours, &go, path, &[]);
    }
}

#[test]
fn monitor_connz_cid_and_rtt() {
    let Some((ours, _go)) = both() else { return };
    let port = ours.server.monitor_port.expect("port");
    // The server's internal clients take the first cids, as Go's do.
    let first = http_get_json(port, "/connz")["connections"][0]["cid"].clone();
    let doc = http_get_json(port, &format!("/connz?cid={first}&subs=detail"));
    assert_eq!(doc["limit"], 1);
    assert_eq!(doc["connections"][0]["cid"], first);
    let rtt = doc["connections"][0]["rtt"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(rtt.ends_with('s'), "{rtt}");
    let closed = http_get_json(port, "/connz?state=closed");
    assert_eq!(closed["connections"][0]["reason"], "Client Closed");
    assert!(closed["connections"][0]["stop"].is_string());
}

#[test]
fn monitor_bad_parameters_like_go() {
    let Some((ours, go)) = both() else { return };
    for path in [
        "/connz?sort=x",
        "/connz?sort=stop",
        "/connz?sort=reason&state=all",
        "/connz?state=nope",
        "/connz?offset=x",
        "/connz?limit=1.5",
        "/connz?cid=-1",
        "/connz?subs=maybe",
        "/subsz?test=foo.*",
        "/subsz?subs=2",
        "/subsz?offset=z",
    ] {
        let a = http_get(ours.server.monitor_port.expect("port"), path);
        let b = http_get(go.server.monitor_port.expect("port"), path);
        assert_eq!(a, b, "{path}");
    }
}

#[test]
fn monitor_subsz_matches_go() {
    let Some((ours, go)) = both() else { return };
    // Go counts its system account's internal subscriptions in the statistics.
    let stats = [
        "num_subscriptions",
        "num_cache",
        "num_inserts",
        "num_removes",
        "num_matches",
        "cache_hit_rate",
        "max_fanout",
        "avg_fanout",
    ];
    compare_endpoint(&ours, &go, "/subsz", &stats);
    for path in [
        "/subsz?subs=1&test=foo.x",
        "/subsz?subs=1&test=bar",
        "/subsz?subs=1&test=nothing",
        "/subsz?subs=1&test=foo.x&offset=1",
        "/subsz?subs=1&test=foo.x&limit=1",
    ] {
        compare_endpoint(&ours, &go, path, &stats);
    }
    // Both list every subscription they count, the internal ones included.
    for (name, s) in [("ours", &ours), ("go", &go)] {
        let doc = http_get_json(s.server.monitor_port.expect("port"), "/subsz?subs=1");
        assert_eq!(doc["total"], doc["num_subscriptions"], "{name}");
    }
}

#[test]
fn monitor_other_endpoints_match_go() {
    let Some((ours, go)) = both() else { return };
    for path in ["/routez", "/gatewayz", "/leafz", "/jsz", "/accountz"] {
        compare_endpoint(&ours, &go, path, &[]);
    }
    // Go lists `$G`'s imports of the `$SYS` request services in its map's random order; the
    // counters may differ (system_requests.rs compares the imports sorted).
    let counts = [
        "imports",
        "subscriptions",
        "sublist_stats",
        "num_subscriptions",
    ];
    compare_endpoint(&ours, &go, "/accountz?acc=$G", &counts);
    compare_endpoint(&ours, &go, "/accstatz", &counts);
    compare_endpoint(&ours, &go, "/accstatz?unused=1&acc=nope", &counts);
    for path in [
        "/healthz",
        "/healthz?js-enabled-only=true",
        "/healthz?js-server-only=1&details=1",
        "/healthz?stream=s",
        "/healthz?stream=s&details=true",
        "/healthz?account=a&consumer=c",
        "/healthz?details=maybe",
        "/accountz?acc=nope",
        "/accstatz?unused=x",
    ] {
        let a = http_get(ours.server.monitor_port.expect("port"), path);
        let b = http_get(go.server.monitor_port.expect("port"), path);
        assert_eq!(a, b, "{path}");
    }
    let (status, index) = http_get(ours.server.monitor_port.expect("port"), "/");
    assert_eq!(status, 200);
    for endpoint in [
        "varz", "jsz", "connz", "accountz", "accstatz", "subsz", "routez", "leafz",
    ] {
        assert!(
            index.contains(&format!("/{endpoint}\"")),
            "{endpoint}: {index}"
        );
    }
}

#[test]
fn monitor_metrics_prometheus_text() {
    let ours = situation(ServerProcess::start(&ARGS));
    let (status, body) = http_get(ours.server.monitor_port.expect("port"), "/metrics");
    assert_eq!(status, 200);
    let mut values = std::collections::HashMap::new();
    let mut typed = std::collections::HashSet::new();
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("type line");
            assert!(kind == "counter" || kind == "gauge", "{line}");
            typed.insert(name.to_owned());
        } else if !line.starts_with('#') {
            let (name, value) = line.split_once(' ').expect("sample line");
            let value: f64 = value.parse().expect("number");
            assert!(typed.contains(name), "{name} without TYPE");
            values.insert(name.to_owned(), value);
        }
    }
    assert!((values["natrium_in_msgs_total"] - 1.0).abs() < f64::EPSILON);
    assert!((values["natrium_out_msgs_total"] - 1.0).abs() < f64::EPSILON);
    assert!((values["natrium_in_bytes_total"] - 2.0).abs() < f64::EPSILON);
    assert!((values["natrium_connections"] - 1.0).abs() < f64::EPSILON);
    assert!((values["natrium_connections_total"] - 2.0).abs() < f64::EPSILON);
    // The client's two, plus the system account's request handlers (Go counts its own too).
    let varz = http_get_json(ours.server.monitor_port.expect("port"), "/varz");
    let in_varz = varz["subscriptions"].as_f64().expect("subscriptions");
    assert!(in_varz > 2.0);
    assert!((values["natrium_subscriptions"] - in_varz).abs() < f64::EPSILON);
    assert!(values["natrium_memory_bytes"] > 0.0);
    for name in [
        "natrium_cpu_seconds_total",
        "natrium_uptime_seconds",
        "natrium_slow_consumers_total",
        "natrium_out_bytes_total",
    ] {
        assert!(values.contains_key(name), "{name}");
    }
}

/// A second open client with more traffic and subscriptions than `c1`.
fn add_c2(situation: &Situation) -> RawClient {
    let mut c2 = RawClient::connect(&situation.server.addr());
    let connect = "CONNECT {\"verbose\":false,\"name\":\"c2\"}\r\n";
    sync(&mut c2, connect.as_bytes());
    sync(
        &mut c2,
        b"SUB a 1\r\nSUB b 2\r\nSUB c 3\r\nPUB x 3\r\nabc\r\nPUB x 3\r\nabc\r\nPUB x 3\r\nabc\r\n",
    );
    c2
}

fn names(port: u16, path: &str) -> Vec<Value> {
    let doc = http_get_json(port, path);
    doc["connections"]
        .as_array()
        .map(|list| list.iter().map(|c| c["name"].clone()).collect())
        .unwrap_or_default()
}

#[test]
fn monitor_connz_sort_directions_like_go() {
    let Some((ours, go)) = both() else { return };
    let _c2 = (add_c2(&ours), add_c2(&go));
    for sort in [
        "cid",
        "start",
        "subs",
        "msgs_from",
        "bytes_from",
        "msgs_to",
        "uptime",
        "last",
    ] {
        let path = format!("/connz?sort={sort}");
        let a = names(ours.server.monitor_port.expect("port"), &path);
        let b = names(go.server.monitor_port.expect("port"), &path);
        assert_eq!(a.len(), 2, "{path}");
        assert_eq!(a, b, "{path}");
    }
    for path in [
        "/connz?sort=subs&limit=1",
        "/connz?sort=subs&offset=1&subs=1",
    ] {
        compare_endpoint(&ours, &go, path, &[]);
    }
}

#[test]
fn monitor_max_closed_clients_option() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("closed.conf");
    std::fs::write(&conf, "max_closed_clients: 1\n").expect("write config");
    let conf = conf.to_str().expect("utf-8 path");
    let mut args = vec!["-c", conf];
    args.extend(ARGS);
    let mut servers = vec![ServerProcess::start(&args)];
    servers.extend(ServerProcess::start_go(&args));
    for server in servers {
        let port = server.monitor_port.expect("port");
        for _ in 0..3 {
            let mut c = RawClient::connect(&server.addr());
            sync(&mut c, b"CONNECT {\"verbose\":false}\r\n");
        }
        assert!(wait_until(WAIT, || http_get_json(port, "/connz")["total"] == 0));
        let closed = http_get_json(port, "/connz?state=closed");
        assert_eq!(closed["total"], 1);
        assert_eq!(closed["num_connections"], 1);
    }
}

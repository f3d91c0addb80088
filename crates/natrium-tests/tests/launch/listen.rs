//! Listening (`-p`/`-a` and their spellings, IPv6, wildcard) and monitoring (readiness,
//! `/healthz`, `/varz` against Go's).

use super::support::*;

#[test]
fn launch_client_listen_flag_spellings() {
    let fixed = free_port().to_string();
    let port_eq = format!("--port={fixed}");
    let forms: Vec<Vec<&str>> = vec![
        vec!["-a", "127.0.0.1", "-p", "-1"],
        vec!["--addr", "127.0.0.1", "--port", "-1"],
        vec!["-net", "127.0.0.1", "-port", "-1"],
        vec!["--net=127.0.0.1", "--port=-1"],
        vec!["-addr=127.0.0.1", "-port", &fixed],
        vec!["-a", "127.0.0.1", &port_eq],
    ];
    for args in &forms {
        let mut startups: Vec<Vec<String>> = Vec::new();
        for (name, binary) in binaries() {
            let server = start(&binary, args);
            assert_ne!(server.port, 0, "{name} {args:?}: no listen line");
            if args.iter().any(|a| a.ends_with(fixed.as_str())) {
                assert_eq!(server.port.to_string(), fixed, "{name} {args:?}");
            }
            let line = format!(
                "Listening for client connections on 127.0.0.1:{}",
                server.port
            );
            assert!(server.wait_for_log(&line, START_TIMEOUT), "{name} {args:?}");
            let info = info_from(&server.addr());
            assert_eq!(info["port"], u64::from(server.port), "{name} {args:?}");
            startups.push(normalized(&server.log_lines()));
        }
        if let [ours, go] = startups.as_slice() {
            assert_same_lines(&format!("startup {args:?}"), ours, Some(go));
        }
    }
}

#[test]
fn launch_ipv6_loopback() {
    if !has_ipv6_loopback() {
        eprintln!("no ::1 on this machine: skipped");
        return;
    }
    let mut startups = Vec::new();
    for (name, binary) in binaries() {
        let server = start(&binary, &["--addr", "::1", "-p", "-1"]);
        let line = format!("Listening for client connections on [::1]:{}", server.port);
        assert!(server.wait_for_log(&line, START_TIMEOUT), "{name}");
        let info = info_from(&format!("[::1]:{}", server.port));
        assert_eq!(info["client_ip"], "::1", "{name}");
        assert_eq!(info["host"], "::1", "{name}");
        startups.push(normalized(&server.log_lines()));
    }
    if let [ours, go] = startups.as_slice() {
        assert_same_lines("startup on ::1", ours, Some(go));
    }
}

/// Go listens on `0.0.0.0` with one dual-stack socket: a client resolving `localhost` to ::1
/// (Node.js does) still connects, and IPv4 clients are reported as plain IPv4.
#[test]
fn launch_wildcard_listen_is_dual_stack() {
    for (name, binary) in binaries() {
        let server = start(&binary, &["-a", "0.0.0.0", "-p", "-1"]);
        let line = format!(
            "Listening for client connections on 0.0.0.0:{}",
            server.port
        );
        assert!(server.wait_for_log(&line, START_TIMEOUT), "{name}");
        let v4 = info_from(&server.addr());
        assert_eq!(
            v4["client_ip"], "127.0.0.1",
            "{name}: IPv4 peer reported as is"
        );
        if has_ipv6_loopback() {
            let v6 = info_from(&format!("[::1]:{}", server.port));
            assert_eq!(v6["client_ip"], "::1", "{name}");
        }
    }
}

fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(n) if n.is_f64() => "float",
        serde_json::Value::Number(_) => "integer",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Top-level keys in document order (both servers pretty-print with two-space indents).
fn top_level_keys(pretty: &str) -> Vec<String> {
    pretty
        .lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split_once('"').map(|(k, _)| k.to_owned()))
        .collect()
}

/// Key, JSON type and (for objects) the nested keys with their types.
fn shape(doc: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(map) = doc.as_object() {
        for (key, value) in map {
            out.push((key.clone(), json_type(value).to_owned()));
            if let Some(inner) = value.as_object() {
                for (k, v) in inner {
                    out.push((format!("{key}.{k}"), json_type(v).to_owned()));
                }
            }
        }
    }
    out
}

#[test]
fn launch_monitor_ready_with_healthz_and_varz_like_go() {
    let mut varz_docs = Vec::new();
    let mut startups = Vec::new();
    for (name, binary) in binaries() {
        for flag in ["-m", "--http_port"] {
            let server = start(&binary, &["-a", "127.0.0.1", "-p", "-1", flag, "-1"]);
            let port = server.monitor_port.expect("monitor line");
            assert_ne!(port, 0, "{name}: the log must name the bound port");
            let monitor_line = format!("Starting http monitor on 127.0.0.1:{port}");
            assert!(server.wait_for_log(&monitor_line, START_TIMEOUT), "{name}");
            let lines = server.log_lines();
            let monitor_at = lines.iter().position(|l| l.contains(&monitor_line));
            let listen_at = lines
                .iter()
                .position(|l| l.contains("Listening for client connections"));
            assert!(
                monitor_at < listen_at,
                "{name}: monitor starts first, as in Go"
            );

            // Ready as soon as the server says so.
            let health = http_get(port, "/healthz");
            assert_eq!(health.status, 200, "{name}");
            assert_eq!(health.body, r#"{"status":"ok"}"#, "{name}");
            assert!(
                health.headers.contains("content-type: application/json"),
                "{name}: {}",
                health.headers
            );
            let varz = http_get(port, "/varz");
            assert_eq!(varz.status, 200, "{name}");
            let doc: serde_json::Value = serde_json::from_str(&varz.body).expect("varz json");
            assert_eq!(doc["port"], u64::from(server.port), "{name}");
            // Go reports the configured value, not the bound port.
            assert_eq!(doc["http_port"], -1, "{name}");
            assert_eq!(doc["version"], "2.15.2", "{name}");
            if flag == "-m" {
                varz_docs.push((name, varz.body));
                startups.push(normalized(&server.log_lines()));
            }
        }
    }
    if let [(_, ours), (_, go)] = varz_docs.as_slice() {
        let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).expect("json");
        assert_eq!(
            shape(&parse(ours)),
            shape(&parse(go)),
            "/varz keys and types"
        );
        assert_eq!(top_level_keys(ours), top_level_keys(go), "/varz key order");
    }
    if let [ours, go] = startups.as_slice() {
        assert_same_lines("startup with -m -1", ours, Some(go));
    }
}

//! Options for features Natrium does not have (issue 12). One that Go accepts and that only
//! describes the server or tunes a missing feature (changing nothing a client sees while the
//! feature is off) starts the server as it starts Go's — client harnesses pass `-sd` on every
//! start. One that would switch a missing feature on is refused with `not supported yet`.

use super::support::*;

#[test]
fn launch_inert_flags_start_like_go() {
    let dir = temp_dir();
    let store = dir.path().display().to_string();
    let store_eq = format!("--store_dir={store}");
    let cases: [&[&str]; 7] = [
        &["-sd", &store],
        &[&store_eq],
        &["-js=false", "-sd", &store],
        &["--no_advertise"],
        &["--cluster_advertise", "127.0.0.1:4248"],
        &["--connect_retries", "3"],
        &["--profile", "0"],
    ];
    for args in cases {
        let mut full = vec!["-a", "127.0.0.1", "-p", "-1"];
        full.extend_from_slice(args);
        let mut startups = Vec::new();
        for (name, binary) in binaries() {
            let server = start(&binary, &full);
            let _ = info_from(&server.addr());
            startups.push(normalized(&server.log_lines()));
            assert!(
                std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
                "{name} {args:?}: nothing is stored"
            );
        }
        if let [ours, go] = startups.as_slice() {
            assert_same_lines(&format!("{args:?}"), ours, Some(go));
        }
    }
}

/// The configuration a harness or an operator might carry over from a Go deployment.
const INERT_CONF: &str = "\
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
store_dir: \"STORE\"
server_tags: [\"Region:EU \", \"ssd\", \"region:eu\"]
server_metadata { owner: \"ops team\", Rack: r7 }
jetstream {
  enabled: false
  max_memory_store: 1G
  max_file_store: \"10G\"
  domain: hub
  sync: always
  limits { max_ack_pending: 100, duplicate_window: \"2m\" }
}
accounts { A { jetstream: enabled } }
prof_block_rate: 3
prof_port: 0
trace_headers: false
feature_flags { js_ack_fc_v2: true }
ocsp: false
ocsp_cache: { type: local, save_interval: \"5m\" }
no_fast_producer_stall: false
";

/// Keys of a pretty-printed JSON document, in document order, at two-space indent.
fn top_level_keys(pretty: &str) -> Vec<String> {
    pretty
        .lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split_once('"').map(|(k, _)| k.to_owned()))
        .collect()
}

#[test]
fn launch_inert_options_start_and_varz_reports_tags_like_go() {
    let dir = temp_dir();
    let store = dir.path().join("store");
    let conf = dir.path().join("inert.conf");
    let text = INERT_CONF.replace("STORE", &store.display().to_string());
    std::fs::write(&conf, text).expect("write");
    let conf = conf.display().to_string();
    let mut runs = Vec::new();
    for (name, binary) in binaries() {
        let out = run(&binary, &["-t", "-c", &conf]);
        assert_eq!(out.code, Some(0), "{name} -t: {}", out.stderr);
        let server = start(&binary, &["-c", &conf]);
        let port = server.monitor_port.expect("monitor port");
        let varz = http_get(port, "/varz");
        let doc: serde_json::Value = serde_json::from_str(&varz.body).expect("varz");
        assert_eq!(
            doc["tags"],
            serde_json::json!(["region:eu", "ssd"]),
            "{name}"
        );
        assert_eq!(
            doc["metadata"],
            serde_json::json!({"Rack": "r7", "owner": "ops team"}),
            "{name}"
        );
        assert_eq!(doc["jetstream"], serde_json::json!({}), "{name}");
        assert!(!store.exists(), "{name}: JetStream stays off");
        let order: Vec<String> = top_level_keys(&varz.body)
            .into_iter()
            .filter(|k| {
                ["config_digest", "tags", "metadata", "system_account"].contains(&k.as_str())
            })
            .collect();
        assert_eq!(
            order,
            ["config_digest", "tags", "metadata", "system_account"],
            "{name}: Go's key order"
        );
        runs.push(normalized(&server.log_lines()));
    }
    if let [ours, go] = runs.as_slice() {
        // Go's start-up warning for `prof_block_rate` included.
        assert!(
            ours.iter()
                .any(|l| l.contains("[WRN] Block profiling is enabled (rate 3)")),
            "{ours:?}"
        );
        assert_same_lines("inert options", ours, Some(go));
    }
}

/// Tags and metadata reload like Go's, each with its own line.
#[test]
fn launch_inert_tags_reload_like_go() {
    let mut runs = Vec::new();
    for (name, binary) in binaries() {
        let dir = temp_dir();
        let conf = dir.path().join("tags.conf");
        let write = |tags: &str| {
            std::fs::write(
                &conf,
                format!("listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\nserver_tags: [{tags}]\n"),
            )
            .expect("write");
        };
        write("a");
        let conf_arg = conf.display().to_string();
        let server = start(&binary, &["-c", &conf_arg]);
        write("a, B");
        server.signal("HUP");
        assert!(
            server.wait_for_log("Reloaded server configuration", START_TIMEOUT),
            "{name}"
        );
        let port = server.monitor_port.expect("monitor port");
        let doc: serde_json::Value =
            serde_json::from_str(&http_get(port, "/varz").body).expect("varz");
        assert_eq!(doc["tags"], serde_json::json!(["a", "b"]), "{name}");
        runs.push(normalized(&after_ready(&server.log_lines())));
    }
    if let [ours, go] = runs.as_slice() {
        assert!(
            ours.iter().any(|l| l.ends_with("Reloaded: tags")),
            "{ours:?}"
        );
        assert_same_lines("tags reload", ours, Some(go));
    }
}

#[test]
fn launch_feature_switches_refused_as_not_supported_yet() {
    let dir = temp_dir();
    let flags: [(&[&str], &str); 5] = [
        (&["--cluster", "nats://127.0.0.1:6222"], "cluster"),
        (&["--routes", "nats://127.0.0.1:6222"], "routes"),
        (&["--cluster_name", "c1"], "cluster_name"),
        (&["--cluster_listen", "127.0.0.1:6222"], "cluster_listen"),
        (&["--profile", "6060"], "profile"),
    ];
    for (args, flag) in flags {
        let mut full = vec!["-a", "127.0.0.1", "-p", "-1", "-sd", "/tmp"];
        full.extend_from_slice(args);
        let out = run(&natrium_path(), &full);
        assert_eq!(out.code, Some(1), "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr,
            format!("nats-server: flag -{flag} is not supported yet\n"),
            "{args:?}"
        );
    }
    let options = [
        ("prof_port: 6060", "prof_port"),
        ("ocsp: true", "ocsp"),
        ("no_fast_producer_stall: true", "no_fast_producer_stall"),
        ("write_timeout: retry", "write_timeout"),
        ("cluster {\n  port: -1\n}", "cluster"),
    ];
    for (body, option) in options {
        let conf = dir.path().join("refused.conf");
        std::fs::write(&conf, format!("listen: 127.0.0.1:-1\n{body}\n")).expect("write");
        let conf = conf.display().to_string();
        let out = run(&natrium_path(), &["-c", &conf]);
        assert_eq!(out.code, Some(1), "{body}: {}", out.stderr);
        assert_eq!(
            out.stderr,
            format!("nats-server: {conf}:2:1: option \"{option}\" is not supported yet\n\n"),
            "{body}"
        );
    }
}

//! Options accepted while their feature is off (see `apply/inert.rs`, `apply/jetstream.rs`),
//! and the values of the same options that stay refused.

use super::*;
use crate::lang::parse_str_with_env;

fn load(src: &str) -> Result<LoadedConfig, ConfError> {
    let map = parse_str_with_env(src, "f.conf", &|_| None)?;
    ServerOptions::from_map(&map, "f.conf")
}

fn opts(src: &str) -> ServerOptions {
    load(src).unwrap_or_else(|e| panic!("{src:?}: {e}")).options
}

fn err(src: &str) -> String {
    load(src).map_or_else(|e| e.to_string(), |_| "accepted".to_owned())
}

#[test]
fn inert_options_accepted_like_go() {
    let o = opts(
        "store_dir: \"/tmp/js\"\nserver_tags: [\" AZ:1 \", ssd, \"az:1\", \"\"]\n\
         server_metadata { owner: ops, \"rack id\": \"r 7\" }\nprof_block_rate: 5\n\
         prof_port: 0\ntrace_headers: true\nfeature_flags { js_ack_fc_v2: true }\n\
         ocsp: false\nocsp_cache: { type: local, save_interval: \"5m\" }\n\
         no_fast_producer_stall: false",
    );
    assert_eq!(o.store_dir, "/tmp/js");
    assert_eq!(o.server_tags, ["az:1", "ssd"]);
    assert_eq!(
        o.server_metadata.get("rack id").map(String::as_str),
        Some("r 7")
    );
    assert_eq!(o.prof_block_rate, 5);
    assert!(o.trace_headers && o.trace);
    assert_eq!(opts("server_tags: Solo").server_tags, ["solo"]);
    assert_eq!(opts("storedir: x").store_dir, "x");
}

#[test]
fn inert_jetstream_off_forms_accepted() {
    for off in [
        "jetstream: false",
        "jetstream: disabled",
        "jetstream: \"Disable\"",
    ] {
        assert_eq!(err(off), "accepted", "{off}");
    }
    let o = opts(
        "jetstream {\n  enabled: false\n  store_dir: /data\n  max_mem: 1G\n  max_file: \"10G\"\n  \
         domain: hub\n  sync: always\n  limits { max_ack_pending: 5 }\n}",
    );
    assert_eq!(o.store_dir, "/data");
    assert_eq!(o.jetstream_domain, "hub");
    assert_eq!(
        err("accounts { A { jetstream: enabled, users: [{user: a, password: a}] } }"),
        "accepted"
    );
}

#[test]
fn options_jetstream_on_forms_and_values() {
    for src in [
        "jetstream: true",
        "jetstream: enabled",
        "jetstream {}",
        "jetstream { enabled: true }",
    ] {
        assert!(opts(src).jetstream.enabled, "{src}");
    }
    let o = opts(
        "jetstream {\n  store_dir: /x\n  max_mem: 1G\n  max_file: 2G\n  sync_interval: always\n  \
         strict: false\n  key: k1\n  prev_key: k0\n  cipher: AES\n  request_queue_limit: 5\n  \
         max_buffered_msgs: 7\n  limits { duplicate_window: \"1m\", max_ack_pending: 9 }\n}",
    );
    let js = &o.jetstream;
    assert!(js.enabled && !js.strict);
    assert_eq!(o.store_dir, "/x");
    assert_eq!(
        (js.max_memory, js.max_store),
        (1_000_000_000, 2_000_000_000)
    );
    assert_eq!(js.sync, crate::options::SyncPolicy::Always);
    assert_eq!(
        (js.key.as_str(), js.prev_key.as_str(), js.cipher.as_str()),
        ("k1", "k0", "aes")
    );
    assert_eq!((js.request_queue_limit, js.max_buffered_msgs), (5, 7));
    assert_eq!(
        js.limits.duplicate_window,
        Some(std::time::Duration::from_secs(60))
    );
    assert_eq!(js.limits.max_ack_pending, 9);
    assert_eq!(
        opts("jetstream { sync: \"10s\" }").jetstream.sync,
        crate::options::SyncPolicy::Interval(std::time::Duration::from_secs(10))
    );
    assert!(!opts("jetstream { enabled: false }").jetstream.enabled);
}

#[test]
fn inert_values_that_switch_a_feature_on_stay_refused() {
    let refused = |src: &str, option: &str| {
        assert_eq!(
            err(src),
            format!("f.conf:1:0: option \"{option}\" is not supported yet"),
            "{src}"
        );
    };
    refused("prof_port: 6060", "prof_port");
    refused("ocsp: true", "ocsp");
    refused("ocsp { mode: always }", "ocsp");
    refused("no_fast_producer_stall: true", "no_fast_producer_stall");
    for option in [
        "write_timeout",
        "default_js_domain",
        "resolver_tls",
        "proxies",
        "trusted",
    ] {
        refused(&format!("{option}: x"), option);
    }
}

#[test]
fn inert_options_checked_with_gos_messages() {
    let cases = [
        (
            "store_dir: 5",
            "f.conf:1:0: interface conversion: interface {} is int64, not string",
        ),
        (
            "store_dir: a\njetstream { enabled: false, store_dir: b }",
            "f.conf:2:29: Duplicate 'store_dir' configuration",
        ),
        (
            "jetstream { enabled: false, store_dir: b }\nstore_dir: a",
            "f.conf:2:1: Duplicate 'store_dir' configuration",
        ),
        (
            "jetstream: maybe",
            "f.conf:1:0: Expected 'enabled' or 'disabled' for string value, got 'maybe'",
        ),
        (
            "jetstream: 5",
            "f.conf:1:0: Expected map, bool or string to define JetStream, got int64",
        ),
        (
            "jetstream { enabled: 1 }",
            "f.conf:1:0: interface conversion: interface {} is int64, not bool",
        ),
        (
            "jetstream { enabled: false, foo: 1 }",
            "f.conf:1:28: unknown field \"foo\"",
        ),
        (
            "jetstream { enabled: false, max_mem: \"1X\" }",
            "f.conf:1:28: max_mem_store sizes defined as strings must end in K, M, G, T",
        ),
        (
            "jetstream { enabled: false, cipher: foo }",
            "f.conf:1:28: Unknown cipher type: \"foo\"",
        ),
        (
            "jetstream { enabled: false, strict: 5 }",
            "f.conf:1:28: Expected 'true' or 'false' for bool value, got '%!s(int64=5)'",
        ),
        (
            "server_tags: 5",
            "f.conf:1:0: error parsing tags: unsupported type int64",
        ),
        (
            "server_metadata: { a: 1 }",
            "f.conf:1:19: interface conversion: interface {} is int64, not string",
        ),
        (
            "feature_flags: { a: 1 }",
            "f.conf:1:17: error parsing feature flag \"a\": expected bool, got int64",
        ),
        (
            "ocsp_cache: { type: foo }",
            "f.conf:1:14: error parsing OCSP peer cache config, unknown type [foo]",
        ),
        (
            "prof_port: x",
            "f.conf:1:0: interface conversion: interface {} is string, not int64",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(err(src), want, "{src}");
    }
}

#[test]
fn inert_jetstream_domain_checked_at_start() {
    let o = opts("jetstream { enabled: false, domain: \"a b\" }");
    let e = o
        .validate()
        .map_or_else(|e| e.to_string(), |()| String::new());
    assert_eq!(
        e,
        "invalid domain name: derived \"$JS.a b.API.>\" is not a valid subject"
    );
}

#[test]
fn inert_tls_switches_off_accepted() {
    assert_eq!(
        err("tls { cert_file: a, key_file: b, ocsp_peer: false, connection_rate_limit: 0 }"),
        "accepted"
    );
    assert_eq!(
        err("tls { cert_file: a, key_file: b, ocsp_peer: true }"),
        "f.conf:1:33: option \"tls.ocsp_peer\" is not supported yet"
    );
    assert_eq!(
        err("tls { connection_rate_limit: 10 }"),
        "f.conf:1:6: option \"tls.connection_rate_limit\" is not supported yet"
    );
}

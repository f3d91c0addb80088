//! Exact wire bytes: INFO fields, MSG/HMSG framing, every -ERR and whether the connection
//! closes after it. Where the Go reference server is installed, each exchange also runs against
//! it and the two outputs must be identical.

use natrium_tests::{RawClient, ServerProcess};

/// How an exchange ends: with the PONG of a trailing PING, or with the server closing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Pong,
    Closed,
}

fn run(server: &ServerProcess, input: &[u8], end: End) -> String {
    let mut client = RawClient::connect(&server.addr());
    match end {
        End::Pong => client.exchange(input),
        End::Closed => client.until_closed(input),
    }
}

/// Runs the exchange against ours, checks the expected output, and compares with Go if present.
fn check(input: &[u8], end: End, expected: &str) {
    let ours = ServerProcess::start(&[]);
    let got = run(&ours, input, end);
    assert_eq!(
        got,
        expected,
        "ours, input {:?}",
        String::from_utf8_lossy(input)
    );
    if let Some(go) = ServerProcess::start_go(&[]) {
        let go_out = run(&go, input, end);
        assert_eq!(
            go_out,
            expected,
            "go reference, input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

const QUIET: &str = "CONNECT {\"verbose\":false,\"pedantic\":true,\"headers\":true}\r\n";

fn quiet(rest: &str) -> Vec<u8> {
    format!("{QUIET}{rest}").into_bytes()
}

#[test]
fn raw_info_has_go_fields_and_trailing_space() {
    let server = ServerProcess::start(&[]);
    let client = RawClient::connect(&server.addr());
    assert!(
        client.info.starts_with("INFO {\"server_id\":\"N"),
        "{}",
        client.info
    );
    assert!(
        client.info.ends_with("} "),
        "INFO ends with a space before CRLF"
    );
    let json: serde_json::Value = serde_json::from_str(&client.info[5..]).unwrap();
    assert_eq!(json["version"], "2.15.2");
    assert_eq!(json["proto"], 1);
    assert_eq!(json["headers"], true);
    assert_eq!(json["max_payload"], 1_048_576);
    assert_eq!(json["port"], server.port);
    assert_eq!(json["host"], "127.0.0.1");
    assert_eq!(json["client_ip"], "127.0.0.1");
    assert!(json["client_id"].as_u64().unwrap() > 0);
    assert_eq!(json["server_id"].as_str().unwrap().len(), 56);
    for absent in ["auth_required", "tls_required", "ldm", "nonce"] {
        assert!(
            json.get(absent).is_none(),
            "{absent} omitted when false/empty"
        );
    }
}

#[test]
fn raw_verbose_connect_acks_every_op() {
    check(
        b"CONNECT {}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\n",
        End::Pong,
        "+OK\r\n+OK\r\n+OK\r\nMSG foo 1 2\r\nhi\r\n",
    );
}

#[test]
fn raw_msg_framing_with_reply_and_queue() {
    check(
        &quiet("SUB foo 1\r\nSUB foo q 2\r\nPUB foo bar 3\r\nabc\r\n"),
        End::Pong,
        "MSG foo 1 bar 3\r\nabc\r\nMSG foo 2 bar 3\r\nabc\r\n",
    );
}

#[test]
fn raw_hmsg_framing() {
    check(
        &quiet("SUB h 9\r\nHPUB h 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n"),
        End::Pong,
        "HMSG h 9 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n",
    );
}

#[test]
fn raw_no_responders_status() {
    check(
        b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true}\r\nSUB inbox 1\r\nPUB foo inbox 0\r\n\r\n",
        End::Pong,
        "HMSG inbox 1 35 35\r\nNATS/1.0 503\r\nNats-Subject: foo\r\n\r\n\r\n",
    );
}

#[test]
fn raw_lowercase_verbs_and_tabs() {
    check(
        &quiet("sub\tfoo\t1\r\npub foo  2\r\nhi\r\n"),
        End::Pong,
        "MSG foo 1 2\r\nhi\r\n",
    );
}

#[test]
fn raw_split_frames_at_every_offset() {
    let server = ServerProcess::start(&[]);
    let frame = quiet("SUB a.b 7\r\nHPUB a.b r 12 15\r\nNATS/1.0\r\n\r\nxyz\r\n");
    for cut in 1..frame.len() {
        let mut client = RawClient::connect(&server.addr());
        client.send(&frame[..cut]);
        let got = client.exchange(&frame[cut..]);
        assert_eq!(
            got, "HMSG a.b 7 r 12 15\r\nNATS/1.0\r\n\r\nxyz\r\n",
            "cut at {cut}"
        );
    }
}

#[test]
fn raw_err_unknown_op_closes() {
    check(
        &quiet("FOO\r\n"),
        End::Closed,
        "-ERR 'Unknown Protocol Operation'\r\n",
    );
}

#[test]
fn raw_err_max_payload_closes() {
    check(
        &quiet("PUB foo 2000000\r\n"),
        End::Closed,
        "-ERR 'Maximum Payload Violation'\r\n",
    );
}

#[test]
fn raw_err_max_control_line_closes() {
    let line = format!("PUB {} 2\r\n", "a".repeat(5000));
    check(
        &quiet(&line),
        End::Closed,
        "-ERR 'maximum control line exceeded'\r\n",
    );
}

#[test]
fn raw_err_invalid_publish_subject_keeps_connection() {
    check(
        &quiet("PUB foo.* 2\r\nab\r\n"),
        End::Pong,
        "-ERR 'Invalid Publish Subject'\r\n",
    );
}

/// Go's pedantic check only warns: a wildcard subject is still published (after the -ERR,
/// the permission check and the `+OK`) and reaches wildcard subscribers; `foo..x` matches
/// nothing. A subject outside the user's publish permissions gets both errors and goes nowhere.
#[test]
fn raw_pedantic_wildcard_publish_is_warned_then_delivered() {
    let perms = "authorization { users [\n\
                 {user: p, password: p, permissions: {publish: \"foo.>\"}}\n\
                 {user: s, password: s}\n] }\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("perms.conf");
    std::fs::write(&conf, perms).expect("write config");
    let conf = conf.to_str().expect("path");
    let args = ["-c", conf, "-a", "127.0.0.1", "-p", "-1"];
    let mut servers = vec![("ours", ServerProcess::start(&args))];
    servers.extend(ServerProcess::start_go(&args).map(|go| ("go", go)));
    let login = |user: &str, flags: &str| {
        format!("CONNECT {{{flags},\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n")
    };
    for (name, server) in &servers {
        let mut sub = RawClient::connect(&server.addr());
        let subscribe = login("s", "\"verbose\":false") + "SUB foo.> 1\r\n";
        assert_eq!(sub.exchange(subscribe.as_bytes()), "", "{name}");
        let mut p = RawClient::connect(&server.addr());
        let input = login("p", "\"verbose\":true,\"pedantic\":true")
            + "PUB foo.* 1\r\na\r\nPUB bar.* 1\r\nb\r\nPUB foo..x 1\r\nc\r\n";
        assert_eq!(
            p.exchange(input.as_bytes()),
            "+OK\r\n\
             -ERR 'Invalid Publish Subject'\r\n+OK\r\n\
             -ERR 'Invalid Publish Subject'\r\n\
             -ERR 'Permissions Violation for Publish to \"bar.*\"'\r\n\
             -ERR 'Invalid Publish Subject'\r\n\
             -ERR 'Permissions Violation for Publish to \"foo..x\"'\r\n",
            "{name}"
        );
        let mut s = RawClient::connect(&server.addr());
        let input = login("s", "\"verbose\":false,\"pedantic\":true") + "PUB foo.> 1\r\nd\r\n";
        assert_eq!(
            s.exchange(input.as_bytes()),
            "-ERR 'Invalid Publish Subject'\r\n",
            "{name}"
        );
        assert_eq!(
            sub.exchange(b""),
            "MSG foo.* 1 1\r\na\r\nMSG foo.> 1 1\r\nd\r\n",
            "{name}"
        );
    }
}

#[test]
fn raw_err_invalid_subject_keeps_connection() {
    check(
        &quiet("SUB foo..bar 1\r\n"),
        End::Pong,
        "-ERR 'Invalid Subject'\r\n",
    );
}

#[test]
fn raw_err_invalid_client_protocol_closes() {
    check(
        b"CONNECT {\"verbose\":false,\"protocol\":2}\r\n",
        End::Closed,
        "-ERR 'invalid client protocol'\r\n",
    );
}

#[test]
fn raw_err_no_responders_needs_headers_closes() {
    check(
        b"CONNECT {\"verbose\":false,\"no_responders\":true}\r\n",
        End::Closed,
        "-ERR 'no responders requires headers support'\r\n",
    );
}

#[test]
fn raw_payload_with_wrong_trailer_closes() {
    check(
        &quiet("PUB foo 2\r\nabc\r\n"),
        End::Closed,
        "-ERR 'Unknown Protocol Operation'\r\n",
    );
}

#[test]
fn raw_bad_connect_json_closes_silently() {
    check(b"CONNECT {bad json\r\n", End::Closed, "");
}

#[test]
fn raw_hpub_without_headers_closes_silently() {
    check(
        b"CONNECT {\"verbose\":false}\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nab\r\n",
        End::Closed,
        "",
    );
}

#[test]
fn raw_duplicate_sid_is_ignored() {
    check(
        &quiet("SUB foo 1\r\nSUB foo 1\r\nPUB foo 1\r\na\r\n"),
        End::Pong,
        "MSG foo 1 1\r\na\r\n",
    );
}

#[test]
fn raw_unsub_with_max_and_unknown_sid() {
    check(
        &quiet("UNSUB 99\r\nSUB foo 1\r\nUNSUB 1 2\r\nPUB foo 1\r\na\r\nPUB foo 1\r\nb\r\nPUB foo 1\r\nc\r\n"),
        End::Pong,
        "MSG foo 1 1\r\na\r\nMSG foo 1 1\r\nb\r\n",
    );
}

#[test]
fn raw_echo_false_skips_own_messages() {
    check(
        b"CONNECT {\"verbose\":false,\"echo\":false}\r\nSUB foo 1\r\nPUB foo 1\r\na\r\n",
        End::Pong,
        "",
    );
}

#[test]
fn raw_max_connections_refused_with_err() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("mc.conf");
    std::fs::write(&conf, "max_connections: 1\n").unwrap();
    let conf = conf.to_str().unwrap();
    let ours = ServerProcess::start(&["-c", conf, "-a", "127.0.0.1", "-p", "-1"]);
    let mut first = RawClient::connect(&ours.addr());
    assert_eq!(first.exchange(QUIET.as_bytes()), "");
    let mut second = RawClient::connect(&ours.addr());
    assert_eq!(
        second.until_closed(b""),
        "-ERR 'maximum connections exceeded'\r\n"
    );
}

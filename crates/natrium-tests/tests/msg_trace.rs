//! Message tracing (ADR-41) over raw sockets, against the Go server: messages published with
//! `Nats-Trace-Dest` (and `Nats-Trace-Only`), or a sampled `traceparent` in an account with
//! `msg_trace`, produce one JSON event on the destination, and trace-only messages are not
//! delivered. Each scenario yields a transcript (the normalised events and what subscribers
//! got); ours is checked on its own, then must equal Go's.
//!
//! Normalised: the `server` object is compared by shape, timestamps and connection ids are
//! dropped, `_R_` reply subjects and `rtt` values blanked, and the entries after the ingress
//! sorted in groups (a `se` with the egress it leads to), since the order of subscriptions in
//! the index differs between the servers.

use std::path::{Path, PathBuf};

use natrium_tests::json::comparable_shape;
use natrium_tests::{RawClient, ServerProcess};
use serde_json::Value;

const CONFIG: &str = r#"server_name: tracing
accounts {
  A {
    users: [
      {user: a, password: a}
      {user: adeny, password: a, permissions: {publish: {deny: ["deny.>"]}, subscribe: {deny: ["foo.no"]}}}
    ]
    exports: [{service: "svc.>", allow_trace: true}, {service: "svcnt.>"}, {stream: "tick.>"}]
  }
  B {
    users: [{user: b, password: b}]
    imports: [
      {service: {account: A, subject: "svc.>"}, to: "bsvc.>"}
      {service: {account: A, subject: "svcnt.>"}}
      {stream: {account: A, subject: "tick.>"}, prefix: "imp", allow_trace: true}
    ]
  }
  C {
    users: [{user: c, password: c}]
    imports: [{stream: {account: A, subject: "tick.>"}}]
  }
  P {
    users: [{user: p, password: p}]
    msg_trace: {dest: "p.trace", sampling: 100}
  }
  SYS { users: [{user: sys, password: sys}] }
}
system_account: SYS
"#;

const SAMPLED: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const UNSAMPLED: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

fn config() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("trace.conf");
    std::fs::write(&path, CONFIG).expect("write config");
    (dir, path)
}

fn servers(path: &Path) -> (ServerProcess, Option<ServerProcess>) {
    let p = path.to_str().expect("utf-8 path");
    let args = ["-c", p, "-a", "127.0.0.1", "-p", "-1"];
    (ServerProcess::start(&args), ServerProcess::start_go(&args))
}

fn client(server: &ServerProcess, user: &str, name: &str, extra: &str) -> RawClient {
    let mut c = RawClient::connect(&server.addr());
    let connect = format!(
        "CONNECT {{\"user\":\"{user}\",\"pass\":\"{}\",\"name\":\"{name}\",\"verbose\":false,\
         \"headers\":true{extra}}}\r\n",
        if user == "adeny" { "a" } else { user }
    );
    let out = c.exchange(connect.as_bytes());
    assert!(!out.contains("-ERR"), "{user}: {out}");
    c
}

fn sub(c: &mut RawClient, ops: &str) {
    let out = c.exchange(ops.as_bytes());
    assert!(!out.contains("-ERR"), "{ops}: {out}");
}

fn hpub(c: &mut RawClient, subject: &str, reply: &str, headers: &[(&str, &str)]) {
    let mut block = String::from("NATS/1.0\r\n");
    for (k, v) in headers {
        block.push_str(k);
        block.push_str(": ");
        block.push_str(v);
        block.push_str("\r\n");
    }
    block.push_str("\r\n");
    let payload = "hi";
    let reply = if reply.is_empty() {
        String::new()
    } else {
        format!(" {reply}")
    };
    let op = format!(
        "HPUB {subject}{reply} {} {}\r\n{block}{payload}\r\n",
        block.len(),
        block.len() + payload.len()
    );
    c.send(op.as_bytes());
}

/// The next trace event `tracer` receives (its subscription must be the only one it holds).
fn next_event(tracer: &mut RawClient) -> Value {
    loop {
        let line = tracer.read_line().expect("line");
        if line.starts_with("MSG ") {
            let body = tracer.read_line().expect("payload");
            return serde_json::from_str(&body).expect("trace event JSON");
        }
    }
}

/// The next trace event `tracer` receives with a header block: its `Content-Encoding` and
/// the decoded JSON.
fn next_encoded_event(tracer: &mut RawClient) -> (String, Value) {
    let line = loop {
        let line = tracer.read_line().expect("line");
        if line.starts_with("HMSG ") {
            break line;
        }
    };
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let n = tokens.len();
    let (h, total): (usize, usize) = (
        tokens[n - 2].parse().unwrap(),
        tokens[n - 1].parse().unwrap(),
    );
    let frame = tracer.read_bytes(total + 2);
    let head = String::from_utf8_lossy(&frame[..h]).into_owned();
    let encoding = head
        .split("\r\n")
        .find_map(|l| l.strip_prefix("Content-Encoding: "))
        .unwrap_or_default()
        .to_owned();
    let body = &frame[h..total];
    let json = if encoding == "gzip" {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(body), &mut out)
            .expect("gzip body");
        out
    } else {
        String::from_utf8_lossy(body).into_owned()
    };
    (
        encoding,
        serde_json::from_str(&json).expect("trace event JSON"),
    )
}

/// The event without what differs by nature between servers and runs.
fn normalise(mut event: Value) -> Value {
    let server = event["server"].take();
    let mut shape = comparable_shape(&server);
    // `cluster`, `domain`, `tags`, `metadata` are left out when empty, as in Go.
    shape.retain(|k| !k.contains(".tags") && !k.contains(".metadata"));
    event["server"] = Value::from(shape);
    let mut events = match event["events"].take() {
        Value::Array(items) => items,
        other => panic!("events: {other}"),
    };
    for e in &mut events {
        let map = e.as_object_mut().expect("entry");
        map.remove("ts");
        map.remove("cid");
    }
    let mut groups: Vec<Vec<Value>> = Vec::new();
    let mut rest = events.into_iter().skip(1).peekable();
    while let Some(e) = rest.next() {
        let mut group = vec![e];
        if group[0]["type"] == "se" && rest.peek().is_some_and(|n| n["type"] == "eg") {
            group.extend(rest.next());
        }
        groups.push(group);
    }
    groups.sort_by_key(|g| Value::from(g.clone()).to_string());
    event["groups"] = Value::from(groups);
    event
}

/// The first event entry (the ingress), normalised.
fn ingress_of(raw: &Value) -> Value {
    let mut e = raw["events"][0].clone();
    let map = e.as_object_mut().expect("ingress");
    map.remove("ts");
    map.remove("cid");
    e
}

/// Traced event as one transcript line.
fn event_line(raw: Value) -> String {
    let ingress = ingress_of(&raw);
    let mut n = normalise(raw);
    n["ingress"] = ingress;
    n.as_object_mut().expect("event").remove("events");
    format!("event {n}")
}

fn blank_reply_ids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("_R_.") {
        out.push_str(&rest[..at]);
        out.push_str("_R_");
        let tail = &rest[at + 4..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// What a subscriber got since its last exchange: frames without sizes, sids or `rtt`.
fn deliveries(c: &mut RawClient) -> String {
    let text = c.exchange(b"");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some((line, after)) = rest.split_once("\r\n") {
        rest = after;
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let (head, body) = match tokens.first().copied() {
            Some("HMSG") => {
                let n = tokens.len();
                let (h, total): (usize, usize) = (
                    tokens[n - 2].parse().unwrap(),
                    tokens[n - 1].parse().unwrap(),
                );
                let reply = if n == 6 { tokens[3] } else { "" };
                out.push(format!("HMSG {} {reply}", tokens[1]));
                (&rest[..h], &rest[h..total])
            }
            Some("MSG") => {
                let total: usize = tokens[tokens.len() - 1].parse().unwrap();
                out.push(format!("MSG {}", tokens[1]));
                ("", &rest[..total])
            }
            Some("PING" | "PONG" | "+OK") | None => continue,
            Some(_) => {
                out.push(line.to_owned());
                continue;
            }
        };
        rest = &rest[head.len() + body.len() + 2..];
        for field in head
            .split("\r\n")
            .filter(|f| !f.is_empty() && *f != "NATS/1.0")
        {
            let field = if field.starts_with("Nats-Request-Info") {
                "Nats-Request-Info"
            } else {
                field
            };
            out.push(format!("  {field}"));
        }
        out.push(format!("  {body}"));
    }
    blank_reply_ids(&out.join("\n"))
}

const DEST: (&str, &str) = ("Nats-Trace-Dest", "trace");
const ONLY: (&str, &str) = ("Nats-Trace-Only", "true");

/// The connections every scenario uses, and the transcript so far.
struct Run<'a> {
    server: &'a ServerProcess,
    t: Vec<String>,
    /// Subscribed to `trace` in A.
    tracer: RawClient,
    /// Publishes in A, subscribed to `foo` itself but without echo.
    publisher: RawClient,
    /// Every other subscriber, read after each step.
    subscribers: Vec<RawClient>,
}

impl Run<'_> {
    /// Records the next event `tracer` gets and what every subscriber got.
    fn step(&mut self, label: &str, tracer: Option<&mut RawClient>) {
        self.t.push(format!("== {label}"));
        let event = next_event(tracer.unwrap_or(&mut self.tracer));
        self.t.push(event_line(event));
        self.record_deliveries();
    }

    fn record_deliveries(&mut self) {
        for s in &mut self.subscribers {
            let got = deliveries(s);
            if !got.is_empty() {
                self.t.push(got);
            }
        }
    }
}

/// Runs every scenario against `server`; returns the transcript.
fn run(server: &ServerProcess) -> Vec<String> {
    let mut tracer = client(server, "a", "tracer", "");
    sub(&mut tracer, "SUB trace 1\r\n");
    let mut s1 = client(server, "a", "sub1", "");
    sub(
        &mut s1,
        "SUB foo 1\r\nSUB foo q1 2\r\nSUB foo q1 3\r\nSUB deny.x 4\r\n",
    );
    let mut plain = client(server, "a", "nohdr", ",\"headers\":false");
    sub(&mut plain, "SUB foo 1\r\n");
    let mut bimp = client(server, "b", "bimp", "");
    sub(&mut bimp, "SUB imp.tick.1 1\r\nSUB imp.> 2\r\n");
    let mut cimp = client(server, "c", "cimp", "");
    sub(&mut cimp, "SUB tick.> 1\r\n");
    let mut svc = client(server, "a", "svc", "");
    sub(&mut svc, "SUB svc.> 1\r\nSUB svcnt.x 2\r\n");
    let mut publisher = client(server, "a", "pub", ",\"echo\":false");
    sub(&mut publisher, "SUB foo 9\r\n");
    let mut run = Run {
        server,
        t: Vec::new(),
        tracer,
        publisher,
        subscribers: vec![s1, plain, bimp, cimp, svc],
    };
    local_and_stream_exports(&mut run);
    service_imports(&mut run);
    refusals(&mut run);
    untraced(&mut run);
    no_responders(&mut run);
    trace_parent(&mut run);
    compression(&mut run);
    system_services(&mut run);
    run.t
}

/// The server's own services take trace-only requests made in the system account (no egress
/// entry for them), not those made elsewhere.
fn system_services(run: &mut Run<'_>) {
    let mut sys = client(run.server, "sys", "sys", "");
    sub(&mut sys, "SUB trace 1\r\nSUB inbox 2\r\n");
    hpub(&mut sys, "$SYS.REQ.SERVER.PING.IDZ", "inbox", &[DEST, ONLY]);
    run.t
        .push("== system account service, trace-only".to_owned());
    let first = sys.read_line().expect("line");
    let event = if first.starts_with("MSG trace") {
        let body = sys.read_line().expect("payload");
        serde_json::from_str(&body).expect("trace event JSON")
    } else {
        next_event(&mut sys)
    };
    run.t.push(event_line(event));
    // The answer comes after the event or before it; either way it comes.
    let answered = first.starts_with("MSG inbox")
        || sys.read_line().is_some_and(|l| l.starts_with("MSG inbox"));
    run.t.push(format!("answered: {answered}"));
    let mut nr = client(run.server, "a", "nr2", ",\"no_responders\":true");
    sub(&mut nr, "SUB in 1\r\n");
    hpub(
        &mut nr,
        "$SYS.REQ.USER.INFO",
        "in",
        &[("Nats-Trace-Dest", "nobody.listens"), ONLY],
    );
    run.t
        .push("== other account's service, trace-only".to_owned());
    run.t.push(deliveries(&mut nr));
}

/// `Accept-Encoding` on the traced message asks for a compressed event.
fn compression(run: &mut Run<'_>) {
    for asked in ["gzip, deflate", "br"] {
        hpub(
            &mut run.publisher,
            "nobody",
            "",
            &[DEST, ONLY, ("Accept-Encoding", asked)],
        );
        let (encoding, event) = next_encoded_event(&mut run.tracer);
        run.t.push(format!(
            "== Accept-Encoding: {asked}\nContent-Encoding: {encoding}"
        ));
        run.t.push(event_line(event));
    }
}

fn local_and_stream_exports(run: &mut Run<'_>) {
    let p = &mut run.publisher;
    hpub(
        p,
        "foo",
        "",
        &[DEST, ("X-A", "1"), ("X-A", "2"), ("x-lower", "v")],
    );
    run.step("local", None);
    hpub(&mut run.publisher, "foo", "", &[DEST, ONLY]);
    run.step("local trace-only", None);
    hpub(&mut run.publisher, "tick.1", "", &[DEST]);
    run.step("stream export", None);
    hpub(
        &mut run.publisher,
        "tick.1",
        "",
        &[DEST, ("Nats-Trace-Only", "1")],
    );
    run.step("stream export trace-only", None);
}

/// Requests crossing from B into A, whose `svc.>` export allows tracing and `svcnt.>` not.
fn service_imports(run: &mut Run<'_>) {
    let mut btracer = client(run.server, "b", "btracer", "");
    sub(&mut btracer, "SUB trace 1\r\n");
    let mut bp = client(run.server, "b", "bpub", "");
    let cases: [(&str, &str, (&str, &str)); 4] = [
        ("service import", "bsvc.x", ("X", "1")),
        (
            "service import trace-only",
            "bsvc.x",
            ("Nats-Trace-Only", "on"),
        ),
        ("service import without allow_trace", "svcnt.x", ("X", "1")),
        (
            "service import without allow_trace, trace-only",
            "svcnt.x",
            ONLY,
        ),
    ];
    for (label, subject, extra) in cases {
        hpub(&mut bp, subject, "inbox", &[DEST, extra]);
        run.step(label, Some(&mut btracer));
    }
}

fn refusals(run: &mut Run<'_>) {
    let mut d = client(run.server, "adeny", "denied", "");
    sub(&mut d, "SUB foo.* 1\r\n");
    hpub(&mut d, "deny.x", "", &[DEST]);
    run.step("publish denied", None);
    run.t.push(deliveries(&mut d));
    hpub(&mut d, "foo.no", "", &[DEST]);
    run.step("subscription denied", None);
    hpub(&mut d, "foo", "", &[("Nats-Trace-Dest", "deny.t")]);
    run.t
        .push(format!("== destination denied\n{}", deliveries(&mut d)));
    run.record_deliveries();
}

/// Headers that trace nothing: each message is followed by a traced one, whose event must be
/// the next one the tracer sees.
fn untraced(run: &mut Run<'_>) {
    let cases: [(&str, Vec<(&str, &str)>); 5] = [
        ("invalid destination", vec![("Nats-Trace-Dest", "bad.*")]),
        (
            "invalid destination, trace-only",
            vec![("Nats-Trace-Dest", "bad.*"), ONLY],
        ),
        (
            "disabled",
            vec![("Nats-Trace-Dest", "trace disabled"), ONLY],
        ),
        (
            "origin account",
            vec![DEST, ("Nats-Trace-Origin-Account", "X")],
        ),
        ("lower-case name", vec![("nats-trace-dest", "trace")]),
    ];
    for (label, headers) in cases {
        hpub(&mut run.publisher, "foo", "", &headers);
        hpub(&mut run.publisher, "marker", "", &[DEST]);
        run.t.push(format!("== {label}"));
        let event = next_event(&mut run.tracer);
        run.t
            .push(format!("next event on {}", event["events"][0]["subj"]));
        run.record_deliveries();
    }
}

/// A requester asking for no-responders: a trace-only message counts as delivered.
fn no_responders(run: &mut Run<'_>) {
    let mut nr = client(run.server, "a", "nr", ",\"no_responders\":true");
    sub(&mut nr, "SUB in 1\r\n");
    hpub(&mut nr, "nobody", "in", &[DEST, ONLY]);
    run.step("trace-only, no responders", None);
    run.t.push(deliveries(&mut nr));
    hpub(&mut nr, "foo", "in", &[DEST, ONLY]);
    run.step("trace-only, a responder", None);
    run.t.push(deliveries(&mut nr));
}

/// W3C trace context in account P, whose `msg_trace` sends events to `p.trace`.
fn trace_parent(run: &mut Run<'_>) {
    let mut ptracer = client(run.server, "p", "ptracer", "");
    sub(&mut ptracer, "SUB p.trace 1\r\nSUB t2 2\r\n");
    let mut psub = client(run.server, "p", "psub", "");
    sub(&mut psub, "SUB x 1\r\n");
    let mut pp = client(run.server, "p", "ppub", "");
    hpub(&mut pp, "x", "", &[("Traceparent", UNSAMPLED)]);
    hpub(&mut pp, "x", "", &[("traceparent", SAMPLED), ONLY]);
    run.t.push("== traceparent".to_owned());
    run.t.push(event_line(next_event(&mut ptracer)));
    run.t.push(deliveries(&mut psub));
    let both = [("traceparent", SAMPLED), ("Nats-Trace-Dest", "t2"), ONLY];
    hpub(&mut pp, "x", "", &both);
    run.t.push("== traceparent and Nats-Trace-Dest".to_owned());
    run.t.push(event_line(next_event(&mut ptracer)));
    run.t.push(deliveries(&mut psub));
}

/// Checks the facts of our transcript that do not need Go to tell.
fn check_ours(t: &[String]) {
    let text = t.join("\n");
    let after = |label: &str| -> &str {
        let at = text
            .find(&format!("== {label}\n"))
            .unwrap_or_else(|| panic!("{label}"));
        &text[at + label.len() + 4..]
    };
    let section = |label: &str| -> &str {
        let rest = after(label);
        rest.find("\n== ").map_or(rest, |end| &rest[..end])
    };
    let local = section("local");
    assert!(
        local.contains(r#""header":{"Nats-Trace-Dest":["trace"],"X-A":["1","2"],"x-lower":["v"]}"#),
        "{local}"
    );
    assert!(
        local.contains(r#""error":"Not delivered because of no echo""#),
        "{local}"
    );
    assert!(
        local.contains(r#""queue":"q1""#) && local.contains("HMSG foo"),
        "{local}"
    );
    assert!(
        local.contains("MSG foo\n  hi"),
        "headers stripped for nohdr: {local}"
    );
    let only = section("local trace-only");
    assert!(
        only.contains(r#""name":"sub1""#) && !only.contains("HMSG"),
        "{only}"
    );
    let se = section("stream export");
    assert!(
        se.contains(r#"{"acc":"B","to":"imp.tick.1","type":"se"}"#),
        "{se}"
    );
    assert!(
        se.contains(r#""sub":"tick.>""#) && se.contains(r#""sub":"tick.1""#),
        "{se}"
    );
    assert!(
        se.contains(r#"{"acc":"C","to":"tick.1","type":"se"}"#),
        "{se}"
    );
    assert!(se.contains("HMSG tick.1"), "C gets it untraced: {se}");
    let si = section("service import");
    assert!(
        si.contains(r#""from":"bsvc.x""#) && si.contains(r#""acc":"A","kind":0,"name":"svc""#),
        "{si}"
    );
    assert!(si.contains("Nats-Trace-Dest: _R_"), "{si}");
    let nt = section("service import without allow_trace");
    assert!(
        nt.contains("Nats-Trace-Dest: trace disabled") && !nt.contains(r#""type":"eg""#),
        "{nt}"
    );
    let denied = section("publish denied");
    assert!(
        denied.contains(r#""error":"Permissions Violation for Publish to \"deny.x\"""#),
        "{denied}"
    );
    let sd = section("subscription denied");
    assert!(
        sd.contains("Not delivered because subscription denies this subject"),
        "{sd}"
    );
    assert!(section("destination denied")
        .contains(r#"-ERR 'Permissions Violation for Publish to "deny.t"'"#));
    assert!(section("invalid destination").contains("Nats-Trace-Dest: bad.*"));
    assert!(!section("invalid destination, trace-only").contains("HMSG foo"));
    assert!(section("origin account").contains("Nats-Trace-Dest: trace disabled"));
    assert!(section("trace-only, no responders").contains("NATS/1.0 503"));
    assert!(!section("trace-only, a responder").contains("503"));
    let tp = section("traceparent");
    // The unsampled message before it was not traced: this event is the sampled one's.
    assert!(
        !tp.contains(r#""Traceparent""#) && tp.contains(r#""traceparent":[""#),
        "{tp}"
    );
    assert!(
        tp.contains("HMSG x"),
        "traceparent ignores Nats-Trace-Only: {tp}"
    );
    assert!(section("Accept-Encoding: gzip, deflate").starts_with("Content-Encoding: gzip"));
    assert!(section("Accept-Encoding: br").starts_with("Content-Encoding: identity"));
    assert!(section("system account service, trace-only").ends_with("answered: true"));
    assert!(section("other account's service, trace-only").contains("NATS/1.0 503"));
}

#[test]
fn msg_trace_events_match_go() {
    let (_dir, path) = config();
    let (ours, go) = servers(&path);
    let mine = run(&ours);
    check_ours(&mine);
    let Some(go) = go else { return };
    let theirs = run(&go);
    for (i, (a, b)) in mine.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "transcript line {i} differs");
    }
    assert_eq!(mine.len(), theirs.len());
}

/// Without a system account nothing publishes trace events, as in Go; trace-only messages are
/// still not delivered.
#[test]
fn msg_trace_without_system_account_sends_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nosys.conf");
    std::fs::write(&path, "no_system_account: true\n").expect("write config");
    let p = path.to_str().expect("utf-8 path");
    let args = ["-c", p, "-a", "127.0.0.1", "-p", "-1"];
    let mut runs = vec![ServerProcess::start(&args)];
    runs.extend(ServerProcess::start_go(&args));
    for server in &runs {
        let mut tracer = RawClient::connect(&server.addr());
        tracer.exchange(
            b"CONNECT {\"headers\":true,\"verbose\":false}\r\nSUB trace 1\r\nSUB foo 2\r\n",
        );
        let mut p = RawClient::connect(&server.addr());
        p.exchange(b"CONNECT {\"headers\":true,\"verbose\":false}\r\n");
        hpub(
            &mut p,
            "foo",
            "",
            &[("Nats-Trace-Dest", "trace"), ("Nats-Trace-Only", "true")],
        );
        p.send(b"PUB foo 1\r\nx\r\n");
        p.exchange(b"");
        // The plain message follows the traced one: once it is in, the trace had its chance.
        let got = tracer.read_until(b"MSG foo 2 1\r\nx\r\n");
        assert!(!got.contains("trace") && !got.contains("hi"), "{got}");
    }
}

/// An `HPUB` over `max_payload` asking for a trace: the event carries the refusal, then the
/// client is closed as always.
#[test]
fn msg_trace_payload_refusal_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("small.conf");
    std::fs::write(&path, "max_payload: 100\n").expect("write config");
    let p = path.to_str().expect("utf-8 path");
    let args = ["-c", p, "-a", "127.0.0.1", "-p", "-1"];
    let mut lines = Vec::new();
    let mut runs = vec![ServerProcess::start(&args)];
    runs.extend(ServerProcess::start_go(&args));
    for server in &runs {
        let mut tracer = RawClient::connect(&server.addr());
        tracer.exchange(b"CONNECT {\"headers\":true,\"verbose\":false}\r\nSUB trace 1\r\n");
        let mut p = RawClient::connect(&server.addr());
        p.exchange(b"CONNECT {\"headers\":true,\"verbose\":false,\"name\":\"big\"}\r\n");
        let block = "NATS/1.0\r\nNats-Trace-Dest: trace\r\nX: y\r\n\r\n";
        let op = format!(
            "HPUB foo {} {}\r\n{block}{}\r\n",
            block.len(),
            block.len() + 200,
            "x".repeat(200)
        );
        let (got, closed) = {
            p.send(op.as_bytes());
            p.wait_closed(std::time::Duration::from_secs(10))
        };
        assert!(closed && got.contains("Maximum Payload Violation"), "{got}");
        lines.push(event_line(next_event(&mut tracer)));
    }
    assert!(
        lines[0].contains(r#""error":"maximum payload exceeded""#) && lines[0].contains("242"),
        "{}",
        lines[0]
    );
    if let [ours, go] = lines.as_slice() {
        assert_eq!(ours, go);
    }
}

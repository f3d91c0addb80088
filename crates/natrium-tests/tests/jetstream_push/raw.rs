//! Push delivery over the raw protocol: idle heartbeats with `Nats-Last-Consumer` and
//! `Nats-Last-Stream`, a delivery's subject and ack subject, the `100 FlowControl Request`
//! past half the window, the stall past the window with `Nats-Consumer-Stalled` in the
//! heartbeat, and delivery resumed by the answer; the same exchange runs against Go's server
//! when it is installed and the frames are compared.

use natrium_tests::raw::RawClient;
use natrium_tests::ServerProcess;

const BIG: usize = 100 * 1024;

fn start(dir: &std::path::Path, go: bool) -> Option<ServerProcess> {
    start_with(dir, go, "")
}

/// With `extra` configuration (a file in `dir` when there is any).
fn start_with(dir: &std::path::Path, go: bool, extra: &str) -> Option<ServerProcess> {
    std::fs::create_dir_all(dir).unwrap();
    let conf = dir.join("extra.conf");
    std::fs::write(&conf, extra).unwrap();
    let conf = conf.display().to_string();
    let dir = dir.display().to_string();
    let mut args = vec!["-js", "-sd", &dir, "-a", "127.0.0.1", "-p", "-1"];
    if !extra.is_empty() {
        args.extend(["-c", conf.as_str()]);
    }
    if go {
        ServerProcess::start_go(&args)
    } else {
        Some(ServerProcess::start(&args))
    }
}

/// One frame: subject, normalised reply, headers (flow-control ids replaced), payload size.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    subject: String,
    reply: Option<String>,
    headers: Option<String>,
    size: usize,
}

/// `$JS.FC.S.C.<id>` → the id replaced; an ack subject's timestamp replaced (v1 and v2
/// forms).
fn normalise(text: &str) -> String {
    text.split("\r\n")
        .map(|line| {
            let (head, value) = line.rsplit_once(' ').unwrap_or(("", line));
            let mut tokens: Vec<&str> = value.split('.').collect();
            let n = tokens.len();
            if value.starts_with("$JS.FC.") && (n == 5 || n == 7) {
                tokens[n - 1] = "<id>";
            } else if value.starts_with("$JS.ACK.") && (n == 9 || n == 11) {
                tokens[n - 2] = "<ts>";
            }
            let value = tokens.join(".");
            if head.is_empty() {
                value
            } else {
                format!("{head} {value}")
            }
        })
        .collect::<Vec<_>>()
        .join("\r\n")
}

fn read(c: &mut RawClient) -> (Frame, Option<String>) {
    let line = c.read_line().expect("frame line");
    let parts: Vec<&str> = line.split(' ').collect();
    let numbers: Vec<usize> = parts.iter().rev().map_while(|p| p.parse().ok()).collect();
    let (hlen, total, reply) = match parts[0] {
        "HMSG" => (numbers[1], numbers[0], (parts.len() == 6).then(|| parts[3])),
        "MSG" => (0, numbers[0], (parts.len() == 5).then(|| parts[3])),
        other => panic!("unexpected {other}: {line}"),
    };
    let body = c.read_bytes(total + 2);
    let headers = (hlen > 0).then(|| String::from_utf8_lossy(&body[..hlen]).into_owned());
    let frame = Frame {
        subject: parts[1].to_owned(),
        reply: reply.map(normalise),
        headers: headers.as_deref().map(normalise),
        size: total - hlen,
    };
    (frame, reply.map(str::to_owned))
}

/// The big messages' pending counts replaced: how many were stored when each went out
/// depends on timing.
fn timeless(frames: &[Frame]) -> Vec<Frame> {
    let mut out = frames.to_vec();
    for f in out.iter_mut().filter(|f| f.size == BIG) {
        if let Some((head, _)) = f.reply.as_deref().and_then(|r| r.rsplit_once('.')) {
            f.reply = Some(format!("{head}.<pending>"));
        }
    }
    out
}

fn is_heartbeat(f: &Frame) -> bool {
    f.headers
        .as_deref()
        .is_some_and(|h| h.starts_with("NATS/1.0 100 Idle Heartbeat"))
}

/// The exchange; returns each step's frames.
fn exchange(server: &ServerProcess) -> Vec<(&'static str, Vec<Frame>)> {
    let mut c = RawClient::connect(&server.addr());
    let out = c.exchange(
        b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n\
          SUB r.> 1\r\nSUB d.hb 2\r\n",
    );
    assert!(!out.contains("-ERR"), "{out}");
    let stream = r#"{"name":"S","subjects":["s.>"],"storage":"memory"}"#;
    c.send(
        format!(
            "PUB $JS.API.STREAM.CREATE.S r.1 {}\r\n{stream}\r\n",
            stream.len()
        )
        .as_bytes(),
    );
    assert!(read(&mut c).0.subject == "r.1");
    let config = r#"{"stream_name":"S","config":{"durable_name":"C","deliver_subject":"d.hb","ack_policy":"none","flow_control":true,"idle_heartbeat":200000000}}"#;
    c.send(
        format!(
            "PUB $JS.API.CONSUMER.CREATE.S.C r.2 {}\r\n{config}\r\n",
            config.len()
        )
        .as_bytes(),
    );
    let mut steps = Vec::new();
    let (created, _) = read(&mut c);
    assert_eq!(created.subject, "r.2", "{created:?}");
    steps.push(("first heartbeat", vec![read(&mut c).0]));
    c.send(b"PUB s.one 5\r\nhello\r\n");
    let delivered = read(&mut c).0;
    steps.push(("delivery then heartbeat", vec![delivered, read(&mut c).0]));

    let payload = vec![b'x'; BIG];
    for _ in 0..25 {
        c.send(format!("PUB s.big {BIG}\r\n").as_bytes());
        c.send(&payload);
        c.send(b"\r\n");
    }
    // Deliveries, the flow-control request past half the window, the stall past it, and a
    // heartbeat saying so.
    let mut frames = Vec::new();
    let mut fc_reply = None;
    loop {
        let (frame, reply) = read(&mut c);
        if frame
            .headers
            .as_deref()
            .is_some_and(|h| h.starts_with("NATS/1.0 100 FlowControl"))
        {
            fc_reply = reply;
        }
        if is_heartbeat(&frame) {
            // Only the stalled one is compared (others depend on timing).
            if frame
                .headers
                .as_deref()
                .is_some_and(|h| h.contains("Stalled"))
            {
                frames.push(frame);
                break;
            }
            continue;
        }
        frames.push(frame);
    }
    steps.push(("until stalled", frames));
    let fc = fc_reply.expect("a flow-control request");
    c.send(format!("PUB {fc} 0\r\n\r\n").as_bytes());
    let big = steps[2].1.iter().filter(|f| f.size == BIG).count();
    let mut frames = Vec::new();
    while frames.len() < 25 - big {
        let (frame, _) = read(&mut c);
        if !is_heartbeat(&frame) {
            frames.push(frame);
        }
    }
    steps.push(("resumed", frames));
    steps
}

#[test]
fn jetstream_push_raw_heartbeats_and_flow_control() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), false).unwrap();
    let ours = exchange(&server);
    let hb = |c: u64, s: u64| {
        Some(format!(
            "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {c}\r\nNats-Last-Stream: {s}\r\n\r\n"
        ))
    };
    assert_eq!(ours[0].1[0].headers, hb(0, 0));
    assert_eq!(ours[0].1[0].subject, "d.hb");
    let delivery = &ours[1].1[0];
    assert_eq!(delivery.subject, "s.one");
    assert_eq!(delivery.reply.as_deref(), Some("$JS.ACK.S.C.1.1.1.<ts>.0"));
    assert_eq!(ours[1].1[1].headers, hb(1, 1));
    let stalled = ours[2].1.last().unwrap();
    assert_eq!(
        stalled.headers.as_deref(),
        Some(
            "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 22\r\nNats-Last-Stream: 22\r\n\
             Nats-Consumer-Stalled: $JS.FC.S.C.<id>\r\n\r\n"
        ),
        "{:?}",
        ours[2].1
    );
    if let Some(go) = start(dir.path().join("go").as_path(), true) {
        let theirs = exchange(&go);
        for ((step, a), (_, b)) in ours.iter().zip(theirs.iter()) {
            assert_eq!(timeless(a), timeless(b), "step {step}");
        }
    }
}

/// With the `js_ack_fc_v2` feature flag, deliveries carry Go's v2 ack subject and flow
/// control its v2 subject, `<domain>.<account hash>` after `$JS.ACK.`/`$JS.FC.`, and the
/// answer to a v2 flow-control request resumes delivery.
#[test]
fn jetstream_push_raw_v2_ack_and_flow_control_subjects() {
    let extra = "feature_flags { js_ack_fc_v2: true }\n";
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), false, extra).unwrap();
    let ours = exchange(&server);
    let delivery = &ours[1].1[0];
    assert_eq!(
        delivery.reply.as_deref(),
        Some("$JS.ACK._.szMpdrwD.S.C.1.1.1.<ts>.0"),
        "{delivery:?}"
    );
    let stalled = ours[2].1.last().unwrap();
    assert!(
        stalled
            .headers
            .as_deref()
            .is_some_and(|h| h.contains("Nats-Consumer-Stalled: $JS.FC._.szMpdrwD.S.C.<id>")),
        "{stalled:?}"
    );
    if let Some(go) = start_with(dir.path().join("go").as_path(), true, extra) {
        let theirs = exchange(&go);
        for ((step, a), (_, b)) in ours.iter().zip(theirs.iter()) {
            assert_eq!(timeless(a), timeless(b), "step {step}");
        }
    }
}

//! Ack policy `flow_control` over the raw protocol, on a work-queue stream: the config's
//! defaults, the `100 FlowControl Request` sent at `max_ack_pending`, acks taken from the
//! answer's `Nats-Last-Consumer`/`Nats-Last-Stream` headers (a bare answer acks nothing),
//! the request an idle heartbeat adds while messages are pending, the stream emptied as acks
//! arrive, and the ack floor kept across a kill -9. The same exchange runs against Go's
//! server when it is installed and the event lists are compared.

use natrium_tests::raw::RawClient;
use natrium_tests::ServerProcess;
use serde_json::Value;

fn start(dir: &std::path::Path, go: bool) -> Option<ServerProcess> {
    let dir = dir.display().to_string();
    let args = ["-js", "-sd", &dir, "-a", "127.0.0.1", "-p", "-1"];
    if go {
        ServerProcess::start_go(&args)
    } else {
        Some(ServerProcess::start(&args))
    }
}

struct Msg {
    subject: String,
    reply: Option<String>,
    headers: String,
    payload: Vec<u8>,
}

impl Msg {
    fn is(&self, status: &str) -> bool {
        self.headers.starts_with(&format!("NATS/1.0 100 {status}"))
    }
}

struct Peer {
    c: RawClient,
    n: u32,
    /// Deliveries met while waiting for an API answer.
    early: std::collections::VecDeque<Msg>,
}

impl Peer {
    fn connect(server: &ServerProcess) -> Self {
        let mut c = RawClient::connect(&server.addr());
        let out = c.exchange(
            b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n\
              SUB r.> 1\r\nSUB d.fc 2\r\n",
        );
        assert!(!out.contains("-ERR"), "{out}");
        Self {
            c,
            n: 0,
            early: std::collections::VecDeque::new(),
        }
    }

    fn next(&mut self) -> Msg {
        match self.early.pop_front() {
            Some(m) => m,
            None => self.read(),
        }
    }

    fn read(&mut self) -> Msg {
        let mut line = self.c.read_line().expect("frame line");
        while line == "PING" || line == "PONG" {
            if line == "PING" {
                self.c.send(b"PONG\r\n");
            }
            line = self.c.read_line().expect("frame line");
        }
        let parts: Vec<&str> = line.split(' ').collect();
        let numbers: Vec<usize> = parts.iter().rev().map_while(|p| p.parse().ok()).collect();
        let (hlen, total, reply) = match parts[0] {
            "HMSG" => (numbers[1], numbers[0], (parts.len() == 6).then(|| parts[3])),
            "MSG" => (0, numbers[0], (parts.len() == 5).then(|| parts[3])),
            other => panic!("unexpected {other}: {line}"),
        };
        let body = self.c.read_bytes(total + 2);
        Msg {
            subject: parts[1].to_owned(),
            reply: reply.map(str::to_owned),
            headers: String::from_utf8_lossy(&body[..hlen]).into_owned(),
            payload: body[hlen..total].to_vec(),
        }
    }

    /// A request's JSON answer; deliveries met on the way are kept for later.
    fn api(&mut self, subject: &str, body: &str) -> Value {
        self.n += 1;
        let reply = format!("r.{}", self.n);
        let len = body.len();
        self.c
            .send(format!("PUB {subject} {reply} {len}\r\n{body}\r\n").as_bytes());
        loop {
            let m = self.read();
            if m.subject == reply {
                return serde_json::from_slice(&m.payload).expect("json");
            }
            self.early.push_back(m);
        }
    }

    /// Deliveries and requests up to the next flow-control request, as events; the
    /// request's reply subject. `idle`: the request follows a heartbeat, which is recorded
    /// too (other heartbeats come when they will and are skipped).
    fn until_fc(&mut self, events: &mut Vec<String>, idle: bool) -> String {
        let mut beat = None;
        loop {
            let m = self.next();
            if m.is("FlowControl Request") {
                if let Some(hb) = beat.take().filter(|_| idle) {
                    events.push(hb);
                }
                events.push("flow control request".to_owned());
                return m.reply.expect("fc reply");
            }
            if m.is("Idle Heartbeat") {
                beat = Some(format!("heartbeat {}", m.headers.trim_end()));
                continue;
            }
            beat = None;
            let reply = m.reply.unwrap_or_default();
            let mut t: Vec<&str> = reply.split('.').collect();
            if t.len() == 9 {
                t[7] = "<ts>";
            }
            events.push(format!("{} {}", m.subject, t.join(".")));
        }
    }

    fn answer(&mut self, fc: &str, received: Option<(u64, u64)>) {
        match received {
            Some((c, s)) => {
                let h =
                    format!("NATS/1.0\r\nNats-Last-Consumer: {c}\r\nNats-Last-Stream: {s}\r\n\r\n");
                let n = h.len();
                self.c
                    .send(format!("HPUB {fc} {n} {n}\r\n{h}\r\n").as_bytes());
            }
            None => self.c.send(format!("PUB {fc} 0\r\n\r\n").as_bytes()),
        }
    }

    /// The consumer's floors and counts, once the stream holds `messages` (acks remove
    /// them from a work queue after the answer was taken).
    fn state(&mut self, messages: u64) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let s = self.api("$JS.API.STREAM.INFO.W", "");
            let held = s["state"]["messages"].as_u64().unwrap_or(u64::MAX);
            if held == messages || std::time::Instant::now() > deadline {
                let i = self.api("$JS.API.CONSUMER.INFO.W.C", "");
                let pair = |v: &Value| format!("{}/{}", v["consumer_seq"], v["stream_seq"]);
                return format!(
                    "messages {held} first {} delivered {} ack_floor {} ack_pending {} pending {}",
                    s["state"]["first_seq"],
                    pair(&i["delivered"]),
                    pair(&i["ack_floor"]),
                    i["num_ack_pending"],
                    i["num_pending"]
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

const CONSUMER: &str = r#"{"stream_name":"W","config":{"durable_name":"C","deliver_subject":"d.fc","ack_policy":"flow_control","max_ack_pending":3}}"#;

fn exchange(dir: &std::path::Path, go: bool) -> Option<Vec<String>> {
    let mut server = start(dir, go)?;
    let mut p = Peer::connect(&server);
    let stream = r#"{"name":"W","subjects":["w.>"],"retention":"workqueue","storage":"file"}"#;
    assert!(p.api("$JS.API.STREAM.CREATE.W", stream)["error"].is_null());
    for i in 1..=5 {
        assert_eq!(p.api(&format!("w.{i}"), "x")["seq"], i);
    }
    let mut ev = Vec::new();
    let created = p.api("$JS.API.CONSUMER.CREATE.W.C", CONSUMER);
    let cfg = &created["config"];
    ev.push(format!(
        "config ack_policy {} flow_control {} idle_heartbeat {} ack_wait {} max_deliver {}",
        cfg["ack_policy"],
        cfg["flow_control"],
        cfg["idle_heartbeat"],
        cfg["ack_wait"],
        cfg["max_deliver"]
    ));
    // Three deliveries reach max_ack_pending: a request follows at once.
    let fc = p.until_fc(&mut ev, false);
    p.answer(&fc, Some((2, 2)));
    let fc = p.until_fc(&mut ev, false);
    ev.push(p.state(3));
    // A bare answer opens the window and acks nothing; the idle heartbeat asks again.
    p.answer(&fc, None);
    let fc = p.until_fc(&mut ev, true);
    p.answer(&fc, Some((4, 4)));
    let fc = p.until_fc(&mut ev, true);
    p.answer(&fc, Some((5, 5)));
    ev.push(p.state(0));
    server.kill();
    let server = start(dir, go)?;
    let mut p = Peer::connect(&server);
    ev.push(format!("restarted {}", p.state(0)));
    assert_eq!(p.api("w.6", "x")["seq"], 6);
    p.until_fc(&mut ev, true);
    Some(ev)
}

#[test]
fn jetstream_push_flow_control_ack_policy() {
    let dir = tempfile::tempdir().unwrap();
    let ours = exchange(&dir.path().join("ours"), false).unwrap();
    let expect_state = |m: u64, f: u64, d: u64, a: u64, p: u64| {
        format!(
            "messages {m} first {f} delivered {d}/{d} ack_floor {a}/{a} ack_pending {p} pending 0"
        )
    };
    let ack = |n: u64, pending: u64| format!("w.{n} $JS.ACK.W.C.1.{n}.{n}.<ts>.{pending}");
    let hb = |n: u64| {
        format!(
            "heartbeat NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {n}\r\n\
             Nats-Last-Stream: {n}"
        )
    };
    let fc = "flow control request".to_owned();
    let expected = vec![
        "config ack_policy \"flow_control\" flow_control true idle_heartbeat 1000000000 \
         ack_wait null max_deliver -1"
            .to_owned(),
        ack(1, 4),
        ack(2, 3),
        ack(3, 2),
        fc.clone(),
        ack(4, 1),
        ack(5, 0),
        fc.clone(),
        expect_state(3, 3, 5, 2, 3),
        hb(5),
        fc.clone(),
        hb(5),
        fc.clone(),
        expect_state(0, 6, 5, 5, 0),
        format!("restarted {}", expect_state(0, 6, 5, 5, 0)),
        ack(6, 0),
        hb(6),
        fc,
    ];
    assert_eq!(ours, expected, "{ours:#?}");
    if let Some(go) = exchange(&dir.path().join("go"), true) {
        assert_eq!(ours, go);
    }
}

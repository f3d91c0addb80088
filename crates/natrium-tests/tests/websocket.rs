//! WebSocket clients end to end: async-nats over `ws://` and `wss://` with TCP clients on the
//! other side, raw frames (masking, control frames, fragmentation, ping, close, compression,
//! limits), the handshake's refusals, authentication through the websocket block and cookies,
//! monitoring, the ports file, and differential runs of the same exchanges against Go.

use std::time::Duration;

use futures::StreamExt;
use natrium_tests::process::run_to_exit;
use natrium_tests::raw::{http_get_json, wait_until};
use natrium_tests::ws::{binary, deflate, frame, upgrade_request, Frame};
use natrium_tests::{go_server_path, natrium_path, RawClient, ServerProcess, TestCerts, WsClient};

const WAIT: Duration = Duration::from_secs(10);

/// A config file with a plain websocket listener (`ws` holds extra keys of the block) and
/// `top` lines; the temporary directory lives as long as the returned guard.
fn config(ws: &str, top: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ws.conf");
    std::fs::write(
        &path,
        format!(
            "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\n{top}\n\
             websocket {{\n  listen: \"127.0.0.1:-1\"\n  no_tls: true\n  {ws}\n}}\n"
        ),
    )
    .expect("write config");
    (dir, path.display().to_string())
}

fn ours(conf: &str) -> ServerProcess {
    ServerProcess::start_binary(natrium_path(), &["-c", conf])
}

fn go(conf: &str) -> Option<ServerProcess> {
    go_server_path().map(|bin| ServerProcess::start_binary(bin, &["-c", conf]))
}

fn ws_port(server: &ServerProcess) -> u16 {
    server.ws_port.expect("websocket port in the log")
}

async fn ws_client(server: &ServerProcess) -> async_nats::Client {
    async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(5))
        .connect(format!("ws://127.0.0.1:{}", ws_port(server)))
        .await
        .expect("websocket connect")
}

async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("message in time")
        .expect("subscription open")
}

/// Publishes probes until `sub` sees one. async-nats over websockets may send the PING of a
/// `flush` ahead of a SUB queued just before it, so a flush does not prove the subscription is
/// in place.
async fn until_subscribed(
    sub: &mut async_nats::Subscriber,
    via: &async_nats::Client,
    subject: &str,
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        via.publish(subject.to_owned(), "probe".into())
            .await
            .unwrap();
        via.flush().await.unwrap();
        if let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(100), sub.next()).await {
            assert_eq!(&msg.payload[..], b"probe");
            // Drain probes still in flight.
            while let Ok(Some(_)) =
                tokio::time::timeout(Duration::from_millis(50), sub.next()).await
            {}
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "subscription never ready"
        );
    }
}

/// A request answered by a responder whose subscription may still be on its way (see
/// [`until_subscribed`]): "no responders" is retried until the deadline.
async fn request_until_served(client: &async_nats::Client, subject: &str) -> async_nats::Message {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match client.request(subject.to_owned(), "ping".into()).await {
            Ok(msg) => return msg,
            Err(e) if tokio::time::Instant::now() < deadline => {
                assert_eq!(e.kind(), async_nats::RequestErrorKind::NoResponders, "{e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("request: {e}"),
        }
    }
}

#[tokio::test]
async fn websocket_async_nats_pubsub_and_request_with_tcp_clients() {
    let (_dir, conf) = config("", "");
    let server = ours(&conf);
    let ws = ws_client(&server).await;
    let tcp = async_nats::connect(server.url())
        .await
        .expect("tcp connect");
    let big: bytes::Bytes = (0..100_000u32).map(|i| (i % 251) as u8).collect();

    // TCP publishes, the websocket client receives (a small and a large message).
    let mut sub = ws.subscribe("to.ws").await.unwrap();
    until_subscribed(&mut sub, &tcp, "to.ws").await;
    tcp.publish("to.ws", "hello".into()).await.unwrap();
    tcp.publish("to.ws", big.clone()).await.unwrap();
    assert_eq!(&next(&mut sub).await.payload[..], b"hello");
    assert_eq!(next(&mut sub).await.payload, big);

    // The websocket client publishes, TCP receives.
    let mut sub = tcp.subscribe("to.tcp").await.unwrap();
    until_subscribed(&mut sub, &ws, "to.tcp").await;
    ws.publish("to.tcp", big.clone()).await.unwrap();
    ws.publish("to.tcp", "world".into()).await.unwrap();
    assert_eq!(next(&mut sub).await.payload, big);
    assert_eq!(&next(&mut sub).await.payload[..], b"world");

    // Request/reply both ways.
    for (responder, requester) in [(&ws, &tcp), (&tcp, &ws)] {
        let mut service = responder.subscribe("svc").await.unwrap();
        responder.flush().await.unwrap();
        let answer = responder.clone();
        let task = tokio::spawn(async move {
            let req = next(&mut service).await;
            let reply = req.reply.expect("reply subject");
            answer.publish(reply, req.payload).await.unwrap();
            answer.flush().await.unwrap();
        });
        let resp = request_until_served(requester, "svc").await;
        assert_eq!(&resp.payload[..], b"ping");
        task.await.unwrap();
    }
}

#[tokio::test]
async fn websocket_wss_with_tls_block() {
    let certs = TestCerts::generate();
    let conf = certs.config(
        "wss.conf",
        &format!(
            "websocket {{\n  listen: \"127.0.0.1:-1\"\n  {}\n}}",
            certs.tls_block("")
        ),
    );
    let server = ours(&conf);
    assert!(server.wait_for_log("Listening for websocket clients on wss://127.0.0.1:", WAIT));
    assert!(!server.log_text().contains("DO NOT USE IN PRODUCTION"));
    let ws = async_nats::ConnectOptions::new()
        .add_root_certificates(certs.path("ca.pem"))
        .connection_timeout(Duration::from_secs(5))
        .connect(format!("wss://localhost:{}", ws_port(&server)))
        .await
        .expect("wss connect");
    let tcp = async_nats::connect(server.url()).await.expect("tcp");
    let mut sub = ws.subscribe("secure").await.unwrap();
    until_subscribed(&mut sub, &tcp, "secure").await;
    tcp.publish("secure", "over tls".into()).await.unwrap();
    assert_eq!(&next(&mut sub).await.payload[..], b"over tls");
    // INFO to a wss client says TLS is required, on the websocket port.
    let info = ws.server_info();
    assert!(info.tls_required);
    assert_eq!(info.port, ws_port(&server));
}

#[test]
fn websocket_frames_ping_fragments_and_close() {
    let (_dir, conf) = config("", "");
    let server = ours(&conf);
    let port = ws_port(&server);
    let mut c = WsClient::handshake(port, "", "CONNECT {\"verbose\":false}");
    // A websocket ping is answered with a pong carrying the same payload.
    c.send(&frame(9, b"are you there", true, false, true));
    let pong = c.read_frame(WAIT).expect("pong");
    assert_eq!(
        (pong.opcode, &pong.payload[..]),
        (10, &b"are you there"[..])
    );
    // A PING split over a text frame and two continuations is one protocol line; a PUB whose
    // payload spans frames arrives whole.
    c.send(&frame(1, b"PI", false, false, true));
    c.send(&frame(0, b"N", false, false, true));
    c.send(&frame(0, b"G\r\n", true, false, true));
    assert_eq!(c.read_data_until("PONG\r\n"), "PONG\r\n");
    c.send(&binary(b"SUB f 1\r\nPUB f 11\r\nhello"));
    c.send(&binary(b" worl"));
    c.send(&binary(b"d\r\n"));
    assert_eq!(c.read_data_until("d\r\n"), "MSG f 1 11\r\nhello world\r\n");
    // The client closes: its status and reason come back, and the server closes.
    c.send(&frame(8, b"\x03\xe8bye", true, false, true));
    let frames = c.frames_until_closed(WAIT);
    assert_eq!(
        frames.last().and_then(Frame::close_status),
        Some((1000, "bye".into()))
    );
    // A close without a status gets an empty close; a reason that is not UTF-8 gets 1007.
    let mut c = WsClient::handshake(port, "", "CONNECT {}");
    c.send(&frame(8, b"", true, false, true));
    let last = c.frames_until_closed(WAIT).pop().expect("close");
    assert_eq!((last.opcode, last.payload.len()), (8, 0));
    let mut c = WsClient::handshake(port, "", "CONNECT {}");
    c.send(&frame(8, b"\x03\xe8\xff\xfe", true, false, true));
    let last = c.frames_until_closed(WAIT).pop().expect("close");
    assert_eq!(
        last.close_status(),
        Some((1007, "invalid utf8 body in close frame".into()))
    );
}

/// The close frame the server sends after `bytes`, then closes.
fn close_after(port: u16, bytes: &[u8]) -> Option<(u16, String)> {
    let mut c = WsClient::connect(port, "");
    c.read_data_until("\r\n");
    c.send(bytes);
    let frames = c.frames_until_closed(WAIT);
    frames
        .iter()
        .find(|f| f.opcode == 8)
        .and_then(Frame::close_status)
}

#[test]
fn websocket_bad_frames_refused_with_close_status() {
    let (_dir, conf) = config("", "max_payload: 1024");
    let server = ours(&conf);
    let port = ws_port(&server);
    let protocol = |text: &str| Some((1002, text.to_owned()));
    assert_eq!(
        close_after(port, &frame(2, b"PING\r\n", true, false, false)),
        protocol("mask bit missing")
    );
    assert_eq!(
        close_after(port, &frame(9, &[b'x'; 126], true, false, true)),
        protocol("control frame length bigger than maximum allowed of 125 bytes")
    );
    assert_eq!(
        close_after(port, &frame(2, b"x", true, true, true)),
        protocol("compressed frame received without negotiated permessage-deflate")
    );
    assert_eq!(
        close_after(port, &frame(3, b"x", true, false, true)),
        protocol("unknown opcode 3")
    );
    assert_eq!(
        close_after(port, &frame(0, b"x", true, false, true)),
        protocol("invalid continuation frame")
    );
    assert!(server.wait_for_log(" - read error: mask bit missing", WAIT));
    // A PUB over max_payload: Go's -ERR, then 1009 with the close reason.
    let mut c = WsClient::handshake(port, "", "CONNECT {\"verbose\":false}");
    c.send(&binary(b"PUB big 2048\r\n"));
    let frames = c.frames_until_closed(WAIT);
    let text: String = frames
        .iter()
        .filter(|f| f.opcode == 2)
        .map(|f| String::from_utf8_lossy(&f.payload).into_owned())
        .collect();
    assert_eq!(text, "-ERR 'Maximum Payload Violation'\r\n");
    assert_eq!(
        frames.last().and_then(Frame::close_status),
        Some((1009, "Maximum Message Payload Exceeded".into()))
    );
    assert!(server.wait_for_log("maximum payload exceeded: 2048 vs 1024", WAIT));
    assert!(server.wait_for_log("- read error: maximum payload exceeded", WAIT));
    // The close is recorded just after the socket closes: poll for it.
    let monitor = server.monitor_port.unwrap();
    let reasons = || -> Vec<String> {
        http_get_json(monitor, "/connz?state=closed")["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["reason"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    wait_until(WAIT, || reasons().len() == 6);
    let reasons = reasons();
    assert!(reasons.contains(&"Read Error".to_owned()), "{reasons:?}");
    assert!(
        reasons.contains(&"Maximum Message Payload Exceeded".to_owned()),
        "{reasons:?}"
    );
}

#[test]
fn websocket_compression_negotiated_both_ways() {
    let (_dir, conf) = config("compression: true", "");
    let server = ours(&conf);
    let offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
    let mut c = WsClient::connect(ws_port(&server), offer);
    assert!(c.response.contains(
        "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; \
         client_no_context_takeover\r\n"
    ));
    assert!(c.read_data_until("\r\n").starts_with("INFO "));
    // A compressed CONNECT, SUB and PING.
    let cmds = deflate(b"CONNECT {\"verbose\":false}\r\nSUB z 1\r\nPING\r\n");
    c.send(&frame(2, &cmds, true, true, true));
    assert_eq!(c.read_data_until("PONG\r\n"), "PONG\r\n");
    // A compressed PUB split over two frames (RSV1 on the first only); the 1000-byte message
    // comes back compressed.
    let payload = "z".repeat(1000);
    let pubs = deflate(format!("PUB z 1000\r\n{payload}\r\n").as_bytes());
    let (a, b) = pubs.split_at(pubs.len() / 2);
    c.send(&frame(2, a, false, true, true));
    c.send(&frame(0, b, true, false, true));
    let first = c.read_frame(WAIT).expect("message frame");
    assert!(first.rsv1, "a message over 64 bytes is compressed");
    let text = String::from_utf8(natrium_tests::ws::inflate(&first.payload)).unwrap();
    assert_eq!(text, format!("MSG z 1 1000\r\n{payload}\r\n"));
    // Without the offer, nothing is compressed and RSV1 is refused.
    let mut plain = WsClient::connect(ws_port(&server), "");
    assert!(!plain.response.contains("permessage-deflate"));
    plain.read_data_until("\r\n");
}

#[test]
fn websocket_handshake_refusals_and_timeout() {
    let (_dir, conf) = config(
        "same_origin: true\n  handshake_timeout: \"1s\"\n  headers { X-Natrium: \"yes\" }",
        "",
    );
    let server = ours(&conf);
    let port = ws_port(&server);
    let c = WsClient::connect_with(
        port,
        &upgrade_request("/", "Origin: http://evil.example:1234\r\n"),
    );
    assert!(
        c.response.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{}",
        c.response
    );
    assert!(c.response.contains("Sec-Websocket-Version: 13\r\n"));
    assert!(
        server.wait_for_log("- websocket handshake error: origin not allowed: ", WAIT),
        "{}",
        server.log_text()
    );
    // The same origin is accepted, and the configured header is in the 101.
    let ok = WsClient::connect(port, "Origin: http://127.0.0.1\r\n");
    assert!(ok.response.contains("X-Natrium: yes\r\n"));
    // A client that never finishes its request is closed after handshake_timeout.
    let started = std::time::Instant::now();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(&mut stream, b"GET / HTTP/1.1\r\n").unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = [0u8; 16];
    let n = std::io::Read::read(&mut stream, &mut buf).unwrap_or(0);
    assert_eq!(n, 0, "closed without a reply");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[test]
fn websocket_auth_override_cookies_and_forwarded_for() {
    let (_dir, conf) = config(
        "authorization { token: \"s3cret\" }\n  token_cookie: \"natstoken\"",
        "debug: true",
    );
    let server = ours(&conf);
    let port = ws_port(&server);
    // Plain TCP clients need nothing; websocket clients are told authentication is required.
    let tcp = RawClient::connect(&server.addr());
    assert!(!tcp.info.contains("auth_required"));
    let mut c = WsClient::connect(
        port,
        "X-Forwarded-For: 10.1.2.3\r\nCookie: natstoken=s3cret\r\n",
    );
    let info = c.read_data_until("\r\n");
    assert!(info.contains("\"auth_required\":true"), "{info}");
    // The cookie fills the token CONNECT leaves out.
    c.send(&binary(b"CONNECT {\"verbose\":false}\r\nPING\r\n"));
    assert_eq!(c.read_data_until("PONG\r\n"), "PONG\r\n");
    assert!(server.wait_for_log("10.1.2.3/127.0.0.1:", WAIT));
    assert!(server.log_text().contains(" - wid:"));
    // Without it: Go's -ERR and a 1008 close.
    let mut c = WsClient::connect(port, "");
    c.read_data_until("\r\n");
    c.send(&binary(b"CONNECT {\"verbose\":false}\r\n"));
    let frames = c.frames_until_closed(WAIT);
    assert_eq!(
        String::from_utf8_lossy(&frames[0].payload),
        "-ERR 'Authorization Violation'\r\n"
    );
    assert_eq!(
        frames.last().and_then(Frame::close_status),
        Some((1008, "Authentication Failure".into()))
    );
}

#[test]
fn websocket_no_auth_user_override_like_go() {
    let (_dir, conf) = config(
        "no_auth_user: \"guest\"",
        "authorization { users: [\n  {user: admin, password: pw}\n  \
         {user: guest, password: x, permissions: { publish: \"public.>\" }}\n] }",
    );
    for server in [Some(ours(&conf)), go(&conf)].into_iter().flatten() {
        // TCP clients still need credentials: the override is for websocket clients only.
        let mut tcp = RawClient::connect(&server.addr());
        let out = tcp.until_closed(b"CONNECT {\"verbose\":false}\r\nPING\r\n");
        assert!(out.contains("Authorization Violation"), "{out}");
        // A websocket client without credentials is the guest, with the guest's permissions.
        let mut c = WsClient::connect(ws_port(&server), "");
        let info = c.read_data_until("\r\n");
        assert!(info.contains("\"auth_required\":true"), "{info}");
        c.send(&binary(
            b"CONNECT {\"verbose\":false}\r\nPUB private.x 1\r\nx\r\nPING\r\n",
        ));
        let text = c.read_data_until("PONG\r\n");
        assert_eq!(
            text,
            "-ERR 'Permissions Violation for Publish to \"private.x\"'\r\nPONG\r\n"
        );
        // Credentials of another user still work.
        let _admin = WsClient::handshake(
            ws_port(&server),
            "",
            "CONNECT {\"verbose\":false,\"user\":\"admin\",\"pass\":\"pw\"}",
        );
    }
}

#[test]
fn websocket_shutdown_sends_going_away() {
    let (_dir, conf) = config("", "");
    let server = ours(&conf);
    let mut c = WsClient::handshake(ws_port(&server), "", "CONNECT {}");
    server.signal("TERM");
    let frames = c.frames_until_closed(WAIT);
    assert_eq!(
        frames.last().and_then(Frame::close_status),
        Some((1001, "Server Shutdown".into()))
    );
}

#[test]
fn websocket_monitoring_and_ports_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_conf_dir, conf) = config(
        "compression: true\n  handshake_timeout: \"2s\"\n  advertise: \"x:1\"\n  \
         allowed_origins: [\"http://a.example\"]\n  authorization { token: t, timeout: 3 }",
        &format!("ports_file_dir: \"{}\"", dir.path().display()),
    );
    let mut sections = Vec::new();
    for server in [Some(ours(&conf)), go(&conf)].into_iter().flatten() {
        let port = ws_port(&server);
        let mut varz = http_get_json(server.monitor_port.unwrap(), "/varz");
        let ws = varz["websocket"].take();
        assert_eq!(ws["port"], port);
        sections.push(ws);
        let _c = WsClient::handshake(port, "", "CONNECT {\"name\":\"w\",\"auth_token\":\"t\"}");
        let connz = http_get_json(server.monitor_port.unwrap(), "/connz");
        assert_eq!(connz["connections"][0]["type"], "websocket");
        assert_eq!(connz["connections"][0]["name"], "w");
        let want = format!("\"websocket\":[\"ws://127.0.0.1:{port}\"]");
        // Go writes its ports file in the background: poll for it.
        let suffix = format!("_{}.ports", server.pid());
        let found = wait_until(WAIT, || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(&suffix))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .any(|t| t.contains(&want))
        });
        assert!(found, "ports file without {want}");
    }
    let mut first = sections[0].clone();
    first["port"] = 0.into();
    assert_eq!(first["handshake_timeout"], 2_000_000_000u64);
    assert_eq!(first["auth_timeout"], 3);
    assert_eq!(first["compression"], true);
    for other in &sections[1..] {
        let mut other = other.clone();
        other["port"] = 0.into();
        assert_eq!(other, first, "/varz websocket: Go vs Natrium");
    }
}

#[test]
fn websocket_start_errors_like_go() {
    let dir = tempfile::tempdir().unwrap();
    for (body, want) in [
        (
            "websocket { port: -1 }",
            "nats-server: websocket requires TLS configuration\n",
        ),
        (
            "websocket { port: -1, no_tls: true, allowed_origins: [\"ftp://x\"] }",
            "nats-server: unable to parse allowed origin \"ftp://x\": allowed origins must be \
             absolute URLs with http or https scheme\n",
        ),
    ] {
        let path = dir.path().join("bad.conf");
        std::fs::write(&path, format!("listen: 127.0.0.1:-1\n{body}\n")).unwrap();
        let conf = path.display().to_string();
        let mut bins = vec![natrium_path()];
        bins.extend(go_server_path());
        for bin in bins {
            let out = run_to_exit(&bin, &["-c", &conf], None, &[], WAIT);
            assert_eq!(out.code, Some(1), "{}", bin.display());
            assert_eq!(out.stderr, want, "{}", bin.display());
            // `-t` does not run these checks.
            let t = run_to_exit(&bin, &["-t", "-c", &conf], None, &[], WAIT);
            assert_eq!(t.code, Some(0), "{}: {}", bin.display(), t.stderr);
        }
    }
    // The block's TLS files are read with the configuration, so `-t` reports them too, at the
    // block's `tls` key.
    let path = dir.path().join("tls.conf");
    std::fs::write(
        &path,
        "listen: 127.0.0.1:-1\nwebsocket {\n  port: -1\n  tls { cert_file: \"nope.pem\", \
         key_file: \"nope.key\" }\n}\n",
    )
    .unwrap();
    let conf = path.display().to_string();
    let want = format!(
        "nats-server: {conf}:4:3: error parsing X509 certificate/key pair: open nope.pem: no \
         such file or directory\n\n"
    );
    let mut bins = vec![natrium_path()];
    bins.extend(go_server_path());
    for bin in bins {
        for args in [&["-t", "-c", &conf][..], &["-c", &conf][..]] {
            let out = run_to_exit(&bin, args, None, &[], WAIT);
            assert_eq!(out.code, Some(1), "{} {args:?}", bin.display());
            assert_eq!(out.stderr, want, "{} {args:?}", bin.display());
        }
    }
}

/// The bytes of the frames that answer `send`, up to and including one holding `until`.
fn exchange(c: &mut WsClient, send: &[u8], until: &[u8]) -> Vec<u8> {
    c.send(send);
    let mut out = Vec::new();
    while let Some(f) = c.read_frame(WAIT) {
        out.push(f.opcode);
        out.extend_from_slice(&f.payload);
        if f.payload.windows(until.len()).any(|w| w == until) || f.opcode == 8 {
            break;
        }
    }
    out
}

#[test]
fn websocket_differential_upgrade_and_frames_against_go() {
    if go_server_path().is_none() {
        return;
    }
    let (_dir, conf) = config("compression: true", "");
    let mut transcripts = Vec::new();
    for server in [ours(&conf), go(&conf).unwrap()] {
        let port = ws_port(&server);
        let mut t: Vec<Vec<u8>> = Vec::new();
        // The 101 (no Date header), and the refusals' status lines.
        let c = WsClient::connect_with(port, &upgrade_request("/", "Nats-No-Masking: true\r\n"));
        t.push(c.response.into_bytes());
        for (path, extra) in [("/mqtt", ""), ("/", "Sec-WebSocket-Version: 12\r\n")] {
            let mut req = upgrade_request(path, "");
            if !extra.is_empty() {
                req = String::from_utf8(req)
                    .unwrap()
                    .replace("Sec-WebSocket-Version: 13\r\n", extra)
                    .into_bytes();
            }
            let c = WsClient::connect_with(port, &req);
            t.push(
                c.response
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .as_bytes()
                    .to_vec(),
            );
        }
        let mut c = WsClient::connect(port, "");
        let info = c.read_frame(WAIT).expect("INFO");
        t.push(vec![info.opcode, u8::from(info.fin), u8::from(info.rsv1)]);
        t.push(exchange(
            &mut c,
            &binary(b"CONNECT {\"verbose\":false}\r\nPING\r\n"),
            b"PONG",
        ));
        t.push(exchange(
            &mut c,
            &frame(9, b"abc", true, false, true),
            b"abc",
        ));
        t.push(exchange(
            &mut c,
            &binary(b"SUB s 7\r\nPUB s 2\r\nhi\r\n"),
            b"hi",
        ));
        let long = "y".repeat(300);
        let pubs = format!("PUB s 300\r\n{long}\r\n");
        t.push(exchange(&mut c, &binary(pubs.as_bytes()), b"\r\n"));
        t.push(exchange(
            &mut c,
            &frame(8, b"\x03\xe9later", true, false, true),
            b"later",
        ));
        let mut big = WsClient::handshake(port, "", "CONNECT {\"verbose\":false}");
        t.push(exchange(
            &mut big,
            &binary(b"PUB x 2000000\r\n"),
            b"\x03\xf1",
        ));
        transcripts.push(t);
    }
    let (natrium, go) = (&transcripts[0], &transcripts[1]);
    for (i, (a, b)) in natrium.iter().zip(go).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b),
            "exchange {i} differs from Go"
        );
    }
}

/// A reload changing the websocket block's TLS settings applies to new handshakes (Go reloads
/// them too); a client connected before stays.
#[tokio::test]
async fn websocket_tls_settings_reload_like_go() {
    let certs = TestCerts::generate();
    let block = |extra: &str| {
        format!(
            "websocket {{\n  listen: \"127.0.0.1:-1\"\n  {}\n}}",
            certs.tls_block(extra)
        )
    };
    let conf = certs.config("wss-reload.conf", &block(""));
    let mut servers = vec![("ours", ours(&conf))];
    if let Some(go) = ServerProcess::start_go(&["-c", &conf]) {
        servers.push(("go", go));
    }
    let options = |client: bool| {
        let opts = async_nats::ConnectOptions::new()
            .add_root_certificates(certs.path("ca.pem"))
            .connection_timeout(Duration::from_secs(3));
        if client {
            opts.add_client_certificate(certs.path("client.pem"), certs.path("client-key.pem"))
        } else {
            opts
        }
    };
    let url = |server: &ServerProcess| format!("wss://localhost:{}", ws_port(server));
    let mut olds = Vec::new();
    for (_, server) in &servers {
        olds.push(options(false).connect(url(server)).await.expect("wss"));
    }
    let verify = format!("verify: true\nca_file: \"{}\"", certs.file("ca.pem"));
    certs.config("wss-reload.conf", &block(&verify));
    for ((name, server), old) in servers.iter().zip(&olds) {
        server.signal("HUP");
        assert!(
            server.wait_for_log("Reloaded server configuration", WAIT),
            "{name}: {}",
            server.log_text()
        );
        assert!(
            options(false).connect(url(server)).await.is_err(),
            "{name}: a client certificate is required now"
        );
        let with_cert = options(true).connect(url(server)).await;
        assert!(with_cert.is_ok(), "{name}: {with_cert:?}");
        old.flush().await.expect("old wss client still served");
    }
}

/// `verify_and_map` in the websocket block's own `tls` (the client port has no TLS): a wss
/// client is the user its certificate names, with that user's permissions; on both servers.
/// Authentication decides the websocket listener's settings for websocket clients, not the
/// client port's.
#[tokio::test]
async fn websocket_verify_and_map_in_its_own_tls_block_like_go() {
    let certs = TestCerts::generate();
    let conf = certs.config(
        "wss-map.conf",
        &format!(
            "authorization {{ users [ {{user: \"client@example.com\", permissions: \
             {{publish: \"mapped.>\", subscribe: \"mapped.>\"}}}} ] }}\n\
             websocket {{\n  listen: \"127.0.0.1:-1\"\n  {}\n}}",
            certs.tls_block(&format!(
                "  ca_file: \"{}\"\n  verify_and_map: true",
                certs.file("ca.pem")
            ))
        ),
    );
    let mut servers = vec![("ours", ours(&conf))];
    servers.extend(ServerProcess::start_go(&["-c", &conf]).map(|go| ("go", go)));
    for (name, server) in &servers {
        let port = server.ws_port.expect("websocket port");
        let ws = async_nats::ConnectOptions::new()
            .add_root_certificates(certs.path("ca.pem"))
            .add_client_certificate(certs.path("client.pem"), certs.path("client-key.pem"))
            .connection_timeout(Duration::from_secs(5))
            .connect(format!("wss://localhost:{port}"))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "{name}: wss connect as the mapped user: {e}\n{}",
                    server.log_text()
                )
            });
        let mut sub = ws.subscribe("mapped.x").await.expect("subscribe");
        ws.flush().await.expect("flush");
        ws.publish("mapped.x", "hi".into()).await.expect("publish");
        let got = tokio::time::timeout(WAIT, sub.next())
            .await
            .expect("in time");
        assert_eq!(got.map(|m| m.payload), Some("hi".into()), "{name}");
    }
}

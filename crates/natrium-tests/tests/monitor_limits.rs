//! The monitoring port's connection limits (`natrium_monitor::limits`): silent, half-sent and
//! idle keep-alive connections are closed after about five seconds, as Go closes the first two
//! (its `ReadHeaderTimeout`), and connections beyond the cap are closed at once. Each probe
//! waits for the server to close the socket, with an upper bound, instead of sleeping.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use natrium_tests::ServerProcess;

const ARGS: [&str; 6] = ["-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
/// `natrium_monitor::limits::REQUEST_HEAD_TIMEOUT`, Go's `ReadHeaderTimeout`.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// `natrium_monitor::limits::CONNECTIONS_MAX`.
const CONNECTIONS_MAX: usize = 64;
/// Slack around the timeout for a loaded machine.
const EARLY: Duration = Duration::from_millis(4_000);
const LATE: Duration = Duration::from_millis(8_000);

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect monitor");
    stream.set_read_timeout(Some(LATE)).expect("timeout");
    stream
}

/// Reads until the server closes the connection (EOF or reset), at most [`LATE`] from
/// `since`; returns when it closed (`None` if it did not) and the bytes received.
fn wait_closed(stream: &mut TcpStream, since: Instant) -> (Option<Duration>, Vec<u8>) {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = LATE.saturating_sub(since.elapsed());
        if left.is_zero() {
            return (None, got);
        }
        stream.set_read_timeout(Some(left)).expect("timeout");
        match stream.read(&mut chunk) {
            Ok(0) => return (Some(since.elapsed()), got),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return (Some(since.elapsed()), got),
        }
    }
}

/// Sends `bytes` (maybe nothing) and measures when the server hangs up.
fn closed_after(port: u16, bytes: &[u8]) -> Option<Duration> {
    let mut stream = connect(port);
    let start = Instant::now();
    stream.write_all(bytes).expect("send");
    wait_closed(&mut stream, start).0
}

/// Reads one whole response (`Content-Length` framed) off a keep-alive connection.
fn read_response(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(str::to_owned)
                })
                .and_then(|v| v.trim().parse::<usize>().ok())
                .expect("content-length");
            if body.len() >= length {
                return head.to_owned();
            }
        }
        let n = stream.read(&mut chunk).expect("read response");
        assert_ne!(n, 0, "closed mid-response: {text}");
        got.extend_from_slice(&chunk[..n]);
    }
}

/// The probes Go answers by closing after its `ReadHeaderTimeout`, run on both servers at
/// once: nothing sent, a request line and one header, half a request line.
#[test]
fn monitor_closes_silent_and_half_sent_connections_like_go() {
    let mut servers = vec![("ours", ServerProcess::start(&ARGS))];
    if let Some(go) = ServerProcess::start_go(&ARGS) {
        servers.push(("go", go));
    } else {
        eprintln!("Go nats-server not installed: Go side skipped");
    }
    let probes: [(&str, &[u8]); 3] = [
        ("silent", b""),
        ("half", b"GET /varz HTTP/1.1\r\nHost: x\r\n"),
        ("partial line", b"GET /va"),
    ];
    std::thread::scope(|scope| {
        let mut runs = Vec::new();
        for (name, server) in &servers {
            let port = server.monitor_port.expect("monitor port");
            for (probe, bytes) in probes {
                runs.push((name, probe, scope.spawn(move || closed_after(port, bytes))));
            }
        }
        for (name, probe, run) in runs {
            let closed = run.join().expect("probe");
            assert!(
                closed.is_some_and(|t| t >= EARLY && t <= LATE),
                "{name} {probe}: closed after {closed:?}, want about {HEAD_TIMEOUT:?}"
            );
        }
    });
}

/// A keep-alive connection is served request after request, then closed once it idles for the
/// head timeout. Go has no idle timeout (such a connection stays open until the client
/// leaves): a documented difference, so only ours is probed.
#[test]
fn monitor_closes_idle_keepalive_connections() {
    let server = ServerProcess::start(&ARGS);
    let mut stream = connect(server.monitor_port.expect("monitor port"));
    for _ in 0..2 {
        stream
            .write_all(b"GET /varz HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        let head = read_response(&mut stream);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    let idle_from = Instant::now();
    let (closed, extra) = wait_closed(&mut stream, idle_from);
    assert!(extra.is_empty(), "{}", String::from_utf8_lossy(&extra));
    assert!(
        closed.is_some_and(|t| t >= EARLY && t <= LATE),
        "idle keep-alive closed after {closed:?}"
    );
}

/// `GET /healthz` on a new connection; whether a response came.
fn answered(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if stream.write_all(request).is_err() {
        return false;
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200")
}

/// With the cap's worth of silent connections open, one more is closed at once; closing the
/// silent ones makes room again well before their own timeout would have.
#[test]
fn monitor_closes_connections_over_the_cap() {
    let server = ServerProcess::start(&ARGS);
    let port = server.monitor_port.expect("monitor port");
    let opened = Instant::now();
    let held: Vec<TcpStream> = (0..CONNECTIONS_MAX).map(|_| connect(port)).collect();
    // The listener accepts in arrival order, so this one comes after all the held ones.
    let mut extra = connect(port);
    let start = Instant::now();
    let (closed, got) = wait_closed(&mut extra, start);
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    assert!(
        closed.is_some_and(|t| t < Duration::from_secs(2)),
        "connection over the cap closed after {closed:?}"
    );
    assert!(
        opened.elapsed() < EARLY,
        "the held connections must still be open for this to prove anything"
    );
    drop(held);
    let deadline = opened + EARLY;
    let mut served = false;
    while Instant::now() < deadline {
        if answered(port) {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(served, "no room made by closing the held connections");
}

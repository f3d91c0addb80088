//! Slow consumers as Go defines them: every byte queued for a client counts toward
//! `max_pending`, protocol replies included (a client that pipelines requests and never reads
//! is cut, not buffered without bound), and the write deadline measures a lack of progress,
//! not the time to drain a burst (a slow but steady reader gets everything). Each scenario runs
//! on both servers when the Go reference is installed.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use natrium_tests::raw::{http_get_json, wait_until};
use natrium_tests::ws::{binary, WsClient};
use natrium_tests::{RawClient, ServerProcess};

const WAIT: Duration = Duration::from_secs(20);
const MAX_PENDING: usize = 1 << 20;
/// Enough requests to fill loopback's kernel buffers (several megabytes each way) and then
/// `MAX_PENDING` many times over. Go keeps reading (and dropping) a cut client's input until
/// its blocked write times out, so the flood is bounded rather than stopped by the cut.
const FLOOD_BYTES_MAX: usize = 64 << 20;

fn config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("slow.conf");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

/// Ours and, when installed, Go's, with `max_pending` of 1 MiB and a websocket listener.
fn servers() -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let (dir, conf) = config(&format!(
        "max_pending: {MAX_PENDING}\nwrite_deadline: \"1s\"\n\
         websocket {{ listen: \"127.0.0.1:-1\", no_tls: true }}\n"
    ));
    let conf = conf.to_str().expect("path").to_owned();
    let args = ["-c", &conf, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    let mut list = vec![("ours", ServerProcess::start(&args))];
    list.extend(ServerProcess::start_go(&args).map(|go| ("go", go)));
    (dir, list)
}

fn varz_slow_consumers(server: &ServerProcess) -> u64 {
    let port = server.monitor_port.expect("monitor port");
    http_get_json(port, "/varz")["slow_consumers"]
        .as_u64()
        .unwrap_or(0)
}

/// Writes `prefix`, then `chunk` again and again without reading anything, until the server
/// closes the connection (a write fails) or `FLOOD_BYTES_MAX` is sent. Returns the bytes sent.
fn flood(mut socket: TcpStream, prefix: &[u8], chunk: &[u8]) -> usize {
    let _ = socket.write_all(prefix);
    let mut sent = 0;
    while sent < FLOOD_BYTES_MAX {
        if socket.write_all(chunk).is_err() {
            break;
        }
        sent += chunk.len();
    }
    sent
}

/// A client that sends `prefix` then repeats `request` and never reads is cut as a slow
/// consumer at `max_pending`, with Go's log line, counted, and its socket closed.
fn check_cut(name: &str, server: &ServerProcess, socket: TcpStream, prefix: &[u8], chunk: &[u8]) {
    let mut reader = socket.try_clone().expect("clone");
    let prefix = prefix.to_vec();
    let chunk = chunk.to_vec();
    let writer = std::thread::spawn(move || flood(socket, &prefix, &chunk));
    let line = format!("Slow Consumer Detected: MaxPending of {MAX_PENDING} Exceeded");
    assert!(
        server.wait_for_log(&line, WAIT),
        "{name}: {}",
        server.log_text()
    );
    assert!(
        wait_until(WAIT, || varz_slow_consumers(server) >= 1),
        "{name}"
    );
    let _ = writer.join();
    // Whatever the kernel still held arrives, then the end of the stream (or a reset: the
    // server closed with our unread requests in its buffer).
    reader.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut rest = Vec::new();
    let open = reader
        .read_to_end(&mut rest)
        .is_err_and(|e| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut));
    assert!(!open, "{name}: still open after {} bytes", rest.len());
}

fn check_cut_tcp(name: &str, server: &ServerProcess, prefix: &[u8], request: &[u8]) {
    let socket = TcpStream::connect(server.addr()).expect("connect");
    let chunk = request.repeat(64 * 1024 / request.len());
    check_cut(name, server, socket, prefix, &chunk);
}

#[test]
fn slow_consumer_pipelined_pings_before_connect_are_cut() {
    let (_dir, servers) = servers();
    for (name, server) in &servers {
        check_cut_tcp(name, server, b"", b"PING\r\n");
    }
}

#[test]
fn slow_consumer_invalid_subs_are_cut() {
    let (_dir, servers) = servers();
    for (name, server) in &servers {
        // Each 13-byte SUB is answered by a 24-byte -ERR.
        let connect = b"CONNECT {\"verbose\":false}\r\n";
        check_cut_tcp(name, server, connect, b"SUB a..b 1\r\n");
    }
}

#[test]
fn slow_consumer_verbose_publishes_are_cut() {
    let (_dir, servers) = servers();
    for (name, server) in &servers {
        let connect = b"CONNECT {\"verbose\":true}\r\n";
        check_cut_tcp(name, server, connect, b"PUB nobody 0\r\n\r\n");
    }
}

#[test]
fn slow_consumer_pipelined_pings_over_websocket_are_cut() {
    let (_dir, servers) = servers();
    for (name, server) in &servers {
        let port = server.ws_port.expect("websocket port");
        let mut ws = WsClient::connect(port, "");
        let frame = binary(&b"PING\r\n".repeat(8 * 1024));
        let stream = ws.stream_mut().try_clone().expect("clone");
        check_cut(name, server, stream, b"", &frame);
    }
}

/// A fast client on the same server is not disturbed while another is cut.
#[test]
fn slow_consumer_cut_leaves_other_clients_alone() {
    let (_dir, servers) = servers();
    for (name, server) in &servers {
        let mut other = RawClient::connect(&server.addr());
        let quiet = b"CONNECT {\"verbose\":false}\r\nSUB x 1\r\n";
        assert_eq!(other.exchange(quiet), "", "{name}");
        check_cut_tcp(name, server, b"", b"PING\r\n");
        // The server's own PINGs may have come meanwhile.
        let got = other.exchange(b"PONG\r\nPUB x 2\r\nok\r\n");
        assert_eq!(got.replace("PING\r\n", ""), "MSG x 1 2\r\nok\r\n", "{name}");
    }
}

/// A reader that takes its messages at a steady `rate` (bytes per second) through a small
/// receive buffer. Returns how many bytes it read before `expect` or the end of the stream.
fn paced_reader(mut socket: TcpStream, rate: f64, expect: usize) -> usize {
    let started = Instant::now();
    let mut total = 0;
    let mut chunk = [0u8; 8192];
    socket.set_read_timeout(Some(WAIT)).expect("timeout");
    while total < expect {
        match socket.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
        // Pace the reads: this is the load's shape, not a wait for the server.
        let due = Duration::from_secs_f64(total as f64 / rate);
        if let Some(ahead) = due.checked_sub(started.elapsed()) {
            std::thread::sleep(ahead);
        }
    }
    total
}

/// A subscriber that reads steadily, but slower than a burst arrives, gets the whole burst:
/// the write deadline (1 s here) measures how long the socket takes nothing, not how long a
/// large batch takes. The burst (12 MB) is far below `max_pending` and takes about 3 s at
/// 4 MB/s, so a deadline on a whole batch would cut the reader. Ours only: Go bounds each of
/// its flushes by the deadline, which at 1 s cuts this reader too (at Go's default 10 s it
/// delivers a 30 MB burst to an 800 KB/s reader, as we do: see the closing note of the change).
#[test]
fn slow_consumer_steady_reader_gets_the_whole_burst() {
    const MSGS: usize = 12_000;
    const PAYLOAD: usize = 1000;
    let frame = "MSG burst 1 1000\r\n".len() + PAYLOAD + 2;
    let (_dir, conf) = config("write_deadline: \"1s\"\n");
    let conf = conf.to_str().expect("path").to_owned();
    let server = ServerProcess::start(&["-c", &conf, "-a", "127.0.0.1", "-p", "-1"]);
    {
        let name = "ours";
        let mut sub = RawClient::connect(&server.addr());
        let subscribe = b"CONNECT {\"verbose\":false}\r\nSUB burst 1\r\n";
        assert_eq!(sub.exchange(subscribe), "", "{name}");
        let socket = sub.stream().try_clone().expect("clone");
        socket2_recv_buffer(&socket, 64 * 1024);
        let reader = std::thread::spawn(move || paced_reader(socket, 4e6, MSGS * frame));
        let mut publisher = TcpStream::connect(server.addr()).expect("connect");
        let mut burst = b"CONNECT {\"verbose\":false}\r\n".to_vec();
        let msg = format!("PUB burst {PAYLOAD}\r\n{}\r\n", "x".repeat(PAYLOAD));
        burst.extend_from_slice(msg.repeat(MSGS).as_bytes());
        publisher.write_all(&burst).expect("publish");
        // The server's first PING (6 bytes) may come in between.
        let got = reader.join().expect("reader");
        assert!(
            got >= MSGS * frame,
            "{name}: {got} bytes; {}",
            server.log_text()
        );
    }
}

/// Shrinks a socket's receive buffer, so that the server's queue (not the kernel's) holds the
/// burst.
fn socket2_recv_buffer(socket: &TcpStream, bytes: usize) {
    socket2::SockRef::from(socket)
        .set_recv_buffer_size(bytes)
        .expect("SO_RCVBUF");
}

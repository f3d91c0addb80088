//! Shared helpers: running both binaries, normalizing log lines for comparison, a tiny HTTP
//! client, INFO parsing.

pub(crate) use std::io::{Read, Write};
pub(crate) use std::net::{TcpListener, TcpStream};
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::time::{Duration, Instant};

pub(crate) use natrium_tests::process::{run_to_exit, wait_for_file, Outcome, START_TIMEOUT};
pub(crate) use natrium_tests::{go_server_path, natrium_path, RawClient, ServerProcess};

pub(crate) const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Ours, then Go's when installed: the binaries every differential check runs.
pub(crate) fn binaries() -> Vec<(&'static str, PathBuf)> {
    let mut list = vec![("natrium", natrium_path())];
    match go_server_path() {
        Some(go) => list.push(("go", go)),
        None => eprintln!("NATS_GO_SERVER not installed: differential checks skipped"),
    }
    list
}

pub(crate) fn run(binary: &Path, args: &[&str]) -> Outcome {
    run_to_exit(binary, args, None, &[], EXIT_TIMEOUT)
}

pub(crate) fn start(binary: &Path, args: &[&str]) -> ServerProcess {
    ServerProcess::try_start_exact(binary, args, None)
        .unwrap_or_else(|log| panic!("{} {args:?} did not start:\n{log}", binary.display()))
}

pub(crate) fn start_in(binary: &Path, args: &[&str], cwd: &Path) -> ServerProcess {
    ServerProcess::try_start_exact(binary, args, Some(cwd))
        .unwrap_or_else(|log| panic!("{} {args:?} did not start:\n{log}", binary.display()))
}

/// A port that was free a moment ago (for the fixed-port flag forms).
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

pub(crate) fn has_ipv6_loopback() -> bool {
    TcpListener::bind("[::1]:0").is_ok()
}

pub(crate) fn is_server_id(word: &str) -> bool {
    word.len() == 56
        && word.starts_with('N')
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Replaces each number of two or more digits that follows `marker` (and is not the start of
/// a longer word, like a digest) with `<N>`: ports after `:`, pids after `_`.
pub(crate) fn mask_digits_after(text: &str, marker: char) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        out.push(chars[i]);
        if chars[i] == marker {
            let end = (i + 1..chars.len())
                .find(|&j| !chars[j].is_ascii_digit())
                .unwrap_or(chars.len());
            let whole = chars.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
            if end - i > 2 && whole {
                out.push_str("<N>");
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Strips Go's `[pid] 2006/01/02 15:04:05.000000 ` prefix (either part may be absent).
pub(crate) fn strip_prefix(line: &str) -> &str {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix('[') {
        if let Some(end) = after.find("] ") {
            if after[..end].bytes().all(|b| b.is_ascii_digit()) {
                rest = &after[end + 2..];
            }
        }
    }
    let bytes = rest.as_bytes();
    let is_stamp = bytes.len() > 27
        && bytes[4] == b'/'
        && bytes[7] == b'/'
        && bytes[13] == b':'
        && bytes[19] == b'.'
        && bytes[26] == b' ';
    if is_stamp {
        &rest[27..]
    } else {
        rest
    }
}

/// A log line without what legitimately differs between runs and implementations: pid, time,
/// server id, ports and pids in file names.
pub(crate) fn normalize(line: &str) -> String {
    let body = strip_prefix(line);
    let words: Vec<String> = body
        .split(' ')
        .map(|w| {
            if is_server_id(w) {
                "<ID>".to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    let text = words.join(" ");
    mask_digits_after(&mask_digits_after(&text, ':'), '_')
}

/// Normalized log lines, without the banner line only we print (`  Natrium:  x.y.z`).
pub(crate) fn normalized(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !l.contains("  Natrium:  "))
        .map(|l| normalize(l))
        .collect()
}

pub(crate) fn normalized_text(text: &str) -> Vec<String> {
    normalized(&text.lines().map(str::to_owned).collect::<Vec<_>>())
}

/// Asserts our normalized lines equal Go's (when Go ran).
pub(crate) fn assert_same_lines(what: &str, ours: &[String], go: Option<&[String]>) {
    if let Some(go) = go {
        assert_eq!(ours, go, "{what}: ours (left) and Go's (right) differ");
    }
}

/// Log lines logged after `Server is ready`.
pub(crate) fn after_ready(lines: &[String]) -> Vec<String> {
    let at = lines
        .iter()
        .position(|l| l.contains("Server is ready"))
        .map_or(0, |i| i + 1);
    lines[at..].to_vec()
}

/// Reads the INFO line from the client port (proves it accepts NATS clients).
pub(crate) fn info_from(addr: &str) -> serde_json::Value {
    let client = RawClient::connect(addr);
    let json = client
        .info
        .strip_prefix("INFO ")
        .unwrap_or_else(|| panic!("not an INFO line: {:?}", client.info));
    serde_json::from_str(json.trim()).expect("INFO json")
}

pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: String,
    pub(crate) body: String,
}

/// A blocking `GET` over a plain socket (HTTP/1.1, `Connection: close`, read to end).
pub(crate) fn http_get(port: u16, path: &str) -> HttpResponse {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect monitor");
    stream
        .set_read_timeout(Some(EXIT_TIMEOUT))
        .expect("read timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("send request");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("header end");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    HttpResponse {
        status,
        headers: head.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}

pub(crate) fn signal_with_our_binary(command: &str) -> Outcome {
    run(&natrium_path(), &["--signal", command])
}

pub(crate) fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_normalize_masks_what_differs() {
        let line = "[123] 2026/11/22 09:06:09.081248 [INF] Listening for client connections on 127.0.0.1:40455";
        assert_eq!(
            normalize(line),
            "[INF] Listening for client connections on 127.0.0.1:<N>"
        );
        let addr: std::net::SocketAddr = "[::1]:4222".parse().expect("addr");
        assert_eq!(
            normalize(&format!("[1] [INF] on {addr}")),
            "[INF] on [::1]:<N>"
        );
        assert_eq!(
            normalize(
                "[1] [INF]   ID:       NCMBQH6NZT2NJ3VOJ3CB65O6GWELD5SJ2GF4HGTJLLRWKBKUGNEGT5FV"
            ),
            "[INF]   ID:       <ID>"
        );
    }
}

//! Direct gets (`$JS.API.DIRECT.GET`, ADR-31), `STREAM.MSG.GET` and `STREAM.INFO` options:
//! through `async-nats`, as raw bytes (statuses, headers, batches with their EOB), and side by
//! side with the Go server when it is installed.

use std::collections::HashMap;
use std::fmt::Write as _;

use async_nats::jetstream::{self, stream};
use futures::TryStreamExt;
use natrium_tests::raw::RawClient;
use natrium_tests::ServerProcess;

use support::WAIT;

#[path = "support/jetstream.rs"]
mod support;
use support::start_js as start;

/// A raw client with headers and no-responders on, subscribed to `r.>` for replies.
fn raw(server: &ServerProcess) -> RawClient {
    let mut c = RawClient::connect(&server.addr());
    let out = c.exchange(
        b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n\
          SUB r.> 1\r\n",
    );
    assert!(!out.contains("-ERR"), "{out}");
    c
}

/// One frame: the header block (if any) and the payload, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    headers: Option<String>,
    payload: String,
}

impl Frame {
    fn status(&self) -> Option<&str> {
        let first = self.headers.as_deref()?.lines().next()?;
        let status = first.strip_prefix("NATS/1.0")?.trim();
        (!status.is_empty()).then_some(status)
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .as_deref()?
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
    }
}

/// Reads one `MSG`/`HMSG` frame on `r.<n>`.
fn read_frame(c: &mut RawClient, n: u32) -> Frame {
    let line = c.read_line().expect("frame line");
    let parts: Vec<&str> = line.split(' ').collect();
    assert_eq!(parts[1], format!("r.{n}"), "{line}");
    let (hlen, total) = match parts[0] {
        "HMSG" => (parts[3].parse().unwrap(), parts[4].parse().unwrap()),
        "MSG" => (0usize, parts[3].parse().unwrap()),
        other => panic!("unexpected {other}: {line}"),
    };
    let body = c.read_bytes(total + 2);
    Frame {
        headers: (hlen > 0).then(|| String::from_utf8_lossy(&body[..hlen]).into_owned()),
        payload: String::from_utf8_lossy(&body[hlen..total]).into_owned(),
    }
}

/// Sends `body` to `subject` with reply `r.<n>` and reads the answer: one frame, or with
/// `batch` every frame through the `204 EOB` (or the first status).
fn get(c: &mut RawClient, n: u32, subject: &str, body: &str, batch: bool) -> Vec<Frame> {
    c.send(format!("PUB {subject} r.{n} {}\r\n{body}\r\n", body.len()).as_bytes());
    let mut frames = vec![read_frame(c, n)];
    while batch && frames.last().is_some_and(|f| f.status().is_none()) {
        frames.push(read_frame(c, n));
    }
    frames
}

/// Creates stream `S` on `a.>` and `b` and stores `a.1`, `a.2`, `a.1` (with a header), `b`.
fn fill(c: &mut RawClient, allow_direct: bool) {
    let create = format!(
        "{{\"name\":\"S\",\"subjects\":[\"a.>\",\"b\"],\"storage\":\"memory\",\"allow_direct\":{allow_direct}}}"
    );
    let created = get(c, 900, "$JS.API.STREAM.CREATE.S", &create, false);
    assert!(created[0].payload.contains("did_create"), "{created:?}");
    let hdr = "NATS/1.0\r\nFoo: bar\r\n\r\n";
    let pubs = [
        "PUB a.1 r.901 3\r\none\r\n".to_owned(),
        "PUB a.2 r.902 3\r\ntwo\r\n".to_owned(),
        format!(
            "HPUB a.1 r.903 {} {}\r\n{hdr}three\r\n",
            hdr.len(),
            hdr.len() + 5
        ),
        "PUB b r.904 4\r\nfour\r\n".to_owned(),
    ];
    for (i, p) in pubs.iter().enumerate() {
        c.send(p.as_bytes());
        let ack = read_frame(c, 901 + i as u32);
        assert!(ack.payload.contains("\"seq\""), "{ack:?}");
    }
}

#[test]
fn jetstream_direct_get_statuses_and_headers_raw() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut c = raw(&server);
    fill(&mut c, true);
    let status = |c: &mut RawClient, n, body: &str| {
        let f = get(c, n, "$JS.API.DIRECT.GET.S", body, false);
        (f[0].headers.clone().unwrap(), f[0].payload.clone())
    };
    let empty = (
        "NATS/1.0 408 Empty Request\r\n\r\n".to_owned(),
        String::new(),
    );
    assert_eq!(status(&mut c, 1, ""), empty);
    assert_eq!(status(&mut c, 2, "{}"), empty);
    assert_eq!(status(&mut c, 3, "{\"seq\":0,\"batch\":2}"), empty);
    let malformed = "NATS/1.0 408 Malformed Request\r\n\r\n";
    assert_eq!(status(&mut c, 4, "{bad").0, malformed);
    assert_eq!(status(&mut c, 5, "{\"seq\":-1}").0, malformed);
    let bad = "NATS/1.0 408 Bad Request\r\n\r\n";
    assert_eq!(
        status(&mut c, 6, "{\"seq\":1,\"last_by_subj\":\"a.1\"}").0,
        bad
    );
    assert_eq!(
        status(&mut c, 7, "{\"last_by_subj\":\"a.1\",\"batch\":2}").0,
        bad
    );
    let not_found = "NATS/1.0 404 Message Not Found\r\n\r\n";
    assert_eq!(status(&mut c, 8, "{\"seq\":99}").0, not_found);
    assert_eq!(
        status(&mut c, 9, "{\"multi_last\":[\"x.*\"]}").0,
        "NATS/1.0 404 No Results\r\n\r\n"
    );

    // A message with a header of its own keeps it, the stream's follow.
    let f = &get(&mut c, 10, "$JS.API.DIRECT.GET.S", "{\"seq\":3}", false)[0];
    let h = f.headers.as_deref().unwrap();
    assert!(
        h.starts_with("NATS/1.0\r\nFoo: bar\r\nNats-Stream: S\r\nNats-Subject: a.1\r\nNats-Sequence: 3\r\nNats-Time-Stamp: ")
            && h.ends_with("Z\r\n\r\n"),
        "{h:?}"
    );
    assert_eq!(f.payload, "three");
    // Subject in the tokens: the last message on it; a body that selects is refused.
    let f = &get(&mut c, 11, "$JS.API.DIRECT.GET.S.a.2", "", false)[0];
    assert_eq!(
        (f.header("Nats-Sequence"), f.payload.as_str()),
        (Some("2"), "two")
    );
    let f = &get(&mut c, 12, "$JS.API.DIRECT.GET.S.a.2", "{\"seq\":1}", false)[0];
    assert_eq!(f.headers.as_deref(), Some(bad));
    // no_hdr: a plain MSG.
    let f = &get(
        &mut c,
        13,
        "$JS.API.DIRECT.GET.S",
        "{\"seq\":2,\"no_hdr\":true}",
        false,
    )[0];
    assert_eq!((f.headers.as_deref(), f.payload.as_str()), (None, "two"));
    // A newer API level than ours is refused.
    let hdr = "NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n";
    c.send(
        format!(
            "HPUB $JS.API.DIRECT.GET.S r.14 {} {}\r\n{hdr}{{\"seq\":1}}\r\n",
            hdr.len(),
            hdr.len() + 9
        )
        .as_bytes(),
    );
    let f = read_frame(&mut c, 14);
    assert_eq!(
        f.headers.as_deref(),
        Some("NATS/1.0 412 Required Api Level\r\n\r\n")
    );
}

#[test]
fn jetstream_direct_get_batches_and_multi_last_raw() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut c = raw(&server);
    fill(&mut c, true);
    let frames = get(
        &mut c,
        1,
        "$JS.API.DIRECT.GET.S",
        "{\"seq\":1,\"batch\":2}",
        true,
    );
    let seen: Vec<_> = frames
        .iter()
        .map(|f| {
            (
                f.header("Nats-Sequence"),
                f.header("Nats-Num-Pending"),
                f.header("Nats-Last-Sequence"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (Some("1"), Some("3"), Some("0")),
            (Some("2"), Some("2"), Some("1")),
            (None, Some("2"), Some("2")),
        ]
    );
    assert_eq!(
        frames[2].headers.as_deref(),
        Some("NATS/1.0 204 EOB\r\nNats-Num-Pending: 2\r\nNats-Last-Sequence: 2\r\n\r\n")
    );
    // max_bytes stops after the message that reaches it.
    let frames = get(
        &mut c,
        2,
        "$JS.API.DIRECT.GET.S",
        "{\"seq\":1,\"batch\":9,\"max_bytes\":5}",
        true,
    );
    assert_eq!(frames.len(), 2);
    // next_by_subj with a wildcard.
    let frames = get(
        &mut c,
        3,
        "$JS.API.DIRECT.GET.S",
        "{\"next_by_subj\":\"a.*\",\"batch\":5}",
        true,
    );
    let seqs: Vec<_> = frames
        .iter()
        .filter_map(|f| f.header("Nats-Sequence"))
        .collect();
    assert_eq!(seqs, ["1", "2", "3"]);
    // multi_last: the last of each subject, in sequence order, then the EOB with the ceiling.
    let frames = get(
        &mut c,
        4,
        "$JS.API.DIRECT.GET.S",
        "{\"multi_last\":[\"a.*\",\"b\"]}",
        true,
    );
    let seqs: Vec<_> = frames
        .iter()
        .filter_map(|f| f.header("Nats-Sequence"))
        .collect();
    assert_eq!(seqs, ["2", "3", "4"]);
    assert_eq!(
        frames[3].headers.as_deref(),
        Some("NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 4\r\nNats-UpTo-Sequence: 4\r\n\r\n")
    );
    let frames = get(
        &mut c,
        5,
        "$JS.API.DIRECT.GET.S",
        "{\"multi_last\":[\"a.*\"],\"up_to_seq\":2}",
        true,
    );
    let seqs: Vec<_> = frames
        .iter()
        .filter_map(|f| f.header("Nats-Sequence"))
        .collect();
    assert_eq!(seqs, ["1", "2"]);
}

#[test]
fn jetstream_direct_get_follows_allow_direct() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut c = raw(&server);
    fill(&mut c, false);
    let no_responders = |c: &mut RawClient, n, subject: &str| {
        let f = get(c, n, subject, "{\"seq\":1}", false);
        assert_eq!(
            f[0].headers.as_deref(),
            Some(format!("NATS/1.0 503\r\nNats-Subject: {subject}\r\n\r\n").as_str())
        );
    };
    no_responders(&mut c, 1, "$JS.API.DIRECT.GET.S");
    no_responders(&mut c, 2, "$JS.API.DIRECT.GET.S.a.1");
    let update = "{\"name\":\"S\",\"subjects\":[\"a.>\",\"b\"],\"storage\":\"memory\",\"allow_direct\":true}";
    let updated = get(&mut c, 3, "$JS.API.STREAM.UPDATE.S", update, false);
    assert!(
        updated[0].payload.contains("\"allow_direct\":true"),
        "{updated:?}"
    );
    let f = &get(&mut c, 4, "$JS.API.DIRECT.GET.S", "{\"seq\":1}", false)[0];
    assert_eq!(f.payload, "one");
    let deleted = get(&mut c, 5, "$JS.API.STREAM.DELETE.S", "", false);
    assert!(
        deleted[0].payload.contains("\"success\":true"),
        "{deleted:?}"
    );
    no_responders(&mut c, 6, "$JS.API.DIRECT.GET.S");
}

#[tokio::test]
async fn jetstream_direct_get_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let stream = js
        .create_stream(stream::Config {
            name: "KV".into(),
            subjects: vec!["kv.>".into()],
            allow_direct: true,
            ..Default::default()
        })
        .await
        .unwrap();
    for (subject, value) in [("kv.a", "1"), ("kv.b", "2"), ("kv.a", "3"), ("kv.c", "4")] {
        js.publish(subject, value.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let msg = tokio::time::timeout(WAIT, stream.direct_get(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (msg.subject.as_str(), &msg.payload[..]),
        ("kv.b", &b"2"[..])
    );
    let last = tokio::time::timeout(WAIT, stream.direct_get_last_for_subject("kv.a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((last.sequence, &last.payload[..]), (3, &b"3"[..]));
    let next = tokio::time::timeout(WAIT, stream.direct_get_next_for_subject("kv.a", Some(2)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&next.payload[..], b"3");
    assert!(tokio::time::timeout(WAIT, stream.direct_get(99))
        .await
        .unwrap()
        .is_err());
    let raw = stream
        .get_last_raw_message_by_subject("kv.c")
        .await
        .unwrap();
    assert_eq!(raw.sequence, 4);

    let subjects: HashMap<String, usize> = stream
        .info_with_subjects("kv.*")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        subjects,
        HashMap::from([("kv.a".into(), 2), ("kv.b".into(), 1), ("kv.c".into(), 1)])
    );
}

/// The requests compared with Go: every form and most errors of DIRECT.GET and MSG.GET, and
/// STREAM.INFO's options (after a delete so `deleted` has something).
const DIFFERENTIAL: &[(&str, &str, bool)] = &[
    ("$JS.API.DIRECT.GET.S", "{\"seq\":1}", false),
    ("$JS.API.DIRECT.GET.S", "{\"last_by_subj\":\"a.*\"}", false),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"next_by_subj\":\"a.2\",\"seq\":1}",
        false,
    ),
    ("$JS.API.DIRECT.GET.S", "{\"seq\":1,\"up_to_seq\":3}", false),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"start_time\":\"2000-01-01T00:00:00Z\"}",
        false,
    ),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"start_time\":\"2100-01-01T00:00:00Z\"}",
        false,
    ),
    ("$JS.API.DIRECT.GET.S", "{\"seq\":2,\"batch\":3}", true),
    ("$JS.API.DIRECT.GET.S", "{\"seq\":1,\"batch\":-1}", true),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"next_by_subj\":\"a.*\",\"batch\":2,\"no_hdr\":true}",
        true,
    ),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"multi_last\":[\"a.*\",\"b\"],\"batch\":1}",
        true,
    ),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"multi_last\":[\"a.*\"],\"seq\":3}",
        true,
    ),
    (
        "$JS.API.DIRECT.GET.S",
        "{\"multi_last\":[\"b\"],\"up_to_time\":\"2000-01-01T00:00:00Z\"}",
        true,
    ),
    ("$JS.API.DIRECT.GET.S", "{\"seq\":1}{\"seq\":2}", false),
    ("$JS.API.DIRECT.GET.S.a.1", "{\"batch\":1}", false),
    ("$JS.API.STREAM.MSG.GET.S", "", false),
    ("$JS.API.STREAM.MSG.GET.S", "{\"seq\":2}", false),
    (
        "$JS.API.STREAM.MSG.GET.S",
        "{\"seq\":3,\"no_hdr\":true}",
        false,
    ),
    (
        "$JS.API.STREAM.MSG.GET.S",
        "{\"next_by_subj\":\"a.1\",\"seq\":2}",
        false,
    ),
    ("$JS.API.STREAM.MSG.GET.S", "{\"seq\":1,\"batch\":2}", false),
    ("$JS.API.STREAM.MSG.GET.S", "{\"seq\":1,\"extra\":1}", false),
    ("$JS.API.STREAM.MSG.GET.S", "{\"seq\":\"x\"}", false),
    ("$JS.API.STREAM.MSG.GET.NOPE", "{\"seq\":1}", false),
    ("$JS.API.STREAM.MSG.DELETE.S", "{\"seq\":2}", false),
    ("$JS.API.STREAM.MSG.GET.S", "{\"seq\":2}", false),
    (
        "$JS.API.STREAM.INFO.S",
        "{\"deleted_details\":true,\"subjects_filter\":\">\"}",
        false,
    ),
    (
        "$JS.API.STREAM.INFO.S",
        "{\"subjects_filter\":\"a.*\",\"offset\":1}",
        false,
    ),
    ("$JS.API.STREAM.INFO.S", "{\"offset\":\"x\"}", false),
    ("$JS.API.STREAM.INFO.S", "{\"bogus\":1}", false),
];

/// `text` with every RFC 3339 time (`2006-01-02T…Z`) replaced by `T`.
fn without_times(text: &str) -> String {
    let b = text.as_bytes();
    let is_time_at = |i: usize| {
        b.get(i..i + 11).is_some_and(|w| {
            w.iter().enumerate().all(|(k, c)| match k {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                _ => c.is_ascii_digit(),
            })
        })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if is_time_at(i) {
            let end = text[i..].find('Z').map_or(b.len(), |z| i + z + 1);
            out.push('T');
            i = end;
        } else {
            let next = text[i..].chars().next().unwrap();
            out.push(next);
            i += next.len_utf8();
        }
    }
    out
}

/// Frames with the times and the server's identity taken out.
fn normalized(frames: &[Frame]) -> String {
    let mut out = String::new();
    for f in frames {
        let mut kept = without_times(&format!("{:?}|{}", f.headers, f.payload));
        if let Some(at) = kept.find("\"leader\":\"") {
            let end = kept[at + 10..]
                .find('"')
                .map_or(kept.len(), |i| at + 10 + i);
            kept.replace_range(at + 10..end, "L");
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

#[test]
fn jetstream_direct_get_matches_go() {
    let dir = tempfile::tempdir().unwrap();
    let sd = dir.path().join("go").display().to_string();
    let Some(go) = ServerProcess::start_go(&["-js", "-sd", &sd]) else {
        return;
    };
    let ours = start(&dir.path().join("ours"));
    let answers: Vec<String> = [&ours, &go]
        .iter()
        .map(|server| {
            let mut c = raw(server);
            fill(&mut c, true);
            let mut all = String::new();
            for (n, (subject, body, batch)) in DIFFERENTIAL.iter().enumerate() {
                let frames = get(&mut c, n as u32 + 1, subject, body, *batch);
                let _ = write!(all, ">> {subject} {body}\n{}", normalized(&frames));
            }
            all
        })
        .collect();
    for (ours, go) in answers[0].lines().zip(answers[1].lines()) {
        assert_eq!(ours, go);
    }
    assert_eq!(answers[0].lines().count(), answers[1].lines().count());
}

//! Message schedules (ADR-51) by raw publishes: every refusal the schedule headers can
//! provoke, the stored schedule messages, the messages schedules produce (`@at`, `@every`,
//! with a source, a TTL and a rollup), all compared byte for byte with Go's where installed
//! (times normalised); and a kill -9 in the middle of firing, after which nothing fires
//! twice.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

#[path = "support/hpub.rs"]
mod hpub;
#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, three_accounts, JsServer};

/// How long a fire may take to show.
const FIRE_WAIT: Duration = Duration::from_secs(10);

async fn create(client: &async_nats::Client, body: &Value) {
    let subject = format!("$JS.API.STREAM.CREATE.{}", body["name"].as_str().unwrap());
    let created = request(client, &subject, body.to_string()).await;
    assert!(created.get("error").is_none(), "{created}");
}

/// The stored message at `seq` (or the last on a subject): subject, headers, payload.
async fn stored(client: &async_nats::Client, stream: &str, query: Value) -> Value {
    let subject = format!("$JS.API.STREAM.MSG.GET.{stream}");
    let answer = request(client, &subject, query.to_string()).await;
    let text = |field: &str| {
        let b64 = answer["message"][field].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        normalise_next(&String::from_utf8(bytes).expect("utf-8"))
    };
    json!({
        "subject": answer["message"]["subject"],
        "hdrs": text("hdrs"),
        "data": text("data"),
        "error": answer["error"],
    })
}

/// `Nats-Schedule-Next` differs between runs: its digits become `D`, so its shape
/// (fraction, `Z` or the zone's offset) is still compared; `purge` stays.
fn normalise_next(block: &str) -> String {
    block
        .split("\r\n")
        .map(|line| match line.strip_prefix("Nats-Schedule-Next: ") {
            Some(v) if v != "purge" => {
                let shape: String = v
                    .chars()
                    .map(|c| if c.is_ascii_digit() { 'D' } else { c })
                    .collect();
                format!("Nats-Schedule-Next: {shape}")
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\r\n")
}

type Case = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    &'static str,
);

const AT_FUTURE: &str = "@at 2099-01-01T00:00:00Z";

fn schedule(pattern: &'static str, target: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![("Nats-Schedule", pattern), ("Nats-Schedule-Target", target)]
}

fn with(
    mut base: Vec<(&'static str, &'static str)>,
    more: &[(&'static str, &'static str)],
) -> Vec<(&'static str, &'static str)> {
    base.extend_from_slice(more);
    base
}

/// The publishes of the refusal test: schedules, then the scheduler headers.
fn check_cases() -> Vec<Case> {
    let mut cases = schedule_cases();
    cases.extend(scheduler_cases());
    cases
}

fn schedule_cases() -> Vec<Case> {
    let tz = "Nats-Schedule-Time-Zone";
    vec![
        ("s.a", schedule(AT_FUTURE, "t.a"), "at"),
        (
            "s.b",
            with(
                schedule("@every 1h", "t.b"),
                &[
                    ("Nats-Schedule-TTL", "5m"),
                    ("Nats-Schedule-Source", "t.src"),
                    ("Nats-Schedule-Rollup", "sub"),
                    ("Keep", "me"),
                ],
            ),
            "every",
        ),
        (
            "s.c",
            with(
                schedule("0 0 9 * * MON-FRI", "t.c"),
                &[(tz, "Europe/Berlin")],
            ),
            "cron",
        ),
        (
            "s.d",
            with(
                schedule("@hourly", "t.d"),
                &[("Nats-Rollup", "sub"), ("Nats-Msg-Id", "x1")],
            ),
            "hourly",
        ),
        ("s.a", schedule("@daily", "t.a2"), "replaced"),
        ("s.e", schedule("@every 500ms", "t.e"), ""),
        ("s.e", schedule("bogus", "t.e"), ""),
        ("s.e", schedule("0 0 9 * *", "t.e"), ""),
        ("s.e", schedule("@HOURLY", "t.e"), ""),
        ("s.e", schedule("@at 2099-01-01T00:00:00", "t.e"), ""),
        (
            "s.e",
            with(schedule("0 0 9 * * *", "t.e"), &[(tz, "Mars/Olympus")]),
            "",
        ),
        ("s.e", with(schedule("0 0 9 * * *", "t.e"), &[(tz, "")]), ""),
        ("s.e", with(schedule(AT_FUTURE, "t.e"), &[(tz, "UTC")]), ""),
        ("s.e", vec![(tz, "Mars/Olympus")], ""),
        (
            "s.e",
            with(schedule(AT_FUTURE, "t.e"), &[("Nats-Schedule-TTL", "1ms")]),
            "",
        ),
        (
            "s.e",
            with(
                schedule(AT_FUTURE, "t.e"),
                &[("Nats-Schedule-Rollup", "all")],
            ),
            "",
        ),
        ("s.e", vec![("Nats-Schedule", AT_FUTURE)], ""),
        ("s.e", schedule(AT_FUTURE, "s.e"), ""),
        ("s.e", schedule(AT_FUTURE, "x.y"), ""),
        ("s.e", schedule(AT_FUTURE, "t.*"), ""),
        (
            "s.e",
            with(
                schedule(AT_FUTURE, "t.e"),
                &[("Nats-Schedule-Source", "t.e")],
            ),
            "",
        ),
        (
            "s.e",
            with(
                schedule(AT_FUTURE, "t.e"),
                &[("Nats-Schedule-Source", "s.e")],
            ),
            "",
        ),
        (
            "s.e",
            with(
                schedule(AT_FUTURE, "t.e"),
                &[("Nats-Schedule-Source", "x.y")],
            ),
            "",
        ),
        (
            "s.e",
            with(schedule(AT_FUTURE, "t.e"), &[("Nats-Rollup", "all")]),
            "",
        ),
        ("n.e", schedule(AT_FUTURE, "n.t"), ""),
        ("n.e", schedule("bogus", "n.t"), ""),
        (
            "m.e",
            with(schedule(AT_FUTURE, "m.t"), &[("Nats-Schedule-TTL", "5m")]),
            "",
        ),
    ]
}

/// The scheduler headers: clients may only purge a schedule with them.
fn scheduler_cases() -> Vec<Case> {
    vec![
        ("t.x", vec![("Nats-Scheduler", "s.d")], ""),
        (
            "t.x",
            vec![("Nats-Scheduler", "s.d"), ("Nats-Schedule-Next", "soon")],
            "",
        ),
        ("t.x", vec![("Nats-Schedule-Next", "purge")], ""),
        (
            "t.x",
            vec![("Nats-Scheduler", "t.x"), ("Nats-Schedule-Next", "purge")],
            "",
        ),
        ("t.plain", vec![], "plain"),
        (
            "t.x",
            vec![
                ("Nats-Scheduler", "t.plain"),
                ("Nats-Schedule-Next", "purge"),
            ],
            "",
        ),
        (
            "n.x",
            vec![("Nats-Scheduler", "n.e"), ("Nats-Schedule-Next", "purge")],
            "",
        ),
        (
            "t.x",
            vec![("Nats-Scheduler", "s.d"), ("Nats-Schedule-Next", "purge")],
            "cancel",
        ),
    ]
}

async fn check_exchange(client: &async_nats::Client, raw: &mut hpub::Publisher) -> Vec<String> {
    create(client, &json!({"name": "S", "subjects": ["s.>", "t.>"], "allow_msg_schedules": true, "allow_msg_ttl": true})).await;
    create(client, &json!({"name": "N", "subjects": ["n.>"]})).await;
    create(
        client,
        &json!({"name": "M", "subjects": ["m.>"], "allow_msg_schedules": true}),
    )
    .await;
    let mut transcript = Vec::new();
    for (subject, headers, payload) in &check_cases() {
        let ack = raw.publish(subject, headers, payload);
        transcript.push(format!("{subject} {headers:?} {payload:?} -> {ack}"));
    }
    for seq in 1..=8 {
        transcript.push(stored(client, "S", json!({ "seq": seq })).await.to_string());
    }
    transcript
}

#[tokio::test]
async fn jetstream_schedules_refusals_and_stored_schedules_match_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        transcripts.push((js.name, check_exchange(&client, &mut raw).await));
    }
    let (_, ours) = transcripts.first().expect("ours ran");
    let codes = [
        (5, 10189),
        (6, 10189),
        (7, 10189),
        (8, 10189),
        (9, 10189),
        (10, 10223),
        (11, 10223),
        (12, 10189),
        (13, 10223),
        (14, 10191),
        (15, 10192),
        (16, 10190),
        (17, 10190),
        (18, 10190),
        (19, 10190),
        (20, 10203),
        (21, 10203),
        (22, 10203),
        (23, 10192),
        (24, 10188),
        (25, 10188),
        (26, 10166),
        (27, 10212),
        (28, 10212),
        (29, 10212),
        (30, 10212),
        (32, 10212),
        (33, 10188),
    ];
    for (i, code) in codes {
        assert!(
            ours[i].contains(&format!("\"err_code\":{code}")),
            "{}",
            ours[i]
        );
    }
    let stored = ours
        .iter()
        .skip(check_cases().len())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        stored.contains(r"Nats-Schedule-Target: t.a2\r\nNats-Rollup: sub\r\n\r\n"),
        "{stored}"
    );
    if let Some((_, go)) = transcripts.get(1) {
        for (o, g) in ours.iter().zip(go) {
            assert_eq!(o, g, "ours vs Go");
        }
        assert_eq!(ours.len(), go.len());
    }
}

/// The messages stored on `subject`, from the first: subject, headers (normalised, one per
/// line in stored order) and payload.
async fn on_subject(client: &async_nats::Client, stream: &str, subject: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut seq = 1;
    loop {
        let query = json!({"seq": seq, "next_by_subj": subject});
        let api = format!("$JS.API.STREAM.MSG.GET.{stream}");
        let answer = request(client, &api, query.to_string()).await;
        if answer.get("error").is_some() {
            return out;
        }
        seq = answer["message"]["seq"].as_u64().unwrap() + 1;
        out.push(stored(client, stream, json!({ "seq": seq - 1 })).await);
    }
}

/// Polls until `n` messages are stored on `subject` (a fire is an event of the stream, not
/// of core subscribers), within [`FIRE_WAIT`].
async fn wait_stored(
    client: &async_nats::Client,
    stream: &str,
    subject: &str,
    n: usize,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + FIRE_WAIT;
    loop {
        let msgs = on_subject(client, stream, subject).await;
        if msgs.len() >= n {
            return msgs;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} fires on {subject}: {msgs:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn fire_exchange(client: &async_nats::Client, raw: &mut hpub::Publisher) -> Vec<String> {
    create(client, &json!({"name": "F", "subjects": ["f.>"], "allow_msg_schedules": true, "allow_msg_ttl": true})).await;
    let mut transcript = Vec::new();
    let src = raw.publish(
        "f.src",
        &[("Src", "yes"), ("Nats-Msg-Id", "s1")],
        "from source",
    );
    transcript.push(src);
    let at = [
        ("Nats-Schedule", "@at 2000-01-01T00:00:00Z"),
        ("Nats-Schedule-Target", "f.out.at"),
        ("Nats-Schedule-TTL", "1h"),
        ("Mine", "kept"),
    ];
    transcript.push(raw.publish("f.sched.at", &at, "once"));
    let every = [
        ("Nats-Schedule", "@every 1s"),
        ("Nats-Schedule-Target", "f.out.every"),
        ("Nats-Schedule-Source", "f.src"),
        ("Nats-Schedule-Rollup", "sub"),
    ];
    transcript.push(raw.publish("f.sched.every", &every, "repeat"));
    let cron = [
        ("Nats-Schedule", "* * * * * *"),
        ("Nats-Schedule-Time-Zone", "Asia/Kolkata"),
        ("Nats-Schedule-Target", "f.out.cron"),
    ];
    transcript.push(raw.publish("f.sched.cron", &cron, "tick"));
    // A memory stream (stored inline by the publisher's connection) wakes its timer too.
    let memory = json!({"name": "FM", "subjects": ["fm.>"], "storage": "memory", "allow_msg_schedules": true});
    create(client, &memory).await;
    let at_memory = [
        ("Nats-Schedule", "@at 2000-01-01T00:00:00Z"),
        ("Nats-Schedule-Target", "fm.out"),
    ];
    transcript.push(raw.publish("fm.sched", &at_memory, "mem"));
    let at = wait_stored(client, "F", "f.out.at", 1).await;
    // Its rollup keeps only the last fire on the target.
    let every = wait_stored(client, "F", "f.out.every", 1).await;
    let cron = wait_stored(client, "F", "f.out.cron", 1).await;
    let memory = wait_stored(client, "FM", "fm.out", 1).await;
    for msg in at
        .iter()
        .chain(&every[..1])
        .chain(&cron[..1])
        .chain(&memory)
    {
        transcript.push(msg.to_string());
    }
    // The `@at` schedule was purged after its fire; the repeating one stays.
    transcript.push(
        stored(client, "F", json!({"last_by_subj": "f.sched.at"}))
            .await
            .to_string(),
    );
    transcript.push(
        stored(client, "F", json!({"last_by_subj": "f.sched.every"})).await["subject"].to_string(),
    );
    transcript.push(
        stored(client, "F", json!({"last_by_subj": "f.out.at"}))
            .await
            .to_string(),
    );
    transcript
}

#[tokio::test]
async fn jetstream_schedules_fire_with_gos_headers() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        transcripts.push((js.name, fire_exchange(&client, &mut raw).await));
    }
    let (_, ours) = transcripts.first().expect("ours ran");
    let all = ours.join("\n");
    let at = r#"{"data":"once","error":null,"hdrs":"NATS/1.0\r\nMine: kept\r\nNats-Scheduler: f.sched.at\r\nNats-Schedule-Next: purge\r\nNats-TTL: 1h\r\n\r\n","subject":"f.out.at"}"#;
    assert!(ours.iter().any(|l| l == at), "{all}");
    let every = r#"{"data":"from source","error":null,"hdrs":"NATS/1.0\r\nSrc: yes\r\nNats-Scheduler: f.sched.every\r\nNats-Schedule-Next: DDDD-DD-DDTDD:DD:DDZ\r\nNats-Rollup: sub\r\n\r\n","subject":"f.out.every"}"#;
    assert!(ours.iter().any(|l| l == every), "{all}");
    // A cron's next fire is written in its zone.
    assert!(
        all.contains("Nats-Schedule-Next: DDDD-DD-DDTDD:DD:DD+DD:DD"),
        "{all}"
    );
    assert!(all.contains("10037"), "the @at schedule is gone: {all}");
    if let Some((_, go)) = transcripts.get(1) {
        assert_eq!(ours, go, "ours vs Go");
    }
}

/// The `Nats-Schedule-Next` values of every message stored on `subject`.
async fn produced_nexts(client: &async_nats::Client, stream: &str, subject: &str) -> Vec<String> {
    let mut nexts = Vec::new();
    let mut seq = 1;
    loop {
        let answer = request(
            client,
            &format!("$JS.API.STREAM.MSG.GET.{stream}"),
            json!({"seq": seq, "next_by_subj": subject}).to_string(),
        )
        .await;
        if answer.get("error").is_some() {
            return nexts;
        }
        let hdrs = answer["message"]["hdrs"].as_str().unwrap_or_default();
        let hdrs = base64::engine::general_purpose::STANDARD
            .decode(hdrs)
            .unwrap();
        let hdrs = String::from_utf8(hdrs).unwrap();
        let next = hdrs
            .split("\r\n")
            .find_map(|l| l.strip_prefix("Nats-Schedule-Next: "))
            .unwrap_or("")
            .to_owned();
        nexts.push(next);
        seq = answer["message"]["seq"].as_u64().unwrap() + 1;
    }
}

#[tokio::test]
async fn jetstream_schedules_fire_once_across_kill_9() {
    let mut js = JsServer::start("ours", false, three_accounts).expect("ours starts");
    let client = login(&js.server, "a").await;
    let mut raw = hpub::Publisher::connect(&js.server, "a");
    create(
        &client,
        &json!({"name": "K", "subjects": ["k.>"], "allow_msg_schedules": true}),
    )
    .await;
    raw.publish(
        "k.sched.every",
        &[
            ("Nats-Schedule", "@every 1s"),
            ("Nats-Schedule-Target", "k.out.every"),
        ],
        "e",
    );
    raw.publish(
        "k.sched.at",
        &[
            ("Nats-Schedule", "@at 2000-01-01T00:00:00Z"),
            ("Nats-Schedule-Target", "k.out.at"),
        ],
        "a",
    );
    wait_stored(&client, "K", "k.out.at", 1).await;
    let before = wait_stored(&client, "K", "k.out.every", 2).await.len();
    drop((raw, client));
    js.server.kill();
    js.server = support::launch(js.dir.path(), false).expect("restarts");
    let client = login(&js.server, "a").await;
    // A fire after the restart: the scheduler has run its first round (an `@at` fired
    // again would have come first, being due at once).
    wait_stored(&client, "K", "k.out.every", before + 1).await;
    let at = produced_nexts(&client, "K", "k.out.at").await;
    assert_eq!(at, vec!["purge".to_owned()], "the @at fired once");
    let every = produced_nexts(&client, "K", "k.out.every").await;
    let mut distinct = every.clone();
    distinct.dedup();
    assert_eq!(every, distinct, "no fire time twice: {every:?}");
    let gone = stored(&client, "K", json!({"last_by_subj": "k.sched.at"})).await;
    assert_eq!(gone["error"]["err_code"], 10037, "{gone}");
}

/// A graceful stop, then a start: the schedules come back from the schedule index (no scan
/// warning) and keep firing; with the index damaged, both servers warn and scan. Go's file is
/// `msgs/sched.db`, ours `msgs/sched.dat`.
#[tokio::test]
async fn jetstream_schedules_restart_from_the_schedule_index_as_go() {
    for mut js in support::ours_then_go(three_accounts) {
        let go = js.name == "go";
        let mut client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        create(
            &client,
            &json!({"name": "R", "subjects": ["r.>"], "allow_msg_schedules": true}),
        )
        .await;
        for i in 0..100 {
            raw.publish(&format!("r.plain.{i}"), &[], "p");
        }
        let schedule = [
            ("Nats-Schedule", "@every 1s"),
            ("Nats-Schedule-Target", "r.out"),
        ];
        raw.publish("r.sched", &schedule, "e");
        let mut fires = wait_stored(&client, "R", "r.out", 1).await.len();
        let index =
            js.store()
                .join("A/streams/R/msgs")
                .join(if go { "sched.db" } else { "sched.dat" });
        for damaged in [false, true] {
            drop((raw, client));
            js.server.signal("TERM");
            assert!(
                js.server.wait_exit(FIRE_WAIT).is_some(),
                "{}: stops",
                js.name
            );
            assert!(index.exists(), "{}: {index:?} written at stop", js.name);
            if damaged {
                std::fs::write(&index, b"damaged").unwrap();
            }
            js.server = support::launch(js.dir.path(), go).expect("restarts");
            client = login(&js.server, "a").await;
            raw = hpub::Publisher::connect(&js.server, "a");
            fires = wait_stored(&client, "R", "r.out", fires + 1).await.len();
            let log = js.server.log_text();
            let decoding = log.contains("Filestore [R] Error decoding message scheduling state");
            let outdated = log.contains("Filestore [R] Message scheduling state is outdated");
            assert_eq!(decoding, damaged, "{} damaged {damaged}:\n{log}", js.name);
            assert_eq!(outdated, damaged, "{} damaged {damaged}:\n{log}", js.name);
        }
    }
}

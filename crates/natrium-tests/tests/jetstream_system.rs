//! JetStream requests of the system account and the listing verbs, run against ours and (when
//! installed) Go's server with the same exchange: `ACCOUNT.PURGE` from the system account,
//! the cluster-only verbs a single server leaves unanswered, and `STREAM.NAMES`/`STREAM.LIST`
//! JSON compared field by field.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{answered, login, normalise_times, ours_then_go, request, WAIT};

fn config(store: &Path) -> String {
    support::three_accounts(store)
}

fn servers() -> Vec<support::JsServer> {
    ours_then_go(config)
}

fn normalise(value: &mut Value) {
    normalise_times(value, &[]);
}

#[tokio::test]
async fn jetstream_system_account_purges_an_account_and_leaves_cluster_verbs_unanswered() {
    let mut seen = Vec::new();
    for js in servers() {
        let a = login(&js.server, "a").await;
        let sys = login(&js.server, "sys").await;
        let created = request(
            &a,
            "$JS.API.STREAM.CREATE.S",
            r#"{"name":"S","subjects":["s.>"]}"#,
        )
        .await;
        assert!(created.get("error").is_none(), "{}: {created}", js.name);
        assert!(js.store().join("A").exists(), "{}", js.name);

        // The system account has no JetStream of its own.
        let info = request(&sys, "$JS.API.INFO", "").await;
        assert_eq!(info["error"]["err_code"], 10039, "{}: {info}", js.name);
        for silent in [
            "$JS.API.META.LEADER.STEPDOWN",
            "$JS.API.SERVER.REMOVE",
            "$JS.API.ACCOUNT.STREAM.MOVE.A.S",
        ] {
            assert!(!answered(&sys, silent).await, "{}: {silent}", js.name);
        }
        // Another account may not purge.
        assert!(
            !answered(&a, "$JS.API.ACCOUNT.PURGE.A").await,
            "{}",
            js.name
        );

        let purged = request(&sys, "$JS.API.ACCOUNT.PURGE.A", "").await;
        let names = request(&a, "$JS.API.STREAM.NAMES", "").await;
        assert_eq!(names["total"], 0, "{}: {names}", js.name);
        assert!(
            !js.store().join("A").exists(),
            "{}: directory left",
            js.name
        );
        assert!(
            js.server.wait_for_log(
                "Purge request for account A (streams: 1, hasAccount: true)",
                WAIT
            ),
            "{}",
            js.name
        );
        let unknown = request(&sys, "$JS.API.ACCOUNT.PURGE.NOPE", "").await;
        let bad = request(&sys, "$JS.API.ACCOUNT.PURGE.a\\b", "").await;
        // JetStream stays enabled for the purged account.
        let again = request(
            &a,
            "$JS.API.STREAM.CREATE.S",
            r#"{"name":"S","subjects":["s.>"]}"#,
        )
        .await;
        assert!(again.get("error").is_none(), "{}: {again}", js.name);
        seen.push((js.name, purged, unknown, bad));
    }
    let (_, purged, unknown, bad) = &seen[0];
    assert_eq!(
        purged,
        &serde_json::json!({"type":"io.nats.jetstream.api.v1.account_purge_response","initiated":true})
    );
    assert_eq!(purged, unknown);
    assert_eq!(bad["error"]["err_code"], 10051, "{bad}");
    for (name, g_purged, g_unknown, g_bad) in &seen[1..] {
        assert_eq!(
            (purged, unknown, bad),
            (g_purged, g_unknown, g_bad),
            "{name}"
        );
    }
}

#[tokio::test]
async fn jetstream_stream_names_and_list_match_go() {
    let mut seen: Vec<(&str, Vec<Value>)> = Vec::new();
    for js in servers() {
        let a = login(&js.server, "a").await;
        for body in [
            r#"{"name":"S","subjects":["s"]}"#,
            r#"{"name":"T","subjects":["t.>"],"storage":"memory","max_msgs":5}"#,
            r#"{"name":"U","subjects":["u.*"],"description":"third","metadata":{"k":"v"}}"#,
        ] {
            let name = serde_json::from_str::<Value>(body).expect("json")["name"]
                .as_str()
                .expect("name")
                .to_owned();
            let created = request(&a, &format!("$JS.API.STREAM.CREATE.{name}"), body).await;
            assert!(created.get("error").is_none(), "{}: {created}", js.name);
        }
        for i in 0..3 {
            let ack = request(&a, &format!("t.{i}"), "x").await;
            assert_eq!(ack["seq"], i + 1, "{}: {ack}", js.name);
        }
        let mut answers = Vec::new();
        for (subject, body) in [
            ("$JS.API.STREAM.NAMES", ""),
            ("$JS.API.STREAM.NAMES", r#"{"subject":"t.x"}"#),
            ("$JS.API.STREAM.NAMES", r#"{"offset":2}"#),
            ("$JS.API.STREAM.NAMES", r#"{"subject":"nomatch"}"#),
            ("$JS.API.STREAM.NAMES", r#"{"offset":9}"#),
            ("$JS.API.STREAM.NAMES", r#"{"offset":-5}"#),
            ("$JS.API.STREAM.LIST", ""),
            ("$JS.API.STREAM.LIST", r#"{"offset":1,"subject":"u.1"}"#),
            ("$JS.API.STREAM.LIST", r#"{"offset":9}"#),
            ("$JS.API.STREAM.LIST", r#"{"offset":-1,"subject":"t.>"}"#),
            ("$JS.API.STREAM.NAMES", "{bad"),
        ] {
            let mut answer = request(&a, subject, body).await;
            normalise(&mut answer);
            answers.push(answer);
        }
        seen.push((js.name, answers));
    }
    let (_, ours) = &seen[0];
    for (name, theirs) in &seen[1..] {
        for (want, got) in theirs.iter().zip(ours) {
            assert_eq!(got, want, "ours against {name}");
        }
    }
}

#[tokio::test]
async fn jetstream_refusals_carry_the_fields_go_sends() {
    let mut seen: Vec<(&str, Vec<Value>)> = Vec::new();
    for js in servers() {
        let mut answers = Vec::new();
        for user in ["a", "b", "sys"] {
            let client = login(&js.server, user).await;
            for (subject, body) in [
                ("$JS.API.INFO", ""),
                ("$JS.API.STREAM.NAMES", "{bad"),
                ("$JS.API.STREAM.LIST", "{bad"),
                ("$JS.API.STREAM.INFO.NOPE", ""),
                ("$JS.API.STREAM.PURGE.NOPE", ""),
                ("$JS.API.STREAM.DELETE.NOPE", ""),
                ("$JS.API.STREAM.MSG.GET.NOPE", r#"{"seq":1}"#),
                ("$JS.API.STREAM.CREATE.X", "{bad"),
                ("$JS.API.STREAM.LEADER.STEPDOWN.NOPE", ""),
                ("$JS.API.STREAM.PEER.REMOVE.NOPE", r#"{"peer":"x"}"#),
            ] {
                let mut answer = request(&client, subject, body).await;
                normalise(&mut answer);
                if user == "a" && subject == "$JS.API.INFO" {
                    continue;
                }
                answers
                    .push(serde_json::json!({"user": user, "subject": subject, "answer": answer}));
            }
        }
        seen.push((js.name, answers));
    }
    let (_, ours) = &seen[0];
    for (name, theirs) in &seen[1..] {
        for (want, got) in theirs.iter().zip(ours) {
            assert_eq!(got, want, "ours against {name}");
        }
    }
}

/// An account's `$JS.API.INFO` answer, asked again while nothing answers yet (a reload's
/// accounts are adopted just after the reload is logged).
async fn info_when_answered(client: &async_nats::Client) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let asked = client.request("$JS.API.INFO", "".into());
        match tokio::time::timeout(Duration::from_secs(1), asked).await {
            Ok(Ok(msg)) => return serde_json::from_slice(&msg.payload).expect("json"),
            _ if tokio::time::Instant::now() < deadline => {}
            _ => panic!("no answer to $JS.API.INFO"),
        }
    }
}

#[tokio::test]
async fn jetstream_reload_adds_accounts_with_and_without_jetstream() {
    let accounts = |extra: &str| {
        format!(
            "accounts {{\n\
               SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
               A {{ jetstream: enabled, users [ {{user: a, password: a}} ] }}\n\
               {extra}\n\
             }}\n\
             system_account: SYS\n"
        )
    };
    let before = accounts("");
    let after = accounts(
        "C { jetstream: enabled, users [ {user: c, password: c} ] }\n\
         D { users [ {user: d, password: d} ] }",
    );
    let mut seen = Vec::new();
    for go in [false, true] {
        let store = tempfile::tempdir().expect("tempdir");
        let js = format!(
            "jetstream {{ store_dir: \"{}\" }}\n",
            store.path().display()
        );
        let conf = natrium_tests::reload::Conf::new(&format!("{before}{js}"));
        let args = ["-c", conf.arg(), "-a", "127.0.0.1", "-p", "-1"];
        let Some(server) = ServerProcess::start_ours_or_go(go, &args) else {
            break;
        };
        conf.write(&format!("{after}{js}"));
        natrium_tests::reload::sighup(&server, 1);
        let c = login(&server, "c").await;
        let d = login(&server, "d").await;
        let info = info_when_answered(&c).await;
        assert!(info.get("error").is_none(), "go={go}: {info}");
        let created = request(
            &c,
            "$JS.API.STREAM.CREATE.S",
            r#"{"name":"S","subjects":["s"]}"#,
        )
        .await;
        assert!(created.get("error").is_none(), "go={go}: {created}");
        let refused = info_when_answered(&d).await;
        assert_eq!(refused["error"]["err_code"], 10039, "go={go}: {refused}");
        seen.push(refused);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[tokio::test]
async fn jetstream_no_ack_stream_stores_without_answering() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        let body = r#"{"name":"Q","subjects":["q.>"],"no_ack":true}"#;
        let created = request(&a, "$JS.API.STREAM.CREATE.Q", body).await;
        assert!(created.get("error").is_none(), "{}: {created}", js.name);
        let inbox = a.new_inbox();
        let mut replies = a.subscribe(inbox.clone()).await.expect("subscribe");
        for subject in ["q.1", "q.2"] {
            a.publish_with_reply(subject, inbox.clone(), "x".into())
                .await
                .expect("publish");
        }
        // Stored in order before the stream answers an info request after them.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let info = request(&a, "$JS.API.STREAM.INFO.Q", "").await;
            if info["state"]["messages"] == 2 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}: {info}",
                js.name
            );
        }
        a.flush().await.expect("flush");
        let none = tokio::time::timeout(Duration::from_millis(50), replies.next()).await;
        assert!(none.is_err(), "{}: a no_ack stream answered", js.name);
    }
}

#[tokio::test]
async fn jetstream_next_for_a_missing_consumer_finds_no_responders() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        let body = r#"{"name":"N","subjects":["n.>"]}"#;
        let created = request(&a, "$JS.API.STREAM.CREATE.N", body).await;
        assert!(created.get("error").is_none(), "{}: {created}", js.name);
        let asked = a
            .request("$JS.API.CONSUMER.MSG.NEXT.N.NOPE", "1".into())
            .await
            .expect_err("no consumer answers");
        assert_eq!(
            asked.kind(),
            async_nats::RequestErrorKind::NoResponders,
            "{}",
            js.name
        );
    }
}

#[tokio::test]
async fn jetstream_waiting_pull_requests_hear_of_a_shutdown() {
    for js in servers() {
        let a = login(&js.server, "a").await;
        let body = r#"{"name":"W","subjects":["w.>"]}"#;
        assert!(request(&a, "$JS.API.STREAM.CREATE.W", body)
            .await
            .get("error")
            .is_none());
        let consumer =
            r#"{"stream_name":"W","config":{"durable_name":"C","ack_policy":"explicit"}}"#;
        let created = request(&a, "$JS.API.CONSUMER.CREATE.W.C", consumer).await;
        assert!(created.get("error").is_none(), "{}: {created}", js.name);
        let inbox = a.new_inbox();
        let mut replies = a.subscribe(inbox.clone()).await.expect("subscribe");
        let pull = r#"{"batch":3,"expires":30000000000}"#;
        a.publish_with_reply("$JS.API.CONSUMER.MSG.NEXT.W.C", inbox, pull.into())
            .await
            .expect("pull");
        // The request is taken by the consumer's engine, not the API: wait until it shows.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let info = request(&a, "$JS.API.CONSUMER.INFO.W.C", "").await;
            if info["num_waiting"] == 1 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}: {info}",
                js.name
            );
        }
        js.server.signal("TERM");
        let status = tokio::time::timeout(WAIT, replies.next())
            .await
            .expect("in time")
            .expect("a status");
        let headers = status.headers.expect("headers");
        assert_eq!(
            (status.status.map(u16::from), status.description.as_deref()),
            (Some(409), Some("Server Shutdown")),
            "{}",
            js.name
        );
        assert_eq!(
            headers
                .get("Nats-Pending-Messages")
                .map(async_nats::HeaderValue::as_str),
            Some("3")
        );
        assert_eq!(
            headers
                .get("Nats-Pending-Bytes")
                .map(async_nats::HeaderValue::as_str),
            Some("0")
        );
    }
}

/// Asks `$JS.API.INFO` until `done` accepts the answer (a reload's account changes are
/// applied just after the reload is logged).
async fn info_until(client: &async_nats::Client, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let info = info_when_answered(client).await;
        if done(&info) {
            return info;
        }
        assert!(tokio::time::Instant::now() < deadline, "{info}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn jetstream_reload_changes_account_limits_and_turns_jetstream_off() {
    let accounts = |a: &str, b: &str| {
        format!(
            "accounts {{\n\
               SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
               A {{ {a}\n users [ {{user: a, password: a}} ] }}\n\
               B {{ {b}\n users [ {{user: b, password: b}} ] }}\n\
             }}\n\
             system_account: SYS\n"
        )
    };
    let before = accounts(
        "jetstream { max_file: 2000, max_streams: 2 }",
        "jetstream: enabled",
    );
    let after = accounts("jetstream { max_file: 100000, max_streams: 1 }", "");
    let mut seen = Vec::new();
    for go in [false, true] {
        let store = tempfile::tempdir().expect("tempdir");
        let js = format!(
            "jetstream {{ store_dir: \"{}\" }}\n",
            store.path().display()
        );
        let conf = natrium_tests::reload::Conf::new(&format!("{before}{js}"));
        let args = ["-c", conf.arg(), "-a", "127.0.0.1", "-p", "-1"];
        let Some(server) = ServerProcess::start_ours_or_go(go, &args) else {
            break;
        };
        let a = login(&server, "a").await;
        let b = login(&server, "b").await;
        for (client, name) in [(&a, "S"), (&b, "T")] {
            let body = format!(r#"{{"name":"{name}","subjects":["{name}.>"]}}"#);
            let subject = format!("$JS.API.STREAM.CREATE.{name}");
            let created = request(client, &subject, &body).await;
            assert!(created.get("error").is_none(), "go={go}: {created}");
        }
        // Go checks nothing until the account has stored something.
        let first = a.request("S.0", "small".into()).await.expect("ack");
        assert!(!first.payload.is_empty());
        let big = vec![b'x'; 3000];
        let refused = a.request("S.1", big.clone().into()).await.expect("ack");
        let refused: Value = serde_json::from_slice(&refused.payload).expect("json");

        conf.write(&format!("{after}{js}"));
        natrium_tests::reload::sighup(&server, 1);
        let info = info_until(&a, |i| i["limits"]["max_storage"] == 100_000).await;
        assert_eq!(info["limits"]["max_streams"], 1, "go={go}: {info}");
        let off = info_until(&b, |i| i.get("error").is_some()).await;
        let stored = a.request("S.1", big.into()).await.expect("ack");
        let stored: Value = serde_json::from_slice(&stored.payload).expect("json");
        assert_eq!(stored["seq"], 2, "go={go}: {stored}");
        let second = request(&a, "$JS.API.STREAM.CREATE.U", r#"{"subjects":["u"]}"#).await;
        assert_eq!(second["error"]["err_code"], 10056, "go={go}: {second}");
        let second = request(
            &a,
            "$JS.API.STREAM.CREATE.U",
            r#"{"name":"U","subjects":["u"]}"#,
        )
        .await;
        let update = request(&a, "$JS.API.STREAM.UPDATE.S", r#"{"subjects":["S.>"]}"#).await;
        assert!(update.get("error").is_some(), "go={go}: {update}");
        seen.push(serde_json::json!({
            "refused": refused, "off": off["error"], "second": second["error"],
            "update": update["error"],
        }));
    }
    assert_eq!(seen[0]["off"]["err_code"], 10039, "{}", seen[0]);
    assert_eq!(seen[0]["second"]["err_code"], 10027, "{}", seen[0]);
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[tokio::test]
async fn jetstream_reload_stops_a_removed_accounts_streams_and_recovers_them_when_it_returns() {
    let accounts = |extra: &str| {
        format!(
            "accounts {{\n\
               SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
               A {{ jetstream: enabled, users [ {{user: a, password: a}} ] }}\n\
               {extra}\n\
             }}\n\
             system_account: SYS\n"
        )
    };
    let with_b = accounts("B { jetstream: enabled, users [ {user: b, password: b} ] }");
    let store = tempfile::tempdir().expect("tempdir");
    let js = format!(
        "jetstream {{ store_dir: \"{}\" }}\n",
        store.path().display()
    );
    let conf = natrium_tests::reload::Conf::new(&format!("{with_b}{js}"));
    let server = ServerProcess::start(&["-c", conf.arg(), "-a", "127.0.0.1", "-p", "-1"]);
    let b = login(&server, "b").await;
    let created = request(
        &b,
        "$JS.API.STREAM.CREATE.T",
        r#"{"name":"T","subjects":["t"]}"#,
    )
    .await;
    assert!(created.get("error").is_none(), "{created}");
    let acked = b.request("t", "kept".into()).await.expect("ack");
    assert!(!acked.payload.is_empty());
    drop(b);

    conf.write(&format!("{}{js}", accounts("")));
    natrium_tests::reload::sighup(&server, 1);
    let a = login(&server, "a").await;
    // The server's usage no longer counts B's stream once it is stopped.
    info_until(&a, |_| {
        server.log_text().contains("Reloaded server configuration")
    })
    .await;
    conf.write(&format!("{with_b}{js}"));
    natrium_tests::reload::sighup(&server, 2);
    let b = login(&server, "b").await;
    info_until(&b, |i| i.get("error").is_none() && i["streams"] == 1).await;
    let info = request(&b, "$JS.API.STREAM.INFO.T", "").await;
    assert_eq!(info["state"]["messages"], 1, "{info}");
    let acked = b.request("t", "again".into()).await.expect("ack");
    let acked: Value = serde_json::from_slice(&acked.payload).expect("json");
    assert_eq!(acked["seq"], 2, "{acked}");
}

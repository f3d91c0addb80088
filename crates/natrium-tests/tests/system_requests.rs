//! Account and user system requests over real sockets, against the Go server: the system user
//! asks `$SYS.REQ.ACCOUNT.<acc>.<KIND>` and `$SYS.REQ.ACCOUNT.PING.*`, users of other accounts
//! ask about their own account (`$SYS.REQ.SERVER.PING.CONNZ`, `$SYS.REQ.ACCOUNT.PING.*`) and
//! about themselves (`$SYS.REQ.USER.INFO`), and `VARZ` over NATS counts HTTP requests. Answers
//! are compared with Go's for shape (keys and types), for the values both must agree on, and
//! for silence where Go gives none.

use std::path::PathBuf;
use std::time::Duration;

use natrium_tests::json::comparable_shape;
use natrium_tests::jwt::{self, Scenario};
use natrium_tests::raw::http_get_json;
use natrium_tests::ServerProcess;
use nkeys::KeyPair;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);
/// How long a request that must stay unanswered is given.
const QUIET: Duration = Duration::from_millis(300);

const CONFIG: &str = r#"server_name: sysreq
accounts {
  SYS { users [ {user: sys, password: sys} ] }
  A { users [
    {user: a, password: a, permissions: {
      publish: {allow: [">"], deny: ["w", "v"]},
      subscribe: {allow: ["x", "y q1", "_INBOX.>"], deny: ["z"]},
      allow_responses: true}}
    {user: b, password: b}
  ] }
  B { users [
    {user: c, password: c, permissions: {
      publish: ["$SYS.>"], subscribe: ["_INBOX.>"],
      allow_responses: {max: 5, expires: "1m"}}}
  ] }
}
system_account: SYS
"#;

fn servers(conf: &str) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path: PathBuf = dir.path().join("sys.conf");
    std::fs::write(&path, conf).expect("write config");
    let p = path.to_str().expect("utf-8 path").to_owned();
    let args = ["-c", &p, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    let mut out = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        out.push(("go", go));
    }
    (dir, out)
}

async fn login(server: &ServerProcess, user: &str, name: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(user.into(), user.into())
        .name(name)
        .connect(server.url())
        .await
        .unwrap_or_else(|e| panic!("{user} connects: {e}"))
}

/// The answer to a request, as JSON.
async fn ask(client: &async_nats::Client, subject: &str, body: &str) -> Value {
    let reply = tokio::time::timeout(
        WAIT,
        client.request(subject.to_owned(), body.to_owned().into()),
    )
    .await
    .unwrap_or_else(|_| panic!("{subject} {body}: timed out"))
    .unwrap_or_else(|e| panic!("{subject} {body}: {e}"));
    serde_json::from_slice(&reply.payload).expect("JSON reply")
}

/// [`ask`], retrying while nobody answers yet (until [`WAIT`] has passed).
async fn ask_when_served(client: &async_nats::Client, subject: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match client.request(subject.to_owned(), "".into()).await {
            Ok(reply) => return serde_json::from_slice(&reply.payload).expect("JSON reply"),
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{subject}: no responder"
                );
                tokio::task::yield_now().await;
            }
            Err(e) => panic!("{subject}: {e}"),
        }
    }
}

/// Whether a request got no answer in [`QUIET`].
async fn unanswered(client: &async_nats::Client, subject: &str, body: &str) -> bool {
    let request = client.request(subject.to_owned(), body.to_owned().into());
    !matches!(tokio::time::timeout(QUIET, request).await, Ok(Ok(_)))
}

fn sorted_strings(v: &Value) -> Vec<String> {
    let mut list: Vec<String> = v
        .as_array()
        .map(|l| l.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    list.sort();
    list
}

/// Permission lists come from Go's subscription index in no set order: sort them.
fn normalise_perms(doc: &mut Value) {
    let Some(perms) = doc.pointer_mut("/data/permissions") else {
        return;
    };
    for dir in ["publish", "subscribe"] {
        for kind in ["allow", "deny"] {
            if let Some(list) = perms.get_mut(dir).and_then(|d| d.get_mut(kind)) {
                *list = json!(sorted_strings(list));
            }
        }
    }
}

#[tokio::test]
async fn system_requests_account_endpoints_match_go() {
    let (_dir, servers) = servers(CONFIG);
    let mut seen: Vec<Vec<(String, Value)>> = Vec::new();
    for (name, server) in &servers {
        let sys = login(server, "sys", "sys").await;
        let holder = login(server, "b", "holder").await;
        let _sub = holder.subscribe("foo.>").await.expect("sub");
        holder.flush().await.expect("flush");
        let mut got = Vec::new();
        for kind in ["CONNZ", "SUBSZ", "CONNS", "STATZ", "INFO", "LEAFZ", "JSZ"] {
            let subject = format!("$SYS.REQ.ACCOUNT.A.{kind}");
            got.push((subject.clone(), ask(&sys, &subject, "").await));
        }
        for subject in ["$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.PING.CONNZ"] {
            got.push((subject.to_owned(), ask(&sys, subject, "").await));
        }
        let doc = |kind: &str| &got.iter().find(|(s, _)| s.ends_with(kind)).expect(kind).1;
        let connz = &doc("A.CONNZ")["data"];
        assert_eq!(connz["num_connections"], 1, "{name}");
        assert_eq!(connz["connections"][0]["name"], "holder", "{name}");
        // One client subscription and the four system request services (Go's imports).
        assert_eq!(doc("A.SUBSZ")["data"]["num_subscriptions"], 5, "{name}");
        let conns = doc("A.CONNS");
        assert_eq!(
            conns["type"],
            "io.nats.server.advisory.v1.account_connections"
        );
        assert_eq!(
            (conns["acc"].clone(), conns["conns"].clone()),
            (json!("A"), json!(1))
        );
        let statz = &doc("A.STATZ")["data"]["account_statz"];
        assert_eq!(statz.as_array().map(Vec::len), Some(1), "{name}");
        assert_eq!(
            (
                statz[0]["acc"].clone(),
                statz[0]["num_subscriptions"].clone()
            ),
            (json!("A"), json!(5))
        );
        assert_eq!(doc("A.INFO")["data"]["account_name"], "A", "{name}");
        assert_eq!(doc("A.LEAFZ")["data"]["leafnodes"], 0, "{name}");
        let jsz = doc("A.JSZ");
        assert_eq!(
            jsz["error"],
            json!({"code": 500, "description": "jetstream not enabled"})
        );
        assert!(jsz["data"].is_null(), "{name}");
        let mut pinged: Vec<&str> = doc("PING.STATZ")["data"]["account_statz"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|s| s["acc"].as_str())
            .collect();
        pinged.sort_unstable();
        assert_eq!(pinged, ["A", "SYS"], "{name}");
        // `PING.CONNZ` in the system account is the CONNZ of an account named PING.
        let ping_connz = &doc("PING.CONNZ")["data"];
        assert_eq!(ping_connz["num_connections"], 0, "{name}");
        assert!(ping_connz["connections"].is_null(), "{name}");
        seen.push(got);
    }
    if let [ours, go] = seen.as_slice() {
        for ((subject, a), (_, b)) in ours.iter().zip(go) {
            assert_eq!(comparable_shape(a), comparable_shape(b), "{subject}");
        }
        let imports = |docs: &[(String, Value)]| {
            let info = &docs
                .iter()
                .find(|(s, _)| s.ends_with("A.INFO"))
                .expect("info")
                .1;
            sorted_strings(&info["data"]["imports"])
        };
        assert_eq!(imports(ours), imports(go), "system imports of A");
    }
}

/// Error answers, and the requests Go leaves unanswered.
#[tokio::test]
async fn system_requests_account_errors_and_silence_match_go() {
    let (_dir, servers) = servers(CONFIG);
    for (name, server) in &servers {
        let sys = login(server, "sys", "sys").await;
        let holder = login(server, "b", "holder").await;
        holder.flush().await.expect("flush");
        let info = ask(&sys, "$SYS.REQ.ACCOUNT.NOPE.INFO", "").await;
        assert_eq!(
            info["error"],
            json!({"code": 500, "description": "Account NOPE does not exist"})
        );
        for kind in ["CONNZ", "STATZ", "INFO"] {
            let bad = ask(&sys, &format!("$SYS.REQ.ACCOUNT.A.{kind}"), "{nope").await;
            assert_eq!(bad["error"]["code"], 400, "{name} {kind}");
            assert!(bad.get("data").is_none(), "{name} {kind}");
        }
        let bad = ask(
            &sys,
            "$SYS.REQ.ACCOUNT.A.STATZ",
            r#"{"include_unused":"x"}"#,
        )
        .await;
        assert_eq!(bad["error"]["code"], 400, "{name}");
        let unused = ask(
            &sys,
            "$SYS.REQ.ACCOUNT.NOPE.STATZ",
            r#"{"include_unused":true}"#,
        )
        .await;
        assert_eq!(unused["data"]["account_statz"], json!([]), "{name}");
        let own = ask(&sys, "$SYS.REQ.ACCOUNT.A.CONNS", r#"{"acc":"A"}"#).await;
        assert_eq!(own["conns"], 1, "{name}");
        for (subject, body) in [
            ("$SYS.REQ.ACCOUNT.NOPE.STATZ", ""),
            ("$SYS.REQ.ACCOUNT.B.STATZ", ""),
            ("$SYS.REQ.ACCOUNT.B.CONNS", ""),
            ("$SYS.REQ.ACCOUNT.$G.CONNS", ""),
            ("$SYS.REQ.ACCOUNT.A.CONNS", r#"{"acc":"B"}"#),
            ("$SYS.REQ.ACCOUNT.A.CONNS", "{nope"),
            (
                "$SYS.REQ.ACCOUNT.A.CONNZ",
                r#"{"server_name":"nobody","exact_match":true}"#,
            ),
        ] {
            assert!(
                unanswered(&sys, subject, body).await,
                "{name}: {subject} {body} answered"
            );
        }
    }
}

#[tokio::test]
async fn system_requests_from_an_account_match_go() {
    let (_dir, servers) = servers(CONFIG);
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for (name, server) in &servers {
        let holder = login(server, "b", "holder").await;
        holder.flush().await.expect("flush");
        let a = login(server, "a", "asker").await;
        let server_connz = ask(&a, "$SYS.REQ.SERVER.PING.CONNZ", r#"{"limit":1}"#).await;
        let account_connz = ask(&a, "$SYS.REQ.ACCOUNT.PING.CONNZ", "").await;
        // The account is forced: asking for another's statistics gets one's own.
        let statz = ask(&a, "$SYS.REQ.ACCOUNT.PING.STATZ", r#"{"accounts":["B"]}"#).await;
        assert_eq!(server_connz["data"]["num_connections"], 1, "{name}");
        assert_eq!(server_connz["data"]["total"], 2, "{name}");
        assert_eq!(account_connz["data"]["num_connections"], 2, "{name}");
        let accounts: Vec<&Value> = statz["data"]["account_statz"]
            .as_array()
            .expect("list")
            .iter()
            .collect();
        assert_eq!(accounts.len(), 1, "{name}");
        assert_eq!(accounts[0]["acc"], "A", "{name}");
        assert_eq!(accounts[0]["conns"], 2, "{name}");
        // Only the system account has the server-wide requests.
        let varz = a.request("$SYS.REQ.SERVER.PING.VARZ", "".into()).await;
        assert!(
            matches!(&varz, Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders),
            "{name}: {varz:?}"
        );
        let filtered = r#"{"server_name":"nobody","exact_match":true}"#;
        assert!(
            unanswered(&a, "$SYS.REQ.SERVER.PING.CONNZ", filtered).await,
            "{name}"
        );
        seen.push(vec![server_connz, account_connz, statz]);
    }
    if let [ours, go] = seen.as_slice() {
        for (a, b) in ours.iter().zip(go) {
            assert_eq!(comparable_shape(a), comparable_shape(b));
        }
    }
}

#[tokio::test]
async fn system_requests_user_info_matches_go() {
    let (_dir, servers) = servers(CONFIG);
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for (name, server) in &servers {
        let mut docs = Vec::new();
        for user in ["a", "b", "c", "sys"] {
            let client = login(server, user, user).await;
            let mut doc = ask(&client, "$SYS.REQ.USER.INFO", "").await;
            normalise_perms(&mut doc);
            assert_eq!(doc["data"]["user"], user, "{name}");
            docs.push(doc);
        }
        // The requester's identity is the server's to tell: a forged one is replaced.
        let b = login(server, "b", "b").await;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Request-Info", r#"{"acc":"SYS","user":"sys","id":1}"#);
        let forged = b
            .request_with_headers("$SYS.REQ.USER.INFO", headers, "".into())
            .await
            .expect("reply");
        let forged: Value = serde_json::from_slice(&forged.payload).expect("JSON");
        assert_eq!(
            (
                forged["data"]["user"].clone(),
                forged["data"]["account"].clone()
            ),
            (json!("b"), json!("A"))
        );
        // Asked directly in the system account, without the shared details.
        let sys = login(server, "sys", "sys").await;
        let direct = ask(&sys, "$SYS.REQ.USER.A.INFO", "").await;
        assert_eq!(direct["data"], json!({"user": "", "account": ""}), "{name}");
        docs.push(direct);
        seen.push(docs);
    }
    let a = &seen[0][0]["data"];
    assert_eq!(a["account_name"], "A");
    assert_eq!(
        a["permissions"]["responses"],
        json!({"max": 1, "ttl": 120_000_000_000_u64})
    );
    assert_eq!(
        seen[0][2]["data"]["permissions"]["responses"],
        json!({"max": 5, "ttl": 60_000_000_000_u64})
    );
    assert!(
        seen[0][1]["data"].get("permissions").is_none(),
        "b has none"
    );
    if let [ours, go] = seen.as_slice() {
        for (a, b) in ours.iter().zip(go) {
            assert_eq!(a["data"], b["data"]);
        }
    }
}

#[tokio::test]
async fn system_requests_user_info_of_a_jwt_user_match_go() {
    let s = Scenario::new();
    let user = KeyPair::new_user();
    let exp = jwt::now() + 3600;
    let user_jwt = jwt::user_with(
        &user.public_key(),
        &s.a_signer,
        Some(&s.a.public_key()),
        json!({"pub": {"allow": ["$SYS.REQ.USER.INFO"], "deny": ["no"]}, "sub": {"allow": ["_INBOX.>"]}}),
        json!({"exp": exp}),
    );
    let creds = jwt::creds(&user_jwt, &user.seed().expect("seed"));
    let (_dir, servers) = servers(&s.config());
    let mut seen = Vec::new();
    for (name, server) in &servers {
        let client = async_nats::ConnectOptions::with_credentials(&creds)
            .expect("creds")
            .connect(server.url())
            .await
            .expect("connect");
        // The account is put in use by this first login; the server starts answering in it
        // as its events task learns of that, which may trail the login by a moment.
        let mut doc = ask_when_served(&client, "$SYS.REQ.USER.INFO").await;
        normalise_perms(&mut doc);
        let data = &doc["data"];
        assert_eq!(data["user"], user.public_key(), "{name}");
        assert_eq!(data["account"], s.a.public_key(), "{name}");
        assert_eq!(data["user_name"], "user", "{name}");
        let expires = data["expires"].as_u64().expect("expires");
        assert_eq!(expires % 1_000_000_000, 0, "{name}: whole seconds");
        assert!(
            (3_500_000_000_000..=3_600_000_000_000).contains(&expires),
            "{name}: {expires}"
        );
        seen.push(doc);
    }
    if let [ours, go] = seen.as_slice() {
        // Go names the account by its JWT's name; Natrium by its key (see docs).
        let strip = |d: &Value| {
            let mut d = d["data"].clone();
            if let Some(m) = d.as_object_mut() {
                m.remove("account_name");
                m.remove("expires");
            }
            d
        };
        assert_eq!(strip(ours), strip(go));
    }
}

#[tokio::test]
async fn system_requests_varz_counts_http_requests_like_go() {
    let (_dir, servers) = servers(CONFIG);
    let mut seen = Vec::new();
    for (name, server) in &servers {
        let port = server.monitor_port.expect("monitor port");
        http_get_json(port, "/varz");
        http_get_json(port, "/varz");
        http_get_json(port, "/connz");
        let sys = login(server, "sys", "sys").await;
        let varz = ask(&sys, "$SYS.REQ.SERVER.PING.VARZ", "").await;
        let stats = varz["data"]["http_req_stats"].clone();
        assert_eq!(stats, json!({"/varz": 2, "/connz": 1}), "{name}");
        seen.push(stats);
    }
}

/// `server_tags` and `server_metadata` travel in every reply's `server` object, and a request
/// filtered by tags is answered only by a server that has them all, as in Go.
#[tokio::test]
async fn system_requests_server_tags_filter_and_header_like_go() {
    let conf = format!("{CONFIG}server_tags: [\"AZ:1\", ssd]\nserver_metadata {{ rack: r7 }}\n");
    let (_dir, servers) = servers(&conf);
    for (name, server) in &servers {
        let sys = login(server, "sys", "sys").await;
        let subject = "$SYS.REQ.SERVER.PING.VARZ";
        let varz = ask(&sys, subject, r#"{"tags":["az:1"]}"#).await;
        assert_eq!(varz["server"]["tags"], json!(["az:1", "ssd"]), "{name}");
        assert_eq!(varz["server"]["metadata"], json!({"rack": "r7"}), "{name}");
        assert_eq!(varz["data"]["tags"], json!(["az:1", "ssd"]), "{name}");
        let both = ask(&sys, subject, r#"{"tags":["SSD", "az:1"]}"#).await;
        assert_eq!(both["server"]["tags"], json!(["az:1", "ssd"]), "{name}");
        assert!(
            unanswered(&sys, subject, r#"{"tags":["ssd", "gpu"]}"#).await,
            "{name}: a tag it lacks"
        );
    }
}

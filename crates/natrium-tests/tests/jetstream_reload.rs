//! Reloading the `jetstream` block, against ours and (when installed) Go's server with the
//! same configurations: the changes Go refuses (the store directory, lowered or dynamic
//! limits, keys it cannot reload), the raised `max_file_store` that lets a refused stream be
//! created, and a new `limits { … }` block applied to the next create.

use std::path::Path;

use natrium_tests::reload::{last_line_from, sighup, Conf, FAILED};
use natrium_tests::ServerProcess;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::request;

const MB: i64 = 1 << 20;

/// A configuration written for a server's store directory.
type ConfText<'a> = dyn Fn(&Path) -> String + 'a;

/// The `jetstream` block with `body` inside, storing under `store`.
fn js_conf(store: &Path, body: &str) -> String {
    format!(
        "jetstream {{\n store_dir: \"{}\"\n {body}\n}}\n",
        store.display()
    )
}

/// One server under test, with its configuration file and store directory.
struct Under {
    name: &'static str,
    conf: Conf,
    server: ServerProcess,
    store: tempfile::TempDir,
}

impl Under {
    /// Rewrites the configuration as `text` of this server's store directory.
    fn write(&self, text: impl Fn(&Path) -> String) {
        self.conf.write(&text(self.store.path()));
    }
}

/// Ours, then Go when installed, each started on `text` of its own store directory.
fn servers(text: impl Fn(&Path) -> String) -> Vec<Under> {
    let mut out = Vec::new();
    for go in [false, true] {
        let store = tempfile::tempdir().expect("tempdir");
        let conf = Conf::new(&text(store.path()));
        let args = ["-c", conf.arg(), "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
        let Some(server) = ServerProcess::start_ours_or_go(go, &args) else {
            eprintln!("Go nats-server not installed: checked against ours alone");
            break;
        };
        let name = if go { "go" } else { "ours" };
        out.push(Under {
            name,
            conf,
            server,
            store,
        });
    }
    out
}

/// `/jsz` of `server`.
fn jsz(server: &ServerProcess) -> Value {
    let port = server.monitor_port.expect("monitor port");
    natrium_tests::raw::http_get_json(port, "/jsz")
}

async fn client(server: &ServerProcess) -> async_nats::Client {
    async_nats::connect(server.url()).await.expect("connect")
}

#[tokio::test]
async fn jetstream_reload_refusals_like_go() {
    let other = tempfile::tempdir().expect("tempdir");
    let limits = format!("max_memory_store: {}\n max_file_store: {}", MB, 10 * MB);
    let before = |store: &Path| js_conf(store, &limits);
    let attempts: [Box<ConfText<'_>>; 5] = [
        Box::new(|_| js_conf(other.path(), &limits)),
        Box::new(|s| js_conf(s, &format!("max_memory_store: {MB}\n max_file_store: 1MB"))),
        Box::new(|s| js_conf(s, &format!("max_memory_store: {MB}"))),
        Box::new(|s| js_conf(s, &format!("{limits}\n sync_interval: always"))),
        Box::new(|s| js_conf(s, &format!("{limits}\n unique_tag: az"))),
    ];
    let mut seen = Vec::new();
    for js in servers(before) {
        let mut refusals = Vec::new();
        for (n, text) in attempts.iter().enumerate() {
            js.write(text);
            sighup(&js.server, n + 1);
            refusals.push(last_line_from(&js.server, FAILED));
        }
        // The configuration in force stayed: an unchanged file reloads.
        js.write(before);
        sighup(&js.server, attempts.len() + 1);
        assert_eq!(
            natrium_tests::reload::count(&js.server, FAILED),
            attempts.len(),
            "{}",
            js.name
        );
        seen.push((js.name, refusals));
    }
    let texts = &seen[0].1;
    assert_eq!(
        texts[0],
        format!("{FAILED}config reload not supported for jetstream storage directory")
    );
    assert!(texts[1].ends_with("decreasing jetstream max memory and store"));
    assert!(texts[2].ends_with("for jetstream max memory and max store"));
    assert!(texts[3].ends_with("for SyncAlways: old=false, new=true"));
    assert!(texts[4].ends_with("for JetStreamUniqueTag: old=, new=az"));
    for (name, refusals) in &seen[1..] {
        assert_eq!(refusals, texts, "{name}");
    }
}

#[tokio::test]
async fn jetstream_reload_from_dynamic_limits_refused_like_go() {
    let mut seen = Vec::new();
    for js in servers(|s| js_conf(s, "")) {
        js.write(|s| js_conf(s, "max_file_store: 1GB"));
        sighup(&js.server, 1);
        seen.push((js.name, last_line_from(&js.server, FAILED)));
    }
    assert_eq!(
        seen[0].1,
        format!("{FAILED}config reload not supported for jetstream dynamic max memory and store")
    );
    assert!(seen.iter().all(|(_, line)| *line == seen[0].1), "{seen:?}");
}

#[tokio::test]
async fn jetstream_reload_raised_max_file_store_makes_room() {
    let stream = format!(r#"{{"name":"S","subjects":["s"],"max_bytes":{}}}"#, 2 * MB);
    let mut seen = Vec::new();
    for js in servers(|s| js_conf(s, "max_file_store: 1MB")) {
        let (name, server) = (js.name, &js.server);
        let c = client(server).await;
        let refused = request(&c, "$JS.API.STREAM.CREATE.S", &stream).await;
        js.write(|s| js_conf(s, "max_file_store: 4MB"));
        sighup(server, 1);
        let line = last_line_from(server, "Reloaded: JetStream");
        let created = request(&c, "$JS.API.STREAM.CREATE.S", &stream).await;
        assert!(created.get("error").is_none(), "{name}: {created}");
        let info = request(&c, "$JS.API.INFO", "").await;
        let config = jsz(server)["config"].clone();
        assert_eq!(config["max_storage"], 4 * MB, "{name}: {config}");
        seen.push((name, refused["error"].clone(), line, info["limits"].clone()));
    }
    let (_, error, line, _) = &seen[0];
    assert_eq!(error["err_code"], 10047, "{error}");
    assert_eq!(line, "Reloaded: JetStream max_file_store = 4.00 MB");
    for other in &seen[1..] {
        assert_eq!(other.1, seen[0].1, "{}", other.0);
        assert_eq!(other.2, seen[0].2, "{}", other.0);
        assert_eq!(other.3, seen[0].3, "{}", other.0);
    }
}

#[tokio::test]
async fn jetstream_reload_server_limits_reach_the_next_create() {
    let limits = |ack: i64, dup: &'static str| {
        move |store: &Path| {
            js_conf(
                store,
                &format!("limits {{ max_ack_pending: {ack}, duplicate_window: \"{dup}\" }}"),
            )
        }
    };
    let stream = r#"{"name":"S","subjects":["s"],"duplicate_window":120000000000}"#;
    let consumer = r#"{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit","max_ack_pending":500}}"#;
    let mut seen: Vec<(&str, Vec<Value>, String, Value)> = Vec::new();
    for js in servers(limits(100, "1m")) {
        let (name, server) = (js.name, &js.server);
        let c = client(server).await;
        let mut answers = vec![request(&c, "$JS.API.STREAM.CREATE.S", stream).await];
        let small = r#"{"name":"S","subjects":["s"],"duplicate_window":60000000000}"#;
        let created = request(&c, "$JS.API.STREAM.CREATE.S", small).await;
        assert!(created.get("error").is_none(), "{name}: {created}");
        answers.push(request(&c, "$JS.API.CONSUMER.CREATE.S.D", consumer).await);
        js.write(limits(1000, "5m"));
        sighup(server, 1);
        let line = last_line_from(server, "Reloaded: JetStream");
        let updated = request(&c, "$JS.API.STREAM.UPDATE.S", stream).await;
        assert!(updated.get("error").is_none(), "{name}: {updated}");
        let made = request(&c, "$JS.API.CONSUMER.CREATE.S.D", consumer).await;
        assert_eq!(made["config"]["max_ack_pending"], 500, "{name}: {made}");
        let limits = jsz(server)["limits"].clone();
        seen.push((name, answers, line, limits));
    }
    let (_, answers, line, limits) = &seen[0];
    assert_eq!(limits["max_ack_pending"], 1000, "{limits}");
    assert!(
        answers.iter().all(|a| a.get("error").is_some()),
        "{answers:?}"
    );
    assert_eq!(line, "Reloaded: JetStream limits");
    for (name, other, other_line, other_limits) in &seen[1..] {
        assert_eq!(other_limits, limits, "{name}");
        let errors = |a: &[Value]| a.iter().map(|a| a["error"].clone()).collect::<Vec<_>>();
        assert_eq!(errors(other), errors(answers), "{name}");
        assert_eq!(other_line, line, "{name}");
    }
}

/// The log lines saying JetStream was turned on or off, from their marker on.
fn jetstream_lines(server: &ServerProcess) -> Vec<String> {
    const MARKERS: [&str; 5] = [
        "Reloaded: JetStream",
        "Restarting JetStream",
        "Starting JetStream",
        "Initiating JetStream Shutdown",
        "JetStream Shutdown",
    ];
    server
        .log_lines()
        .iter()
        .filter_map(|l| {
            let from = MARKERS.iter().find_map(|n| l.find(n))?;
            Some(l[from..].to_owned())
        })
        .collect()
}

/// `$JS.API.INFO` once JetStream is enabled in the client's account (ours enables an account a
/// reload added right after the reload, off the reload's path); bounded by `support::WAIT`.
async fn info_enabled(client: &async_nats::Client) -> Value {
    let deadline = tokio::time::Instant::now() + support::WAIT;
    loop {
        let info = request(client, "$JS.API.INFO", "").await;
        if info.get("error").is_none() {
            return info;
        }
        assert!(tokio::time::Instant::now() < deadline, "{info}");
        tokio::task::yield_now().await;
    }
}

/// The INFO a new client is sent, as JSON.
fn info(server: &ServerProcess) -> Value {
    let raw = natrium_tests::RawClient::connect(&server.addr());
    serde_json::from_str(raw.info.trim_start_matches("INFO ")).expect("INFO JSON")
}

#[tokio::test]
async fn jetstream_reload_turns_jetstream_on_like_go() {
    let mut seen = Vec::new();
    for js in servers(|s| js_conf(s, "enabled: false")) {
        let (name, server) = (js.name, &js.server);
        assert_eq!(info(server).get("jetstream"), None, "{name}");
        let c = client(server).await;
        let off = c.request("$JS.API.INFO", "".into()).await;
        assert!(
            off.is_err(),
            "{name}: nothing answers while JetStream is off"
        );
        js.write(|s| js_conf(s, ""));
        sighup(server, 1);
        let lines: Vec<String> = server
            .log_lines()
            .iter()
            .filter_map(|l| {
                let from = [
                    "Reloaded: JetStream",
                    "Restarting JetStream",
                    "Starting JetStream",
                ]
                .iter()
                .find_map(|n| l.find(n))?;
                Some(l[from..].to_owned())
            })
            .collect();
        assert_eq!(info(server)["jetstream"], true, "{name}");
        let account = request(&c, "$JS.API.INFO", "").await;
        assert!(account.get("error").is_none(), "{name}: {account}");
        let created = request(
            &c,
            "$JS.API.STREAM.CREATE.S",
            r#"{"name":"S","subjects":["s"]}"#,
        )
        .await;
        assert!(created.get("error").is_none(), "{name}: {created}");
        let ack = c.request("s", "hello".into()).await.expect("ack");
        let ack: Value = serde_json::from_slice(&ack.payload).expect("ack JSON");
        assert_eq!(ack["seq"], 1, "{name}: {ack}");
        seen.push((name, lines));
    }
    assert_eq!(
        seen[0].1,
        [
            "Reloaded: JetStream",
            "Restarting JetStream",
            "Starting JetStream"
        ]
    );
    assert!(seen.iter().all(|(_, l)| *l == seen[0].1), "{seen:?}");
}

#[tokio::test]
async fn jetstream_reload_turns_jetstream_off_and_on_again_like_go() {
    let mut seen = Vec::new();
    for js in servers(|s| js_conf(s, "")) {
        let (name, server) = (js.name, &js.server);
        let c = client(server).await;
        let created = request(
            &c,
            "$JS.API.STREAM.CREATE.S",
            r#"{"name":"S","subjects":["s"]}"#,
        )
        .await;
        assert!(created.get("error").is_none(), "{name}: {created}");
        c.request("s", "one".into()).await.expect("ack");

        js.write(|s| js_conf(s, "enabled: false"));
        sighup(server, 1);
        assert_eq!(info(server).get("jetstream"), None, "{name}");
        let off = jsz(server);
        assert_eq!(off["disabled"], true, "{name}: {off}");
        // Go leaves the request unanswered, ours says no responders: neither answers it.
        let asked = tokio::time::timeout(
            std::time::Duration::from_millis(300),
            c.request("$JS.API.INFO", "".into()),
        )
        .await;
        assert!(!matches!(asked, Ok(Ok(_))), "{name}: answered while off");
        // The stream no longer listens: nobody answers the publish, nothing is stored.
        let published = c.request("s", "lost".into()).await;
        assert!(published.is_err(), "{name}: {published:?}");

        js.write(|s| js_conf(s, ""));
        sighup(server, 2);
        let stream = request(&c, "$JS.API.STREAM.INFO.S", "").await;
        assert_eq!(stream["state"]["messages"], 1, "{name}: {stream}");
        let ack = c.request("s", "two".into()).await.expect("ack");
        let ack: Value = serde_json::from_slice(&ack.payload).expect("ack JSON");
        assert_eq!(ack["seq"], 2, "{name}: {ack}");
        seen.push((name, jetstream_lines(server)));
    }
    assert_eq!(
        seen[0].1,
        [
            "Starting JetStream",
            "Reloaded: JetStream",
            "Initiating JetStream Shutdown...",
            "JetStream Shutdown",
            "Reloaded: JetStream",
            "Restarting JetStream",
            "Starting JetStream"
        ]
    );
    assert!(seen.iter().all(|(_, l)| *l == seen[0].1), "{seen:?}");
}

#[tokio::test]
async fn jetstream_reload_retries_a_start_that_failed_like_go() {
    let mut seen = Vec::new();
    for js in servers(|s| js_conf(s, "enabled: false")) {
        let (name, server) = (js.name, &js.server);
        // A file where the store directory should be: JetStream cannot start there.
        let blocker = js.store.path().join("file");
        std::fs::write(&blocker, "x").expect("write");
        js.write(|_| js_conf(&blocker, ""));
        sighup(server, 1);
        let warned = last_line_from(server, "Can't start JetStream: ");
        assert_eq!(info(server).get("jetstream"), None, "{name}");
        js.write(|s| js_conf(s, ""));
        sighup(server, 2);
        let c = client(server).await;
        let account = request(&c, "$JS.API.INFO", "").await;
        assert!(account.get("error").is_none(), "{name}: {account}");
        seen.push((name, warned, jetstream_lines(server)));
    }
    let (_, warned, lines) = &seen[0];
    assert_eq!(
        warned,
        "Can't start JetStream: storage directory is not a directory"
    );
    assert_eq!(
        lines,
        &[
            "Reloaded: JetStream",
            "Restarting JetStream",
            "Starting JetStream",
            "Initiating JetStream Shutdown...",
            "JetStream Shutdown",
            "Reloaded: JetStream",
            "Restarting JetStream",
            "Starting JetStream"
        ]
    );
    for (name, other_warned, other_lines) in &seen[1..] {
        assert_eq!(other_lines, lines, "{name}");
        assert_eq!(other_warned, warned, "{name}");
    }
}

#[tokio::test]
async fn jetstream_reload_raised_limit_takes_an_account_added_with_it() {
    let conf = |store: &Path, max_file: &str, extra: &str| {
        format!(
            "accounts {{\n\
               SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
               A {{ jetstream {{ max_file: 1MB }}, users [ {{user: a, password: a}} ] }}\n\
               {extra}\n\
             }}\n\
             system_account: SYS\n{}",
            js_conf(store, &format!("max_file_store: {max_file}"))
        )
    };
    let added = "C { jetstream { max_file: 2MB }, users [ {user: c, password: c} ] }";
    let mut seen = Vec::new();
    for js in servers(|s| conf(s, "1MB", "")) {
        let (name, server) = (js.name, &js.server);
        js.write(|s| conf(s, "4MB", added));
        sighup(server, 1);
        let c = support::login(server, "c").await;
        let info = info_enabled(&c).await;
        assert_eq!(info["limits"]["max_storage"], 2 * MB, "{name}: {info}");
        seen.push((name, info));
    }
    assert!(seen.iter().all(|(_, i)| *i == seen[0].1), "{seen:?}");
}

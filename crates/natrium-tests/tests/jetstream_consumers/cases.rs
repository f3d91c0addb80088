//! The exchanges the consumer differential test runs, in order: streams set up, messages
//! published, then every create, info, list and error case.

/// One request (or one publish, when `publish` is set).
pub struct Case {
    pub verb: String,
    pub body: String,
    pub account_b: bool,
    pub publish: Option<&'static str>,
}

fn req(verb: &str, body: &str) -> Case {
    Case {
        verb: verb.to_owned(),
        body: body.to_owned(),
        account_b: false,
        publish: None,
    }
}

fn in_b(verb: &str, body: &str) -> Case {
    Case {
        account_b: true,
        ..req(verb, body)
    }
}

fn publish(subject: &'static str) -> Case {
    Case {
        publish: Some(subject),
        ..req("", "")
    }
}

/// A named create on stream `S` with `config`.
fn on_s(name: &str, config: &str) -> Case {
    req(
        &format!("CONSUMER.CREATE.S.{name}"),
        &format!(r#"{{"stream_name":"S","config":{config}}}"#),
    )
}

fn on(stream: &str, name: &str, config: &str) -> Case {
    req(
        &format!("CONSUMER.CREATE.{stream}.{name}"),
        &format!(r#"{{"stream_name":"{stream}","config":{config}}}"#),
    )
}

fn setup() -> Vec<Case> {
    vec![
        req("STREAM.CREATE.S", r#"{"name":"S","subjects":["s.>"]}"#),
        req(
            "STREAM.CREATE.W",
            r#"{"name":"W","subjects":["w.>"],"retention":"workqueue"}"#,
        ),
        req(
            "STREAM.CREATE.I",
            r#"{"name":"I","subjects":["i.>"],"retention":"interest","storage":"memory"}"#,
        ),
        req(
            "STREAM.CREATE.L",
            r#"{"name":"L","subjects":["l.>"],"consumer_limits":{"max_ack_pending":100,"inactive_threshold":60000000000}}"#,
        ),
        req(
            "STREAM.CREATE.M",
            r#"{"name":"M","subjects":["m.>"],"max_consumers":1}"#,
        ),
        publish("s.a"),
        publish("s.b"),
        publish("s.a"),
        publish("s.c"),
        publish("s.b"),
    ]
}

/// Bodies and subjects the create refuses before the config is checked.
fn subject_and_json_errors() -> Vec<Case> {
    vec![
        req("CONSUMER.CREATE.S", r#"{"stream_name":"X","config":{}}"#),
        req("CONSUMER.CREATE.S", ""),
        req(
            "CONSUMER.CREATE.NOPE",
            r#"{"stream_name":"NOPE","config":{}}"#,
        ),
        req(
            r"CONSUMER.CREATE.S.a\b",
            r#"{"stream_name":"S","config":{}}"#,
        ),
        req(
            "CONSUMER.DURABLE.CREATE.S.D1",
            r#"{"stream_name":"S","config":{}}"#,
        ),
        req(
            "CONSUMER.DURABLE.CREATE.S.D1",
            r#"{"stream_name":"S","config":{"durable_name":"D2"}}"#,
        ),
        on_s("N1", r#"{"durable_name":"D2"}"#),
        req(
            "CONSUMER.CREATE.S",
            r#"{"stream_name":"S","config":{"durable_name":"D2"}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1.s.a",
            r#"{"stream_name":"S","config":{"filter_subjects":["s.a"]}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1.s.a",
            r#"{"stream_name":"S","config":{"filter_subject":"s.b"}}"#,
        ),
        on_s("N1", r#"{"num_replicas":3}"#),
        on_s("N1", r#"{"ack_wait":"1s"}"#),
        on_s("N1", r#"{"backoff":["1s"]}"#),
        on_s("N1", r#"{"ack_policy":null}"#),
        on_s("N1", r#"{"ack_policy":"sometimes"}"#),
        on_s("N1", r#"{"deliver_policy":"later"}"#),
        on_s("N1", r#"{"replay_policy":5}"#),
        on_s("N1", r#"{"priority_policy":"foo"}"#),
        on_s("N1", r#"{"max_deliver":1.5}"#),
        on_s("N1", r#"{"bogus":1}"#),
        on_s("N1", r#"{"metadata":{"a":1}}"#),
        on_s("N1", r#"{"opt_start_time":"x"}"#),
        on_s("N1", r#"{"opt_start_time":"2030-01-01"}"#),
        on_s("N1", r#"{"opt_start_time":5}"#),
        on_s("N1", "5"),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","config":{},"action":"foo"}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","config":{},"pedantic":"x"}"#,
        ),
        req("CONSUMER.CREATE.S.N1", r#"{"stream_name":5}"#),
        req("CONSUMER.CREATE.S.N1", r#"{"stream_name":"S","bogus":1}"#),
        req("CONSUMER.CREATE.S.N1", "{"),
        req("CONSUMER.CREATE.S.N1", "nope"),
    ]
}

/// Configs Go's checks refuse.
fn config_errors() -> Vec<Case> {
    let long = "d".repeat(5000);
    vec![
        on_s("N1", r#"{"num_replicas":-1}"#),
        req(
            "CONSUMER.CREATE.S",
            r#"{"stream_name":"S","config":{"name":"a.b"}}"#,
        ),
        on_s("N1", r#"{"ack_policy":"explicit","ack_wait":-1}"#),
        on_s("N1", r#"{"backoff":[-1]}"#),
        on_s(
            "N1",
            r#"{"backoff":[1000000000,2000000000,3000000000],"max_deliver":2}"#,
        ),
        on_s("N1", &format!(r#"{{"description":"{long}"}}"#)),
        on_s("N1", r#"{"deliver_subject":"x.*"}"#),
        on_s("N1", r#"{"deliver_subject":"s.x"}"#),
        on_s("N1", r#"{"deliver_subject":"x","max_waiting":5}"#),
        on_s("N1", r#"{"deliver_subject":"x","max_ack_pending":5}"#),
        on_s("N1", r#"{"deliver_subject":"x","idle_heartbeat":50000000}"#),
        on_s("N1", r#"{"deliver_subject":"x","flow_control":true}"#),
    ]
}

/// Pull, limit, filter and start errors.
fn pull_and_start_errors() -> Vec<Case> {
    vec![
        on("W", "N1", r#"{"ack_policy":"none"}"#),
        on_s("N1", r#"{"rate_limit_bps":1000}"#),
        on_s("N1", r#"{"idle_heartbeat":1000000000}"#),
        on_s("N1", r#"{"flow_control":true}"#),
        on_s("N1", r#"{"max_expires":10}"#),
        on(
            "L",
            "N1",
            r#"{"ack_policy":"explicit","max_ack_pending":200}"#,
        ),
        on("L", "N1", r#"{"inactive_threshold":120000000000}"#),
        on_s("N1", r#"{"direct":true}"#),
        on_s(
            "N1",
            r#"{"filter_subject":"s.a","filter_subjects":["s.b"]}"#,
        ),
        on_s("N1", r#"{"filter_subject":"s..a"}"#),
        on_s("N1", r#"{"filter_subjects":["s.a",""]}"#),
        on_s("N1", r#"{"filter_subjects":["s.*","s.a"]}"#),
        on_s("N1", r#"{"opt_start_seq":5}"#),
        on_s(
            "N1",
            r#"{"deliver_policy":"last","opt_start_time":"2020-01-01T00:00:00Z"}"#,
        ),
        on_s("N1", r#"{"deliver_policy":"new","opt_start_seq":2}"#),
        on_s("N1", r#"{"deliver_policy":"last_per_subject"}"#),
        on_s("N1", r#"{"deliver_policy":"by_start_sequence"}"#),
        on_s("N1", r#"{"deliver_policy":"by_start_time"}"#),
        on_s(
            "N1",
            r#"{"deliver_policy":"by_start_time","opt_start_time":"2020-01-01T00:00:00Z","opt_start_seq":3}"#,
        ),
    ]
}

/// Sampling, metadata, priority, pedantic and work-queue errors.
fn other_config_errors() -> Vec<Case> {
    let big_meta = format!(r#"{{"metadata":{{"k":"{}"}}}}"#, "v".repeat(132 * 1024));
    vec![
        on_s("N1", r#"{"sample_freq":"x"}"#),
        on_s("N1", r#"{"sample_freq":"-5"}"#),
        on_s("N1", &big_meta),
        on_s("N1", r#"{"priority_policy":"overflow"}"#),
        on_s(
            "N1",
            r#"{"priority_policy":"overflow","priority_groups":[""]}"#,
        ),
        on_s(
            "N1",
            r#"{"priority_policy":"overflow","priority_groups":["bad group"]}"#,
        ),
        on_s(
            "N1",
            r#"{"priority_policy":"overflow","priority_groups":["g"],"deliver_subject":"x"}"#,
        ),
        on_s("N1", r#"{"priority_groups":["g"]}"#),
        on_s("N1", r#"{"priority_timeout":1000000000}"#),
        on_s("N1", r#"{"ack_policy":"flow_control"}"#),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","pedantic":true,"config":{"ack_policy":"flow_control","deliver_subject":"x"}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","pedantic":true,"config":{"max_deliver":-5}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","pedantic":true,"config":{"max_waiting":-1}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","pedantic":true,"config":{"ack_policy":"explicit","backoff":[1000000000]}}"#,
        ),
        req(
            "CONSUMER.CREATE.L.N1",
            r#"{"stream_name":"L","pedantic":true,"config":{"ack_policy":"explicit"}}"#,
        ),
        on("W", "N1", r#"{"ack_policy":"all"}"#),
        on(
            "W",
            "N1",
            r#"{"ack_policy":"explicit","deliver_policy":"last"}"#,
        ),
        req(
            &format!("CONSUMER.DURABLE.CREATE.S.{}", "d".repeat(256)),
            &format!(
                r#"{{"stream_name":"S","config":{{"durable_name":"{}"}}}}"#,
                "d".repeat(256)
            ),
        ),
    ]
}

/// Consumers Go creates, their info, list and names, updates, pauses and deletes.
fn lifecycle() -> Vec<Case> {
    vec![
        on_s("PULL", r#"{"durable_name":"PULL","ack_policy":"explicit"}"#),
        on_s(
            "PUSH",
            r#"{"durable_name":"PUSH","deliver_subject":"out.push","deliver_group":"q","ack_policy":"explicit","idle_heartbeat":5000000000,"flow_control":true}"#,
        ),
        req(
            "CONSUMER.CREATE.S.FILT.s.a",
            r#"{"stream_name":"S","config":{"filter_subject":"s.a"}}"#,
        ),
        on_s(
            "MULTI",
            r#"{"filter_subjects":["s.b","s.c"],"ack_policy":"all"}"#,
        ),
        on_s("LAST", r#"{"deliver_policy":"last"}"#),
        on_s(
            "LASTA",
            r#"{"deliver_policy":"last","filter_subject":"s.a"}"#,
        ),
        on_s("NEW", r#"{"deliver_policy":"new"}"#),
        on_s(
            "SEQ",
            r#"{"deliver_policy":"by_start_sequence","opt_start_seq":3}"#,
        ),
        on_s(
            "SEQ9",
            r#"{"deliver_policy":"by_start_sequence","opt_start_seq":9}"#,
        ),
        on_s(
            "TIME",
            r#"{"deliver_policy":"by_start_time","opt_start_time":"2000-01-01T01:00:00.500+01:00"}"#,
        ),
        on_s(
            "LPS",
            r#"{"deliver_policy":"last_per_subject","filter_subject":"s.>"}"#,
        ),
        on_s(
            "PIN",
            r#"{"priority_policy":"pinned_client","priority_groups":["g1"],"ack_policy":"explicit"}"#,
        ),
        on_s(
            "FC",
            r#"{"ack_policy":"flow_control","deliver_subject":"out.fc","max_ack_pending":10}"#,
        ),
        on_s(
            "BACK",
            r#"{"ack_policy":"explicit","backoff":[1000000000,5000000000],"max_deliver":4,"sample_freq":"50%"}"#,
        ),
        on_s(
            "META",
            r#"{"mem_storage":true,"metadata":{"k":"v","_nats.ver":"x"},"description":"d","headers_only":true,"max_batch":10,"max_expires":1000000000,"max_bytes":1024,"inactive_threshold":30000000000}"#,
        ),
        on_s(
            "PAUSED",
            r#"{"durable_name":"PAUSED","pause_until":"2099-01-01T01:00:00+01:00"}"#,
        ),
        on("L", "LIM", r#"{"ack_policy":"explicit"}"#),
        on(
            "I",
            "INT",
            r#"{"durable_name":"INT","ack_policy":"explicit"}"#,
        ),
        on("W", "W1", r#"{"ack_policy":"explicit"}"#),
        on("W", "W2", r#"{"ack_policy":"explicit"}"#),
        on(
            "W",
            "W3",
            r#"{"ack_policy":"explicit","filter_subject":"w.a"}"#,
        ),
        on("M", "M1", "{}"),
        on("M", "M2", "{}"),
        req(
            "CONSUMER.DURABLE.CREATE.S.LEGACY",
            r#"{"stream_name":"S","config":{"durable_name":"LEGACY","ack_policy":"explicit"}}"#,
        ),
    ]
}

/// Info, names and list of what was created.
fn queries() -> Vec<Case> {
    vec![
        req("CONSUMER.INFO.S.PULL", ""),
        req("CONSUMER.INFO.S.PUSH", "{}"),
        req("CONSUMER.INFO.S.PULL", r#"{"x":1}"#),
        req("CONSUMER.INFO.S.NOPE", ""),
        req("CONSUMER.INFO.NOPE.PULL", ""),
        req("CONSUMER.NAMES.S", ""),
        req("CONSUMER.NAMES.S", r#"{"offset":3}"#),
        req("CONSUMER.NAMES.S", r#"{"offset":-4}"#),
        req("CONSUMER.NAMES.S", r#"{"offset":1000}"#),
        req("CONSUMER.NAMES.S", "nope"),
        req("CONSUMER.NAMES.S", r#"{"offset":"x"}"#),
        req("CONSUMER.NAMES.NOPE", ""),
        req("CONSUMER.LIST.S", ""),
        req("CONSUMER.LIST.S", r#"{"offset":14}"#),
        req("CONSUMER.LIST.NOPE", ""),
        req("STREAM.INFO.S", ""),
        req("INFO", ""),
    ]
}

/// Creates of existing consumers, updates and pauses.
fn updates_and_pauses() -> Vec<Case> {
    vec![
        // Create again: the same config is fine, a different one is refused with `create`.
        req(
            "CONSUMER.CREATE.S.PULL",
            r#"{"stream_name":"S","action":"create","config":{"durable_name":"PULL","ack_policy":"explicit"}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.PULL",
            r#"{"stream_name":"S","action":"create","config":{"durable_name":"PULL","ack_policy":"explicit","description":"new"}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.GONE",
            r#"{"stream_name":"S","action":"update","config":{"durable_name":"GONE"}}"#,
        ),
        req(
            "CONSUMER.CREATE.S.PULL",
            r#"{"stream_name":"S","action":"update","config":{"durable_name":"PULL","ack_policy":"explicit","description":"new","max_ack_pending":20}}"#,
        ),
        on_s("PULL", r#"{"durable_name":"PULL","ack_policy":"none"}"#),
        on_s(
            "PULL",
            r#"{"durable_name":"PULL","ack_policy":"explicit","deliver_policy":"new"}"#,
        ),
        on_s(
            "PULL",
            r#"{"durable_name":"PULL","ack_policy":"explicit","deliver_subject":"x"}"#,
        ),
        on_s(
            "PULL",
            r#"{"durable_name":"PULL","ack_policy":"explicit","max_waiting":7}"#,
        ),
        on_s(
            "PUSH",
            r#"{"durable_name":"PUSH","ack_policy":"explicit","idle_heartbeat":5000000000,"flow_control":true,"deliver_subject":"out.push2"}"#,
        ),
        on_s("FILT", r#"{"filter_subject":"s.b"}"#),
        req("CONSUMER.INFO.S.FILT", ""),
        // Pause, unpause, and a pause of the past.
        req(
            "CONSUMER.PAUSE.S.PULL",
            r#"{"pause_until":"2099-06-01T00:00:00+02:00"}"#,
        ),
        req("CONSUMER.INFO.S.PULL", ""),
        req("CONSUMER.PAUSE.S.PULL", ""),
        req(
            "CONSUMER.PAUSE.S.PULL",
            r#"{"pause_until":"2001-01-01T00:00:00Z"}"#,
        ),
        req("CONSUMER.INFO.S.PULL", ""),
        req("CONSUMER.PAUSE.S.NOPE", "{}"),
        req("CONSUMER.PAUSE.NOPE.PULL", "{}"),
        req("CONSUMER.PAUSE.S.PULL", r#"{"pause_until":5}"#),
        req("CONSUMER.PAUSE.S.PULL", r#"{"bogus":5}"#),
        // A create does not change a pause.
        on_s("PAUSED", r#"{"durable_name":"PAUSED"}"#),
    ]
}

/// Unpin, step down and delete.
fn unpin_and_delete() -> Vec<Case> {
    vec![
        // Unpin.
        req("CONSUMER.UNPIN.S.PIN", r#"{"group":"g1"}"#),
        req("CONSUMER.UNPIN.S.PIN", r#"{"group":"g2"}"#),
        req("CONSUMER.UNPIN.S.PIN", ""),
        req("CONSUMER.UNPIN.S.PIN", r#"{"group":""}"#),
        req("CONSUMER.UNPIN.S.PIN", r#"{"group":"not valid"}"#),
        req("CONSUMER.UNPIN.S.NOPE", r#"{"group":"g1"}"#),
        req("CONSUMER.UNPIN.NOPE.PIN", r#"{"group":"g1"}"#),
        req("CONSUMER.LEADER.STEPDOWN.S.PULL", ""),
        // Delete.
        req("CONSUMER.DELETE.S.PULL", r#"{"x":1}"#),
        req("CONSUMER.DELETE.S.PULL", ""),
        req("CONSUMER.DELETE.S.PULL", ""),
        req("CONSUMER.DELETE.NOPE.PULL", ""),
        req("CONSUMER.NAMES.S", ""),
        req("STREAM.INFO.S", ""),
        // A stream's deletion takes its consumers.
        req("STREAM.DELETE.M", ""),
        req(
            "STREAM.CREATE.M",
            r#"{"name":"M","subjects":["m.>"],"max_consumers":1}"#,
        ),
        req("CONSUMER.NAMES.M", ""),
    ]
}

/// An account without JetStream.
fn without_jetstream() -> Vec<Case> {
    vec![
        in_b("CONSUMER.CREATE.S.N1", r#"{"stream_name":"S","config":{}}"#),
        in_b(
            "CONSUMER.CREATE.S.N1",
            r#"{"stream_name":"S","config":{"bogus":1}}"#,
        ),
        in_b("CONSUMER.INFO.S.N1", ""),
        in_b("CONSUMER.INFO.S.N1", r#"{"x":1}"#),
        in_b("CONSUMER.NAMES.S", ""),
        in_b("CONSUMER.LIST.S", ""),
        in_b("CONSUMER.DELETE.S.N1", ""),
        in_b("CONSUMER.PAUSE.S.N1", r#"{"pause_until":5}"#),
        in_b("CONSUMER.PAUSE.S.N1", "{}"),
        in_b("CONSUMER.UNPIN.S.N1", ""),
        in_b("CONSUMER.UNPIN.S.N1", r#"{"group":"g"}"#),
        in_b("CONSUMER.LEADER.STEPDOWN.S.N1", ""),
    ]
}

/// Every case, in order.
pub fn all() -> Vec<Case> {
    let mut out = setup();
    out.extend(subject_and_json_errors());
    out.extend(config_errors());
    out.extend(pull_and_start_errors());
    out.extend(other_config_errors());
    out.extend(lifecycle());
    out.extend(queries());
    out.extend(updates_and_pauses());
    out.extend(unpin_and_delete());
    out.extend(without_jetstream());
    out
}

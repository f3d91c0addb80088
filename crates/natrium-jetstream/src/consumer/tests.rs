//! Unit tests of consumer config defaults, checks, update rules and metadata.

use natrium_auth::account::JsAccountLimits;

use super::check::{check_config, is_valid_group_name};
use super::config::{AckPolicy, ConsumerConfig, DeliverPolicy, PriorityPolicy};
use super::context::ConsumerContext;
use super::decode::decode_create;
use super::defaults::set_defaults;
use super::update::{check_update, copy_metadata, required_api_level, set_static_metadata};
use crate::config::stream::{ConsumerLimits, Retention};
use crate::config::StreamConfig;
use crate::errors::table;

fn stream() -> StreamConfig {
    StreamConfig {
        name: "S".into(),
        subjects: vec!["s.>".into()],
        num_replicas: 1,
        ..StreamConfig::default()
    }
}

fn ctx<'a>(stream: &'a StreamConfig, account: &'a JsAccountLimits) -> ConsumerContext<'a> {
    ConsumerContext {
        stream,
        server_max_ack_pending: 0,
        server_max_request_batch: 0,
        account: *account,
        pedantic: false,
        recovering: false,
    }
}

/// The config of a create body, defaulted and checked: its echo, or the error code.
fn prepared(stream: &StreamConfig, body: &str) -> Result<ConsumerConfig, u16> {
    let account = JsAccountLimits::default();
    let mut cfg = decode_create(body.as_bytes())
        .map_err(|e| e.err_code)?
        .config;
    let ctx = ctx(stream, &account);
    set_defaults(&mut cfg, &ctx).map_err(|e| e.err_code)?;
    check_config(&cfg, &ctx).map_err(|e| e.err_code)?;
    Ok(cfg)
}

#[test]
fn consumer_defaults_pull_and_push_as_go() {
    let s = stream();
    let pull = prepared(&s, r#"{"config":{"ack_policy":"explicit"}}"#).unwrap();
    assert_eq!(pull.max_deliver, -1);
    assert_eq!(pull.max_waiting, 512);
    assert_eq!(pull.ack_wait, 30_000_000_000);
    assert_eq!(pull.max_ack_pending, 1000);
    let push = prepared(&s, r#"{"config":{"deliver_subject":"x"}}"#).unwrap();
    assert_eq!(
        (push.max_waiting, push.ack_wait, push.max_ack_pending),
        (0, 0, 0)
    );
    let backoff = prepared(
        &s,
        r#"{"config":{"ack_policy":"explicit","backoff":[5,10],"max_deliver":3}}"#,
    )
    .unwrap();
    assert_eq!(backoff.ack_wait, 5);
    let pinned = prepared(
        &s,
        r#"{"config":{"priority_policy":"pinned_client","priority_groups":["g"]}}"#,
    )
    .unwrap();
    assert_eq!(pinned.priority_timeout, 120_000_000_000);
    let json = String::from_utf8(crate::config::to_go_json(&pull)).unwrap();
    assert_eq!(
        json,
        r#"{"deliver_policy":"all","ack_policy":"explicit","ack_wait":30000000000,"max_deliver":-1,"replay_policy":"instant","max_waiting":512,"max_ack_pending":1000,"num_replicas":0}"#
    );
}

#[test]
fn consumer_defaults_take_stream_and_account_limits() {
    let mut s = stream();
    s.consumer_limits = ConsumerLimits {
        inactive_threshold: 60_000_000_000,
        max_ack_pending: 0,
    };
    let cfg = prepared(&s, r#"{"config":{}}"#).unwrap();
    assert_eq!(cfg.inactive_threshold, 60_000_000_000);
    let account = JsAccountLimits {
        max_ack_pending: 50,
        ..JsAccountLimits::default()
    };
    let plain = stream();
    let context = ctx(&plain, &account);
    let mut cfg = ConsumerConfig {
        ack_policy: AckPolicy::Explicit,
        ..ConsumerConfig::default()
    };
    set_defaults(&mut cfg, &context).unwrap();
    assert_eq!(cfg.max_ack_pending, 50);
    cfg.max_ack_pending = 51;
    assert_eq!(check_config(&cfg, &context).unwrap_err().err_code, 10121);
}

#[test]
fn consumer_defaults_pedantic_refuses_changes() {
    let s = stream();
    let account = JsAccountLimits::default();
    let mut context = ctx(&s, &account);
    context.pedantic = true;
    let mut cfg = ConsumerConfig {
        max_deliver: -5,
        ..ConsumerConfig::default()
    };
    let err = set_defaults(&mut cfg, &context).unwrap_err();
    assert_eq!(
        err.description,
        "pedantic mode: max_deliver must be set to -1"
    );
}

#[test]
fn consumer_check_refuses_with_go_errors() {
    let s = stream();
    for (body, want) in [
        (
            r#"{"config":{"num_replicas":-1}}"#,
            table::REPLICAS_COUNT_CANNOT_BE_NEGATIVE,
        ),
        (
            r#"{"config":{"name":"a.b"}}"#,
            table::STREAM_INVALID_CONFIG_F,
        ),
        (
            r#"{"config":{"deliver_subject":"x.*"}}"#,
            table::CONSUMER_DELIVER_TO_WILDCARDS,
        ),
        (
            r#"{"config":{"deliver_subject":"s.x"}}"#,
            table::CONSUMER_DELIVER_CYCLE,
        ),
        (
            r#"{"config":{"rate_limit_bps":1}}"#,
            table::CONSUMER_PULL_WITH_RATE_LIMIT,
        ),
        (
            r#"{"config":{"filter_subjects":["s.*","s.a"]}}"#,
            table::CONSUMER_OVERLAPPING_SUBJECT_FILTERS,
        ),
        (
            r#"{"config":{"opt_start_seq":5}}"#,
            table::CONSUMER_INVALID_POLICY,
        ),
        (
            r#"{"config":{"sample_freq":"x"}}"#,
            table::CONSUMER_INVALID_SAMPLING,
        ),
        (
            r#"{"config":{"priority_groups":["g"]}}"#,
            table::CONSUMER_PRIORITY_GROUP_WITH_POLICY_NONE,
        ),
    ] {
        assert_eq!(prepared(&s, body).unwrap_err(), want.err_code, "{body}");
    }
    let mut wq = stream();
    wq.retention = Retention::WorkQueue;
    assert!(prepared(&wq, r#"{"config":{}}"#).is_err());
    assert!(is_valid_group_name("a/b_c=d-1"));
    assert!(!is_valid_group_name("a b"));
    assert!(!is_valid_group_name(&"g".repeat(17)));
}

#[test]
fn consumer_update_rules_as_go() {
    let old = ConsumerConfig {
        durable_name: "D".into(),
        ack_policy: AckPolicy::Explicit,
        ..ConsumerConfig::default()
    };
    let mut new = old.clone();
    new.description = "changed".into();
    assert!(check_update(&old, &new, |_| false).is_ok());
    new.deliver_policy = DeliverPolicy::New;
    let err = check_update(&old, &new, |_| false).unwrap_err();
    assert_eq!(err.err_code, 10012);
    assert_eq!(err.description, "deliver policy can not be updated");
    let mut push = old.clone();
    push.deliver_subject = "x".into();
    let err = check_update(&old, &push, |_| false).unwrap_err();
    assert_eq!(
        err.description,
        "can not update pull consumer to push based"
    );
}

#[test]
fn consumer_metadata_levels_as_go() {
    let mut cfg = ConsumerConfig {
        priority_policy: PriorityPolicy::Overflow,
        ..ConsumerConfig::default()
    };
    assert_eq!(required_api_level(&cfg), 1);
    cfg.ack_policy = AckPolicy::FlowControl;
    assert_eq!(required_api_level(&cfg), 4);
    cfg.metadata.insert("_nats.ver".into(), "x".into());
    set_static_metadata(&mut cfg);
    assert_eq!(
        cfg.metadata.get("_nats.req.level").map(String::as_str),
        Some("4")
    );
    assert!(!cfg.metadata.contains_key("_nats.ver"));
    let prev = ConsumerConfig::default();
    copy_metadata(&mut cfg, &prev);
    assert!(cfg.metadata.is_empty());
}

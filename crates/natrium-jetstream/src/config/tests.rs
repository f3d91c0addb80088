//! Defaults, checks and decoding against what the Go server v2.15.2 answered on this machine
//! (2026-11-24); each expected error is the `error` object Go sent.

use super::*;
use crate::errors::ApiError;

fn ctx() -> CheckContext {
    CheckContext::default()
}

fn cfg(json: &str) -> StreamConfig {
    decode_stream_request(json.as_bytes()).unwrap().config
}

fn err_json(e: &ApiError) -> String {
    String::from_utf8(to_go_json(e)).unwrap()
}

fn create(json: &str) -> Result<StreamConfig, ApiError> {
    let req = decode_stream_request(json.as_bytes())?;
    let ctx = CheckContext {
        pedantic: req.pedantic,
        ..ctx()
    };
    req.config.checked_for_create(&ctx)
}

#[test]
fn config_default_filled_matches_go_create_response() {
    let c = create(r#"{"name":"S1","subjects":["foo.>"]}"#).unwrap();
    let out = String::from_utf8(to_go_json(&with_dynamic_metadata(&c, &ctx()))).unwrap();
    assert_eq!(
        out,
        r#"{"name":"S1","subjects":["foo.\u003e"],"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1,"duplicate_window":120000000000,"compression":"none","allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"metadata":{"_nats.level":"5","_nats.req.level":"0","_nats.ver":"2.15.2"}}"#
    );
    // STREAM.LIST shows the stored map only.
    assert_eq!(
        String::from_utf8(to_go_json(&c.metadata)).unwrap(),
        r#"{"_nats.req.level":"0"}"#
    );
}

#[test]
fn config_defaults_follow_go() {
    let c = create(r#"{"name":"S2","subjects":["bar"],"max_age":1000000000}"#).unwrap();
    assert_eq!(c.duplicate_window, 1_000_000_000, "clipped to max_age");
    let c = create(r#"{"name":"S3","discard":"NEW"}"#).unwrap();
    assert_eq!(c.subjects, vec!["S3".to_owned()]);
    assert_eq!(c.discard, stream::Discard::New);
    let c = create(r#"{"name":"M1","mirror":{"name":"U1"}}"#).unwrap();
    assert!(c.subjects.is_empty());
    assert_eq!(c.duplicate_window, 0);
    let c = create(
        r#"{"name":"B","subject_delete_marker_ttl":1000000000,"allow_msg_schedules":true,"allow_atomic":true,"allow_batched":true}"#,
    )
    .unwrap();
    assert!(c.allow_msg_ttl && c.allow_rollup_hdrs);
    assert_eq!(
        c.metadata.get("_nats.req.level").map(String::as_str),
        Some("4")
    );
    let c = create(
        r#"{"name":"C","metadata":{"_nats.ver":"1","_nats.level":"9","_nats.req.level":"77"}}"#,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(to_go_json(&c.metadata)).unwrap(),
        r#"{"_nats.req.level":"0"}"#
    );
    let c = create(r#"{"name":"A","metadata":{"a":"x"},"description":"d"}"#).unwrap();
    assert_eq!(c.metadata.len(), 2);
}

/// Create requests and the error Go answered.
const CREATE_ERRORS: &[(&str, &str)] = &[
    (
        r#"{"name":"A","max_age":-1}"#,
        r#"{"code":500,"err_code":10052,"description":"max age can not be negative"}"#,
    ),
    (
        r#"{"name":"A","max_age":5}"#,
        r#"{"code":500,"err_code":10052,"description":"max age needs to be \u003e= 100ms"}"#,
    ),
    (
        r#"{"name":"A","duplicate_window":-1}"#,
        r#"{"code":500,"err_code":10052,"description":"duplicates window can not be negative"}"#,
    ),
    (
        r#"{"name":"A","duplicate_window":5}"#,
        r#"{"code":500,"err_code":10052,"description":"duplicates window needs to be \u003e= 100ms"}"#,
    ),
    (
        r#"{"name":"A","max_age":1000000000,"duplicate_window":2000000000}"#,
        r#"{"code":500,"err_code":10052,"description":"duplicates window can not be larger then max age"}"#,
    ),
    (
        r#"{"name":"A","deny_purge":true,"allow_rollup_hdrs":true}"#,
        r#"{"code":500,"err_code":10052,"description":"roll-ups require the purge permission"}"#,
    ),
    (
        r#"{"name":"A","allow_msg_counter":true,"discard":"new"}"#,
        r#"{"code":500,"err_code":10052,"description":"counter stream cannot use discard new"}"#,
    ),
    (
        r#"{"name":"A","sealed":true}"#,
        r#"{"code":500,"err_code":10052,"description":"stream configuration for create can not be sealed"}"#,
    ),
    (
        r#"{"name":"A","mirror_direct":true}"#,
        r#"{"code":500,"err_code":10052,"description":"stream has no mirror but does have mirror direct"}"#,
    ),
    (
        r#"{"name":"A","num_replicas":-1}"#,
        r#"{"code":400,"err_code":10133,"description":"replicas count cannot be negative"}"#,
    ),
    (
        r#"{"name":"A","num_replicas":6}"#,
        r#"{"code":500,"err_code":10052,"description":"maximum replicas is 5"}"#,
    ),
    (
        r#"{"name":"S3","num_replicas":3}"#,
        r#"{"code":500,"err_code":10074,"description":"replicas \u003e 1 not supported in non-clustered mode"}"#,
    ),
    (
        r#"{"name":"A","subjects":["a","a"]}"#,
        r#"{"code":500,"err_code":10052,"description":"subject \"a\" overlaps with \"a\""}"#,
    ),
    (
        r#"{"name":"A","subjects":["a.*","a.b"]}"#,
        r#"{"code":500,"err_code":10052,"description":"subject \"a.*\" overlaps with \"a.b\""}"#,
    ),
    (
        r#"{"name":"A","subjects":["a..b"]}"#,
        r#"{"code":500,"err_code":10052,"description":"invalid subject"}"#,
    ),
    (
        r#"{"name":"A","subjects":[">"]}"#,
        r#"{"code":500,"err_code":10052,"description":"capturing all subjects requires no-ack to be true"}"#,
    ),
    (
        r#"{"name":"A","subjects":["$JS.API.>"]}"#,
        r#"{"code":500,"err_code":10052,"description":"subjects that overlap with jetstream api require no-ack to be true"}"#,
    ),
    (
        r#"{"name":"A","subjects":["$SYS.>"]}"#,
        r#"{"code":500,"err_code":10052,"description":"subjects that overlap with system api require no-ack to be true"}"#,
    ),
    (
        r#"{"name":"A","mirror":{"name":"X"},"subjects":["a"]}"#,
        r#"{"code":400,"err_code":10034,"description":"stream mirrors can not contain subjects"}"#,
    ),
    (
        r#"{"name":"A","mirror":{"name":"X"},"first_seq":5}"#,
        r#"{"code":400,"err_code":10143,"description":"stream mirrors can not have first sequence configured"}"#,
    ),
    (
        r#"{"name":"A","mirror":{"name":"X.Y"}}"#,
        r#"{"code":400,"err_code":10142,"description":"mirrored stream name is invalid"}"#,
    ),
    (
        r#"{"name":"A","sources":[{"name":"X"},{"name":"X"}]}"#,
        r#"{"code":400,"err_code":10140,"description":"duplicate source configuration detected"}"#,
    ),
    (
        r#"{"name":"A","subject_transform":{"src":"a.*","dest":"b.{{foo(1)}}"},"subjects":["a.*"]}"#,
        r#"{"code":400,"err_code":10156,"description":"stream transform: invalid mapping destination: unknown function in {{foo(1)}}"}"#,
    ),
    (
        r#"{"name":"A","subject_transform":{"src":"a..","dest":"b"}}"#,
        r#"{"code":400,"err_code":10155,"description":"stream transform source: invalid subject a.."}"#,
    ),
    (
        r#"{"name":"A","subject_transform":{"src":"a.*","dest":"b.$2"}}"#,
        r#"{"code":400,"err_code":10156,"description":"stream transform: invalid mapping destination: wildcard index out of range in $2: [2]"}"#,
    ),
    (
        r#"{"name":"A","subject_transform":{"src":"a.*","dest":"b.*"}}"#,
        r#"{"code":400,"err_code":10156,"description":"stream transform: invalid subject"}"#,
    ),
    (
        r#"{"name":"A","subjects":["a"],"republish":{"src":">","dest":"a"}}"#,
        r#"{"code":500,"err_code":10052,"description":"stream configuration for republish destination forms a cycle"}"#,
    ),
    (
        r#"{"name":"A","subjects":["a"],"republish":{"src":"a.*","dest":"b.$3"}}"#,
        r#"{"code":500,"err_code":10052,"description":"stream configuration for republish with transform from 'a.*' to 'b.$3' not valid"}"#,
    ),
    (
        r#"{"name":"A","placement":{"preferred":"x"}}"#,
        r#"{"code":500,"err_code":10052,"description":"preferred server not permitted in placement"}"#,
    ),
    (
        r#"{"name":"A","persist_mode":"async","storage":"memory"}"#,
        r#"{"code":500,"err_code":10052,"description":"async persist mode is only supported on file storage"}"#,
    ),
    (
        r#"{"name":"A","subject_delete_marker_ttl":5}"#,
        r#"{"code":500,"err_code":10052,"description":"subject delete marker TTL must be at least 1 second"}"#,
    ),
    (
        r#"{"name":"A\\x"}"#,
        r#"{"code":400,"err_code":10128,"description":"Stream name can not contain path separators"}"#,
    ),
    (
        r#"{"name":"S3","pedantic":true,"max_msgs":-5}"#,
        r#"{"code":400,"err_code":10157,"description":"pedantic mode: max_msgs must be set to -1"}"#,
    ),
];

#[test]
fn config_create_errors_match_go() {
    for (req, want) in CREATE_ERRORS {
        let got = create(req).expect_err(req);
        assert_eq!(err_json(&got), *want, "request {req}");
    }
}

/// Bodies and the `invalid JSON` error Go answered.
const JSON_ERRORS: &[(&str, &str)] = &[
    ("gar", "invalid character 'g' looking for beginning of value at offset 1"),
    (r#"{"name":"S3"} garbage"#, "invalid character 'g' looking for beginning of value at offset 15"),
    (r#"{"name":"S3",}"#, "invalid character '}' looking for beginning of object key string at offset 14"),
    (r#"{"name":"S3""#, "unexpected EOF"),
    (r#"{"name":"S3","max_msgs":"x"}"#, "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.max_msgs of type int64"),
    (r#"{"name":"S3","max_msgs":"x","retention":"foo"}"#, r#"can not unmarshal "\"foo\"""#),
    (r#"{"name":"S3","storage":"foo"}"#, r#"can not unmarshal "\"foo\"""#),
    (r#"{"name":"S3","compression":"zz"}"#, "unknown compression algorithm"),
    (r#"{"name":"S3","persist_mode":"zz"}"#, r#"can not unmarshal "\"zz\"""#),
    (r#"{"name":"S3","foo":1}"#, r#"json: unknown field "foo""#),
    (r#"{"name":"S3","max_msg_size":99999999999}"#, "json: cannot unmarshal number 99999999999 into Go struct field StreamConfigRequest.StreamConfig.max_msg_size of type int32"),
    (r#"{"name":"S3","max_msgs":1.5}"#, "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.StreamConfig.max_msgs of type int64"),
    (r#"{"name":"S3","subjects":"a"}"#, "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.subjects of type []string"),
    (r#"{"name":"S3","mirror":{"name":1}}"#, "json: cannot unmarshal number into Go struct field StreamSource.StreamConfig.mirror.name of type string"),
    (r#"{"name":"S3","max_age":"1s"}"#, "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.max_age of type time.Duration"),
    ("[]", "json: cannot unmarshal array into Go value of type server.StreamConfigRequest"),
    (r#"{"name":"S3","first_seq":-1}"#, "json: cannot unmarshal number -1 into Go struct field StreamConfigRequest.StreamConfig.first_seq of type uint64"),
    (r#"{"name":"S3","sealed":1}"#, "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.sealed of type bool"),
    (r#"{"name":"S3","metadata":{"a":1}}"#, "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.metadata of type string"),
    (r#"{"name":"Z","sources":[{"name":2}]}"#, "json: cannot unmarshal number into Go struct field StreamSource.StreamConfig.sources.name of type string"),
    (r#"{"name":"Z","subjects":[1]}"#, "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.subjects of type string"),
    (r#"{"name":"Z","pedantic":1}"#, "json: cannot unmarshal number into Go struct field StreamConfigRequest.pedantic of type bool"),
    (r#"{"name":"Z","sources":[1]}"#, "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.sources of type server.StreamSource"),
    (r#"{"name":"A","external":1}"#, r#"json: unknown field "external""#),
];

#[test]
fn config_decode_errors_match_go() {
    for (body, want) in JSON_ERRORS {
        let got = decode_stream_request(body.as_bytes()).expect_err(body);
        assert_eq!((got.code, got.err_code), (400, 10025), "{body}");
        assert_eq!(
            got.description,
            format!("invalid JSON: {want}"),
            "body {body}"
        );
    }
}

#[test]
fn config_decode_go_stream_semantics() {
    assert_eq!(cfg(""), StreamConfig::default());
    assert_eq!(cfg(r#"{"NAME":"S3"}"#).name, "S3");
    assert_eq!(cfg(r#"{"name":"S3","max_msgs":null}"#).max_msgs, 0);
    assert_eq!(cfg(r#"{"name":"S3"}{"name":"S4"}"#).name, "S4");
    let generic: StreamConfig = decode_request(br#"{"name":"x"} {"max_msgs":5}"#).unwrap();
    assert_eq!((generic.name.as_str(), generic.max_msgs), ("x", 5));
    let e = decode_request::<StreamConfig>(b"{\"a\":tru}").unwrap_err();
    assert_eq!(
        e.description,
        "invalid JSON: invalid character '}' in literal true (expecting 'e') at offset 9"
    );
}

fn update(old: &str, new: &str) -> Result<StreamConfig, ApiError> {
    let old = create(old).unwrap();
    cfg(new).checked_for_update(&old, &ctx())
}

const U1: &str =
    r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true,"allow_msg_ttl":true}"#;

#[test]
fn config_update_errors_match_go() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"name":"U1","subjects":["u1"],"storage":"memory","deny_delete":true,"deny_purge":true,"allow_msg_ttl":true}"#,
            "stream configuration update can not change storage type",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"retention":"workqueue","deny_delete":true,"deny_purge":true,"allow_msg_ttl":true}"#,
            "stream configuration update can not change retention policy to/from workqueue",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"deny_purge":true,"allow_msg_ttl":true}"#,
            "stream configuration update can not cancel deny message deletes",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"allow_msg_ttl":true}"#,
            "stream configuration update can not cancel deny purge",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true}"#,
            "message TTL status can not be disabled",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true,"allow_msg_ttl":true,"allow_msg_counter":true}"#,
            "counter stream cannot use message TTLs",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true,"allow_msg_ttl":true,"persist_mode":"async"}"#,
            "stream configuration update can not change persist mode",
        ),
        (
            r#"{"name":"U1","subjects":["u1"],"max_age":-1}"#,
            "max age can not be negative",
        ),
    ];
    for (new, want) in cases {
        let e = update(U1, new).expect_err(new);
        assert_eq!(
            (e.code, e.err_code, e.description.as_str()),
            (500, 10052, *want),
            "{new}"
        );
    }
    let e = update(U1, r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true,"allow_msg_ttl":true,"num_replicas":3}"#).unwrap_err();
    assert_eq!(
        err_json(&e),
        r#"{"code":500,"err_code":10074,"description":"replicas \u003e 1 not supported in non-clustered mode"}"#
    );
    let e = update(
        r#"{"name":"M1","mirror":{"name":"U1"}}"#,
        r#"{"name":"M1","mirror":{"name":"U2"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err_json(&e),
        r#"{"code":400,"err_code":10055,"description":"stream mirror configuration can not be updated"}"#
    );
}

#[test]
fn config_update_seal_and_promote() {
    let sealed = update(U1, r#"{"name":"U1","subjects":["u1"],"deny_delete":true,"deny_purge":true,"allow_msg_ttl":true,"sealed":true,"max_age":5000000000}"#).unwrap();
    assert_eq!(
        (sealed.max_age, sealed.duplicate_window),
        (0, 5_000_000_000)
    );
    assert_eq!(sealed.discard, stream::Discard::New);
    let e = cfg(U1).checked_for_update(&sealed, &ctx()).unwrap_err();
    assert_eq!(
        e.description,
        "stream configuration update can not unseal a sealed stream"
    );
    let promoted = update(
        r#"{"name":"M1","mirror":{"name":"U1"}}"#,
        r#"{"name":"M1"}"#,
    )
    .unwrap();
    assert_eq!(promoted.subjects, vec!["M1".to_owned()]);
    assert_eq!(promoted.duplicate_window, 120_000_000_000);
    let m2 = update(
        r#"{"name":"M2","mirror":{"name":"ZZ"}}"#,
        r#"{"name":"M2","mirror":{"name":"ZZ"},"allow_msg_ttl":true}"#,
    )
    .unwrap();
    assert_eq!(
        m2.metadata.get("_nats.req.level").map(String::as_str),
        Some("1")
    );
}

#[test]
fn config_mapping_accepts_go_functions() {
    use mapping::validate_mapping;
    assert!(validate_mapping("a.*.*", "b.{{wildcard(2)}}.{{Partition(3,1)}}").is_ok());
    assert!(validate_mapping("a.*", "b.{{split(1,-)}}").is_ok());
    assert!(validate_mapping("a", "b.{{partition(3)}}").is_ok());
    // v2.15.2 knows `left` and `right` in its validation pass too.
    assert!(validate_mapping("a.*", "b.{{left(1,2)}}").is_ok());
    assert_eq!(
        validate_mapping("a.*", "b..c").unwrap_err().to_string(),
        "invalid mapping destination: invalid transform"
    );
}

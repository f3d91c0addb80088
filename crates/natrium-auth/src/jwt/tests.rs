//! JWT decoding and the operator-mode decision, with tokens signed here.

use base64::Engine as _;
use nkeys::KeyPair;
use serde_json::{json, Value};

use super::*;
use crate::account::{ExportKind, ImportKind};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;
const NOW: i64 = 1_800_000_000;

fn sign(claims: &Value, signer: &KeyPair) -> String {
    let head = B64.encode(r#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let body = B64.encode(claims.to_string());
    let signed = format!("{head}.{body}");
    let sig = signer.sign(signed.as_bytes()).unwrap_or_default();
    format!("{signed}.{}", B64.encode(sig))
}

fn claims(sub: &str, iss: &KeyPair, kind: &str, mut nats: Value) -> Value {
    nats["type"] = json!(kind);
    nats["version"] = json!(2);
    json!({"jti": "X", "iat": NOW - 10, "iss": iss.public_key(), "name": kind, "sub": sub,
           "nats": nats})
}

struct World {
    op: KeyPair,
    acc: KeyPair,
    acc_signer: KeyPair,
    user: KeyPair,
    auth: JwtAuth,
}

fn world(account_nats: Value) -> World {
    let op = KeyPair::new_operator();
    let acc = KeyPair::new_account();
    let acc_signer = KeyPair::new_account();
    let user = KeyPair::new_user();
    let operator = sign(&claims(&op.public_key(), &op, "operator", json!({})), &op);
    let mut nats = account_nats;
    nats["signing_keys"] = json!([acc_signer.public_key()]);
    let account = sign(&claims(&acc.public_key(), &op, "account", nats), &op);
    let auth = JwtAuth::new(&[operator], &[(acc.public_key(), account)]).unwrap();
    World {
        op,
        acc,
        acc_signer,
        user,
        auth,
    }
}

impl World {
    fn user_jwt(&self, signer: &KeyPair, nats: Value, extra: Value) -> String {
        let mut c = claims(&self.user.public_key(), signer, "user", nats);
        if let (Value::Object(c), Value::Object(extra)) = (&mut c, extra) {
            c.extend(extra);
        }
        sign(&c, signer)
    }

    fn sig(&self, nonce: &str) -> String {
        B64.encode(self.user.sign(nonce.as_bytes()).unwrap_or_default())
    }

    fn admit(&self, jwt: &str) -> Result<JwtUser, Refusal> {
        self.auth
            .authenticate(jwt, Some(&self.sig("nonce")), "nonce", NOW)
    }
}

#[test]
fn jwt_decode_refuses_malformed_and_tampered() {
    let w = world(json!({}));
    let jwt = w.user_jwt(&w.acc, json!({}), json!({}));
    assert!(decode::<UserNats>(&jwt).is_ok());
    assert_eq!(decode::<UserNats>("a.b").err(), Some(DecodeError::Chunks));
    assert_eq!(
        decode::<AccountNats>(&jwt).err(),
        Some(DecodeError::Kind("account"))
    );
    // A claims part swapped for another one keeps the old signature: refused.
    let parts: Vec<&str> = jwt.split('.').collect();
    let other = w.user_jwt(&w.acc, json!({"pub": {"allow": [">"]}}), json!({}));
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        other.split('.').nth(1).unwrap(),
        parts[2]
    );
    assert_eq!(
        decode::<UserNats>(&forged).err(),
        Some(DecodeError::Signature)
    );
    // Signed by a user key instead of an account key: the signature is fine, the kind is not.
    let self_signed = w.user_jwt(&w.user, json!({}), json!({}));
    assert_eq!(
        decode::<UserNats>(&self_signed).err(),
        Some(DecodeError::IssuerKind)
    );
    let decorated =
        format!("-----BEGIN NATS OPERATOR JWT-----\n{jwt}\n------END NATS OPERATOR JWT------\n");
    assert_eq!(undecorate(&decorated), jwt);
}

#[test]
fn jwt_user_admitted_with_account_and_permissions() {
    let w = world(json!({"default_permissions": {"pub": {"allow": ["def.>"]}}}));
    let plain = w.user_jwt(&w.acc, json!({}), json!({}));
    let u = w.admit(&plain).unwrap();
    assert_eq!(u.account, w.acc.public_key());
    assert_eq!(u.public_key, w.user.public_key());
    let publish = u.permissions.and_then(|p| p.publish).and_then(|p| p.allow);
    assert_eq!(publish, Some(vec!["def.>".to_owned()]));
    let by_signer = w.user_jwt(
        &w.acc_signer,
        json!({"issuer_account": w.acc.public_key(), "sub": {"deny": ["x"]}, "resp": {"max": 0}}),
        json!({}),
    );
    let u = w.admit(&by_signer).unwrap();
    let perms = u.permissions.unwrap();
    assert_eq!(perms.subscribe.unwrap().deny, vec!["x".to_owned()]);
    assert_eq!(perms.response.unwrap().max_msgs, Some(1));
}

#[test]
fn jwt_user_refusals_carry_go_debug_text() {
    let w = world(json!({"revocations": {}}));
    let refused = |r: Result<JwtUser, Refusal>| r.err().map(|r| r.0).unwrap_or_default();
    let expired = w.user_jwt(&w.acc, json!({}), json!({"exp": NOW - 1}));
    assert_eq!(
        refused(w.admit(&expired)),
        "User JWT no longer valid: claim is expired"
    );
    let early = w.user_jwt(&w.acc, json!({}), json!({"nbf": NOW + 60}));
    assert_eq!(
        refused(w.admit(&early)),
        "User JWT no longer valid: claim is not yet valid"
    );
    let stranger = KeyPair::new_account();
    let unknown = w.user_jwt(&stranger, json!({}), json!({}));
    assert_eq!(
        refused(w.admit(&unknown)),
        "Account JWT lookup error: account missing"
    );
    let rogue = KeyPair::new_account();
    let bad_issuer = w.user_jwt(
        &rogue,
        json!({"issuer_account": w.acc.public_key()}),
        json!({}),
    );
    assert_eq!(
        refused(w.admit(&bad_issuer)),
        "User JWT issuer is not known"
    );
    let good = w.user_jwt(&w.acc, json!({}), json!({}));
    let wrong_sig = w
        .auth
        .authenticate(&good, Some(&w.sig("other")), "nonce", NOW);
    assert_eq!(refused(wrong_sig), "Signature not verified");
    assert_eq!(
        refused(w.auth.authenticate(&good, None, "nonce", NOW)),
        "Signature missing"
    );
    let bearer = w.user_jwt(&w.acc, json!({"bearer_token": true}), json!({}));
    assert!(w.auth.authenticate(&bearer, None, "nonce", NOW).is_ok());
    let _ = &w.op;
}

#[test]
fn jwt_revocations_and_untrusted_accounts() {
    let user = KeyPair::new_user();
    let w = world(json!({"revocations": {user.public_key(): NOW}}));
    let mut c = claims(&user.public_key(), &w.acc, "user", json!({}));
    c["iat"] = json!(NOW - 5);
    let jwt = sign(&c, &w.acc);
    let sig = B64.encode(user.sign(b"n").unwrap_or_default());
    let r = w.auth.authenticate(&jwt, Some(&sig), "n", NOW);
    assert_eq!(
        r.err().map(|r| r.0).as_deref(),
        Some("User authentication revoked")
    );
    // An account signed by an operator nobody trusts.
    let other_op = KeyPair::new_operator();
    let acc = KeyPair::new_account();
    let account = sign(
        &claims(&acc.public_key(), &other_op, "account", json!({})),
        &other_op,
    );
    let op_jwt = sign(
        &claims(&w.op.public_key(), &w.op, "operator", json!({})),
        &w.op,
    );
    let auth = JwtAuth::new(&[op_jwt], &[(acc.public_key(), account)]).unwrap();
    let u = KeyPair::new_user();
    let ujwt = sign(&claims(&u.public_key(), &acc, "user", json!({})), &acc);
    let sig = B64.encode(u.sign(b"n").unwrap_or_default());
    let r = auth.authenticate(&ujwt, Some(&sig), "n", NOW);
    assert_eq!(
        r.err().map(|r| r.0).as_deref(),
        Some("Account JWT not signed by trusted operator")
    );
}

#[test]
fn jwt_account_spec_translation() {
    let op = KeyPair::new_operator();
    let acc = KeyPair::new_account();
    let nats = json!({
        "exports": [
            {"subject": "svc.>", "type": "service", "response_type": "Stream"},
            {"subject": "s.>", "type": "stream", "token_req": true},
        ],
        "imports": [
            {"subject": "t.>", "account": "AX", "to": "pre", "type": "stream"},
            {"subject": "q", "account": "AX", "local_subject": "lq", "type": "service"},
        ],
        "limits": {"conn": 5, "subs": -1, "payload": 0},
    });
    let jwt = sign(&claims(&acc.public_key(), &op, "account", nats), &op);
    let spec = decode::<AccountNats>(&jwt).unwrap().spec();
    assert_eq!(spec.name, acc.public_key());
    assert!(matches!(spec.exports[0].kind, ExportKind::Service { .. }));
    assert_eq!(spec.exports[1].accounts, Some(Vec::new()));
    assert_eq!(spec.imports[0].local, "pre.t.>");
    assert_eq!(spec.imports[1].kind, ImportKind::Service { share: false });
    assert_eq!(spec.imports[1].local, "lq");
    assert_eq!(spec.limits.max_connections, 5);
    assert_eq!(spec.limits.max_payload, 0);
    assert_eq!(spec.msg_trace, None);
}

#[test]
fn jwt_account_message_tracing() {
    let op = KeyPair::new_operator();
    let acc = KeyPair::new_account();
    let nats = json!({
        "exports": [{"subject": "svc", "type": "service", "allow_trace": true}],
        "imports": [{"subject": "t", "account": "AX", "type": "stream", "allow_trace": true}],
        "trace": {"dest": "tr.x", "sampling": 0},
    });
    let jwt = sign(&claims(&acc.public_key(), &op, "account", nats), &op);
    let spec = decode::<AccountNats>(&jwt).unwrap().spec();
    assert!(matches!(
        spec.exports[0].kind,
        ExportKind::Service {
            allow_trace: true,
            ..
        }
    ));
    assert_eq!(
        spec.imports[0].kind,
        ImportKind::Stream { allow_trace: true }
    );
    // Go takes a sampling out of 1..=100 as 100, and drops an invalid destination.
    let trace = spec.msg_trace.unwrap();
    assert_eq!((trace.dest.as_str(), trace.sampling), ("tr.x", 100));
    let nats = json!({"trace": {"dest": "tr.*", "sampling": 50}});
    let jwt = sign(&claims(&acc.public_key(), &op, "account", nats), &op);
    assert_eq!(decode::<AccountNats>(&jwt).unwrap().spec().msg_trace, None);
}

#[test]
fn jwt_account_jetstream_limits_untiered_and_tiered() {
    let op = KeyPair::new_operator();
    let acc = KeyPair::new_account();
    let spec = |limits: Value| {
        let nats = json!({ "limits": limits });
        let jwt = sign(&claims(&acc.public_key(), &op, "account", nats), &op);
        decode::<AccountNats>(&jwt).unwrap().spec().jetstream
    };
    assert!(spec(json!({"conn": 5})).is_none());
    // Untiered: the per-stream caps and max_ack_pending are unlimited unless positive.
    let js = spec(json!({"mem_storage": 1024, "disk_storage": -1, "streams": 3})).unwrap();
    assert_eq!((js.max_memory, js.max_store, js.max_streams), (1024, -1, 3));
    assert_eq!(
        (
            js.max_ack_pending,
            js.memory_max_stream_bytes,
            js.store_max_stream_bytes
        ),
        (-1, -1, -1)
    );
    // Tiered only: a single server's streams take the R1 tier.
    let tiers = json!({"tiered_limits": {
        "R1": {"mem_storage": 10, "disk_storage": 20, "streams": 2, "max_ack_pending": 7},
        "R3": {"mem_storage": 30, "disk_storage": 60},
    }});
    let js = spec(tiers).unwrap();
    assert_eq!((js.max_memory, js.max_store, js.max_streams), (10, 20, 2));
    assert_eq!(js.max_ack_pending, 7);
    // Untiered limits win over tiers, as in Go.
    let both = json!({"disk_storage": 5, "tiered_limits": {"R1": {"disk_storage": 99}}});
    assert_eq!(spec(both).unwrap().max_store, 5);
    // Only other tiers: JetStream on, with no room for a one-replica stream.
    let js = spec(json!({"tiered_limits": {"R3": {"disk_storage": 60}}})).unwrap();
    assert_eq!((js.max_memory, js.max_store), (0, 0));
}

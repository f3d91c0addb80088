//! A small NATS JWT encoder for tests: operator, account and user claims signed with `nkeys`,
//! in the shape `nsc` writes (`header.claims.signature`, unpadded URL-safe base64, ed25519 over
//! the first two parts), and `.creds` files. Test code builds the `nats` section as JSON, so a
//! test can say exactly what a claim carries (or forge one).

use base64::Engine as _;
use nkeys::KeyPair;
use serde_json::{json, Value};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// `{"typ":"JWT","alg":"ed25519-nkey"}`.
pub const HEADER: &str = r#"{"typ":"JWT","alg":"ed25519-nkey"}"#;

/// Seconds since the epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

/// Signs `claims` (a complete claims object) with `signer`: `header.claims.sig`.
pub fn sign(claims: &Value, signer: &KeyPair) -> String {
    let head = B64.encode(HEADER);
    let body = B64.encode(claims.to_string());
    let signed = format!("{head}.{body}");
    let sig = signer.sign(signed.as_bytes()).expect("sign");
    format!("{signed}.{}", B64.encode(sig))
}

/// The standard claims for `subject`, issued now by `issuer`, with `nats`.
pub fn claims(subject: &str, issuer: &KeyPair, name: &str, nats: Value) -> Value {
    let mut out = json!({
        "jti": format!("{:016X}{:016X}", fastrand::u64(..), fastrand::u64(..)),
        "iat": now(),
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
    });
    out["nats"] = nats;
    out
}

/// An operator JWT, self-signed, with optional signing keys and system account.
pub fn operator(op: &KeyPair, signing_keys: &[String], system_account: Option<&str>) -> String {
    let mut nats = json!({"type": "operator", "version": 2});
    if !signing_keys.is_empty() {
        nats["signing_keys"] = json!(signing_keys);
    }
    if let Some(sys) = system_account {
        nats["system_account"] = json!(sys);
    }
    sign(&claims(&op.public_key(), op, "OP", nats), op)
}

/// An account JWT for `account` signed by `signer` (the operator or one of its signing keys).
/// `extra` is merged into the `nats` section (exports, imports, limits, signing_keys, …).
pub fn account(account: &str, signer: &KeyPair, name: &str, extra: Value) -> String {
    let mut nats = json!({
        "type": "account",
        "version": 2,
        "limits": {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                   "wildcards": true, "conn": -1, "leaf": -1},
    });
    merge(&mut nats, extra);
    sign(&claims(account, signer, name, nats), signer)
}

/// A user JWT for `user` signed by `signer`; `issuer_account` is set when the signer is an
/// account signing key. `extra` is merged into `nats` (pub, sub, resp, bearer_token, …).
pub fn user(user: &str, signer: &KeyPair, issuer_account: Option<&str>, extra: Value) -> String {
    let mut nats = json!({
        "type": "user",
        "version": 2,
        "subs": -1,
        "data": -1,
        "payload": -1,
    });
    if let Some(acc) = issuer_account {
        nats["issuer_account"] = json!(acc);
    }
    merge(&mut nats, extra);
    sign(&claims(user, signer, "user", nats), signer)
}

/// Like [`user`], with extra standard claims (`exp`, `nbf`) merged into the claims object.
pub fn user_with(
    user: &str,
    signer: &KeyPair,
    issuer_account: Option<&str>,
    nats_extra: Value,
    claims_extra: Value,
) -> String {
    let mut nats = json!({"type": "user", "version": 2, "subs": -1, "data": -1, "payload": -1});
    if let Some(acc) = issuer_account {
        nats["issuer_account"] = json!(acc);
    }
    merge(&mut nats, nats_extra);
    let mut c = claims(user, signer, "user", nats);
    merge(&mut c, claims_extra);
    sign(&c, signer)
}

fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(into), Value::Object(extra)) = (into, extra) {
        for (k, v) in extra {
            into.insert(k, v);
        }
    }
}

/// A `.creds` file as `nsc` writes it.
pub fn creds(user_jwt: &str, user_seed: &str) -> String {
    format!(
        "-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n\
         ************************* IMPORTANT *************************\n\
         NKEY Seed printed below can be used to sign and prove identity.\n\
         NKEYs are sensitive and should be treated as secrets.\n\n\
         -----BEGIN USER NKEY SEED-----\n{user_seed}\n------END USER NKEY SEED------\n\n\
         *************************************************************\n"
    )
}

/// An operator, a system account, two accounts (A exports `svc.>` and `s.>`, B imports them)
/// and a user in each, all keys generated fresh.
pub struct Scenario {
    pub operator: KeyPair,
    pub operator_signer: KeyPair,
    pub operator_jwt: String,
    pub system: KeyPair,
    pub system_jwt: String,
    pub a: KeyPair,
    pub a_jwt: String,
    pub a_signer: KeyPair,
    pub b: KeyPair,
    pub b_jwt: String,
    pub user_a: KeyPair,
    pub user_a_jwt: String,
    pub user_b: KeyPair,
    pub user_b_jwt: String,
}

impl Scenario {
    pub fn new() -> Self {
        let operator = KeyPair::new_operator();
        let operator_signer = KeyPair::new_operator();
        let system = KeyPair::new_account();
        let a = KeyPair::new_account();
        let a_signer = KeyPair::new_account();
        let b = KeyPair::new_account();
        let operator_jwt = self::operator(
            &operator,
            &[operator_signer.public_key()],
            Some(&system.public_key()),
        );
        let system_jwt = account(&system.public_key(), &operator, "SYS", json!({}));
        let a_jwt = account(
            &a.public_key(),
            &operator_signer,
            "A",
            json!({
                "signing_keys": [a_signer.public_key()],
                "exports": [
                    {"name": "svc", "subject": "svc.>", "type": "service"},
                    {"name": "s", "subject": "s.>", "type": "stream"},
                ],
            }),
        );
        let b_jwt = account(
            &b.public_key(),
            &operator,
            "B",
            json!({
                "imports": [
                    {"name": "svc", "subject": "svc.x", "account": a.public_key(),
                     "local_subject": "local.x", "type": "service"},
                    {"name": "s", "subject": "s.>", "account": a.public_key(),
                     "local_subject": "p.s.>", "type": "stream"},
                ],
            }),
        );
        let user_a = KeyPair::new_user();
        let user_b = KeyPair::new_user();
        let user_a_jwt = user(
            &user_a.public_key(),
            &a_signer,
            Some(&a.public_key()),
            json!({}),
        );
        let user_b_jwt = user(&user_b.public_key(), &b, None, json!({}));
        Self {
            operator,
            operator_signer,
            operator_jwt,
            system,
            system_jwt,
            a,
            a_jwt,
            a_signer,
            b,
            b_jwt,
            user_a,
            user_a_jwt,
            user_b,
            user_b_jwt,
        }
    }

    /// The server configuration: operator inline, memory resolver, every account preloaded.
    pub fn config(&self) -> String {
        format!(
            "operator: {}\nresolver: MEMORY\nresolver_preload {{\n  {}: {}\n  {}: {}\n  {}: {}\n}}\n",
            self.operator_jwt,
            self.system.public_key(),
            self.system_jwt,
            self.a.public_key(),
            self.a_jwt,
            self.b.public_key(),
            self.b_jwt,
        )
    }

    pub fn creds_a(&self) -> String {
        creds(&self.user_a_jwt, &self.user_a.seed().expect("seed"))
    }

    pub fn creds_b(&self) -> String {
        creds(&self.user_b_jwt, &self.user_b.seed().expect("seed"))
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Self::new()
    }
}

/// A raw CONNECT presenting `jwt` (and the nonce signature `sig`), with a PING.
pub fn connect_line(jwt: &str, sig: Option<&str>) -> String {
    let mut body = json!({"verbose": false, "pedantic": false, "protocol": 1, "jwt": jwt});
    if let Some(sig) = sig {
        body["sig"] = json!(sig);
    }
    format!("CONNECT {body}\r\nPING\r\n")
}

/// The nonce of the server's INFO.
pub fn nonce_of(c: &crate::RawClient) -> String {
    let info: Value =
        serde_json::from_str(c.info.trim_start_matches("INFO ").trim()).expect("info");
    info["nonce"].as_str().unwrap_or_default().to_owned()
}

/// `nonce` signed by `key`, as a client sends it in CONNECT `sig`.
pub fn sign_nonce(key: &KeyPair, nonce: &str) -> String {
    B64.encode(key.sign(nonce.as_bytes()).expect("sign"))
}

/// Logs in raw with `jwt`, signing with `key` (or sending no signature): the connection and
/// the first line the server answered (`PONG` when admitted).
pub fn raw_login_client(
    server: &crate::ServerProcess,
    jwt: &str,
    key: Option<&KeyPair>,
) -> (crate::RawClient, String) {
    let mut c = crate::RawClient::connect(&server.addr());
    let sig = key.map(|k| sign_nonce(k, &nonce_of(&c)));
    c.send(connect_line(jwt, sig.as_deref()).as_bytes());
    let got = c.read_until(b"\r\n");
    (c, got)
}

/// As [`raw_login_client`], to the end: whether it was admitted, and what the server sent
/// (everything until the close when refused).
pub fn raw_login(
    server: &crate::ServerProcess,
    jwt: &str,
    key: Option<&KeyPair>,
) -> (bool, String) {
    let (mut c, got) = raw_login_client(server, jwt, key);
    if got.starts_with("PONG") {
        return (true, got);
    }
    (false, got + &c.until_closed(b""))
}

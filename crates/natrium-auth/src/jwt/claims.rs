//! The claims of operator, account and user JWTs, as far as the server uses them, with the
//! JSON names of the NATS JWT v2 format; and their translation into this crate's account and
//! permission types. Unknown fields are ignored, as Go's decoder ignores them.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;

use crate::account::{
    AccountLimits, AccountSpec, Export, ExportKind, Import, ImportKind, MsgTraceDest, ResponseType,
    RESPONSE_THRESHOLD_DEFAULT,
};
use crate::{Permissions, ResponsePermission, SubjectPermission};

/// A claim kind: its `nats.type` and the key kinds that may issue it.
pub trait Kind {
    const KIND: &'static str;
    const ISSUER_PREFIXES: &'static [&'static str];
}

/// The standard claims around a kind's `nats` section.
#[derive(Debug, Clone, Deserialize)]
pub struct Claims<N> {
    #[serde(default)]
    pub jti: String,
    #[serde(default)]
    pub iat: i64,
    pub iss: String,
    #[serde(default)]
    pub aud: String,
    #[serde(default)]
    pub name: String,
    pub sub: String,
    /// Unix seconds; 0 is never.
    #[serde(default)]
    pub exp: i64,
    /// Unix seconds; 0 is always.
    #[serde(default)]
    pub nbf: i64,
    pub nats: N,
}

impl<N> Claims<N> {
    /// Go's validation of times: expired once `now` is past `exp`, not yet valid before `nbf`.
    pub fn time_problem(&self, now: i64) -> Option<&'static str> {
        if self.exp > 0 && now > self.exp {
            Some("claim is expired")
        } else if self.nbf > 0 && self.nbf > now {
            Some("claim is not yet valid")
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct OperatorNats {
    #[serde(default)]
    pub signing_keys: Vec<String>,
    #[serde(default)]
    pub system_account: String,
    #[serde(default)]
    pub strict_signing_key_usage: bool,
    #[serde(default)]
    pub account_server_url: String,
}

impl Kind for OperatorNats {
    const KIND: &'static str = "operator";
    const ISSUER_PREFIXES: &'static [&'static str] = &["O"];
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtPermission {
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    #[serde(default)]
    pub deny: Option<Vec<String>>,
}

impl JwtPermission {
    fn compile(&self) -> Option<SubjectPermission> {
        let allow = self.allow.clone().filter(|l| !l.is_empty());
        let deny = self.deny.clone().unwrap_or_default();
        (allow.is_some() || !deny.is_empty()).then_some(SubjectPermission { allow, deny })
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct JwtResponses {
    #[serde(default)]
    pub max: i64,
    /// Nanoseconds.
    #[serde(default)]
    pub ttl: i64,
}

/// A user's (or a signing key template's, or an account's default) permissions.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtPermissions {
    #[serde(default, rename = "pub")]
    pub publish: JwtPermission,
    #[serde(default, rename = "sub")]
    pub subscribe: JwtPermission,
    #[serde(default)]
    pub resp: Option<JwtResponses>,
}

impl JwtPermissions {
    /// Go's `buildPermissionsFromJwt`: `None` when nothing is restricted.
    pub fn compile(&self) -> Option<Permissions> {
        let publish = self.publish.compile();
        let subscribe = self.subscribe.compile();
        let response = self.resp.map(|r| ResponsePermission {
            max_msgs: match r.max {
                0 => Some(ResponsePermission::DEFAULT_MAX_MSGS),
                n if n < 0 => None,
                n => u64::try_from(n).ok(),
            },
            expires: match r.ttl {
                0 => Some(ResponsePermission::DEFAULT_EXPIRES),
                n if n < 0 => None,
                n => u64::try_from(n).ok().map(Duration::from_nanos),
            },
        });
        if publish.is_none() && subscribe.is_none() && response.is_none() {
            return None;
        }
        let mut out = Permissions {
            publish,
            subscribe,
            response,
        };
        if out.response.is_some() {
            // Responses only: without its own allow list the user may publish nothing else.
            let publish = out.publish.get_or_insert_with(SubjectPermission::default);
            publish.allow.get_or_insert_with(Vec::new);
        }
        Some(out)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct UserNats {
    #[serde(flatten)]
    pub permissions: JwtPermissions,
    #[serde(default)]
    pub subs: i64,
    #[serde(default)]
    pub payload: i64,
    #[serde(default)]
    pub bearer_token: bool,
    #[serde(default)]
    pub issuer_account: String,
    #[serde(default)]
    pub allowed_connection_types: Vec<String>,
}

impl Kind for UserNats {
    const KIND: &'static str = "user";
    const ISSUER_PREFIXES: &'static [&'static str] = &["A"];
}

/// An account signing key: a plain key, or a scoped one whose template replaces the
/// permissions of the users it signs.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SigningKey {
    Plain(String),
    Scoped {
        key: String,
        #[serde(default)]
        template: Box<UserNats>,
    },
}

impl SigningKey {
    pub fn key(&self) -> &str {
        match self {
            Self::Plain(key) | Self::Scoped { key, .. } => key,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtAccountLimits {
    #[serde(default)]
    pub subs: i64,
    #[serde(default)]
    pub payload: i64,
    #[serde(default)]
    pub conn: i64,
    #[serde(default)]
    pub leaf: i64,
    #[serde(default)]
    pub imports: i64,
    #[serde(default)]
    pub exports: i64,
    #[serde(default)]
    pub wildcards: bool,
    #[serde(default)]
    pub disallow_bearer: bool,
    /// JetStream limits, untiered (inline, as the JWT writes them).
    #[serde(flatten)]
    pub jetstream: JwtJsLimits,
    /// JetStream limits by tier (`R1`, `R3`, …), used when the untiered ones are not set.
    #[serde(default)]
    pub tiered_limits: std::collections::BTreeMap<String, JwtJsLimits>,
}

/// One set of JetStream limits of an account JWT; on when a storage limit is not 0.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtJsLimits {
    #[serde(default)]
    pub mem_storage: i64,
    #[serde(default)]
    pub disk_storage: i64,
    #[serde(default)]
    pub streams: i64,
    #[serde(default)]
    pub consumer: i64,
    #[serde(default)]
    pub max_ack_pending: i64,
    #[serde(default)]
    pub mem_max_stream_bytes: i64,
    #[serde(default)]
    pub disk_max_stream_bytes: i64,
    #[serde(default)]
    pub max_bytes_required: bool,
}

impl JwtJsLimits {
    fn enabled(&self) -> bool {
        self.mem_storage != 0 || self.disk_storage != 0
    }

    /// As Go reads them: the per-stream caps and `max_ack_pending` are unlimited unless
    /// positive.
    fn to_account(&self) -> crate::account::JsAccountLimits {
        let unlimited_unless_positive = |v: i64| if v > 0 { v } else { -1 };
        crate::account::JsAccountLimits {
            max_memory: self.mem_storage,
            max_store: self.disk_storage,
            max_streams: self.streams,
            max_consumers: self.consumer,
            max_ack_pending: unlimited_unless_positive(self.max_ack_pending),
            memory_max_stream_bytes: unlimited_unless_positive(self.mem_max_stream_bytes),
            store_max_stream_bytes: unlimited_unless_positive(self.disk_max_stream_bytes),
            max_bytes_required: self.max_bytes_required,
        }
    }
}

impl JwtAccountLimits {
    /// JetStream's limits, when the JWT turns it on: the untiered ones when set, else the
    /// `R1` tier's (a single server's streams have one replica, so that is the tier Go picks
    /// for them). A JWT with only other tiers turns JetStream on with no room (Go refuses
    /// every create there for want of an applicable tier).
    fn jetstream(&self) -> Option<crate::account::JsAccountLimits> {
        if self.jetstream.enabled() {
            return Some(self.jetstream.to_account());
        }
        if let Some(r1) = self.tiered_limits.get("R1").filter(|t| t.enabled()) {
            return Some(r1.to_account());
        }
        self.tiered_limits
            .values()
            .any(JwtJsLimits::enabled)
            .then(|| crate::account::JsAccountLimits {
                max_memory: 0,
                max_store: 0,
                ..JwtJsLimits::default().to_account()
            })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtExport {
    #[serde(default)]
    pub subject: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub token_req: bool,
    #[serde(default)]
    pub response_type: String,
    /// Nanoseconds.
    #[serde(default)]
    pub response_threshold: i64,
    #[serde(default)]
    pub account_token_position: u32,
    #[serde(default)]
    pub allow_trace: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtImport {
    #[serde(default)]
    pub subject: String,
    #[serde(default)]
    pub account: String,
    #[serde(default)]
    pub to: String,
    #[serde(default)]
    pub local_subject: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub share: bool,
    #[serde(default)]
    pub allow_trace: bool,
}

/// An account's `trace` claim: where sampled `traceparent` messages are traced.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtMsgTrace {
    #[serde(default)]
    pub dest: String,
    #[serde(default)]
    pub sampling: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct AccountNats {
    #[serde(default)]
    pub trace: Option<JwtMsgTrace>,
    #[serde(default)]
    pub imports: Vec<JwtImport>,
    #[serde(default)]
    pub exports: Vec<JwtExport>,
    #[serde(default)]
    pub limits: JwtAccountLimits,
    #[serde(default)]
    pub signing_keys: Vec<SigningKey>,
    /// User public key (or `*`) to Unix seconds: users issued at or before are revoked.
    #[serde(default)]
    pub revocations: HashMap<String, i64>,
    #[serde(default)]
    pub default_permissions: JwtPermissions,
    /// Source subject to weighted destinations.
    #[serde(default)]
    pub mappings: HashMap<String, Vec<JwtMapping>>,
}

/// One destination of an account JWT's mapping; a weight of 0 (or none) means 100, as in Go.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JwtMapping {
    #[serde(default)]
    pub subject: String,
    #[serde(default)]
    pub weight: u8,
    #[serde(default)]
    pub cluster: String,
}

impl Kind for AccountNats {
    const KIND: &'static str = "account";
    const ISSUER_PREFIXES: &'static [&'static str] = &["O"];
}

/// A JWT limit as the runtime reads it: negative and zero mean unlimited (`-1`).
/// A JWT limit as Go reads it: negative is unlimited, zero (also a missing field) allows none.
fn limit(n: i64) -> i64 {
    n.max(-1)
}

impl Claims<AccountNats> {
    /// The problems Go's validation finds that make the account unusable, in Go's words and
    /// order (it reports the imports limit twice).
    pub fn validation_issues(&self) -> Vec<&'static str> {
        let n = &self.nats;
        let l = &n.limits;
        let mut out = Vec::new();
        let imports = i64::try_from(n.imports.len()).unwrap_or(i64::MAX);
        let exports = i64::try_from(n.exports.len()).unwrap_or(i64::MAX);
        let too_many_imports = "the account contains more imports than allowed by the operator";
        if l.imports >= 0 && imports > l.imports {
            out.push(too_many_imports);
        }
        if l.imports != -1 && imports > l.imports {
            out.push(too_many_imports);
        }
        if l.exports != -1 {
            if exports > l.exports {
                out.push("the account contains more exports than allowed by the operator");
            }
            if !l.wildcards {
                for e in &n.exports {
                    if e.subject.split('.').any(|t| t == "*" || t == ">") {
                        out.push(
                            "the account contains wildcard exports that are not allowed by the \
                             operator",
                        );
                    }
                }
            }
        }
        out
    }

    /// The `mappings` claim, sorted by source so that a JWT always builds the same list.
    fn mappings(&self) -> Vec<crate::account::SubjectMapping> {
        let mut out: Vec<_> = self
            .nats
            .mappings
            .iter()
            .map(|(source, dests)| crate::account::SubjectMapping {
                source: source.clone(),
                dests: dests
                    .iter()
                    .map(|d| nats_subject::MapDest {
                        subject: d.subject.clone(),
                        weight: if d.weight == 0 { 100 } else { d.weight },
                        cluster: d.cluster.clone(),
                    })
                    .collect(),
            })
            .collect();
        out.sort_by(|a, b| a.source.cmp(&b.source));
        out
    }

    /// The account as the runtime builds it: named by its public key, exports and imports
    /// translated (a stream import's `to` is the old form of a prefix).
    pub fn spec(&self) -> AccountSpec {
        let exports = self
            .nats
            .exports
            .iter()
            .filter_map(|e| {
                let kind = match e.kind.as_str() {
                    "stream" => ExportKind::Stream,
                    "service" => ExportKind::Service {
                        response: match e.response_type.as_str() {
                            "Stream" => ResponseType::Streamed,
                            "Chunked" => ResponseType::Chunked,
                            _ => ResponseType::Singleton,
                        },
                        threshold: u64::try_from(e.response_threshold)
                            .ok()
                            .filter(|n| *n > 0)
                            .map_or(RESPONSE_THRESHOLD_DEFAULT, Duration::from_nanos),
                        allow_trace: e.allow_trace,
                    },
                    _ => return None,
                };
                Some(Export {
                    subject: e.subject.clone(),
                    kind,
                    // Token-required exports need activation tokens, which are not supported:
                    // nobody may import them.
                    accounts: e.token_req.then(Vec::new),
                    token_position: e.account_token_position,
                })
            })
            .collect();
        let imports = self
            .nats
            .imports
            .iter()
            .filter_map(|i| {
                let (kind, local) = match i.kind.as_str() {
                    "stream" => {
                        let local = if !i.local_subject.is_empty() {
                            i.local_subject.clone()
                        } else if !i.to.is_empty() {
                            format!("{}.{}", i.to.trim_end_matches('.'), i.subject)
                        } else {
                            i.subject.clone()
                        };
                        (
                            ImportKind::Stream {
                                allow_trace: i.allow_trace,
                            },
                            local,
                        )
                    }
                    "service" => {
                        let local = [&i.local_subject, &i.to]
                            .into_iter()
                            .find(|s| !s.is_empty())
                            .map_or_else(|| i.subject.clone(), Clone::clone);
                        (ImportKind::Service { share: i.share }, local)
                    }
                    _ => return None,
                };
                Some(Import {
                    account: i.account.clone(),
                    subject: i.subject.clone(),
                    local,
                    kind,
                })
            })
            .collect();
        let l = &self.nats.limits;
        AccountSpec {
            name: self.sub.clone(),
            name_tag: self.name.clone(),
            expires: (self.exp > 0).then_some(self.exp),
            exports,
            imports,
            limits: AccountLimits {
                max_connections: limit(l.conn),
                max_subscriptions: limit(l.subs),
                max_payload: limit(l.payload),
                max_leafnodes: limit(l.leaf),
            },
            jetstream: l.jetstream(),
            mappings: self.mappings(),
            msg_trace: self.nats.trace.as_ref().and_then(|t| {
                // Go drops an invalid destination and takes an out-of-range sampling as 100.
                nats_subject::is_valid_publish_subject(t.dest.as_bytes()).then(|| MsgTraceDest {
                    dest: t.dest.clone(),
                    sampling: u8::try_from(t.sampling)
                        .ok()
                        .filter(|n| (1..=100).contains(n))
                        .unwrap_or(100),
                })
            }),
        }
    }
}

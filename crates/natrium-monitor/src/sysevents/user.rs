//! `$SYS.REQ.USER.INFO`: a client asks who it is. Every account subscribes to it (Go imports it
//! from the system account with the requester's details shared); the answer names the user,
//! its account, its permissions and the time left before its JWT expires.
//!
//! Who asked comes from the `Nats-Request-Info` header the server put on the delivery (see
//! `natrium_core::deliver`; a client cannot forge it). The system account also answers
//! `$SYS.REQ.USER.<account>.INFO` asked directly, as Go does: without the shared details the
//! user and account are empty, and the permissions are the asker's own.

use natrium_auth::jwt::{decode, UserNats};
use natrium_auth::ClientPermissions;
use natrium_core::client::ClientHandle;
use natrium_core::Server;
use nats_proto::headers::{Headers, NATS_REQUEST_INFO};
use serde::Deserialize;

use super::payload::{
    PermissionsDoc, ResponsePermissionDoc, ServerIdentity, SubjectPermissionDoc, UserInfo,
};
use super::requests::reply;

/// The part of `Nats-Request-Info` the answer needs.
#[derive(Deserialize, Default)]
struct Requester {
    #[serde(default)]
    id: u64,
    #[serde(default)]
    acc: String,
    #[serde(default)]
    user: String,
}

fn requester(headers: Option<&[u8]>) -> Requester {
    headers
        .and_then(|h| Headers::parse(h).ok())
        .and_then(|h| h.get(NATS_REQUEST_INFO))
        .and_then(|json| serde_json::from_slice(json).ok())
        .unwrap_or_default()
}

/// The reply to a user info request; `direct` for `$SYS.REQ.USER.<account>.INFO`.
pub fn answer(
    server: &Server,
    id: &ServerIdentity,
    headers: Option<&[u8]>,
    direct: bool,
) -> Vec<u8> {
    let who = requester(headers);
    let client = server.client(who.id);
    let claims = client.as_deref().and_then(jwt_claims);
    let mut info = UserInfo::default();
    if !direct {
        info.account_name.clone_from(&who.acc);
        info.user = who.user;
        info.account = who.acc;
        info.user_name = claims.as_ref().map(|c| c.name.clone()).unwrap_or_default();
    }
    if let Some(client) = client.as_deref() {
        info.permissions = client.permissions().as_deref().map(permissions_doc);
    }
    info.expires = claims.map_or(0, |c| expires_nanos(c.exp));
    reply(id, info)
}

fn jwt_claims(client: &ClientHandle) -> Option<natrium_auth::jwt::Claims<UserNats>> {
    decode::<UserNats>(&client.user_jwt()?).ok()
}

/// Go's `publicPermissions`: both directions always present, responses when allowed.
fn permissions_doc(perms: &ClientPermissions) -> PermissionsDoc {
    let lists = perms.lists();
    let nanos = |d: std::time::Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
    PermissionsDoc {
        publish: SubjectPermissionDoc {
            allow: lists.publish_allow,
            deny: lists.publish_deny,
        },
        subscribe: SubjectPermissionDoc {
            allow: lists.subscribe_allow,
            deny: lists.subscribe_deny,
        },
        responses: perms.response().map(|r| ResponsePermissionDoc {
            max: r
                .max_msgs
                .map_or(-1, |m| i64::try_from(m).unwrap_or(i64::MAX)),
            ttl: r.expires.map_or(-1, nanos),
        }),
    }
}

/// Time left before a JWT expiring at `exp` (Unix seconds; 0: never) expires, in nanoseconds
/// truncated to whole seconds as Go reports it; 0 when it does not expire or already has.
fn expires_nanos(exp: i64) -> u64 {
    if exp <= 0 {
        return 0;
    }
    let left_ms = exp.saturating_mul(1000) - chrono::Utc::now().timestamp_millis();
    u64::try_from(left_ms / 1000).unwrap_or(0) * 1_000_000_000
}

//! What the `accounts` block reads into: account specs with their exports, linked imports and
//! limits, and account users carrying their account and the account's default permissions.

use natrium_auth::account::{ExportKind, ImportKind, ResponseType};

use super::*;
use crate::lang::parse_str_with_env;

fn opts(src: &str) -> ServerOptions {
    let map = parse_str_with_env(src, "f.conf", &|_: &str| None).unwrap();
    ServerOptions::from_map(&map, "f.conf")
        .unwrap_or_else(|e| panic!("{src:?}: {e}"))
        .options
}

const CONF: &str = r#"
authorization { users = [ {user: g, password: g} ] }
accounts {
  A {
    users = [ {user: a, password: a}, {user: a2, password: x, permissions: {publish: "own"}} ]
    default_permissions { publish: "a.>" }
    exports = [ {stream: "s.>"}, {service: "svc.>", accounts: [B], response_type: chunked} ]
    limits { max_connections: 3, max_payload: 100 }
  }
  B {
    users = [ {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ]
    imports = [
      {stream: {account: A, subject: "s.>"}, prefix: "p"}
      {stream: {account: A, subject: "s.x"}, to: "m.x"}
      {service: {account: A, subject: "svc.x"}, to: "local.x", share: true}
    ]
  }
}
system_account: B
"#;

#[test]
fn accounts_specs_and_users() {
    let o = opts(CONF);
    assert_eq!(o.system_account, "B");
    let names: Vec<_> = o.accounts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    let a = &o.accounts[0];
    assert_eq!(a.limits.max_connections, 3);
    assert_eq!(a.limits.max_payload, 100);
    assert_eq!(a.limits.max_subscriptions, -1);
    assert_eq!(a.exports.len(), 2);
    assert!(matches!(
        a.exports[1].kind,
        ExportKind::Service {
            response: ResponseType::Chunked,
            ..
        }
    ));
    assert_eq!(
        a.exports[1].accounts.as_deref(),
        Some(&["B".to_owned()][..])
    );
    let b = &o.accounts[1];
    let locals: Vec<_> = b.imports.iter().map(|i| i.local.as_str()).collect();
    assert_eq!(locals, ["p.s.>", "m.x", "local.x"]);
    assert_eq!(b.imports[2].kind, ImportKind::Service { share: true });
    let user = |name: &str| o.users.iter().find(|u| u.username == name).unwrap();
    assert_eq!(user("g").account, "");
    assert_eq!(user("a").account, "A");
    let publish = |u: &UserOption| u.permissions.as_ref().unwrap().publish.clone().unwrap();
    assert_eq!(publish(user("a")).allow, Some(vec!["a.>".to_owned()]));
    assert_eq!(publish(user("a2")).allow, Some(vec!["own".to_owned()]));
    let nkey = o.users.iter().find(|u| !u.nkey.is_empty()).unwrap();
    assert_eq!(nkey.account, "B");
    assert!(nkey.permissions.is_none());
}

#[test]
fn accounts_list_of_names_and_no_system() {
    let o = opts("accounts [A, B]\nno_sys_acc: true");
    assert_eq!(o.accounts.len(), 2);
    assert!(o.no_system_account);
    assert!(o.users.is_empty());
}

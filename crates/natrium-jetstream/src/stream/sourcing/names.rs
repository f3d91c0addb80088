//! The names a sourcing stream uses on the wire, as Go forms them: the 8-character hash
//! (Go's `getHash`), a source's index name, the origin consumer's name, the deliver and reply
//! inboxes, and the API subjects of the create request. Pure.

use sha2::Digest as _;

use crate::config::stream::StreamSource;

/// Go's base-62 digits (`accounts.go`).
const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Go's `sysHashLen` and `replySuffixLen`.
const HASH_LEN: usize = 8;
/// Go's `JSApiPrefix`, replaced by an external `api` prefix.
const API_PREFIX: &str = "$JS.API";

/// Go's `getHash`: the first 8 bytes of SHA-256, each mapped to a base-62 digit.
pub fn go_hash(text: &str) -> String {
    let sum = sha2::Sha256::digest(text.as_bytes());
    sum.iter()
        .take(HASH_LEN)
        .map(|b| char::from(DIGITS.get(usize::from(b % 62)).copied().unwrap_or(b'0')))
        .collect()
}

/// Go's `syncSubject`: `pre` and 8 random base-62 characters.
pub fn sync_subject(pre: &str) -> String {
    let suffix: String = natrium_core::events::event_id()
        .chars()
        .take(HASH_LEN)
        .collect();
    format!("{pre}.{suffix}")
}

/// Go's `composeIName`: `<name>[:<hash(api)>][:C=<hash(consumer)>] <filters> <dests>`, the
/// filters and destinations of several transforms joined by form feeds, `>` for an empty one.
pub fn index_name(src: &StreamSource) -> String {
    let mut name = src.name.clone();
    if let Some(ext) = &src.external {
        name = format!("{name}:{}", go_hash(&ext.api));
    }
    if let Some(c) = &src.consumer {
        name = format!("{name}:C={}", go_hash(&c.name));
    }
    let or_all = |s: &str| if s.is_empty() { ">" } else { s }.to_owned();
    if src.subject_transforms.is_empty() {
        return format!("{name} {} >", or_all(&src.filter_subject));
    }
    let part = |f: fn(&crate::config::stream::SubjectTransform) -> &str| {
        src.subject_transforms
            .iter()
            .map(|t| or_all(f(t)))
            .collect::<Vec<_>>()
            .join("\x0c")
    };
    format!("{name} {} {}", part(|t| &t.src), part(|t| &t.dest))
}

/// Go's `createStableConsumerHash`: of `<stream> <account>[ <domain>]`.
pub fn stable_hash(stream: &str, account: &str, domain: &str) -> String {
    let mut id = format!("{stream} {account}");
    if !domain.is_empty() {
        id = format!("{id} {domain}");
    }
    go_hash(&id)
}

/// Go's `createSourcingConsumerHash`: the stable hash, made unique by the index name when the
/// same origin stream is sourced more than once.
pub fn sourcing_hash(stable_id: &str, src: &StreamSource, all: &[StreamSource]) -> String {
    let mut id = stable_id.to_owned();
    if all.iter().filter(|s| s.name == src.name).count() > 1 {
        id = format!("{id} {}", index_name(src));
    }
    go_hash(&id)
}

/// The create request's subject: `CONSUMER.CREATE.<origin>[.<name>.<filter>]` under the API
/// prefix, or under the external one (Go collapses the `..` a trailing dot leaves).
pub fn create_subject(
    external_api: Option<&str>,
    origin: &str,
    name: &str,
    filter: &str,
) -> String {
    let subject = if filter.is_empty() {
        format!("{API_PREFIX}.CONSUMER.CREATE.{origin}")
    } else {
        format!("{API_PREFIX}.CONSUMER.CREATE.{origin}.{name}.{filter}")
    };
    match external_api {
        Some(api) => subject.replacen(API_PREFIX, api, 1).replace("..", "."),
        None => subject,
    }
}

/// The delete request's subject for consumer `name` of `origin`, under the API prefix or the
/// external one.
pub fn delete_subject(external_api: Option<&str>, origin: &str, name: &str) -> String {
    let subject = format!("{API_PREFIX}.CONSUMER.DELETE.{origin}.{name}");
    match external_api {
        Some(api) => subject.replacen(API_PREFIX, api, 1).replace("..", "."),
        None => subject,
    }
}

/// `CONSUMER.RESET.<origin>.<name>`: a user's durable is reset, not created (Go's durable
/// sourcing with a source's `consumer`).
pub fn reset_subject(external_api: Option<&str>, origin: &str, name: &str) -> String {
    let subject = format!("{API_PREFIX}.CONSUMER.RESET.{origin}.{name}");
    match external_api {
        Some(api) => subject.replacen(API_PREFIX, api, 1).replace("..", "."),
        None => subject,
    }
}

/// The deliver inbox: `$JS.M.<rand>` for a mirror, `$JS.S.<rand>` for a source, or under the
/// external deliver prefix (`<prefix>.M.<rand>`).
pub fn deliver_subject(external_deliver: Option<&str>, mirror: bool) -> String {
    let kind = if mirror { "M" } else { "S" };
    match external_deliver.filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{prefix}.{}", sync_subject(kind)).replace("..", "."),
        None => sync_subject(&format!("$JS.{kind}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::stream::{ExternalStream, SubjectTransform};

    #[test]
    fn stream_sourcing_index_names_as_go() {
        let mut src = StreamSource {
            name: "O".into(),
            ..StreamSource::default()
        };
        assert_eq!(index_name(&src), "O > >");
        src.filter_subject = "a.*".into();
        assert_eq!(index_name(&src), "O a.* >");
        src.filter_subject.clear();
        src.subject_transforms = vec![
            SubjectTransform {
                src: "a.>".into(),
                dest: "b.>".into(),
            },
            SubjectTransform {
                src: "c".into(),
                dest: String::new(),
            },
        ];
        assert_eq!(index_name(&src), "O a.>\x0cc b.>\x0c>");
        src.external = Some(ExternalStream {
            api: "$JS.x.API".into(),
            deliver: String::new(),
        });
        assert!(index_name(&src).starts_with(&format!("O:{} ", go_hash("$JS.x.API"))));
    }

    #[test]
    fn stream_sourcing_hash_is_eight_base62() {
        let h = go_hash("M $G");
        assert_eq!(h.len(), 8);
        assert!(h.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(h, go_hash("M $G"));
    }

    #[test]
    fn stream_sourcing_subjects() {
        assert_eq!(
            create_subject(None, "O", "N", ""),
            "$JS.API.CONSUMER.CREATE.O"
        );
        assert_eq!(
            create_subject(Some("$JS.hub.API"), "O", "N", "a.b"),
            "$JS.hub.API.CONSUMER.CREATE.O.N.a.b"
        );
        assert_eq!(
            create_subject(Some("JS.ext."), "O", "N", ""),
            "JS.ext.CONSUMER.CREATE.O"
        );
        assert_eq!(
            delete_subject(Some("JS.ext."), "O", "JS_SRC_x"),
            "JS.ext.CONSUMER.DELETE.O.JS_SRC_x"
        );
        assert!(deliver_subject(None, true).starts_with("$JS.M."));
        assert!(deliver_subject(Some("dlv"), false).starts_with("dlv.S."));
        assert!(deliver_subject(Some("dlv."), false).starts_with("dlv.S."));
    }
}

//! The INFO document. Field names, order and omission rules follow the Go server, because
//! clients and tools read it.
//!
//! Every client gets an INFO when it connects and (protocol 1) another after its first PING,
//! and most of it is the same for all of them. [`InfoHead`] is that part serialized once: the
//! server keeps a few and attaches the matching one to each client's [`Info`], and
//! [`Info::to_frame`] then writes only the per-client rest. The head is used only while the
//! INFO's own fields still equal the ones it was made from, so an INFO changed after it was
//! built is serialized in full, never sent stale.

use std::sync::Arc;

use serde::Serialize;

/// Version of the Go server whose behaviour Natrium reproduces; clients gate features on it.
pub const COMPATIBLE_VERSION: &str = "2.15.2";
/// Client protocol version (1: dynamic INFO and headers).
pub const PROTO_VERSION: u8 = 1;

/// Field order is Go's: clients don't care, but byte-level comparisons with Go do. The fields
/// before `max_payload` form the [`InfoHead`]; one added there must be added to
/// [`InfoHead::matches`] too.
#[derive(Debug, Clone, Serialize)]
pub struct Info {
    pub server_id: String,
    pub server_name: String,
    pub version: String,
    pub proto: u8,
    pub go: String,
    pub host: String,
    pub port: u16,
    pub headers: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub auth_required: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub tls_required: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub tls_verify: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub tls_available: bool,
    pub max_payload: usize,
    #[serde(skip_serializing_if = "is_false")]
    pub jetstream: bool,
    #[serde(skip_serializing_if = "is_zero")]
    pub client_id: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub client_ip: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub nonce: String,
    /// JetStream's domain.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub domain: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_urls: Vec<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub ldm: bool,
    /// Set on the INFO that answers a client's first PING after CONNECT.
    #[serde(skip_serializing_if = "is_false")]
    pub connect_info: bool,
    /// With `connect_info`: the account the client is bound to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub remote_account: String,
    /// With `connect_info`: whether that account is the system account.
    #[serde(skip_serializing_if = "is_false")]
    pub acc_is_sys: bool,
    /// JetStream's API level (`api_lvl`), 0 without JetStream.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub api_lvl: u32,
    /// The serialized head this INFO starts with, when the server had one for it.
    #[serde(skip)]
    pub(crate) head: Option<Arc<InfoHead>>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !*value
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_u32(value: &u32) -> bool {
    *value == 0
}

impl Info {
    /// `INFO {json} \r\n`, with the space Go puts before the line end.
    pub fn to_frame(&self) -> Vec<u8> {
        match &self.head {
            Some(head) if head.matches(self) => {
                let mut out = Vec::with_capacity(head.bytes.len() + 192);
                out.extend_from_slice(&head.bytes);
                self.write_tail(&mut out);
                out.extend_from_slice(b"} \r\n");
                out
            }
            _ => self.to_frame_in_full(),
        }
    }

    /// The frame serialized field by field, without a head.
    fn to_frame_in_full(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"INFO ");
        // Serialising a struct of strings, numbers and bools cannot fail.
        if serde_json::to_writer(&mut out, self).is_err() {
            out.extend_from_slice(b"{}");
        }
        out.extend_from_slice(b" \r\n");
        out
    }

    /// The fields from `max_payload` on, as the derived serialization writes them (same order,
    /// same omissions, strings escaped by the same serializer), without the closing brace.
    fn write_tail(&self, out: &mut Vec<u8>) {
        use std::io::Write as _;
        // Writes into a Vec cannot fail.
        let _ = write!(out, ",\"max_payload\":{}", self.max_payload);
        if self.jetstream {
            out.extend_from_slice(b",\"jetstream\":true");
        }
        if self.client_id != 0 {
            let _ = write!(out, ",\"client_id\":{}", self.client_id);
        }
        write_str_field(out, "client_ip", &self.client_ip);
        write_str_field(out, "nonce", &self.nonce);
        write_str_field(out, "domain", &self.domain);
        if !self.connect_urls.is_empty() {
            out.extend_from_slice(b",\"connect_urls\":");
            let _ = serde_json::to_writer(&mut *out, &self.connect_urls);
        }
        if self.ldm {
            out.extend_from_slice(b",\"ldm\":true");
        }
        if self.connect_info {
            out.extend_from_slice(b",\"connect_info\":true");
        }
        write_str_field(out, "remote_account", &self.remote_account);
        if self.acc_is_sys {
            out.extend_from_slice(b",\"acc_is_sys\":true");
        }
        if self.api_lvl != 0 {
            let _ = write!(out, ",\"api_lvl\":{}", self.api_lvl);
        }
    }
}

/// `,"name":"value"` for a string field omitted when empty.
fn write_str_field(out: &mut Vec<u8>, name: &str, value: &str) {
    if !value.is_empty() {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

/// The start of an INFO frame (`INFO {` and every field before `max_payload`), serialized once
/// for all the clients whose INFO has those same fields.
#[derive(Debug)]
pub struct InfoHead {
    /// The INFO it was made from; only the head fields are compared.
    fields: Info,
    /// `INFO {"server_id":…` up to, not including, `,"max_payload"`; empty if the serialized
    /// document did not have that shape (then the head never matches).
    bytes: Vec<u8>,
}

impl InfoHead {
    pub fn new(info: &Info) -> Self {
        let fields = Info {
            head: None,
            ..info.clone()
        };
        let full = fields.to_frame_in_full();
        // A `"` inside a JSON string is always escaped, so `,"max_payload":` can only be the
        // top-level key.
        let at = full
            .windows(MAX_PAYLOAD_KEY.len())
            .position(|w| w == MAX_PAYLOAD_KEY);
        let bytes = at
            .and_then(|at| full.get(..at))
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        Self { fields, bytes }
    }

    /// Whether `info` has the fields this head was serialized from.
    pub fn matches(&self, info: &Info) -> bool {
        let h = &self.fields;
        !self.bytes.is_empty()
            && h.proto == info.proto
            && h.port == info.port
            && h.headers == info.headers
            && h.auth_required == info.auth_required
            && h.tls_required == info.tls_required
            && h.tls_verify == info.tls_verify
            && h.tls_available == info.tls_available
            && h.server_id == info.server_id
            && h.server_name == info.server_name
            && h.version == info.version
            && h.go == info.go
            && h.host == info.host
    }
}

const MAX_PAYLOAD_KEY: &[u8] = b",\"max_payload\":";

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Info {
        Info {
            server_id: "NABCDEF".to_owned(),
            server_name: "srv".to_owned(),
            version: COMPATIBLE_VERSION.to_owned(),
            proto: PROTO_VERSION,
            go: "natrium-0.1.0".to_owned(),
            host: "127.0.0.1".to_owned(),
            port: 4222,
            headers: true,
            auth_required: false,
            tls_required: false,
            tls_verify: false,
            tls_available: false,
            max_payload: 1 << 20,
            jetstream: false,
            client_id: 0,
            client_ip: String::new(),
            nonce: String::new(),
            connect_urls: Vec::new(),
            ldm: false,
            connect_info: false,
            remote_account: String::new(),
            acc_is_sys: false,
            api_lvl: 0,
            domain: String::new(),
            head: None,
        }
    }

    /// Every combination of the per-client fields, on heads with plain and awkward strings.
    #[test]
    fn info_head_frames_equal_full_serialization() {
        let mut heads = vec![base()];
        let mut odd = base();
        odd.server_name = "a \"quoted\" \\ name\u{1}\u{e9},\"max_payload\":1".to_owned();
        odd.host = "::".to_owned();
        odd.auth_required = true;
        odd.tls_required = true;
        odd.tls_verify = true;
        odd.tls_available = true;
        heads.push(odd);
        for head_fields in heads {
            let head = Arc::new(InfoHead::new(&head_fields));
            assert!(head.matches(&head_fields));
            for bits in 0u32..256 {
                let bit = |n: u32| bits & (1 << n) != 0;
                let mut info = head_fields.clone();
                info.max_payload = if bit(0) { 0 } else { 64 * 1024 };
                info.jetstream = bit(1);
                info.client_id = if bit(2) { 42 } else { 0 };
                info.client_ip = if bit(3) {
                    "10.0.0.1".into()
                } else {
                    String::new()
                };
                info.nonce = if bit(4) {
                    "abc-_DEF".into()
                } else {
                    String::new()
                };
                info.connect_urls = if bit(5) {
                    vec!["1.2.3.4:4222".into(), "[::1]:4222".into()]
                } else {
                    Vec::new()
                };
                info.ldm = bit(6);
                info.connect_info = bit(7);
                info.remote_account = if bit(7) {
                    "A \"b\"".into()
                } else {
                    String::new()
                };
                info.acc_is_sys = bit(7) && bit(0);
                let full = info.to_frame_in_full();
                info.head = Some(Arc::clone(&head));
                assert_eq!(
                    String::from_utf8_lossy(&info.to_frame()),
                    String::from_utf8_lossy(&full)
                );
            }
        }
    }

    /// An INFO changed after its head was attached is serialized in full.
    #[test]
    fn info_head_not_used_for_changed_fields() {
        let mut info = base();
        info.head = Some(Arc::new(InfoHead::new(&info)));
        info.tls_required = true;
        info.server_name = "other".to_owned();
        let frame = info.to_frame();
        info.head = None;
        assert_eq!(frame, info.to_frame());
        assert!(String::from_utf8_lossy(&frame).contains("\"tls_required\":true"));
    }
}

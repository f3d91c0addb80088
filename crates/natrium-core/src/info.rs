//! The INFO document. Field names, order and omission rules follow the Go server, because
//! clients and tools read it.

use serde::Serialize;

/// Version of the Go server whose behaviour Natrium reproduces; clients gate features on it.
pub const COMPATIBLE_VERSION: &str = "2.15.2";
/// Client protocol version (1: dynamic INFO and headers).
pub const PROTO_VERSION: u8 = 1;

/// Field order is Go's: clients don't care, but byte-level comparisons with Go do.
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
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !*value
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Info {
    /// `INFO {json} \r\n`, with the space Go puts before the line end.
    pub fn to_frame(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"INFO ");
        // Serialising a struct of strings, numbers and bools cannot fail.
        if serde_json::to_writer(&mut out, self).is_err() {
            out.extend_from_slice(b"{}");
        }
        out.extend_from_slice(b" \r\n");
        out
    }
}

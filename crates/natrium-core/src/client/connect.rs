//! The CONNECT document. Fields a client leaves out keep Go's defaults, which are verbose,
//! pedantic and echo all on: real clients send `"verbose":false`.

use serde::{Deserialize, Deserializer};

/// Go's JSON decoder leaves a field untouched when the value is `null` (clients send
/// `"name":null`); this keeps the default instead of failing.
fn null_is_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn null_is_true<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(true))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ConnectOptions {
    #[serde(deserialize_with = "null_is_true")]
    pub verbose: bool,
    #[serde(deserialize_with = "null_is_true")]
    pub pedantic: bool,
    #[serde(deserialize_with = "null_is_true")]
    pub echo: bool,
    #[serde(deserialize_with = "null_is_default")]
    pub headers: bool,
    #[serde(deserialize_with = "null_is_default")]
    pub no_responders: bool,
    #[serde(deserialize_with = "null_is_default")]
    pub protocol: i64,
    #[serde(deserialize_with = "null_is_default")]
    pub name: String,
    #[serde(deserialize_with = "null_is_default")]
    pub lang: String,
    #[serde(deserialize_with = "null_is_default")]
    pub version: String,
    #[serde(deserialize_with = "null_is_default")]
    pub tls_required: bool,
    pub user: Option<String>,
    pub pass: Option<String>,
    pub auth_token: Option<String>,
    pub nkey: Option<String>,
    pub sig: Option<String>,
    pub jwt: Option<String>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            verbose: true,
            pedantic: true,
            echo: true,
            headers: false,
            no_responders: false,
            protocol: 0,
            name: String::new(),
            lang: String::new(),
            version: String::new(),
            tls_required: false,
            user: None,
            pass: None,
            auth_token: None,
            nkey: None,
            sig: None,
            jwt: None,
        }
    }
}

/// The CONNECT options a connection consults after CONNECT, without its strings (names and
/// credentials are kept once, elsewhere: `ClientMeta` and the stored authentication).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectFlags {
    pub verbose: bool,
    pub pedantic: bool,
    pub headers: bool,
    pub protocol: i64,
}

impl Default for ConnectFlags {
    /// Go's defaults, as for a client that has not sent CONNECT yet.
    fn default() -> Self {
        ConnectOptions::default().flags()
    }
}

impl ConnectOptions {
    /// The options a connection keeps after CONNECT.
    pub(crate) fn flags(&self) -> ConnectFlags {
        ConnectFlags {
            verbose: self.verbose,
            pedantic: self.pedantic,
            headers: self.headers,
            protocol: self.protocol,
        }
    }

    /// Parses a CONNECT body. JSON that does not parse is an error, which Go answers by logging
    /// the decoder's message and closing the connection without an -ERR. Like Go's decoder,
    /// `null` leaves every default, a repeated key keeps its last value, and anything but an
    /// object (an array too) is an error. The body is bounded by the control-line limit.
    pub fn parse(json: &[u8]) -> Result<Self, serde_json::Error> {
        use serde::de::Error as _;
        match serde_json::from_slice(json)? {
            serde_json::Value::Null => Ok(Self::default()),
            object @ serde_json::Value::Object(_) => Self::deserialize(object),
            other => Err(serde_json::Error::custom(format!(
                "cannot unmarshal {} into ClientOpts",
                match other {
                    serde_json::Value::Array(_) => "array",
                    serde_json::Value::String(_) => "string",
                    serde_json::Value::Number(_) => "number",
                    _ => "bool",
                }
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_defaults_are_verbose_pedantic_echo() {
        let opts = ConnectOptions::parse(b"{}").unwrap_or_default();
        assert!(opts.verbose && opts.pedantic && opts.echo && !opts.headers);
    }

    #[test]
    fn connect_unknown_fields_are_ignored() {
        let opts = ConnectOptions::parse(br#"{"verbose":false,"foo":1}"#);
        assert!(opts.is_ok_and(|o| !o.verbose));
    }

    #[test]
    fn connect_null_fields_keep_defaults() {
        let opts = ConnectOptions::parse(br#"{"verbose":false,"name":null,"echo":null}"#);
        assert!(opts.is_ok_and(|o| o.echo && o.name.is_empty()));
    }

    #[test]
    fn connect_bad_json_is_refused() {
        assert!(ConnectOptions::parse(b"{bad").is_err());
        for not_object in [&b"[]"[..], b"[1]", b"\"s\"", b"5", b"true"] {
            assert!(ConnectOptions::parse(not_object).is_err(), "{not_object:?}");
        }
    }

    #[test]
    fn connect_null_and_repeated_keys_like_go() {
        assert!(ConnectOptions::parse(b"null").is_ok_and(|o| o.verbose && o.user.is_none()));
        let opts = ConnectOptions::parse(br#"{"user":"a","user":"b"}"#);
        assert!(opts.is_ok_and(|o| o.user.as_deref() == Some("b")));
    }
}

//! The CONNECT document, decoded as Go decodes it. Fields a client leaves out keep Go's defaults, which are verbose,
//! pedantic and echo all on: real clients send `"verbose":false`. A repeated CONNECT is merged
//! into the options in force, as Go decodes it over them: a field it leaves out (or sends as
//! `null`) keeps its value.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    pub verbose: bool,
    pub pedantic: bool,
    pub echo: bool,
    pub headers: bool,
    pub no_responders: bool,
    pub protocol: i64,
    pub name: String,
    pub lang: String,
    pub version: String,
    pub tls_required: bool,
    pub user: Option<String>,
    pub pass: Option<String>,
    pub auth_token: Option<String>,
    pub nkey: Option<String>,
    pub sig: Option<String>,
    pub jwt: Option<String>,
}

/// The fields one CONNECT body sets. Go's JSON decoder leaves a field untouched when it is
/// absent or `null` (clients send `"name":null`): both are `None` here.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ConnectFields {
    verbose: Option<bool>,
    pedantic: Option<bool>,
    echo: Option<bool>,
    headers: Option<bool>,
    no_responders: Option<bool>,
    protocol: Option<i64>,
    name: Option<String>,
    lang: Option<String>,
    version: Option<String>,
    tls_required: Option<bool>,
    user: Option<String>,
    pass: Option<String>,
    auth_token: Option<String>,
    nkey: Option<String>,
    sig: Option<String>,
    jwt: Option<String>,
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

impl ConnectOptions {
    /// Parses a first CONNECT body onto Go's defaults.
    pub fn parse(json: &[u8]) -> Result<Self, serde_json::Error> {
        Self::default().merge(json)
    }

    /// Decodes a CONNECT body over these options: what it sets replaces, what it leaves out
    /// (or sends as `null`) is kept. JSON that does not parse is an error, which Go answers by
    /// logging the decoder's message and closing the connection without an -ERR. Like Go's
    /// decoder, `null` changes nothing, a repeated key keeps its last value, and anything but an
    /// object (an array too) is an error. The body is bounded by the control-line limit.
    pub fn merge(mut self, json: &[u8]) -> Result<Self, serde_json::Error> {
        use serde::de::Error as _;
        let fields = match serde_json::from_slice(json)? {
            serde_json::Value::Null => return Ok(self),
            object @ serde_json::Value::Object(_) => ConnectFields::deserialize(object)?,
            other => {
                return Err(serde_json::Error::custom(format!(
                    "cannot unmarshal {} into ClientOpts",
                    match other {
                        serde_json::Value::Array(_) => "array",
                        serde_json::Value::String(_) => "string",
                        serde_json::Value::Number(_) => "number",
                        _ => "bool",
                    }
                )))
            }
        };
        self.apply(fields);
        Ok(self)
    }

    fn apply(&mut self, f: ConnectFields) {
        fn set<T>(field: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *field = value;
            }
        }
        fn set_some<T>(field: &mut Option<T>, value: Option<T>) {
            if value.is_some() {
                *field = value;
            }
        }
        set(&mut self.verbose, f.verbose);
        set(&mut self.pedantic, f.pedantic);
        set(&mut self.echo, f.echo);
        set(&mut self.headers, f.headers);
        set(&mut self.no_responders, f.no_responders);
        set(&mut self.protocol, f.protocol);
        set(&mut self.name, f.name);
        set(&mut self.lang, f.lang);
        set(&mut self.version, f.version);
        set(&mut self.tls_required, f.tls_required);
        set_some(&mut self.user, f.user);
        set_some(&mut self.pass, f.pass);
        set_some(&mut self.auth_token, f.auth_token);
        set_some(&mut self.nkey, f.nkey);
        set_some(&mut self.sig, f.sig);
        set_some(&mut self.jwt, f.jwt);
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
    fn connect_repeated_merges_into_the_options_in_force() {
        let first = br#"{"verbose":false,"echo":false,"user":"a","name":"n"}"#;
        let first = ConnectOptions::parse(first).unwrap_or_default();
        assert!(!first.verbose && first.name == "n");
        let again = first.clone().merge(br#"{"pass":"p","echo":null}"#);
        assert!(again.is_ok_and(|o| !o.verbose
            && !o.echo
            && o.pedantic
            && o.user.as_deref() == Some("a")
            && o.pass.as_deref() == Some("p")
            && o.name == "n"));
        let verbose = first.merge(br#"{"verbose":true}"#);
        assert!(verbose.is_ok_and(|o| o.verbose && !o.echo));
    }

    #[test]
    fn connect_null_and_repeated_keys_like_go() {
        assert!(ConnectOptions::parse(b"null").is_ok_and(|o| o.verbose && o.user.is_none()));
        let opts = ConnectOptions::parse(br#"{"user":"a","user":"b"}"#);
        assert!(opts.is_ok_and(|o| o.user.as_deref() == Some("b")));
    }
}

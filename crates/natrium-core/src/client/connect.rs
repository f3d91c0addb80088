//! The CONNECT document. Fields a client leaves out keep Go's defaults, which are verbose,
//! pedantic and echo all on: real clients send `"verbose":false`.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
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
    /// Parses a CONNECT body. Returns None for JSON that does not parse, which Go answers by
    /// closing the connection without an -ERR.
    pub fn parse(json: &[u8]) -> Option<Self> {
        serde_json::from_slice(json).ok()
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
        assert!(opts.is_some_and(|o| !o.verbose));
    }

    #[test]
    fn connect_bad_json_is_refused() {
        assert!(ConnectOptions::parse(b"{bad").is_none());
    }
}

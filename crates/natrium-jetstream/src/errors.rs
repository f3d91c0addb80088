//! JetStream API errors: Go's table ([`table`]) and the JSON object every response carries
//! when a request is refused, `{"code":…,"err_code":…,"description":"…"}`.

pub mod table;

use std::fmt;

use serde::{Deserialize, Serialize};

/// One row of Go's error table. Descriptions may hold `{name}` placeholders that
/// [`ErrorDef::with`] fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorDef {
    pub code: u16,
    pub err_code: u16,
    pub description: &'static str,
}

impl ErrorDef {
    pub const fn new(code: u16, err_code: u16, description: &'static str) -> Self {
        Self {
            code,
            err_code,
            description,
        }
    }

    /// The error with its description as written.
    pub fn err(&self) -> ApiError {
        ApiError {
            code: self.code,
            err_code: self.err_code,
            description: self.description.to_owned(),
        }
    }

    /// The error with each `{name}` placeholder replaced by its value.
    pub fn with(&self, args: &[(&str, &dyn fmt::Display)]) -> ApiError {
        let mut description = self.description.to_owned();
        for (name, value) in args {
            let placeholder = format!("{{{name}}}");
            if description.contains(&placeholder) {
                description = description.replace(&placeholder, &value.to_string());
            }
        }
        ApiError {
            code: self.code,
            err_code: self.err_code,
            description,
        }
    }
}

/// The `error` object of an API response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub code: u16,
    pub err_code: u16,
    pub description: String,
}

impl ApiError {
    /// Whether this is the error Go's identifier `def` names.
    pub fn is(&self, def: &ErrorDef) -> bool {
        self.err_code == def.err_code
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (error code {})", self.description, self.err_code)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn errors_fill_placeholders() {
        let e = table::INVALID_JSON.with(&[("err", &"bad")]);
        assert_eq!(e.description, "invalid JSON: bad");
        assert_eq!((e.code, e.err_code), (400, 10025));
        assert_eq!(
            serde_json::to_string(&table::STREAM_NOT_FOUND.err()).unwrap(),
            r#"{"code":404,"err_code":10059,"description":"stream not found"}"#
        );
    }
}

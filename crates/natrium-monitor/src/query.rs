//! Query-string decoding with Go's `strconv` error texts (the 400 bodies of the handlers).

/// A 400 answer: the body is the text, as Go writes it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct QueryError(pub String);

/// The decoded `key=value` pairs of a request; the first occurrence of a key wins (Go's
/// `Query().Get`).
pub struct Query {
    pairs: Vec<(String, String)>,
}

fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    out.push(v);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let pairs = raw
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (unescape(k), unescape(v))
            })
            .collect();
        Self { pairs }
    }

    /// A query from already-decoded pairs (system requests carry their options as JSON).
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        Self { pairs }
    }

    /// Replaces every value of `key` with `value` (a system request forcing an option).
    pub fn set(&mut self, key: &str, value: &str) {
        self.pairs.retain(|(k, _)| k != key);
        self.pairs.push((key.to_owned(), value.to_owned()));
    }

    pub fn get(&self, key: &str) -> Option<String> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn non_empty(&self, key: &str) -> Option<String> {
        self.get(key).filter(|v| !v.is_empty())
    }

    /// Go's `strconv.ParseBool`.
    pub fn bool(&self, key: &str) -> Result<bool, QueryError> {
        let Some(v) = self.non_empty(key) else {
            return Ok(false);
        };
        match v.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
            _ => Err(QueryError(format!(
                "Error decoding boolean for '{key}': strconv.ParseBool: parsing {v:?}: invalid syntax"
            ))),
        }
    }

    /// Go's `strconv.Atoi`.
    pub fn int(&self, key: &str) -> Result<i64, QueryError> {
        let Some(v) = self.non_empty(key) else {
            return Ok(0);
        };
        v.parse().map_err(|_| {
            QueryError(format!(
                "Error decoding int for '{key}': strconv.Atoi: parsing {v:?}: invalid syntax"
            ))
        })
    }

    /// Go's `strconv.ParseUint(s, 10, 64)`.
    pub fn uint(&self, key: &str) -> Result<u64, QueryError> {
        let Some(v) = self.non_empty(key) else {
            return Ok(0);
        };
        v.parse().map_err(|_| {
            QueryError(format!(
                "Error decoding uint64 for '{key}': strconv.ParseUint: parsing {v:?}: invalid syntax"
            ))
        })
    }
}

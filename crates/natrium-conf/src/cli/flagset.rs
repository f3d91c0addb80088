//! Go's `flag` package, as `nats-server` uses it: `-name`, `--name`, `-name=value`,
//! `-name value` (not for booleans), `--` to end flags, the first non-flag argument ends them
//! too. Integers parse like Go's `strconv.ParseInt(s, 0, 64)` (sign, `0x`/`0o`/`0b`/leading-`0`
//! prefixes, `_` separators); booleans like `strconv.ParseBool`.

use super::CliError;

/// What a flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Int,
    Str,
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FlagValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

/// Every flag `nats-server` v2.15 defines, with its kind. Aliases are separate entries, as in
/// Go; [`super::canonical`] maps them to one option.
pub(crate) const FLAGS: &[(&str, Kind)] = &[
    ("a", Kind::Str),
    ("addr", Kind::Str),
    ("net", Kind::Str),
    ("p", Kind::Int),
    ("port", Kind::Int),
    ("n", Kind::Str),
    ("name", Kind::Str),
    ("server_name", Kind::Str),
    ("P", Kind::Str),
    ("pid", Kind::Str),
    ("m", Kind::Int),
    ("http_port", Kind::Int),
    ("ms", Kind::Int),
    ("https_port", Kind::Int),
    ("c", Kind::Str),
    ("config", Kind::Str),
    ("t", Kind::Bool),
    ("sl", Kind::Str),
    ("signal", Kind::Str),
    ("client_advertise", Kind::Str),
    ("ports_file_dir", Kind::Str),
    ("l", Kind::Str),
    ("log", Kind::Str),
    ("T", Kind::Bool),
    ("logtime", Kind::Bool),
    ("logtime_utc", Kind::Bool),
    ("s", Kind::Bool),
    ("syslog", Kind::Bool),
    ("r", Kind::Str),
    ("remote_syslog", Kind::Str),
    ("D", Kind::Bool),
    ("debug", Kind::Bool),
    ("V", Kind::Bool),
    ("trace", Kind::Bool),
    ("VV", Kind::Bool),
    ("DV", Kind::Bool),
    ("DVV", Kind::Bool),
    ("log_size_limit", Kind::Int),
    ("max_traced_msg_len", Kind::Int),
    ("js", Kind::Bool),
    ("jetstream", Kind::Bool),
    ("sd", Kind::Str),
    ("store_dir", Kind::Str),
    ("user", Kind::Str),
    ("pass", Kind::Str),
    ("auth", Kind::Str),
    ("tls", Kind::Bool),
    ("tlscert", Kind::Str),
    ("tlskey", Kind::Str),
    ("tlsverify", Kind::Bool),
    ("tlscacert", Kind::Str),
    ("routes", Kind::Str),
    ("cluster", Kind::Str),
    ("cluster_name", Kind::Str),
    ("no_advertise", Kind::Bool),
    ("cluster_advertise", Kind::Str),
    ("connect_retries", Kind::Int),
    ("cluster_listen", Kind::Str),
    ("profile", Kind::Int),
    ("h", Kind::Bool),
    ("help", Kind::Bool),
    ("v", Kind::Bool),
    ("version", Kind::Bool),
    ("help_tls", Kind::Bool),
];

fn kind_of(name: &str) -> Option<Kind> {
    FLAGS.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
}

/// Flags in command-line order, then the arguments left after the flags.
pub(crate) type Parsed = (Vec<(String, FlagValue)>, Vec<String>);

/// Parses `args` (without the program name) as Go's `FlagSet.Parse` does; stops at the first
/// error, as Go does.
pub(crate) fn parse(args: &[String]) -> Result<Parsed, CliError> {
    let mut set = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg.len() < 2 || !arg.starts_with('-') {
            break;
        }
        i += 1;
        let dashes = if arg.starts_with("--") { 2 } else { 1 };
        if arg == "--" {
            break;
        }
        let name = arg.get(dashes..).unwrap_or("");
        if name.is_empty() || name.starts_with(['-', '=']) {
            return Err(CliError::BadSyntax(arg.clone()));
        }
        let (name, inline) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (name, None),
        };
        let kind = kind_of(name).ok_or_else(|| CliError::Undefined(name.to_owned()))?;
        let value = match (kind, inline) {
            (Kind::Bool, None) => FlagValue::Bool(true),
            (Kind::Bool, Some(v)) => {
                FlagValue::Bool(parse_bool(v).ok_or_else(|| CliError::InvalidBool {
                    flag: name.to_owned(),
                    value: v.to_owned(),
                })?)
            }
            (_, inline) => {
                let text = if let Some(v) = inline {
                    v.to_owned()
                } else {
                    let next = args.get(i).cloned();
                    i += 1;
                    next.ok_or_else(|| CliError::MissingArgument(name.to_owned()))?
                };
                if kind == Kind::Int {
                    FlagValue::Int(parse_int(&text).map_err(|reason| CliError::InvalidValue {
                        flag: name.to_owned(),
                        value: text.clone(),
                        reason,
                    })?)
                } else {
                    FlagValue::Str(text)
                }
            }
        };
        set.push((name.to_owned(), value));
    }
    Ok((set, args.get(i..).unwrap_or(&[]).to_vec()))
}

/// `strconv.ParseBool`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `strconv.ParseInt(s, 0, 64)`, with the `flag` package's two error texts.
pub(crate) fn parse_int(s: &str) -> Result<i64, &'static str> {
    const SYNTAX: &str = "parse error";
    const RANGE: &str = "value out of range";
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, s.get(1..).unwrap_or("")),
        Some(b'+') => (false, s.get(1..).unwrap_or("")),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits, prefixed) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d, true)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d, true)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d, true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower.get(1..).unwrap_or(""), true)
    } else {
        (10, lower.as_str(), false)
    };
    if !underscores_ok(digits, prefixed) {
        return Err(SYNTAX);
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() {
        return Err(SYNTAX);
    }
    let mut magnitude: u64 = 0;
    let mut overflow = false;
    for c in clean.chars() {
        let d = c.to_digit(radix).ok_or(SYNTAX)?;
        match magnitude
            .checked_mul(u64::from(radix))
            .and_then(|m| m.checked_add(u64::from(d)))
        {
            Some(m) => magnitude = m,
            None => overflow = true,
        }
    }
    let limit = if negative {
        1u64 << 63
    } else {
        (1u64 << 63) - 1
    };
    if overflow || magnitude > limit {
        return Err(RANGE);
    }
    Ok(if negative {
        0i64.wrapping_sub_unsigned(magnitude)
    } else {
        magnitude as i64
    })
}

/// Go allows `_` only between digits, or right after a base prefix.
fn underscores_ok(digits: &str, prefixed: bool) -> bool {
    if !digits.contains('_') {
        return true;
    }
    let mut prev_digit = prefixed;
    let mut prev_underscore = false;
    for c in digits.chars() {
        if c == '_' {
            if !prev_digit {
                return false;
            }
            prev_digit = false;
            prev_underscore = true;
        } else {
            prev_digit = true;
            prev_underscore = false;
        }
    }
    !prev_underscore
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flagset_parse_int_like_go() {
        assert_eq!(parse_int("4222"), Ok(4222));
        assert_eq!(parse_int("-1"), Ok(-1));
        assert_eq!(parse_int("+5"), Ok(5));
        assert_eq!(parse_int("0x10"), Ok(16));
        assert_eq!(parse_int("0o17"), Ok(15));
        assert_eq!(parse_int("017"), Ok(15));
        assert_eq!(parse_int("0b11"), Ok(3));
        assert_eq!(parse_int("1_000"), Ok(1000));
        assert_eq!(parse_int("0x_1"), Ok(1));
        assert_eq!(parse_int("0"), Ok(0));
        assert_eq!(parse_int("abc"), Err("parse error"));
        assert_eq!(parse_int("1.5"), Err("parse error"));
        assert_eq!(parse_int(""), Err("parse error"));
        assert_eq!(parse_int("08"), Err("parse error"));
        assert_eq!(parse_int("_1"), Err("parse error"));
        assert_eq!(parse_int("1__0"), Err("parse error"));
        assert_eq!(parse_int("1_"), Err("parse error"));
        assert_eq!(parse_int("0x"), Err("parse error"));
        assert_eq!(parse_int("99999999999999999999"), Err("value out of range"));
        assert_eq!(parse_int("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_int("9223372036854775808"), Err("value out of range"));
    }

    #[test]
    fn flagset_parse_bool_like_go() {
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("yes"), None);
        assert_eq!(parse_bool("tRue"), None);
        assert_eq!(parse_bool(""), None);
    }
}

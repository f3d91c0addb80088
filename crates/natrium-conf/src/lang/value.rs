//! The parsed configuration tree: values with the position of every key and value.

use std::fmt;

use crate::error::Position;

/// A configuration value, typed the way Go's parser types it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value: what a `$NAME` reference yields when the environment variable's own value
    /// is dropped by Go's parser (an unknown size suffix such as `1kbb`).
    Null,
    /// `true`/`yes`/`on`, `false`/`no`/`off`, any case.
    Bool(bool),
    /// Integers, with size suffixes already applied (`1k` is 1000, `1kb` is 1024).
    Int(i64),
    /// `1.5`.
    Float(f64),
    /// Quoted, unquoted and block strings.
    Str(String),
    /// `2016-05-04T18:53:41Z`.
    Datetime(Datetime),
    /// `[a, b]`.
    Array(Vec<Node>),
    /// `{ a: 1 }`, and the file itself.
    Map(Map),
}

impl Value {
    /// The Go type name that appears in Go's conversion errors (`int64`, `map[string]interface {}`).
    pub fn go_type_name(&self) -> &'static str {
        match self {
            Value::Null => "nil",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Datetime(_) => "time.Time",
            Value::Array(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
        }
    }
}

/// A UTC date and time, the only form the configuration language has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Datetime {
    /// Year, 0 to 9999.
    pub year: u16,
    /// Month, 1 to 12.
    pub month: u8,
    /// Day of the month, 1 to 31 (checked against the month).
    pub day: u8,
    /// Hour, 0 to 23.
    pub hour: u8,
    /// Minute, 0 to 59.
    pub minute: u8,
    /// Second, 0 to 59.
    pub second: u8,
}

impl Datetime {
    /// Parses `YYYY-MM-DDTHH:MM:SSZ` and checks that the date exists, as Go's `time.Parse` does.
    pub fn parse(text: &str) -> Option<Datetime> {
        let b = text.as_bytes();
        if b.len() != 20 || b.get(19) != Some(&b'Z') {
            return None;
        }
        let num = |from: usize, len: usize| -> Option<u16> {
            text.get(from..from + len)
                .and_then(|s| s.parse::<u16>().ok())
        };
        let dt = Datetime {
            year: num(0, 4)?,
            month: u8::try_from(num(5, 2)?).ok()?,
            day: u8::try_from(num(8, 2)?).ok()?,
            hour: u8::try_from(num(11, 2)?).ok()?,
            minute: u8::try_from(num(14, 2)?).ok()?,
            second: u8::try_from(num(17, 2)?).ok()?,
        };
        let divides = |n: u16| dt.year.checked_rem(n) == Some(0);
        let leap = divides(4) && (!divides(100) || divides(400));
        let days = match dt.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        let valid =
            (1..=days).contains(&dt.day) && dt.hour < 24 && dt.minute < 60 && dt.second < 60;
        valid.then_some(dt)
    }
}

impl fmt::Display for Datetime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where the value starts (for a value copied from a variable: where the variable's value
    /// was written).
    pub pos: Position,
    /// Set when a `$name` reference used this value; Go then stops calling the key unknown.
    pub(crate) used_as_variable: bool,
}

impl Node {
    /// A node that no variable reference has used.
    pub fn new(value: Value, pos: Position) -> Node {
        Node {
            value,
            pos,
            used_as_variable: false,
        }
    }

    /// Whether some `$name` reference used this value, which exempts its key from Go's
    /// unknown-field check.
    pub fn used_as_variable(&self) -> bool {
        self.used_as_variable
    }
}

/// One `key: value` pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key as written (option lookups ignore case, variable lookups do not).
    pub key: String,
    /// Where the key starts; Go reports option errors at this position.
    pub key_pos: Position,
    /// The value.
    pub node: Node,
}

/// A map in first-definition order. Redefining a key replaces its value and position in place.
#[derive(Debug, Clone, Default)]
pub struct Map {
    entries: Vec<Entry>,
    /// Just after the closing brace, where Go places a map value that is an array item.
    end: Option<Position>,
}

/// Maps are equal by their entries; where a brace closed is no part of the value.
impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// Sets `key`, replacing an earlier definition of exactly the same key.
    pub fn insert(&mut self, key: String, key_pos: Position, node: Node) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.key == key) {
            e.key_pos = key_pos;
            e.node = node;
        } else {
            self.entries.push(Entry { key, key_pos, node });
        }
    }

    /// The entry for exactly `key` (case-sensitive, as variable lookups are).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.key == key)
    }

    /// Just after the closing brace (Go's position of a map that is an array item); `None`
    /// for the top level.
    pub fn end_pos(&self) -> Option<&Position> {
        self.end.as_ref()
    }

    pub(crate) fn set_end(&mut self, end: Option<Position>) {
        self.end = end;
    }

    /// Entries in first-definition order.
    pub fn iter(&self) -> std::slice::Iter<'_, Entry> {
        self.entries.iter()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn into_entries(self) -> Vec<Entry> {
        self.entries
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_datetime_checks_calendar() {
        assert!(Datetime::parse("2016-05-04T18:53:41Z").is_some());
        assert!(Datetime::parse("2016-02-29T00:00:00Z").is_some());
        assert!(Datetime::parse("2015-02-29T00:00:00Z").is_none());
        assert!(Datetime::parse("1900-02-29T00:00:00Z").is_none());
        assert!(Datetime::parse("2000-02-29T00:00:00Z").is_some());
        assert!(Datetime::parse("2016-13-04T18:53:41Z").is_none());
        assert!(Datetime::parse("2016-04-31T18:53:41Z").is_none());
        assert!(Datetime::parse("2016-04-30T24:00:00Z").is_none());
        assert!(Datetime::parse("2016-04-30T23:59:60Z").is_none());
        let dt = Datetime::parse("0001-01-01T00:00:00Z");
        assert_eq!(
            dt.map(|d| d.to_string()).as_deref(),
            Some("0001-01-01T00:00:00Z")
        );
    }

    #[test]
    fn value_go_type_names() {
        assert_eq!(Value::Int(1).go_type_name(), "int64");
        assert_eq!(
            Value::Map(Map::new()).go_type_name(),
            "map[string]interface {}"
        );
        assert_eq!(Value::Array(Vec::new()).go_type_name(), "[]interface {}");
    }
}

//! Reading configuration files and naming them the way Go does (`filepath.Join`, `Dir`,
//! `Clean` on slash-separated paths), so that error messages carry the same file names.

use std::io::Read;

use crate::error::{go_io_reason, ConfError};
use crate::limits::CONFIG_FILE_BYTES_MAX;

/// Lexically cleans a slash-separated path: collapses `//`, drops `.`, resolves `..` against a
/// preceding element, and turns an empty result into `.`.
pub(crate) fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// The directory part of `path`, cleaned (Go's `filepath.Dir`).
pub(crate) fn dir(path: &str) -> String {
    match path.rfind('/') {
        Some(cut) => clean(path.get(..=cut).unwrap_or("/")),
        None => ".".to_owned(),
    }
}

/// `dir` joined with `rel` and cleaned (Go's `filepath.Join`). Like Go, an absolute `rel` is
/// still appended to `dir`.
pub(crate) fn join(dir: &str, rel: &str) -> String {
    match (dir.is_empty(), rel.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean(rel),
        (false, true) => clean(dir),
        (false, false) => clean(&format!("{dir}/{rel}")),
    }
}

/// Reads a whole configuration file, reporting failures with Go's `open …`/`read …` wording.
/// Invalid UTF-8 is replaced, as Go's lexer does when it decodes runes.
pub(crate) fn read(path: &str) -> Result<String, ConfError> {
    let io = |op: &'static str, e: &std::io::Error| ConfError::Io {
        op,
        path: path.to_owned(),
        reason: go_io_reason(e),
    };
    let file = std::fs::File::open(path).map_err(|e| io("open", &e))?;
    let mut bytes = Vec::new();
    file.take(CONFIG_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io("read", &e))?;
    if bytes.len() as u64 > CONFIG_FILE_BYTES_MAX {
        return Err(ConfError::Io {
            op: "read",
            path: path.to_owned(),
            reason: format!("file larger than {CONFIG_FILE_BYTES_MAX} bytes"),
        });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_clean_like_go() {
        assert_eq!(clean(""), ".");
        assert_eq!(clean("./a.conf"), "a.conf");
        assert_eq!(clean("a//b/./c/.."), "a/b");
        assert_eq!(clean("../a"), "../a");
        assert_eq!(clean("/../a"), "/a");
        assert_eq!(clean("/"), "/");
        assert_eq!(clean("a/../.."), "..");
    }

    #[test]
    fn source_dir_and_join_like_go() {
        assert_eq!(dir("c.conf"), ".");
        assert_eq!(dir("/tmp/x/c.conf"), "/tmp/x");
        assert_eq!(dir("/c.conf"), "/");
        assert_eq!(join(".", "sub/b.conf"), "sub/b.conf");
        assert_eq!(join("/tmp/cx", "/tmp/cx/a.conf"), "/tmp/cx/tmp/cx/a.conf");
        assert_eq!(join("/tmp/cx", ""), "/tmp/cx");
        assert_eq!(join("sub", "./b.conf"), "sub/b.conf");
    }

    #[test]
    fn source_read_missing_file_like_go() {
        let err = read("/nonexistent/natrium/x.conf")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("open /nonexistent/natrium/x.conf: no such file or directory")
        );
    }
}

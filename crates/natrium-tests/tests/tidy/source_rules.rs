//! Line-level rules over every Rust source file: the size budget, TODOs that name an issue,
//! and no commented-out code. Comments are found by the tokenizer, so text inside string
//! literals (config fixtures, protocol samples) is never mistaken for a comment.

use std::path::{Path, PathBuf};

use super::lexer::{lex, CommentKind};

/// Files above this many lines are listed in the test output: time to think about a split.
pub const FILE_LINES_SOFT: usize = 800;
/// Files above this many lines fail unless their module doc gives the reason on a line
/// starting `//! Size:`.
pub const FILE_LINES_MAX: usize = 1_500;

/// The `.rs` files under `crates/*/{src,tests,benches,examples}` and `fuzz/fuzz_targets`,
/// sorted, relative paths of the returned list being stable across runs and platforms.
pub fn rust_files(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("fuzz/fuzz_targets")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        for c in crates.flatten() {
            for sub in ["src", "tests", "benches", "examples"] {
                dirs.push(c.path().join(sub));
            }
        }
    }
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// What one file breaks, plus a size note that is only printed.
#[derive(Debug, Default)]
pub struct FileReport {
    pub size_note: Option<String>,
    pub size_error: Option<String>,
    pub todo_errors: Vec<String>,
    pub commented_code: Vec<String>,
}

pub fn check(name: &str, src: &str) -> FileReport {
    let lexed = lex(src);
    let lines = src.lines().count();
    let mut r = FileReport::default();
    let size_reason = lexed.comments.iter().any(|c| {
        c.kind == CommentKind::InnerDoc
            && c.text
                .trim_start()
                .strip_prefix("Size:")
                .is_some_and(|t| !t.trim().is_empty())
    });
    if lines > FILE_LINES_MAX && !size_reason {
        r.size_error = Some(format!(
            "{name}: {lines} lines, over {FILE_LINES_MAX}: split it, or give the reason in the \
             module doc on a line starting `//! Size:`"
        ));
    } else if lines > FILE_LINES_SOFT {
        let why = if size_reason { " (reason given)" } else { "" };
        r.size_note = Some(format!("{name}: {lines} lines{why}"));
    }
    for c in &lexed.comments {
        if let Some(word) = bare_todo(&c.text) {
            r.todo_errors.push(format!(
                "{name}:{}: `{word}` without an issue number: write `{word}(#N)`",
                c.line
            ));
        }
        if c.kind == CommentKind::Line && looks_like_code(&c.text) {
            let text = c.text.trim();
            r.commented_code
                .push(format!("{name}:{}: `// {text}`", c.line));
        }
    }
    r
}

/// Markers of unfinished work; each must name its issue: `TODO(#13)` or `TODO #13`.
const TODO_WORDS: [&str; 3] = ["TODO", "FIXME", "XXX"];

/// The first of [`TODO_WORDS`] (as a whole word) not followed by `#N`, `(#N)` or ` #N`.
fn bare_todo(text: &str) -> Option<&'static str> {
    for word in TODO_WORDS {
        let mut from = 0;
        while let Some(at) = text[from..].find(word) {
            let start = from + at;
            let end = start + word.len();
            from = end;
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if is_word(before) || is_word(after) {
                continue;
            }
            let rest = text[end..].trim_start_matches(['(', ' ']);
            let numbered = rest
                .strip_prefix('#')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()));
            if !numbered {
                return Some(word);
            }
        }
    }
    None
}

/// Keywords that start a Rust statement or item. A comment line starting with one of these
/// and ending like a statement is taken for code.
const STATEMENT_STARTS: &[&str] = &[
    "let ",
    "use ",
    "return",
    "mod ",
    "pub ",
    "fn ",
    "const ",
    "static ",
    "impl ",
    "struct ",
    "enum ",
    "if ",
    "else",
    "for ",
    "while ",
    "match ",
    "loop ",
    "break",
    "continue",
    "self.",
    "assert",
    "debug_assert",
    "println!",
    "eprintln!",
    "dbg!",
];

/// The heuristic for commented-out code, on the text of one plain `//` comment: a closing
/// brace alone, a line ending in `{` that opens a block, or a line ending in `;` that reads
/// like a statement (a statement keyword, a call, an assignment or a path). Prose ends in a
/// full stop, so a comment that quotes code inside backticks is not matched.
fn looks_like_code(text: &str) -> bool {
    let t = text.trim();
    if matches!(t, "}" | "};" | "})" | "});" | "}," | "} else {") {
        return true;
    }
    let starts = STATEMENT_STARTS.iter().any(|k| t.starts_with(k));
    if let Some(body) = t.strip_suffix(';') {
        return starts || body.ends_with(')') || body.contains(" = ") || body.contains("::");
    }
    if t.ends_with('{') && t.len() > 1 {
        return starts || t.ends_with(") {") || t.ends_with("=> {") || t.ends_with("= {");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{bare_todo, check, looks_like_code};

    #[test]
    fn tidy_todo_needs_issue_number() {
        assert_eq!(bare_todo(" TODO: later"), Some("TODO"));
        assert_eq!(bare_todo(" FIXME"), Some("FIXME"));
        assert_eq!(bare_todo(" XXX hack"), Some("XXX"));
        assert_eq!(bare_todo(" TODO(#13): later"), None);
        assert_eq!(bare_todo(" TODO #13 later"), None);
        assert_eq!(bare_todo(" TODOS and XXXL are words"), None);
        assert_eq!(bare_todo(" TODO(#13) then FIXME"), Some("FIXME"));
    }

    #[test]
    fn tidy_commented_code_heuristic() {
        for code in [
            "let x = 1;",
            "foo(bar);",
            "}",
            "if a {",
            "x = y;",
            "Foo::bar(1) {",
        ] {
            assert!(looks_like_code(code), "{code}");
        }
        let prose = [
            "Go sends the error, then closes.",
            "The rest of the line (after `;`) is ignored.",
            "for a lone `}` (the tail of a JSON-style file).",
            "Two cases: the buffer is full; the writer stalls",
            "{",
        ];
        for p in prose {
            assert!(!looks_like_code(p), "{p}");
        }
    }

    #[test]
    fn tidy_rules_see_only_real_comments() {
        let src = "//! Doc.\nfn f() {\n    let s = \"// let x = 1;\";\n    // y();\n}\n";
        let r = check("f.rs", src);
        assert_eq!(r.commented_code.len(), 1, "{:?}", r.commented_code);
        assert!(r.commented_code[0].starts_with("f.rs:4:"));
        let doc = "/// let x = 1;\n//! use a::b;\nfn g() {}\n";
        assert!(check("g.rs", doc).commented_code.is_empty());
    }

    #[test]
    fn tidy_size_reason_marker() {
        let long = "fn f() {}\n".repeat(1_600);
        assert!(check("a.rs", &long).size_error.is_some());
        let with_reason = format!("//! A table.\n//!\n//! Size: one generated table.\n{long}");
        let r = check("b.rs", &with_reason);
        assert!(r.size_error.is_none() && r.size_note.is_some());
        let mid = "fn f() {}\n".repeat(900);
        let r = check("c.rs", &mid);
        assert!(r.size_error.is_none() && r.size_note.is_some());
    }
}

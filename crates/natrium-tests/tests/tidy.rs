//! Rules the build checks (issue 13): the crate layering, the source tidiness habits of
//! CONVENTIONS.md (file size budget, numbered to-do markers, no commented-out code) and no
//! import cycle of more than three files inside a crate. docs/tidy-rules.md explains each rule;
//! `cargo test -p natrium-tests --test tidy -- --nocapture` prints the large files and the
//! small cycles.
//!
//! Layout: [`layers`] (the layer table and the `cargo metadata` check), [`source_rules`]
//! (per-file rules), [`imports`] (file import graphs), [`cycles`] (strongly connected components),
//! [`lexer`] (the tokenizer the last three share).

#[path = "tidy/cycles.rs"]
mod cycles;
#[path = "tidy/imports.rs"]
mod imports;
#[path = "tidy/layers.rs"]
mod layers;
#[path = "tidy/lexer.rs"]
mod lexer;
#[path = "tidy/source_rules.rs"]
mod source_rules;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cycles::Cycle;
use source_rules::FileReport;

/// Cycles of up to this many files are tolerated (a type and its helper modules).
const CYCLE_FILES_MAX: usize = 3;

fn workspace_root() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().expect("workspace root")
}

/// Every source file's report, computed once for the tests that share it.
fn reports() -> &'static [(String, FileReport)] {
    static REPORTS: OnceLock<Vec<(String, FileReport)>> = OnceLock::new();
    REPORTS.get_or_init(|| {
        let root = workspace_root();
        let files = source_rules::rust_files(&root);
        assert!(files.len() > 100, "found only {} Rust files", files.len());
        files
            .iter()
            .map(|f| {
                let name = imports::relative(&root, f);
                let src = std::fs::read_to_string(f).expect("read source file");
                let report = source_rules::check(&name, &src);
                (name, report)
            })
            .collect()
    })
}

#[test]
fn tidy_crate_layers() {
    let pkgs = layers::packages(&workspace_root());
    assert!(
        pkgs.iter().any(|p| p.name == "natrium-core"),
        "no workspace crates found"
    );
    let bad = layers::violations(&pkgs);
    assert!(bad.is_empty(), "crate layering:\n  {}", bad.join("\n  "));
}

/// natrium-core must not name the subsystems that attach to it, not even in a comment: they
/// depend on it, never the other way round.
#[test]
fn tidy_core_names_no_runtime_crate() {
    let names = ["jetstream", "mqtt", "cluster", "monitor"]
        .iter()
        .flat_map(|s| [format!("natrium-{s}"), format!("natrium_{s}")])
        .collect::<Vec<_>>();
    let mut hits = Vec::new();
    for (name, _) in reports() {
        if !name.starts_with("crates/natrium-core/") {
            continue;
        }
        let src = std::fs::read_to_string(workspace_root().join(name)).expect("read");
        for (n, line) in src.lines().enumerate() {
            for crate_name in names.iter().filter(|c| line.contains(c.as_str())) {
                hits.push(format!("{name}:{}: names `{crate_name}`", n + 1));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "natrium-core names a runtime crate:\n  {}",
        hits.join("\n  ")
    );
}

#[test]
fn tidy_file_size_budget() {
    let (mut notes, mut errors) = (Vec::new(), Vec::new());
    for (_, r) in reports() {
        notes.extend(r.size_note.clone());
        errors.extend(r.size_error.clone());
    }
    if !notes.is_empty() {
        let soft = source_rules::FILE_LINES_SOFT;
        println!(
            "files over {soft} lines (allowed, worth a split):\n  {}",
            notes.join("\n  ")
        );
    }
    assert!(
        errors.is_empty(),
        "file size budget:\n  {}",
        errors.join("\n  ")
    );
}

#[test]
fn tidy_todo_has_issue_number() {
    let errors: Vec<_> = reports()
        .iter()
        .flat_map(|(_, r)| r.todo_errors.clone())
        .collect();
    assert!(
        errors.is_empty(),
        "unnumbered to-do markers:\n  {}",
        errors.join("\n  ")
    );
}

#[test]
fn tidy_no_commented_out_code() {
    let errors: Vec<_> = reports()
        .iter()
        .flat_map(|(_, r)| r.commented_code.clone())
        .collect();
    assert!(
        errors.is_empty(),
        "commented-out code (delete it: git keeps history; or reword the comment as prose):\n  {}",
        errors.join("\n  ")
    );
}

/// Every workspace crate target's import cycles, as (oversize cycles, printable summary).
fn current_cycles(root: &Path) -> (Vec<Cycle>, String) {
    let mut oversize = Vec::new();
    let mut small = Vec::new();
    let mut text = String::new();
    for pkg in layers::packages(root) {
        for (kinds, target, src) in &pkg.targets {
            if kinds.iter().any(|k| k == "custom-build") {
                continue;
            }
            let key = if kinds.iter().any(|k| k == "lib" || k == "proc-macro") {
                pkg.name.clone()
            } else {
                format!("{}/{}/{target}", pkg.name, kinds.join("+"))
            };
            let graph = imports::crate_graph(&pkg.dir, src);
            for note in &graph.notes {
                let _ = writeln!(text, "note: {key}: {note}");
            }
            for comp in cycles::sccs(&graph.edges) {
                if comp.len() > CYCLE_FILES_MAX {
                    describe_cycle(&mut text, &key, &comp, &graph);
                    oversize.push((key.clone(), comp));
                } else if comp.len() > 1 {
                    let files: Vec<_> = comp.iter().map(String::as_str).collect();
                    small.push(format!("{key}: {}", files.join(", ")));
                }
            }
        }
    }
    if !small.is_empty() {
        let _ = writeln!(text, "small cycles (allowed):\n  {}", small.join("\n  "));
    }
    (oversize, text)
}

/// The cycle's files and, for each edge inside it, the first path that makes it.
fn describe_cycle(text: &mut String, key: &str, comp: &BTreeSet<String>, g: &imports::FileGraph) {
    let _ = writeln!(text, "import cycle in {key}: {} files", comp.len());
    for from in comp {
        let targets = g.edges.get(from).into_iter().flatten();
        for (to, ev) in targets.filter(|(to, _)| comp.contains(*to)) {
            let _ = writeln!(text, "  {from} -> {to}  (line {}: {})", ev.line, ev.path);
        }
    }
}

#[test]
fn tidy_import_cycles() {
    let (oversize, summary) = current_cycles(&workspace_root());
    println!("{summary}");
    let mut msg = String::new();
    for (key, files) in &oversize {
        let listed: Vec<_> = files.iter().map(String::as_str).collect();
        let n = files.len();
        let _ = writeln!(
            msg,
            "import cycle in {key} ({n} files: {})",
            listed.join(", ")
        );
    }
    assert!(
        oversize.is_empty(),
        "{msg}Break the cycle: move the shared type to a module both sides can import, or pass \
         it in instead of reaching back; the output above (--nocapture) shows the path behind \
         each edge."
    );
}

//! The import scanner on a small crate written to a temporary directory: every module layout,
//! `#[path]`, inline and test modules, re-exports, and paths that must not count.

use std::collections::BTreeSet;
use std::path::Path;

use super::crate_graph;

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, src) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, src).expect("write");
    }
}

fn edges(dir: &Path) -> BTreeSet<(String, String)> {
    let g = crate_graph(dir, &dir.join("src/lib.rs"));
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    g.edges
        .iter()
        .flat_map(|(from, to)| to.keys().map(|t| (from.clone(), t.clone())))
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (format!("src/{a}"), format!("src/{b}"))
}

#[test]
fn tidy_imports_layouts_and_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        &[
            (
                "src/lib.rs",
                "mod a;\nmod b;\n#[path = \"odd/c_impl.rs\"]\nmod c;\npub use b::Thing;\n\
                 mod inline { use crate::c::C; }\n",
            ),
            // `a.rs` + `a/`: a child of a flat file lives in the directory named after it.
            (
                "src/a.rs",
                "mod kid;\npub use kid::Kid;\npub fn f() { crate::Thing::new(); }\n",
            ),
            (
                "src/a/kid.rs",
                "pub struct Kid;\nuse super::super::b::helper as h;\n",
            ),
            // `b/mod.rs`: children next to it; a string and a comment that must not count.
            (
                "src/b/mod.rs",
                "mod inner;\npub struct Thing;\nfn helper() {}\n\
                 const S: &str = \"crate::a::f\";\n// crate::a::f\n/* crate::a::f */\n\
                 #[cfg(test)]\nmod tests { use crate::a::f; }\n\
                 #[cfg(test)]\nfn probe() { crate::c::C; }\n",
            ),
            (
                "src/b/inner.rs",
                "use self::super::Thing;\nfn g() { println!(\"{}\", 1); }\n",
            ),
            // A `#[path]` file keeps its own children next to it.
            ("src/odd/c_impl.rs", "mod deep;\npub struct C;\n"),
            ("src/odd/deep.rs", "fn d() { let _ = crate::a::Kid; }\n"),
        ],
    );
    let got = edges(dir.path());
    let want: BTreeSet<_> = [
        pair("lib.rs", "b/mod.rs"),      // pub use b::Thing
        pair("lib.rs", "odd/c_impl.rs"), // the inline module's use
        pair("a.rs", "a/kid.rs"),        // pub use kid::Kid
        pair("a.rs", "b/mod.rs"),        // crate::Thing, followed through lib.rs
        pair("a/kid.rs", "b/mod.rs"),    // super::super::b::helper
        pair("b/inner.rs", "b/mod.rs"),  // self::super::Thing
        pair("odd/deep.rs", "a/kid.rs"), // crate::a::Kid, followed through a.rs
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

#[test]
fn tidy_imports_module_imports_resolve_through_their_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        &[
            ("src/lib.rs", "pub mod net;\npub mod store;\n"),
            ("src/net/mod.rs", "mod conn;\npub use conn::Conn;\n"),
            (
                "src/net/conn.rs",
                "use crate::store;\npub struct Conn(store::Disk);\n",
            ),
            (
                "src/store.rs",
                "use crate::net;\nuse net::Conn as C;\npub struct Disk;\n",
            ),
        ],
    );
    let got = edges(dir.path());
    let want: BTreeSet<_> = [
        pair("net/mod.rs", "net/conn.rs"),
        pair("net/conn.rs", "store.rs"),
        pair("store.rs", "net/conn.rs"),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

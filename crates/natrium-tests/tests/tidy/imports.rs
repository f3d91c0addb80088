//! Which source file of a crate imports which: the module tree (from `mod` declarations,
//! `#[path]` attributes and the `foo.rs` + `foo/` and `foo/mod.rs` layouts) and the references
//! between modules (`use` trees and `crate::`, `super::`, `self::` paths, plus paths starting
//! with a child module's name or a name a `use` bound), each resolved to a file.
//!
//! A reference to `crate::a::b::Item` points at the file of the longest known module prefix
//! (`a::b`), unless that module only imports `Item` (`pub use c::Item;`, or a plain `use` a
//! child reaches through `super::`): then it points where the import does, so a re-exporting
//! facade (`lib.rs`, a `mod.rs`) does not join every cycle that passes through it. The facade
//! still depends on what it re-exports. A `use` that names a module itself is no dependency
//! until a path goes through it; a glob (`use super::*`) depends on its module.
//!
//! `#[cfg(test)]` items are left out entirely, so test modules neither add files nor edges:
//! the rule is about how the production code is layered. Paths inside macro bodies count (the
//! tokenizer sees through them); intra-doc links do not (they are comments). Names are not
//! resolved further than that (no trait methods, no glob-imported names).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::lexer::{lex, Tok};

/// The first place a file refers to another, shown when a cycle is reported.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub line: usize,
    pub path: String,
}

/// One crate target's file import graph. File names are relative to the package directory.
#[derive(Debug, Default)]
pub struct FileGraph {
    pub edges: BTreeMap<String, BTreeMap<String, Evidence>>,
    /// `mod` declarations whose file was not found (a module compiled out on this platform).
    pub notes: Vec<String>,
}

/// A module declared somewhere in the crate.
struct ModDecl {
    module: Vec<String>,
    /// The file holding the module's items (the declaring file for an inline `mod x { }`).
    file: PathBuf,
}

/// A path as written, with the module it was written in; resolved once the tree is known.
struct RawRef {
    file: PathBuf,
    module: Vec<String>,
    segs: Vec<String>,
    line: usize,
    kind: RefKind,
}

#[derive(Clone, PartialEq, Eq)]
enum RefKind {
    /// A path in code (a type, a call, a macro body).
    Path,
    /// A leaf of a `use` tree, binding `name` in its module.
    Use { name: String },
    /// `use path::*`.
    Glob,
}

/// A module whose file is yet to be scanned.
struct Pending {
    file: PathBuf,
    module: Vec<String>,
    /// Directory that holds this module's child module files.
    child_dir: PathBuf,
}

/// Builds the graph of the crate rooted at `root` (`src/lib.rs`, `src/main.rs`, a test file).
pub fn crate_graph(package_dir: &Path, root: &Path) -> FileGraph {
    let mut decls = vec![ModDecl {
        module: Vec::new(),
        file: root.to_path_buf(),
    }];
    let mut refs = Vec::new();
    let mut graph = FileGraph::default();
    let mut seen = BTreeSet::new();
    let mut queue = vec![Pending {
        file: root.to_path_buf(),
        module: Vec::new(),
        child_dir: parent_dir(root),
    }];
    while let Some(p) = queue.pop() {
        if !seen.insert(p.file.clone()) {
            continue;
        }
        let Ok(src) = std::fs::read_to_string(&p.file) else {
            graph
                .notes
                .push(format!("cannot read {}", p.file.display()));
            continue;
        };
        let mut w = Walker::new(&p, &src);
        w.run();
        graph.notes.append(&mut w.notes);
        refs.append(&mut w.refs);
        queue.append(&mut w.found);
        decls.append(&mut w.decls);
    }
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for d in &decls {
        modules.insert(d.module.clone(), relative(package_dir, &d.file));
        if let Some((name, parent)) = d.module.split_last() {
            children
                .entry(parent.to_vec())
                .or_default()
                .insert(name.clone());
        }
    }
    let mut res = Resolver {
        modules,
        children,
        bindings: BTreeMap::new(),
    };
    // Bindings first, then every reference through them. A `use` may go through a name an
    // earlier `use` of its module bound (`use crate::a; use a::B;`): a few rounds settle it.
    for _ in 0..4 {
        let mut bindings: Bindings = BTreeMap::new();
        for r in &refs {
            if let RefKind::Use { name } = &r.kind {
                let abs = res.absolute(&r.module, &r.segs);
                if !name.is_empty() {
                    let names = bindings.entry(r.module.clone()).or_default();
                    names.insert(name.clone(), abs);
                }
            }
        }
        if bindings == res.bindings {
            break;
        }
        res.bindings = bindings;
    }
    for r in &refs {
        let Some(target) = res.target_of(r) else {
            continue;
        };
        let from = relative(package_dir, &r.file);
        if from != target {
            let evidence = Evidence {
                line: r.line,
                path: r.segs.join("::"),
            };
            let out = graph.edges.entry(from).or_default();
            out.entry(target).or_insert(evidence);
        }
    }
    graph
}

/// Re-exports are followed at most this deep (a chain longer than this is a loop).
const REEXPORT_DEPTH_MAX: usize = 8;

/// Turns written paths into the files that define what they name.
struct Resolver {
    modules: BTreeMap<Vec<String>, String>,
    children: BTreeMap<Vec<String>, BTreeSet<String>>,
    bindings: Bindings,
}

/// Per module, each name its `use` items bind and the absolute path it stands for (`None`:
/// an item of another crate).
type Bindings = BTreeMap<Vec<String>, BTreeMap<String, Option<Vec<String>>>>;

impl Resolver {
    /// The absolute module path of `segs` written in `module`, or `None` when it leads into
    /// another crate (or starts with a name the scanner cannot place).
    fn absolute(&self, module: &[String], segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        let (mut full, rest): (Vec<String>, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" | "super" => (module.to_vec(), segs),
            name if self.children.get(module).is_some_and(|c| c.contains(name)) => {
                (module.to_vec(), segs)
            }
            name => {
                let bound = self.bindings.get(module).and_then(|b| b.get(name))?;
                (bound.clone()?, &segs[1..])
            }
        };
        for seg in rest {
            match seg.as_str() {
                "super" => {
                    full.pop()?;
                }
                // `use a::{self, B}` ends a path with `self`: it names `a` itself.
                "self" => {}
                _ => full.push(seg.clone()),
            }
        }
        Some(full)
    }

    /// The file a reference depends on. A path naming a module itself (`use crate::client;`)
    /// is no dependency yet: the paths written through that name are, and they resolve on
    /// their own. A glob depends on the module it empties.
    fn target_of(&self, r: &RawRef) -> Option<String> {
        let full = self.absolute(&r.module, &r.segs)?;
        let (file, rest) = self.locate(&full, 0)?;
        if rest == 0 && matches!(r.kind, RefKind::Use { .. }) {
            return None;
        }
        Some(file)
    }

    /// The file of the longest module prefix of `full`, following re-exports: when the next
    /// segment is a name the module imports, the dependency is on where that import points.
    /// Also returns how many segments were left after the module.
    fn locate(&self, full: &[String], depth: usize) -> Option<(String, usize)> {
        let k = (0..=full.len())
            .rev()
            .find(|k| self.modules.contains_key(&full[..*k]))?;
        let module = &full[..k];
        if let Some(next) = full.get(k) {
            let bound = self.bindings.get(module).and_then(|b| b.get(next));
            if let Some(bound) = bound.filter(|_| depth < REEXPORT_DEPTH_MAX) {
                let mut path = bound.clone()?;
                path.extend(full[k + 1..].iter().cloned());
                return self.locate(&path, depth + 1);
            }
        }
        Some((self.modules[module].clone(), full.len() - k))
    }
}

/// Attributes seen before the item they apply to.
#[derive(Default)]
struct Attrs {
    path: Option<String>,
    test: bool,
}

/// An open module scope: the file's own module, or an inline `mod x { … }` inside it.
struct Frame {
    module: Vec<String>,
    /// Brace depth inside the scope's `{` (0 for the file itself).
    depth: usize,
    child_dir: PathBuf,
}

struct Walker<'a> {
    file: &'a Path,
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
    frames: Vec<Frame>,
    attrs: Attrs,
    refs: Vec<RawRef>,
    decls: Vec<ModDecl>,
    found: Vec<Pending>,
    notes: Vec<String>,
}

/// Keywords that start an item a `#[cfg(test)]` attribute can remove.
const ITEM_KEYWORDS: &[&str] = &[
    "mod",
    "use",
    "fn",
    "impl",
    "struct",
    "enum",
    "const",
    "static",
    "type",
    "trait",
    "async",
    "unsafe",
    "extern",
    "macro_rules",
];

impl<'a> Walker<'a> {
    fn new(p: &'a Pending, src: &str) -> Self {
        Walker {
            file: &p.file,
            toks: lex(src).toks,
            i: 0,
            depth: 0,
            frames: vec![Frame {
                module: p.module.clone(),
                depth: 0,
                child_dir: p.child_dir.clone(),
            }],
            attrs: Attrs::default(),
            refs: Vec::new(),
            decls: Vec::new(),
            found: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn tok(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|(t, _)| t)
    }

    fn ident(&self, k: usize) -> Option<&str> {
        match self.tok(k) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn line(&self) -> usize {
        self.toks.get(self.i).map_or(0, |(_, l)| *l)
    }

    fn frame(&self) -> &Frame {
        self.frames
            .last()
            .unwrap_or_else(|| unreachable!("the file frame is never popped"))
    }

    fn run(&mut self) {
        while let Some(tok) = self.tok(0).cloned() {
            let starts_path = !matches!(
                self.i.checked_sub(1).and_then(|k| self.toks.get(k)),
                Some((Tok::PathSep | Tok::Punct('.'), _))
            );
            match tok {
                Tok::Punct('#') if matches!(self.tok(1), Some(Tok::Punct('[' | '!'))) => {
                    if self.attribute() {
                        return; // `#![cfg(test)]`: the whole file is test code
                    }
                }
                Tok::Ident(kw) if self.attrs.test && ITEM_KEYWORDS.contains(&kw.as_str()) => {
                    self.skip_item();
                }
                Tok::Ident(kw) if kw == "mod" && self.ident(1).is_some() => self.module(),
                Tok::Ident(kw) if kw == "use" => self.use_item(),
                Tok::Ident(_) if starts_path && self.tok(1) == Some(&Tok::PathSep) => {
                    self.path_ref();
                }
                Tok::Punct('{') => {
                    self.depth += 1;
                    self.attrs = Attrs::default();
                    self.i += 1;
                }
                Tok::Punct('}') => {
                    self.depth = self.depth.saturating_sub(1);
                    while self.frames.len() > 1 && self.frame().depth > self.depth {
                        self.frames.pop();
                    }
                    self.attrs = Attrs::default();
                    self.i += 1;
                }
                Tok::Punct(';') => {
                    self.attrs = Attrs::default();
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Reads `#[…]` or `#![…]`, noting `path = "…"` and `cfg(test)`. Returns true for an inner
    /// `#![cfg(test)]`.
    fn attribute(&mut self) -> bool {
        let inner = self.tok(1) == Some(&Tok::Punct('!'));
        let start = self.i + if inner { 2 } else { 1 };
        let end = matching(&self.toks, start);
        let body = &self.toks[start + 1..end.min(self.toks.len())];
        let is =
            |k: usize, want: &str| matches!(body.get(k), Some((Tok::Ident(s), _)) if s == want);
        if is(0, "cfg") {
            let has = |w: &str| {
                body.iter()
                    .any(|(t, _)| matches!(t, Tok::Ident(s) if s == w))
            };
            if has("test") && !has("not") {
                if inner {
                    return true;
                }
                self.attrs.test = true;
            }
        }
        if is(0, "path") {
            if let Some((Tok::Str(p), _)) = body.get(2) {
                self.attrs.path = Some(p.clone());
            }
        }
        self.i = end + 1;
        false
    }

    /// Skips one item: up to a `;` outside brackets, or the `}` closing its first block.
    fn skip_item(&mut self) {
        let mut nest = 0usize;
        while let Some((tok, _)) = self.toks.get(self.i) {
            self.i += 1;
            match tok {
                Tok::Punct('(' | '[' | '{') => nest += 1,
                Tok::Punct(')' | ']') => nest = nest.saturating_sub(1),
                Tok::Punct('}') => {
                    nest = nest.saturating_sub(1);
                    if nest == 0 {
                        break;
                    }
                }
                Tok::Punct(';') if nest == 0 => break,
                _ => {}
            }
        }
        self.attrs = Attrs::default();
    }

    /// `mod name;` (a file to scan next) or `mod name { … }` (a scope in this file).
    fn module(&mut self) {
        let name = self.ident(1).unwrap_or_default().to_string();
        let attrs = std::mem::take(&mut self.attrs);
        let mut module = self.frame().module.clone();
        module.push(name.clone());
        let inline = self.tok(2) == Some(&Tok::Punct('{'));
        let in_file_scope = self.frames.len() == 1;
        let dir = self.frame().child_dir.clone();
        if inline {
            let child_dir = dir.join(attrs.path.as_deref().unwrap_or(&name));
            self.depth += 1;
            let depth = self.depth;
            self.frames.push(Frame {
                module: module.clone(),
                depth,
                child_dir,
            });
            let file = self.file.to_path_buf();
            self.decls.push(ModDecl { module, file });
            self.i += 3;
            return;
        }
        self.i += 2;
        // A `#[path]` outside inline modules is relative to the declaring file's directory;
        // a file loaded through one keeps its children next to it, like a `mod.rs`.
        let (file, mod_rs) = if let Some(p) = attrs.path {
            let base = if in_file_scope {
                parent_dir(self.file)
            } else {
                dir
            };
            (Some(base.join(p)), true)
        } else {
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            if flat.is_file() {
                (Some(flat), false)
            } else if nested.is_file() {
                (Some(nested), true)
            } else {
                (None, false)
            }
        };
        let Some(file) = file.filter(|f| f.is_file()) else {
            let from = self.file.display();
            self.notes
                .push(format!("{from}: no file for `mod {name};`"));
            return;
        };
        let child_dir = if mod_rs {
            parent_dir(&file)
        } else {
            parent_dir(&file).join(&name)
        };
        self.decls.push(ModDecl {
            module: module.clone(),
            file: file.clone(),
        });
        self.found.push(Pending {
            file,
            module,
            child_dir,
        });
    }

    /// `use tree;` — every leaf path of the tree is a reference.
    fn use_item(&mut self) {
        let line = self.line();
        self.i += 1;
        let mut paths = Vec::new();
        self.use_tree(Vec::new(), &mut paths);
        while let Some(tok) = self.tok(0).cloned() {
            self.i += 1;
            if tok == Tok::Punct(';') {
                break;
            }
        }
        self.attrs = Attrs::default();
        for (segs, kind) in paths {
            self.push_ref(segs, line, kind);
        }
    }

    /// Collects the leaves of a use tree: each path with the name it binds, or a glob.
    fn use_tree(&mut self, mut segs: Vec<String>, out: &mut Vec<(Vec<String>, RefKind)>) {
        if self.tok(0) == Some(&Tok::PathSep) {
            return; // `use ::krate::…` is always another crate
        }
        loop {
            match self.tok(0).cloned() {
                Some(Tok::Ident(s)) => {
                    self.i += 1;
                    segs.push(s);
                    if self.tok(0) == Some(&Tok::PathSep) {
                        self.i += 1;
                        continue;
                    }
                    let mut name = segs.iter().rev().find(|s| *s != "self").cloned();
                    if self.ident(0) == Some("as") {
                        name = self.ident(1).map(str::to_string);
                        self.i += 2;
                    }
                    // `as _` binds no name; neither does a bare `self`.
                    let name = name.filter(|n| n != "_").unwrap_or_default();
                    out.push((segs, RefKind::Use { name }));
                    return;
                }
                Some(Tok::Punct('*')) => {
                    self.i += 1;
                    out.push((segs, RefKind::Glob));
                    return;
                }
                Some(Tok::Punct('{')) => {
                    self.i += 1;
                    while let Some(tok) = self.tok(0) {
                        if *tok == Tok::Punct('}') {
                            self.i += 1;
                            break;
                        }
                        let before = self.i;
                        self.use_tree(segs.clone(), out);
                        if self.tok(0) == Some(&Tok::Punct(',')) {
                            self.i += 1;
                        } else if self.i == before {
                            self.i += 1; // not a tree: step over it rather than loop
                        }
                    }
                    return;
                }
                _ => return,
            }
        }
    }

    /// `a::b::c` outside a `use`: the identifiers joined by `::`.
    fn path_ref(&mut self) {
        let line = self.line();
        let mut segs = Vec::new();
        while let Some(s) = self.ident(0).map(str::to_string) {
            segs.push(s);
            if self.tok(1) == Some(&Tok::PathSep) && self.ident(2).is_some() {
                self.i += 2;
            } else {
                self.i += 1;
                break;
            }
        }
        self.push_ref(segs, line, RefKind::Path);
    }

    fn push_ref(&mut self, segs: Vec<String>, line: usize, kind: RefKind) {
        let module = self.frame().module.clone();
        let file = self.file.to_path_buf();
        self.refs.push(RawRef {
            file,
            module,
            segs,
            line,
            kind,
        });
    }
}

/// Index of the bracket closing the one at `open` (or the end of input).
fn matching(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut nest = 0usize;
    for (k, (tok, _)) in toks.iter().enumerate().skip(open) {
        match tok {
            Tok::Punct('(' | '[' | '{') => nest += 1,
            Tok::Punct(')' | ']' | '}') => {
                nest = nest.saturating_sub(1);
                if nest == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

fn parent_dir(file: &Path) -> PathBuf {
    file.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `file` relative to `base`, with `/` separators, for stable names on every platform.
pub fn relative(base: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(base).unwrap_or(file);
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

#[cfg(test)]
#[path = "imports_tests.rs"]
mod tests;

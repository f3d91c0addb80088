//! Strongly connected components of a file import graph, and the checked-in baseline of the
//! oversize ones that are allowed to remain until they are broken up.
//!
//! Baseline format: one block per allowed cycle, a `[crate]` header followed by the cycle's
//! files (relative to the package directory), one per line; `#` starts a comment line. The
//! baseline must match the current oversize cycles exactly, so it can only shrink: a cycle that
//! grows or appears fails the test, and so does one that shrank or vanished until the file is
//! rewritten (`TIDY_BLESS=1` does that, and only when nothing grew).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A crate key (package, or `package/kind/target`) and the files of one cycle.
pub type Cycle = (String, BTreeSet<String>);

/// Tarjan's algorithm; components come out sorted (by their smallest file), each sorted.
pub fn sccs(edges: &BTreeMap<String, BTreeMap<String, impl Sized>>) -> Vec<BTreeSet<String>> {
    let mut nodes: BTreeSet<&str> = edges.keys().map(String::as_str).collect();
    nodes.extend(edges.values().flat_map(|m| m.keys().map(String::as_str)));
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for n in nodes {
        if !t.index.contains_key(n) {
            t.visit(n);
        }
    }
    t.out.sort();
    t.out
}

struct Tarjan<'a, E> {
    edges: &'a BTreeMap<String, BTreeMap<String, E>>,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    next: usize,
    out: Vec<BTreeSet<String>>,
}

impl<'a, E> Tarjan<'a, E> {
    /// Recursive: the depth is bounded by the number of files in one crate (tens to hundreds).
    fn visit(&mut self, v: &'a str) {
        self.index.insert(v, self.next);
        self.low.insert(v, self.next);
        self.next += 1;
        self.stack.push(v);
        self.on_stack.insert(v);
        let succ = self.edges.get(v).into_iter().flat_map(|m| m.keys());
        for w in succ {
            let w = w.as_str();
            if !self.index.contains_key(w) {
                self.visit(w);
                let lw = self.low[w];
                let lv = self.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if self.on_stack.contains(w) {
                let iw = self.index[w];
                let lv = self.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if self.low[v] == self.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            self.out.push(comp);
        }
    }
}

pub fn parse_baseline(text: &str) -> Result<Vec<Cycle>, String> {
    let mut out: Vec<Cycle> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(key) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((key.to_string(), BTreeSet::new()));
        } else if let Some((_, files)) = out.last_mut() {
            files.insert(line.to_string());
        } else {
            return Err(format!("line {}: a file before any [crate] header", n + 1));
        }
    }
    Ok(out)
}

pub fn format_baseline(cycles: &[Cycle]) -> String {
    let mut s = String::from(
        "# Import cycles of more than three files that exist today and are to be broken up.\n\
         # Checked by tidy_import_cycles (crates/natrium-tests/tests/tidy.rs); see\n\
         # docs/tidy-rules.md. This file may only shrink: never add a file to it by hand.\n",
    );
    for (key, files) in cycles {
        let _ = write!(s, "\n[{key}]\n");
        for f in files {
            let _ = writeln!(s, "{f}");
        }
    }
    s
}

/// What differs between the current oversize cycles and the baseline.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Cycles not contained in any one baseline cycle of their crate, with the files that
    /// are new to the baseline (empty when two baseline cycles merged).
    pub grown: Vec<(Cycle, BTreeSet<String>)>,
    /// Baseline files that are no longer in an oversize cycle of their crate.
    pub shrunk: Vec<(String, String)>,
    /// Baseline cycles that now split into smaller ones (still covered, but the baseline
    /// should record the split so the parts cannot join again).
    pub split: Vec<Cycle>,
}

impl Verdict {
    pub fn is_clean(&self) -> bool {
        self.grown.is_empty() && self.shrunk.is_empty() && self.split.is_empty()
    }
}

pub fn compare(current: &[Cycle], baseline: &[Cycle]) -> Verdict {
    let mut v = Verdict::default();
    for cycle in current {
        let (key, files) = cycle;
        let same_crate = || baseline.iter().filter(|(k, _)| k == key);
        if same_crate().any(|(_, b)| files.is_subset(b)) {
            continue;
        }
        let known: BTreeSet<&String> = same_crate().flat_map(|(_, b)| b).collect();
        let new = files
            .iter()
            .filter(|f| !known.contains(f))
            .cloned()
            .collect();
        v.grown.push((cycle.clone(), new));
    }
    for cycle in baseline {
        let (key, files) = cycle;
        let now: Vec<&BTreeSet<String>> = current
            .iter()
            .filter(|(k, c)| k == key && !c.is_disjoint(files))
            .map(|(_, c)| c)
            .collect();
        for f in files {
            if !now.iter().any(|c| c.contains(f)) {
                v.shrunk.push((key.clone(), f.clone()));
            }
        }
        if now.len() > 1 {
            v.split.push(cycle.clone());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::{compare, format_baseline, parse_baseline, sccs, Cycle};
    use std::collections::{BTreeMap, BTreeSet};

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|s| (*s).to_string()).collect()
    }

    fn cycle(files: &[&str]) -> Cycle {
        ("c".to_string(), set(files))
    }

    #[test]
    fn tidy_cycles_tarjan_finds_components() {
        let mut edges: BTreeMap<String, BTreeMap<String, u8>> = BTreeMap::new();
        for (a, b) in [
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "d"),
            ("d", "e"),
            ("e", "d"),
        ] {
            edges.entry(a.into()).or_default().insert(b.into(), 0);
        }
        let comps = sccs(&edges);
        assert_eq!(comps, [set(&["a", "b", "c"]), set(&["d", "e"])]);
    }

    #[test]
    fn tidy_cycles_baseline_only_shrinks() {
        let base = vec![cycle(&["a", "b", "c", "d", "e"])];
        let text = format_baseline(&base);
        assert_eq!(parse_baseline(&text), Ok(base.clone()));

        assert!(compare(&base, &base).is_clean());
        let grown = compare(&[cycle(&["a", "b", "c", "d", "e", "f"])], &base);
        assert_eq!(grown.grown.len(), 1);
        assert_eq!(grown.grown[0].1, set(&["f"]));
        let shrunk = compare(&[cycle(&["a", "b", "c", "d"])], &base);
        assert!(shrunk.grown.is_empty());
        assert_eq!(shrunk.shrunk, [("c".to_string(), "e".to_string())]);
        let two = [cycle(&["a", "b", "c", "d"]), cycle(&["x", "y", "z", "w"])];
        let merged = compare(&[cycle(&["a", "b", "c", "d", "w", "x", "y", "z"])], &two);
        assert_eq!(merged.grown.len(), 1);
        assert!(merged.grown[0].1.is_empty());
        let big = [cycle(&["a", "b", "c", "d", "w", "x", "y", "z"])];
        let split = compare(&two, &big);
        assert!(split.grown.is_empty() && split.shrunk.is_empty());
        assert_eq!(split.split.len(), 1);
    }
}

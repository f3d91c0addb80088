//! Strongly connected components of a file import graph.

use std::collections::{BTreeMap, BTreeSet};

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

#[cfg(test)]
mod tests {
    use super::sccs;
    use std::collections::{BTreeMap, BTreeSet};

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|s| (*s).to_string()).collect()
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
}

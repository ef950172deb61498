//! The file graph: edges from each file to the files it names, and the circles in it.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use super::parse::{module_path, parse_file, Facts, ModPath};

pub struct Graph {
    /// edges[a]: the files a depends on, sorted.
    pub edges: Vec<Vec<usize>>,
    /// For each edge, the first path that made it (`crate::limits::MAX_VOCAB`).
    pub why: HashMap<(usize, usize), String>,
}

impl Graph {
    /// The dependency graph of the files under `crate/src`, given as (relative path, source).
    pub fn from_sources(files: &[(String, String)]) -> Graph {
        let paths: Vec<Option<ModPath>> = files.iter().map(|(rel, _)| module_path(rel)).collect();
        let index: HashMap<ModPath, usize> = paths
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.clone().map(|p| (p, k)))
            .collect();
        let modules: HashSet<ModPath> = index.keys().cloned().collect();
        let facts: Vec<Facts> = files
            .iter()
            .zip(&paths)
            .map(|((_, src), p)| match p {
                Some(p) => parse_file(p, src, &modules),
                None => Facts::default(),
            })
            .collect();
        let resolver = Resolver {
            index: &index,
            facts: &facts,
        };
        let mut why = HashMap::new();
        let edges = facts
            .iter()
            .enumerate()
            .map(|(from, f)| {
                let mut to = BTreeSet::new();
                for r in &f.refs {
                    match resolver.resolve(r, 0, false) {
                        Some(t) if t != from => {
                            to.insert(t);
                            why.entry((from, t)).or_insert_with(|| r.join("::"));
                        }
                        _ => {}
                    }
                }
                to.into_iter().collect()
            })
            .collect();
        Graph { edges, why }
    }

    /// Every group of files that reach each other (Tarjan's strongly connected components of
    /// more than one file), each sorted, in order of their first file.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        struct State<'g> {
            edges: &'g [Vec<usize>],
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on_stack: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        fn visit(s: &mut State, v: usize) {
            s.index[v] = Some(s.next);
            s.low[v] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on_stack[v] = true;
            for k in 0..s.edges[v].len() {
                let w = s.edges[v][k];
                match s.index[w] {
                    None => {
                        visit(s, w);
                        s.low[v] = s.low[v].min(s.low[w]);
                    }
                    Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(s.low[v]) == s.index[v] {
                let mut group = Vec::new();
                loop {
                    let w = s.stack.pop().expect("v is on the stack");
                    s.on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    s.out.push(group);
                }
            }
        }
        let n = self.edges.len();
        let mut s = State {
            edges: &self.edges,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in 0..n {
            if s.index[v].is_none() {
                visit(&mut s, v);
            }
        }
        s.out.sort();
        s.out
    }

    /// A shortest loop from the group's first file back to it, inside the group.
    pub fn loop_through(&self, group: &[usize]) -> Vec<usize> {
        let start = group[0];
        let inside: HashSet<usize> = group.iter().copied().collect();
        let mut parent: HashMap<usize, usize> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for &w in &self.edges[v] {
                if !inside.contains(&w) {
                    continue;
                }
                if w == start {
                    let mut lp = vec![v];
                    let mut at = v;
                    while at != start {
                        at = parent[&at];
                        lp.push(at);
                    }
                    lp.reverse();
                    return lp;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(w) {
                    e.insert(v);
                    queue.push_back(w);
                }
            }
        }
        group.to_vec()
    }
}

struct Resolver<'a> {
    index: &'a HashMap<ModPath, usize>,
    facts: &'a [Facts],
}

impl Resolver<'_> {
    /// The file that defines what an absolute path names: the longest module-file prefix, then
    /// through that file's re-exports while the next name is not its own. `strict`: None unless
    /// the name is found (for trying glob re-exports in turn).
    fn resolve(&self, path: &[String], hops: usize, strict: bool) -> Option<usize> {
        let (file, rest) = (1..=path.len())
            .rev()
            .find_map(|k| self.index.get(&path[..k]).map(|&f| (f, &path[k..])))?;
        let Some(name) = rest.first() else {
            return Some(file);
        };
        let facts = &self.facts[file];
        if facts.defines.contains(name) {
            return Some(file);
        }
        if hops < 16 {
            if let Some(target) = facts.reexports.get(name) {
                let mut next = target.clone();
                next.extend(rest[1..].iter().cloned());
                return self.resolve(&next, hops + 1, strict).or(Some(file));
            }
            for glob in &facts.globs {
                let mut next = glob.clone();
                next.extend(rest.iter().cloned());
                if let Some(f) = self.resolve(&next, hops + 1, true) {
                    return Some(f);
                }
            }
        }
        (!strict).then_some(file)
    }
}

#[cfg(test)]
mod tests {
    use super::Graph;

    fn graph(files: &[(&str, &str)]) -> (Vec<String>, Graph) {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        let g = Graph::from_sources(&files);
        (files.into_iter().map(|(p, _)| p).collect(), g)
    }

    fn names(files: &[String], groups: Vec<Vec<usize>>) -> Vec<Vec<&str>> {
        groups
            .into_iter()
            .map(|g| g.into_iter().map(|f| files[f].as_str()).collect())
            .collect()
    }

    #[test]
    fn a_loop_of_three_files_is_found_and_shown_as_one_loop() {
        let (files, g) = graph(&[
            ("lib.rs", "pub mod a; pub mod b; pub mod c; pub mod d;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B(crate::c::C);"),
            ("c.rs", "pub fn f() { super::a::A; }\npub struct C;"),
            ("d.rs", "use crate::{a::A, b::B};"),
        ]);
        let groups = g.cycles();
        assert_eq!(
            names(&files, groups.clone()),
            vec![vec!["a.rs", "b.rs", "c.rs"]]
        );
        let lp = g.loop_through(&groups[0]);
        let lp: Vec<&str> = lp.iter().map(|&f| files[f].as_str()).collect();
        assert_eq!(lp, vec!["a.rs", "b.rs", "c.rs"]);
    }

    #[test]
    fn a_graph_without_a_loop_has_no_circle() {
        let (_, g) = graph(&[
            ("lib.rs", "pub mod a; pub mod b; pub mod c;"),
            ("a.rs", "use crate::{b::B, c::C};"),
            ("b.rs", "use crate::c::C; pub struct B;"),
            ("c.rs", "pub struct C;"),
        ]);
        assert!(g.cycles().is_empty());
    }

    #[test]
    fn a_re_export_is_looked_through_to_the_file_that_defines_the_item() {
        // mod.rs only re-exports Run; forward.rs uses mod.rs's own Model: no circle.
        let (_, g) = graph(&[
            ("lib.rs", "pub mod model; pub mod user;"),
            (
                "model/mod.rs",
                "pub mod forward;\npub use forward::Run;\npub struct Model;",
            ),
            ("model/forward.rs", "use super::Model; pub struct Run;"),
            ("user.rs", "use crate::model::{Model, Run};"),
        ]);
        assert!(g.cycles().is_empty());
        // But a parent that calls its child while the child uses the parent is a circle.
        let (files2, g2) = graph(&[
            ("lib.rs", "pub mod model;"),
            (
                "model/mod.rs",
                "pub mod forward;\npub struct Model;\nfn go() { forward::run(); }",
            ),
            ("model/forward.rs", "use super::Model; pub fn run() {}"),
        ]);
        assert_eq!(
            names(&files2, g2.cycles()),
            vec![vec!["model/mod.rs", "model/forward.rs"]]
        );
    }

    #[test]
    fn test_only_code_strings_and_comments_name_nothing() {
        let (_, g) = graph(&[
            ("lib.rs", "pub mod a; pub mod b;"),
            (
                "a.rs",
                "pub struct A;\n#[cfg(test)]\nuse crate::b::B;\n#[cfg(test)]\nmod tests { use crate::b::B; }",
            ),
            (
                "b.rs",
                "// crate::a::A\nconst S: &str = \"crate::a::A\"; /* crate::a::A */ pub struct B(char);\nfn f(_: &'static str) { let _ = '\"'; }",
            ),
        ]);
        assert!(g.cycles().is_empty());
        assert!(g.edges.iter().all(Vec::is_empty));
    }

    #[test]
    fn a_module_imported_by_name_and_inline_paths_count() {
        let (files, g) = graph(&[
            ("lib.rs", "pub mod x; pub mod y;"),
            ("x.rs", "use crate::y;\npub struct X;\nfn f() { y::g(); }"),
            ("y.rs", "pub fn g() { let _ = crate::x::X; }"),
        ]);
        assert_eq!(names(&files, g.cycles()), vec![vec!["x.rs", "y.rs"]]);
    }
}

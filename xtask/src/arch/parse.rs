//! What each file defines, re-exports and names.

use std::collections::{HashMap, HashSet};

use super::lex::{lex, Tok};

/// A module path: the crate root's tag (`crate` for the library, `bin:NAME` for a binary),
/// then one segment per module.
pub type ModPath = Vec<String>;

#[derive(Default)]
pub struct Facts {
    /// Names of items defined at module level (in the file or its inline modules).
    pub defines: HashSet<String>,
    /// `pub use a::b as c`: c → a::b (absolute).
    pub reexports: HashMap<String, ModPath>,
    /// `pub use a::*`: a (absolute).
    pub globs: Vec<ModPath>,
    /// Every absolute path the file names outside re-exports.
    pub refs: Vec<ModPath>,
}

/// The module path of a file under `crate/src`, or None for a file no crate root reaches.
pub fn module_path(rel: &str) -> Option<ModPath> {
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    let (root, rest): (String, &[&str]) = match parts.as_slice() {
        ["bin", name, rest @ ..] if !rest.is_empty() => (format!("bin:{name}"), rest),
        ["bin", name] => (format!("bin:{name}"), &[]),
        rest => ("crate".into(), rest),
    };
    let mut path = vec![root.clone()];
    for (k, p) in rest.iter().enumerate() {
        let last = k + 1 == rest.len();
        let is_root = (root == "crate" && *p == "lib" && rest.len() == 1)
            || (root != "crate" && *p == "main" && rest.len() == 1);
        if last && (*p == "mod" || is_root) {
            break;
        }
        path.push((*p).to_string());
    }
    Some(path)
}

struct Parser<'a> {
    toks: &'a [Tok],
    i: usize,
    /// Module paths of every file, to tell a child module's name from a type's.
    modules: &'a HashSet<ModPath>,
    facts: Facts,
    /// Local names that stand for a module (`use crate::model;`), with the module's path.
    aliases: HashMap<String, ModPath>,
}

pub fn parse_file(file_mod: &ModPath, src: &str, modules: &HashSet<ModPath>) -> Facts {
    let toks = lex(src);
    let mut p = Parser {
        toks: &toks,
        i: 0,
        modules,
        facts: Facts::default(),
        aliases: HashMap::new(),
    };
    // Inline modules are declared in the file; find them first so paths into them resolve.
    let inline = inline_modules(&toks);
    p.walk(file_mod, &inline);
    p.facts
}

/// Names of `mod x { … }` blocks anywhere in the file.
fn inline_modules(toks: &[Tok]) -> HashSet<String> {
    let mut out = HashSet::new();
    for w in toks.windows(3) {
        if let [Tok::Ident(m), Tok::Ident(name), Tok::Punct('{')] = w {
            if m == "mod" {
                out.insert(name.clone());
            }
        }
    }
    out
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

const ITEM_KEYWORDS: &[&str] = &[
    "struct", "enum", "fn", "trait", "type", "const", "static", "union", "mod",
];

impl<'a> Parser<'a> {
    fn peek(&self, k: usize) -> Option<&'a Tok> {
        self.toks.get(self.i + k)
    }

    fn walk(&mut self, file_mod: &ModPath, inline: &HashSet<String>) {
        let mut depth = 0usize;
        // Open inline modules: (name, brace depth inside them).
        let mut mods: Vec<(String, usize)> = Vec::new();
        let mut pending_mod: Option<String> = None;
        while self.i < self.toks.len() {
            let cur: ModPath = file_mod
                .iter()
                .cloned()
                .chain(mods.iter().map(|(m, _)| m.clone()))
                .collect();
            let at_module_level = depth == mods.len();
            if self.at_cfg_test() {
                self.skip_item();
                continue;
            }
            match self.peek(0).cloned() {
                Some(Tok::Punct('{')) => {
                    depth += 1;
                    if let Some(m) = pending_mod.take() {
                        mods.push((m, depth));
                    }
                    self.i += 1;
                }
                Some(Tok::Punct('}')) => {
                    if mods.last().map(|(_, d)| *d) == Some(depth) {
                        mods.pop();
                    }
                    depth = depth.saturating_sub(1);
                    self.i += 1;
                }
                Some(Tok::Punct(';')) => {
                    pending_mod = None;
                    self.i += 1;
                }
                Some(Tok::Ident(w)) if w == "use" => {
                    let public = self.i > 0 && self.is_pub_before(self.i);
                    self.i += 1;
                    self.parse_use(&cur, inline, public);
                }
                Some(Tok::Ident(w))
                    if at_module_level
                        && (ITEM_KEYWORDS.contains(&w.as_str()) || w == "macro_rules") =>
                {
                    let k = if w == "macro_rules" { 2 } else { 1 };
                    if let Some(name) = ident(self.peek(k)) {
                        self.facts.defines.insert(name.to_string());
                        if w == "mod" && self.peek(2) == Some(&Tok::Punct('{')) {
                            pending_mod = Some(name.to_string());
                        }
                    }
                    self.i += 1;
                }
                Some(Tok::Ident(_)) if self.i == 0 || self.toks[self.i - 1] != Tok::Sep => {
                    let segs = self.read_path();
                    if segs.len() > 1 {
                        if let Some(abs) = self.absolute(&cur, inline, &segs) {
                            self.facts.refs.push(abs);
                        }
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// At `#[cfg(test)]`?
    fn at_cfg_test(&self) -> bool {
        let want = [
            Tok::Punct('#'),
            Tok::Punct('['),
            Tok::Ident("cfg".into()),
            Tok::Punct('('),
            Tok::Ident("test".into()),
            Tok::Punct(')'),
            Tok::Punct(']'),
        ];
        want.iter()
            .enumerate()
            .all(|(k, t)| self.peek(k) == Some(t))
    }

    /// Skip an attribute and the item it is on: up to a `;` at this depth or the `}` that
    /// closes the item's first block.
    fn skip_item(&mut self) {
        self.i += 7;
        let mut depth = 0usize;
        while let Some(t) = self.peek(0) {
            self.i += 1;
            match t {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                Tok::Punct(';') if depth == 0 => return,
                _ => {}
            }
        }
    }

    /// Whether the `use` at `at` is preceded by `pub`, `pub(crate)`, `pub(super)`, ….
    fn is_pub_before(&self, at: usize) -> bool {
        match &self.toks[at - 1] {
            Tok::Ident(w) => w == "pub",
            Tok::Punct(')') => {
                at >= 4
                    && self.toks[at - 3] == Tok::Punct('(')
                    && self.toks[at - 4] == Tok::Ident("pub".into())
            }
            _ => false,
        }
    }

    /// `a::b::c` from here (stops before `::<`, `::{`, `::*`).
    fn read_path(&mut self) -> Vec<String> {
        let mut segs = Vec::new();
        while let Some(s) = ident(self.peek(0)) {
            segs.push(s.to_string());
            self.i += 1;
            if self.peek(0) == Some(&Tok::Sep) && ident(self.peek(1)).is_some() {
                self.i += 1;
            } else {
                break;
            }
        }
        segs
    }

    /// A path as written in module `cur`, made absolute; None for one that leaves the crate
    /// (std, other crates) or starts at a local name (a type, a variable).
    fn absolute(
        &self,
        cur: &ModPath,
        inline: &HashSet<String>,
        segs: &[String],
    ) -> Option<ModPath> {
        let first = segs.first()?;
        let (mut base, rest) = match first.as_str() {
            "crate" => (vec![cur[0].clone()], &segs[1..]),
            "self" => (cur.clone(), &segs[1..]),
            "super" => {
                let mut base = cur.clone();
                let mut k = 0;
                while segs.get(k).map(String::as_str) == Some("super") {
                    if base.len() > 1 {
                        base.pop();
                    }
                    k += 1;
                }
                (base, &segs[k..])
            }
            name => {
                let mut child = cur.clone();
                child.push(name.to_string());
                if self.modules.contains(&child) || inline.contains(name) {
                    (cur.clone(), segs)
                } else if let Some(m) = self.aliases.get(name) {
                    (m.clone(), &segs[1..])
                } else {
                    return None;
                }
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// After `use`: the use tree up to its `;`.
    fn parse_use(&mut self, cur: &ModPath, inline: &HashSet<String>, public: bool) {
        let mut leaves = Vec::new();
        if self.peek(0) == Some(&Tok::Sep) {
            // `use ::std::…`: another crate.
            self.i += 1;
        }
        self.use_tree(&mut Vec::new(), &mut leaves);
        while let Some(t) = self.peek(0) {
            self.i += 1;
            if *t == Tok::Punct(';') {
                break;
            }
        }
        for (segs, leaf) in leaves {
            let Some(abs) = self.absolute(cur, inline, &segs) else {
                continue;
            };
            match leaf {
                Leaf::Glob if public => self.facts.globs.push(abs),
                Leaf::Name(name) if public => {
                    self.facts.reexports.insert(name, abs);
                }
                Leaf::Name(name) => {
                    if self.modules.contains(&abs) {
                        self.aliases.insert(name, abs.clone());
                    }
                    self.facts.refs.push(abs);
                }
                Leaf::Glob => self.facts.refs.push(abs),
            }
        }
    }

    /// One use tree with `prefix` before it: `a::b`, `a::b as c`, `a::{…}`, `a::*`, `self`.
    fn use_tree(&mut self, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Leaf)>) {
        let depth = prefix.len();
        loop {
            match self.peek(0).cloned() {
                Some(Tok::Ident(s)) => {
                    self.i += 1;
                    if s == "self" && depth > 0 && self.peek(0) != Some(&Tok::Sep) {
                        let name = self.alias().unwrap_or_else(|| prefix[depth - 1].clone());
                        out.push((prefix.clone(), Leaf::Name(name)));
                        break;
                    }
                    prefix.push(s.clone());
                    if self.peek(0) == Some(&Tok::Sep) {
                        self.i += 1;
                        continue;
                    }
                    let name = self.alias().unwrap_or(s);
                    out.push((prefix.clone(), Leaf::Name(name)));
                    break;
                }
                Some(Tok::Punct('*')) => {
                    self.i += 1;
                    out.push((prefix.clone(), Leaf::Glob));
                    break;
                }
                Some(Tok::Punct('{')) => {
                    self.i += 1;
                    loop {
                        match self.peek(0) {
                            Some(Tok::Punct('}')) => {
                                self.i += 1;
                                break;
                            }
                            Some(Tok::Punct(',')) => self.i += 1,
                            None => break,
                            _ => {
                                let before = self.i;
                                let mut sub = prefix.clone();
                                self.use_tree(&mut sub, out);
                                if self.i == before {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        prefix.truncate(depth);
    }

    /// `as name` after a use leaf (`as _` imports no name).
    fn alias(&mut self) -> Option<String> {
        if ident(self.peek(0)) == Some("as") {
            self.i += 1;
            let name = ident(self.peek(0)).map(str::to_string);
            self.i += 1;
            return name;
        }
        None
    }
}

enum Leaf {
    Name(String),
    Glob,
}

#[cfg(test)]
mod tests {
    use super::module_path;

    #[test]
    fn module_paths_follow_the_file_layout() {
        assert_eq!(module_path("lib.rs").unwrap(), vec!["crate"]);
        assert_eq!(module_path("model/mod.rs").unwrap(), vec!["crate", "model"]);
        assert_eq!(
            module_path("backend/gpu/model.rs").unwrap(),
            vec!["crate", "backend", "gpu", "model"]
        );
        assert_eq!(module_path("bin/tplay/main.rs").unwrap(), vec!["bin:tplay"]);
        assert_eq!(
            module_path("bin/tplay/train.rs").unwrap(),
            vec!["bin:tplay", "train"]
        );
    }
}

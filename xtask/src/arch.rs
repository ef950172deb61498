//! `cargo xtask arch`: two rules about the shape of the source tree, checked before the tests.
//!
//! 1. **No import circle in `crate/src`.** File A depends on file B when A names an item that
//!    B defines (`use crate::…`, `use super::…`, `super::x::f(…)` in code, a child module's
//!    name, or a module imported under its own name). A `pub use` re-export is a doorway, not a
//!    dependency: a path through it is followed to the file that defines the item, so
//!    `model/mod.rs` re-exporting `forward::Run` and `forward.rs` naming `super::Model` is not a
//!    circle, while `mod.rs` *calling* a function of `forward.rs` would be. `mod x;` lines are
//!    structure, not imports. Code under `#[cfg(test)]` (the `mod tests` blocks, test-only
//!    `use` lines) is left out: a test may reach anywhere. Each strongly connected group of
//!    files is one circle, printed with one loop through it.
//! 2. **No hand-written source file over [`MAX_LINES`] lines** in `crate/src`, `www/src` and
//!    `xtask/src` (`.rs`, `.ts`); files written by tools are listed in [`GENERATED`].
//!
//! [`SPLIT_PENDING`] names files whose split is under way elsewhere: their long files and the
//! circles through them are printed but do not fail the check. It is meant to shrink to empty.

mod graph;
mod lex;
mod parse;

use std::path::Path;

use crate::util::{root, Result};
use graph::Graph;

/// The longest a hand-written source file may be.
const MAX_LINES: usize = 800;

/// Files written by tools, exempt from the line limit.
const GENERATED: &[&str] = &[
    // ts-rs, from the Rust protocol types.
    "www/src/engine/generated.ts",
    // lit-localize, from the page's message catalogue.
    "www/src/locales/zh-Hans.ts",
];

/// Temporary: files (or folders, as prefixes) whose split is in progress. Long files and
/// circles through them are reported as pending instead of failing. Remove each entry when its
/// split lands; the list is meant to become empty.
const SPLIT_PENDING: &[&str] = &[];

/// The folders whose files the line limit reads.
const LINE_LIMIT_DIRS: &[&str] = &["crate/src", "www/src", "xtask/src"];

pub fn run(args: &[String]) -> Result<()> {
    if let Some(a) = args.first() {
        return Err(format!("unknown argument '{a}' (cargo xtask arch)"));
    }
    let root = root();
    let mut failures = 0;

    let files = read_tree(&root.join("crate/src"), "rs")?;
    let graph = Graph::from_sources(&files);
    let groups = graph.cycles();
    for group in &groups {
        let names: Vec<&str> = group.iter().map(|&f| files[f].0.as_str()).collect();
        let pending = names.iter().any(|n| is_pending(&format!("crate/src/{n}")));
        let lp = graph.loop_through(group);
        let shown: Vec<&str> = lp.iter().map(|&f| files[f].0.as_str()).collect();
        let tag = if pending {
            "import circle (split pending)"
        } else {
            failures += 1;
            "import circle"
        };
        eprintln!("{tag}: {} files: {}", names.len(), names.join(", "));
        eprintln!("    e.g. {} → {}", shown.join(" → "), shown[0]);
        for (k, &from) in lp.iter().enumerate() {
            let to = lp[(k + 1) % lp.len()];
            let path = graph.why.get(&(from, to)).map_or("", String::as_str);
            eprintln!("      {} names {path}", files[from].0);
        }
    }

    for dir in LINE_LIMIT_DIRS {
        for ext in ["rs", "ts"] {
            for (rel, src) in read_tree(&root.join(dir), ext)? {
                let path = format!("{dir}/{rel}");
                let lines = src.lines().count();
                if lines <= MAX_LINES || GENERATED.contains(&path.as_str()) {
                    continue;
                }
                if is_pending(&path) {
                    eprintln!("long file (split pending): {path}: {lines} lines");
                } else {
                    failures += 1;
                    eprintln!("long file: {path}: {lines} lines (limit {MAX_LINES})");
                }
            }
        }
    }

    if failures > 0 {
        return Err(format!(
            "arch: {failures} problem(s): break each import circle, split each long file by concept"
        ));
    }
    eprintln!(
        "arch: no import circle in crate/src ({} files), no hand-written file over {MAX_LINES} lines",
        files.len()
    );
    Ok(())
}

fn is_pending(path: &str) -> bool {
    SPLIT_PENDING.iter().any(|p| path.starts_with(p))
}

/// Every `.ext` file under `dir`, as (path relative to `dir` with `/`, contents), sorted.
fn read_tree(dir: &Path, ext: &str) -> Result<Vec<(String, String)>> {
    fn walk(dir: &Path, base: &Path, ext: &str, out: &mut Vec<(String, String)>) -> Result<()> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                walk(&path, base, ext, out)?;
            } else if path.extension().and_then(|e| e.to_str()) == Some(ext) {
                let src = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let rel = path.strip_prefix(base).expect("under base");
                out.push((rel.to_string_lossy().replace('\\', "/"), src));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, ext, &mut out)?;
    out.sort();
    Ok(out)
}

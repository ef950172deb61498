//! `cargo xtask bench race` (also the last part of `bench engine`): greedy decoding of the
//! decode-bench model by the engine and by onnxruntime-web, same weights, same prompt, in
//! the same headless Chromium page (tests/browser/ort-race-bench.mjs).
//!
//! 1. The bench build of the core writes the model as a checkpoint (`benchDecodeCheckpoint`).
//! 2. tools/onnx/export.py turns it into an ONNX decode step with a KV cache, checks that
//!    onnxruntime (Python) reproduces the PyTorch reference over a whole greedy generation
//!    (logits within 1e-4, the same tokens), and writes a null graph with the same inputs
//!    and outputs (what a run costs onnxruntime apart from the model).
//! 3. onnxruntime-web ([`ORT_WEB`], pinned) is installed from npm into `target/ort` on
//!    demand, never into the page's packages: it is no dependency of the project.
//! 4. The race: tokens/s of each (wasm, one thread), their ratio beside the target, whether
//!    the tokens are the same, the load average before and after.
//!
//! Python: `TPLAY_PYTHON`, else `tests/fixtures/.venv/bin/python` (the fixtures' venv), else
//! `python3`; the first that imports torch, safetensors, onnx, onnxscript and onnxruntime.
//! Without one, or without npm (or the registry), the race is skipped with a message saying
//! what is missing; the rest of the bench goes on. All of it is written under `target/ort`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{root, sh, Result};

/// The onnxruntime-web release the race installs.
pub const ORT_WEB: &str = "1.30.0";

const PY_MODULES: &str = "torch, safetensors, onnx, onnxscript, onnxruntime";

/// Build the bench build of the core, then race (`cargo xtask bench race`).
pub fn run() -> Result<()> {
    let pkg = crate::build::bench_wasm("bench")?;
    race(&pkg)
}

/// The race on an existing bench build (`pkg`: its wasm-bindgen folder). Skips, with a
/// message, when Python with the export's modules or onnxruntime-web cannot be had.
pub fn race(pkg: &Path) -> Result<()> {
    let Some(python) = find_python() else {
        skip(&format!(
            "no Python that imports {PY_MODULES} (set TPLAY_PYTHON to one; in a venv: \
             pip install torch safetensors onnx onnxscript onnxruntime)"
        ));
        return Ok(());
    };
    let dir = root().join("target/ort");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let Some(ort_dist) = onnxruntime_web(&dir) else {
        skip(&format!(
            "onnxruntime-web {ORT_WEB} could not be installed from npm into {}",
            dir.display()
        ));
        return Ok(());
    };
    let browser = crate::build::chromium()?;
    let checkpoint = dir.join("decode.safetensors");
    sh(Command::new("node")
        .arg("tests/browser/ort-race-bench.mjs")
        .arg("--checkpoint")
        .arg(pkg)
        .arg(&checkpoint))?;
    sh(Command::new(&python)
        .arg("tools/onnx/export.py")
        .arg(&checkpoint)
        .arg(dir.join("decode.onnx"))
        .arg("--tokens")
        .arg(dir.join("decode-check.json"))
        .arg("--null-graph")
        .arg(dir.join("decode-null.onnx")))?;
    sh(Command::new("node")
        .arg("tests/browser/ort-race-bench.mjs")
        .arg(pkg)
        .arg(&ort_dist)
        .arg(&dir)
        .arg(root().join("target/bench-race.json"))
        .env("TPLAY_CHROMIUM", browser))
}

fn skip(why: &str) {
    eprintln!("\nskipping the onnxruntime-web decoding race: {why}\n");
}

/// The first candidate Python that imports every module the export needs.
fn find_python() -> Option<PathBuf> {
    let mut candidates = vec![];
    if let Ok(p) = std::env::var("TPLAY_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(root().join("tests/fixtures/.venv/bin/python"));
    candidates.push(PathBuf::from("python3"));
    let probe = format!("import {PY_MODULES}");
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", &probe])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// onnxruntime-web's `dist` folder under `dir`, installed with npm (`--no-save`, its own
/// prefix) when missing or of another version; `None` when npm fails.
fn onnxruntime_web(dir: &Path) -> Option<PathBuf> {
    let package = dir.join("node_modules/onnxruntime-web");
    let installed = |p: &Path| {
        std::fs::read_to_string(p.join("package.json"))
            .ok()
            .and_then(|s| package_version(&s))
            .is_some_and(|v| v == ORT_WEB)
    };
    if !installed(&package) {
        let ok = sh(Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(dir)
            .arg(format!("onnxruntime-web@{ORT_WEB}")))
        .is_ok();
        if !ok || !installed(&package) {
            return None;
        }
    }
    Some(package.join("dist"))
}

/// The `"version"` of a package.json (the first one, at the top level as npm writes it).
fn package_version(manifest: &str) -> Option<String> {
    manifest.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("\"version\":")?;
        Some(
            rest.trim()
                .trim_end_matches(',')
                .trim_matches('"')
                .to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::package_version;

    #[test]
    fn reads_the_version_of_a_package_json() {
        let m = "{\n  \"name\": \"onnxruntime-web\",\n  \"version\": \"1.30.0\",\n  \"x\": 1\n}";
        assert_eq!(package_version(m).as_deref(), Some("1.30.0"));
        assert_eq!(package_version("{}"), None);
    }
}

//! `cargo xtask build`: the wasm engine and the page, into `www/dist`.
//!
//! Steps: the pinned wasm-bindgen CLI (installed when missing), the core built for
//! wasm32 with SIMD, `wasm-bindgen --target web`, `wasm-opt -Oz`, the front end's npm
//! packages (installed when missing), then TypeScript + Vite, which also put the shipped
//! models beside the page (`TPLAY_MODELS` may name another folder) and write the service
//! worker that keeps all of it for offline use. Every URL in the result is relative: the
//! folder works from any path of any static host. A fresh machine needs only cargo, node
//! and npm.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{cargo, describe, root, sh, Result};

pub fn run(args: &[String]) -> Result<()> {
    if let Some(a) = args.first() {
        return Err(format!(
            "`cargo xtask build` takes no arguments (got `{a}`)"
        ));
    }
    build_all()?;
    eprintln!("built the page into {}", dist().display());
    Ok(())
}

/// The folder the page is built into and served from.
pub fn dist() -> PathBuf {
    root().join("www/dist")
}

/// Everything `serve` and the browser tests need.
pub fn build_all() -> Result<()> {
    build_wasm()?;
    npm_install()?;
    // `sh` runs in the workspace root; `--prefix` points npm at the front end.
    sh(npm().args(["--prefix", "www", "run", "build"]))
}

/// The smoke suite of the other engines (Gecko, WebKit), run after the Chromium tests.
const ENGINE_SUITE: &str = "engines.test.mjs";

/// The headless-Chromium tests of the page (tests/browser/*.test.mjs under node's test
/// runner), then the same page in Firefox ESR and WebKitGTK (tests/browser/engines.test.mjs,
/// which compares them with Chromium). Builds everything first; any failing test makes
/// this an error.
pub fn browser_tests() -> Result<()> {
    build_all()?;
    let browser = chromium()?;
    let mut files: Vec<String> = std::fs::read_dir("tests/browser")
        .map_err(|e| format!("tests/browser: {e}"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.mjs") && n != ENGINE_SUITE)
        .map(|n| format!("tests/browser/{n}"))
        .collect();
    files.sort();
    // `--test-force-exit`: a test file whose browser outlived it (a launch that failed half
    // way) ends when its tests end, instead of keeping CI waiting.
    sh(Command::new("node")
        .args(["--test", "--test-concurrency=1", "--test-force-exit"])
        .args(&files)
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    sh(Command::new("node")
        .args(["--test", "--test-concurrency=1", "--test-force-exit"])
        .arg(format!("tests/browser/{ENGINE_SUITE}"))
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", browser))
}

/// The page's unit and property tests under node (tests/unit/*.test.mjs): no browser,
/// no build, only the front end's npm packages.
pub fn unit_tests() -> Result<()> {
    npm_install()?;
    sh(Command::new("node").args(["--test", "tests/unit/"]))
}

/// Browser figures for `cargo xtask bench`: the first load's bytes by kind (HTML, JS, CSS,
/// wasm, the default model; raw and gzip), page-ready time, time to first token, decode
/// tokens/s per backend with and without tracing, everything the build ships, and the
/// lab's click latency while a run trains.
/// Prints them; never asserts on time. Called by `cargo xtask bench`.
pub fn browser_bench() -> Result<()> {
    build_all()?;
    let browser = chromium()?;
    sh(Command::new("node")
        .arg("tests/browser/bench.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    // Layout stability: the cumulative layout shift of the page and of embedded views.
    sh(Command::new("node")
        .arg("tests/browser/layout-bench.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    // Widgets in a post: bytes and time to first picture for one, two and three widgets,
    // below-the-fold widgets before and after scrolling, and the idle main thread.
    sh(Command::new("node")
        .arg("tests/browser/widgets-bench.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    // The lab view: input latency of clicks while a run trains and the lab draws its plots.
    sh(Command::new("node")
        .arg("tests/browser/lab-view-bench.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    // Real scale: every view drawn for GPT-2-shaped models (d_model 96 and 768), and a
    // GPT-2-small-shaped folder (124 M parameters) checked, downloaded, kept and decoded in wasm.
    for bench in ["realscale-bench.mjs", "load-model-bench.mjs"] {
        sh(Command::new("node")
            .arg(format!("tests/browser/{bench}"))
            .env("TPLAY_DIST", dist())
            .env("TPLAY_CHROMIUM", &browser))?;
    }
    // The long form of the memory test: 10,000 tokens, memory at start and end.
    sh(Command::new("node")
        .arg("tests/browser/longrun.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", &browser))?;
    // The lab: the reverse recipe to its threshold in the page, and training speed in the
    // page against the native release binary.
    sh(cargo().args(["build", "--release", "-p", "tplay"]))?;
    sh(Command::new("node")
        .arg("tests/browser/lab-bench.mjs")
        .env("TPLAY_DIST", dist())
        .env("TPLAY_CHROMIUM", browser)
        .env("TPLAY_BIN", root().join("target/release/tplay")))
}

pub fn chromium() -> Result<PathBuf> {
    if let Ok(p) = std::env::var("TPLAY_CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return Ok(PathBuf::from(p));
        }
    }
    Err("Chromium is not installed: `apt-get install -y chromium` (or set TPLAY_CHROMIUM)".into())
}

fn npm() -> Command {
    Command::new("npm")
}

/// Install the front end's packages at exactly the versions package-lock.json records,
/// when any named in package.json is missing (a fresh checkout, or a package added since
/// the last install). `npm ci`, never `npm install`: `npm ci` does not write the lock file,
/// whereas `npm install` rewrites it in the format of whichever npm runs it (npm 9 and 10
/// drop the `libc` fields npm 11 records for the platform-specific optional packages), so a
/// fresh clone would start with a changed `www/package-lock.json`.
pub fn npm_install() -> Result<()> {
    let www = root().join("www");
    let manifest = std::fs::read_to_string(www.join("package.json"))
        .map_err(|e| format!("cannot read www/package.json: {e}"))?;
    let missing: Vec<String> = declared_packages(&manifest)
        .into_iter()
        .filter(|name| {
            !www.join("node_modules")
                .join(name)
                .join("package.json")
                .exists()
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!(
        "installing the page's npm packages ({} missing)",
        missing.join(", ")
    );
    sh(npm().args(["--prefix", "www", "ci", "--no-audit", "--no-fund"]))
}

/// The names under "dependencies" and "devDependencies" of a package.json written one
/// entry per line (as npm writes it).
fn declared_packages(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with("\"dependencies\"") || t.starts_with("\"devDependencies\"") {
            inside = true;
        } else if inside && t.starts_with('}') {
            inside = false;
        } else if inside {
            if let Some(name) = t.strip_prefix('"').and_then(|r| r.split('"').next()) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The wasm-bindgen version the crate is locked to (Cargo.lock), which the CLI must equal.
fn locked_wasm_bindgen_version() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                return Ok(v.trim_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen entry".into())
}

/// The wasm-bindgen CLI at exactly the locked version, installed with cargo when missing.
pub fn wasm_bindgen_cli() -> Result<PathBuf> {
    let want = locked_wasm_bindgen_version()?;
    let cargo_bin = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"))
        .join("bin");
    let candidates = [
        cargo_bin.join("wasm-bindgen"),
        PathBuf::from("wasm-bindgen"),
    ];
    for c in &candidates {
        if let Ok(out) = Command::new(c).arg("--version").output() {
            let text = String::from_utf8_lossy(&out.stdout);
            if text.split_whitespace().nth(1) == Some(want.as_str()) {
                return Ok(c.clone());
            }
        }
    }
    eprintln!("installing wasm-bindgen-cli {want} (the crate's locked version)");
    // No --locked: one of its pinned transitive crates is not served by the registry.
    sh(cargo().args([
        "install",
        "wasm-bindgen-cli",
        "--version",
        &format!("={want}"),
    ]))?;
    Ok(cargo_bin.join("wasm-bindgen"))
}

/// The wasm32 standard library, added with rustup when missing (a fresh machine).
fn wasm_target() -> Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown"))
        .unwrap_or(false);
    if installed {
        return Ok(());
    }
    sh(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
}

/// The core for the browser, three times: the inference engine, which the page loads
/// first, with its WebGPU backend (`tplay_infer_gpu`, for browsers that offer a WebGPU
/// adapter) and without it (`tplay_infer`, for those that offer none), and the whole
/// engine (`tplay`, with the trainer and the side studies), which the worker fetches when
/// the lab or a side study first needs it. Each: wasm32 + SIMD, bindings for ES modules,
/// then `wasm-opt -Oz`.
fn build_wasm() -> Result<()> {
    let pkg = root().join("www/pkg");
    for (features, name) in WASM_MODULES {
        wasm_package(
            features,
            &pkg,
            &["--remove-name-section", "--out-name", name],
        )?;
        optimise(&pkg.join(format!("{name}_bg.wasm")))?;
    }
    Ok(())
}

/// The page's three wasm modules: cargo features, and the name of the bindings in `www/pkg`.
const WASM_MODULES: [(&[&str], &str); 3] = [
    (&["--features", "lab"], "tplay"),
    (&["--features", "gpu"], "tplay_infer_gpu"),
    (&[], "tplay_infer"),
];

/// `wasm-opt -Oz` on `bg`, in place.
fn optimise(bg: &Path) -> Result<()> {
    npm_install()?;
    let opt = root().join("www/node_modules/.bin/wasm-opt");
    let mut cmd = Command::new(&opt);
    cmd.args(["-Oz", "--enable-simd"]).arg(bg).arg("-o").arg(bg);
    sh(&mut cmd).map_err(|e| {
        format!(
            "{e} (wasm-opt from the npm package binaryen: {})",
            describe(&cmd)
        )
    })
}

/// The core built for wasm32 with simd128 (release with fat LTO, no CLI, plus `features`), then
/// `wasm-bindgen --target web` into `pkg` with `bindgen_args`.
fn wasm_package(features: &[&str], pkg: &Path, bindgen_args: &[&str]) -> Result<()> {
    wasm_target()?;
    let bindgen = wasm_bindgen_cli()?;
    sh(cargo()
        .args([
            "build",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "tplay",
            "--lib",
            "--release",
            "--no-default-features",
        ])
        .args(features)
        .env("RUSTFLAGS", "-C target-feature=+simd128")
        // One codegen unit and whole-program LTO for the browser's builds: a function is
        // no longer copied into several units, which makes the inference engine a tenth
        // smaller (the first load). Native builds keep the workspace's release profile.
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1"))?;
    let wasm = root().join("target/wasm32-unknown-unknown/release/tplay.wasm");
    sh(Command::new(&bindgen)
        .arg(&wasm)
        .args(["--out-dir"])
        .arg(pkg)
        .args(["--target", "web"])
        .args(bindgen_args))
}

/// The engine benchmark's wasm build (`--features bench`, simd128) into `target/bench-pkg`,
/// for tests/browser/engine-bench.mjs under node. Not run through wasm-opt: `-Oz` trades
/// speed for size, and this build measures speed (`wasm_opt_copy` makes the variants the
/// bench compares). `features`: "bench", or "bench,profile" for the per-phase timers.
/// Returns the package folder.
pub fn bench_wasm(features: &str) -> Result<PathBuf> {
    let pkg = root().join("target/bench-pkg");
    wasm_package(&["--features", features], &pkg, &[])?;
    Ok(pkg)
}

/// A copy of the package `pkg` beside it (`<pkg>-<level>`) with its wasm passed through
/// `wasm-opt -<level>` (e.g. "Oz", "O3"). Returns the copy's folder.
pub fn wasm_opt_copy(pkg: &Path, level: &str) -> Result<PathBuf> {
    npm_install()?;
    let name = pkg
        .file_name()
        .ok_or_else(|| format!("{} has no folder name", pkg.display()))?
        .to_string_lossy()
        .into_owned();
    let dir = pkg.with_file_name(format!("{name}-{level}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in std::fs::read_dir(pkg).map_err(|e| format!("{}: {e}", pkg.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.path().is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name()))
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        }
    }
    let bg = dir.join("tplay_bg.wasm");
    sh(Command::new(root().join("www/node_modules/.bin/wasm-opt"))
        .arg(format!("-{level}"))
        .arg("--enable-simd")
        .arg(&bg)
        .arg("-o")
        .arg(&bg))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::declared_packages;

    #[test]
    fn declared_packages_lists_dependencies_and_dev_dependencies_but_not_scripts() {
        let m = r#"{
  "name": "x",
  "scripts": {
    "build": "vite build"
  },
  "dependencies": {
    "lit": "3.3.3"
  },
  "devDependencies": {
    "@types/node": "1.0.0",
    "vite": "8.4.0"
  }
}"#;
        assert_eq!(declared_packages(m), ["lit", "@types/node", "vite"]);
    }
}

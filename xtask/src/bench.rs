//! `cargo xtask bench`: programs that print numbers (never assertions on time).
//!
//! The native benches live in crate/benches/ (forward passes per backend, decoding with
//! and without the KV cache, training); the browser bench drives headless Chromium and
//! prints the first load's bytes by kind and the time to first token.
//! `cargo xtask bench engine` runs the engine benchmark alone (crate/src/bench.rs): the
//! same decode, forward, matrix-product and training figures natively and in wasm
//! (simd128, on the main thread of headless Chromium), printed side by side with their
//! ratio, and engine-only decoding on the main thread and through a worker (several
//! steps per message), and WebGPU's dispatches per decode step for every shipped model.
//! `cargo xtask bench native` or `cargo xtask bench browser` runs one half.

use crate::util::{cargo, sh, Result};

pub fn run(args: &[String]) -> Result<()> {
    let which = args.first().map(String::as_str).unwrap_or("all");
    if !matches!(which, "all" | "native" | "browser" | "engine") {
        return Err(format!(
            "unknown bench '{which}' (known: native, browser, engine)"
        ));
    }
    if which == "engine" || which == "all" {
        engine()?;
        if which == "engine" {
            return Ok(());
        }
    }
    if which != "browser" {
        // GPU rows use whatever Vulkan adapter wgpu finds (lavapipe without a GPU).
        sh(cargo()
            .args(["bench", "-p", "tplay"])
            .env("WGPU_BACKEND", "vulkan"))?;
    }
    if which != "native" {
        crate::build::browser_bench()?;
    }
    Ok(())
}

/// The engine benchmark in headless Chromium (the page, for its worker, and the bench
/// build of the core), then natively with the browser's report beside it.
fn engine() -> Result<()> {
    let pkg = crate::build::bench_wasm()?;
    crate::build::build_all()?;
    let out = crate::util::root().join("target/bench-wasm.json");
    sh(std::process::Command::new("node")
        .arg("tests/browser/engine-bench.mjs")
        .arg(&pkg)
        .arg(&out)
        .env("TPLAY_DIST", crate::build::dist())
        .env("TPLAY_CHROMIUM", crate::build::chromium()?))?;
    sh(cargo()
        .args([
            "bench",
            "-p",
            "tplay",
            "--bench",
            "engine",
            "--features",
            "bench",
        ])
        .env("TPLAY_BENCH_WASM_JSON", &out))
}

//! `cargo xtask bench`: programs that print numbers (never assertions on time).
//!
//! The native benches live in crate/benches/ (forward passes per backend, decoding with
//! and without the KV cache, training: steps/s on the CPU and of the whole step on the
//! GPU, with its dispatches, submissions and readbacks); the browser bench drives headless
//! Chromium and prints the first load's bytes by kind and the time to first token, and
//! what a post's second and third widgets cost (tests/browser/widgets-bench.mjs).
//! `cargo xtask bench engine` runs the engine benchmark alone (crate/src/bench/mod.rs): the
//! same decode, forward, matrix-product and training figures natively and in wasm
//! (simd128, on the main thread of headless Chromium), printed side by side with their
//! ratio, and engine-only decoding on the main thread and through a worker (several
//! steps per message), and WebGPU's dispatches per decode step for every shipped model.
//! It ends with the decoding race against onnxruntime-web (bench_race.rs), which
//! `cargo xtask bench race` runs alone: greedy decoding of the same weights by the engine and
//! by onnxruntime-web (wasm, one thread, a KV-cache graph exported by tools/onnx/export.py)
//! in one headless Chromium page, tokens/s of each, the ratio beside its target (≥ 10×),
//! whether the tokens are the same, the load average; skipped with a message where Python
//! with torch and onnx, or npm, is missing.
//! `cargo xtask bench native` or `cargo xtask bench browser` runs one half.
//! `cargo xtask bench gpu` is the prepared run for a machine with a real GPU (never part
//! of `all`; bench_gpu.rs): parity tests, GPU against CPU, the crossover, the page's WebGPU.
//! `cargo xtask bench threads` trains on one thread and on several, natively and in a
//! cross-origin isolated page on wasm threads (bench_threads.rs; never part of `all`).
//! `--profile` (with `engine` or `all`) compiles the per-phase timers into both builds of
//! the engine benchmark (crate/src/profile.rs) and prints each figure's breakdown.

use crate::util::{cargo, sh, Result};

pub fn run(args: &[String]) -> Result<()> {
    let profile = args.iter().any(|a| a == "--profile");
    let which = args
        .iter()
        .map(String::as_str)
        .find(|a| !a.starts_with("--"))
        .unwrap_or("all");
    if !matches!(
        which,
        "all" | "native" | "browser" | "engine" | "race" | "gpu" | "threads"
    ) {
        return Err(format!(
            "unknown bench '{which}' (known: native, browser, engine, race, gpu, threads; \
             flag: --profile)"
        ));
    }
    if which == "threads" {
        return crate::bench_threads::run();
    }
    if which == "gpu" {
        return crate::bench_gpu::run();
    }
    if which == "race" {
        return crate::bench_race::run();
    }
    if which == "engine" || which == "all" {
        engine(profile)?;
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
/// build of the core), then natively with the browser's report beside it. The bench
/// build is also passed through `wasm-opt -Oz` (what the page ships) and `-O3`, so the
/// browser runner can time the worker's decoding on each and print their sizes. Then the
/// race against onnxruntime-web on the same bench build (not with `--profile`: the timers
/// would be on one side only).
fn engine(profile: bool) -> Result<()> {
    let features = if profile { "bench,profile" } else { "bench" };
    let pkg = crate::build::bench_wasm(features)?;
    let mut variants = vec![];
    for level in ["Oz", "O3"] {
        let dir = crate::build::wasm_opt_copy(&pkg, level)?;
        variants.push(format!("{level}={}", dir.display()));
    }
    crate::build::build_all()?;
    let out = crate::util::root().join("target/bench-wasm.json");
    sh(std::process::Command::new("node")
        .arg("tests/browser/engine-bench.mjs")
        .arg(&pkg)
        .arg(&out)
        .env("TPLAY_BENCH_OPT", variants.join(","))
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
            features,
        ])
        .env("TPLAY_BENCH_WASM_JSON", &out))?;
    if profile {
        eprintln!("(the onnxruntime-web race is not run with --profile: `cargo xtask bench race`)");
        return Ok(());
    }
    crate::bench_race::race(&pkg)
}

//! `cargo xtask fuzz`: the libFuzzer targets in fuzz/ (cargo-fuzz, nightly Rust).
//!
//! - `cargo xtask fuzz` (also run by `cargo xtask test`): replay each target's corpus in
//!   fuzz/corpus/<target>, then fuzz it for a short fixed time (`TPLAY_FUZZ_SECONDS`,
//!   default 20) starting from it. A crash, a panic, a leak or a timeout fails. New inputs
//!   go to a scratch folder, so the committed corpus only changes when someone minimises
//!   a long run into it.
//! - `cargo xtask fuzz <target> [--runs N] [--fast]`: one long run of a target (default 10
//!   million executions) that grows its corpus; then `cargo +nightly fuzz cmin <target>`
//!   shrinks it. `--fast` builds without AddressSanitizer and without comparison tracing
//!   (`-s none --no-trace-compares`): the targets are safe Rust, and in the request targets
//!   tracing every comparison inside the matrix loops took 61% of the time (measured with
//!   `perf` on generate_request: 516 executions/s with it, 2,353 without, one core). Edge
//!   coverage still guides the fuzzer.
//!
//! The nightly toolchain and cargo-fuzz are installed when missing.

use std::process::Command;

use crate::util::{cargo, root, sh, Result};

/// Every target in fuzz/Cargo.toml.
pub const TARGETS: [&str; 9] = [
    "checkpoint",
    "config_json",
    "tokenizer_json",
    "encode_decode",
    "forward_request",
    "generate_request",
    "hf_folder",
    "bpe_encode",
    "text_task",
];

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        None => ci(),
        Some(t) if TARGETS.contains(&t) => {
            let usage = || "usage: cargo xtask fuzz [<target> [--runs N] [--fast]]".to_string();
            let (mut runs, mut fast) = (10_000_000u64, false);
            let mut rest = args[1..].iter();
            while let Some(a) = rest.next() {
                match a.as_str() {
                    "--fast" => fast = true,
                    "--runs" => {
                        let n = rest.next().ok_or_else(usage)?;
                        runs = n
                            .parse()
                            .map_err(|_| format!("--runs: `{n}` is not a number"))?;
                    }
                    _ => return Err(usage()),
                }
            }
            long_run(t, runs, fast)
        }
        Some(other) => Err(format!(
            "unknown fuzz target `{other}` (known: {})",
            TARGETS.join(", ")
        )),
    }
}

/// The nightly toolchain (for the sanitizer flags) and cargo-fuzz, installed when missing.
pub fn tools() -> Result<()> {
    let nightly = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("nightly"))
        .unwrap_or(false);
    if !nightly {
        sh(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let fuzz = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !fuzz {
        sh(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

fn fuzz() -> Command {
    // `cargo +nightly`: rustup's proxy picks the toolchain, not the CARGO of this process.
    let mut c = Command::new("cargo");
    c.args(["+nightly", "fuzz"])
        .env_remove("CARGO")
        .env_remove("RUSTUP_TOOLCHAIN");
    c
}

/// Replay every corpus and fuzz each target briefly.
pub fn ci() -> Result<()> {
    tools()?;
    let seconds: u64 = std::env::var("TPLAY_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    sh(fuzz().args(["build"]).current_dir(root().join("fuzz")))?;
    for t in TARGETS {
        let scratch = std::env::temp_dir().join(format!("tplay-fuzz-{t}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let corpus = root().join("fuzz/corpus").join(t);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
        let result = sh(fuzz()
            .args(["run", t])
            .arg(&scratch)
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .args(["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"]));
        let _ = std::fs::remove_dir_all(&scratch);
        result?;
    }
    Ok(())
}

/// One long run that adds what it finds to the committed corpus.
fn long_run(target: &str, runs: u64, fast: bool) -> Result<()> {
    tools()?;
    let corpus = root().join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus)
        .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
    let mut c = fuzz();
    c.args(["run", target]);
    if fast {
        c.args(["-s", "none", "--no-trace-compares"]);
    }
    sh(c.arg(&corpus).arg("--").arg(format!("-runs={runs}")).args([
        "-timeout=10",
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
    ]))
}

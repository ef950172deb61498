//! `cargo xtask bench gpu`: one prepared run for a machine with a real GPU (never part of
//! CI). It runs, on whatever adapter wgpu picks (`WGPU_BACKEND` chooses the API; on a
//! machine without a GPU, `WGPU_BACKEND=vulkan` gives lavapipe, where the speed figures
//! mean nothing but every step still runs):
//!
//! 1. the GPU parity tests (the crate's tests that hold the GPU to the CPU), with
//!    `TPLAY_REQUIRE_GPU=1` so a missing adapter fails instead of skipping;
//! 2. decoding (per token against the context length) and training steps/s, GPU against
//!    CPU, on native wgpu (`crate/benches/decode.rs`, `train.rs` table 4);
//! 3. the CPU/GPU crossover as d_model grows (`crate/benches/gpu_crossover.rs`);
//! 4. headless Chromium's WebGPU on the same machine, if it starts
//!    (`tests/browser/gpu-bench.mjs`): its adapter, decoding and a lab training run on
//!    WebGPU against the CPU.
//!
//! Everything it prints is also written, with the date and the machine's load, to
//! `docs/bench/gpu-<adapter>.md`. A step that fails is recorded as failed and the run
//! goes on; the command fails at the end if any step did.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use crate::util::{cargo, describe, root, Result};

/// The crate's tests that compare the GPU backend with the CPU.
const PARITY_TESTS: [&str; 9] = [
    "gpu_kernels",
    "gpu_forward",
    "gpu_cache",
    "gpu_backward",
    "gpu_attention_backward",
    "gpu_train",
    "generate_gpu",
    "train_session_gpu",
    // The `time` view's study: a GPU step's submissions and dispatches counted.
    "timing",
];

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Run a command in the workspace root, its output shown as it comes and kept.
fn capture(cmd: &mut Command) -> (bool, String) {
    cmd.current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    eprintln!("$ {}", describe(cmd));
    match cmd.output() {
        Ok(out) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            eprint!("{text}");
            (out.status.success(), text)
        }
        Err(e) => (false, format!("cannot start {}: {e}", describe(cmd))),
    }
}

/// The lines of a test run worth keeping: each test binary's result and every skip or
/// failure.
fn test_summary(text: &str) -> String {
    text.lines()
        .filter(|l| {
            l.starts_with("test result:")
                || l.starts_with("     Running")
                || l.contains("skipped")
                || l.contains("FAILED")
                || l.contains("panicked")
        })
        .map(|l| format!("{}\n", l.trim()))
        .collect()
}

/// The adapter's name as a file name: lower case, letters and digits, dashes between.
fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "unknown".into()
    } else {
        s.chars().take(60).collect()
    }
}

pub fn run() -> Result<()> {
    let mut doc = String::new();
    let mut failed: Vec<&str> = vec![];
    let backend = std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "(unset: wgpu's choice)".into());
    let section = |doc: &mut String, title: &str, cmd: &Command, body: &str| {
        let _ = writeln!(
            doc,
            "\n## {title}\n\n`{}` · load average after: {}\n\n```text\n{}```",
            describe(cmd),
            load(),
            if body.ends_with('\n') {
                body.to_string()
            } else {
                format!("{body}\n")
            }
        );
    };

    // 3 first: its first line names the adapter, for the report's file name.
    let mut cross = cargo();
    cross.args(["bench", "-p", "tplay", "--bench", "gpu_crossover"]);
    let load_start = load();
    let (ok, cross_out) = capture(&mut cross);
    if !ok {
        failed.push("crossover");
    }
    let adapter = cross_out
        .lines()
        .find_map(|l| l.strip_prefix("GPU: "))
        .unwrap_or("no adapter")
        .trim()
        .to_string();

    let mut tests = cargo();
    tests.args(["test", "--release", "-p", "tplay"]);
    for t in PARITY_TESTS {
        tests.args(["--test", t]);
    }
    tests.env("TPLAY_REQUIRE_GPU", "1");
    let (ok, test_out) = capture(&mut tests);
    if !ok {
        failed.push("parity tests");
    }
    section(
        &mut doc,
        &format!(
            "1. GPU parity tests ({}): {}",
            PARITY_TESTS.join(", "),
            if ok { "passed" } else { "FAILED" }
        ),
        &tests,
        &test_summary(&test_out),
    );

    let mut decode = cargo();
    decode.args(["bench", "-p", "tplay", "--bench", "decode"]);
    let (ok, out) = capture(&mut decode);
    if !ok {
        failed.push("decode bench");
    }
    section(
        &mut doc,
        "2. Decoding: GPU against CPU (native wgpu)",
        &decode,
        &out,
    );

    let mut train = cargo();
    train.args(["bench", "-p", "tplay", "--bench", "train"]);
    train.env("TPLAY_BENCH_TRAIN", "gpu");
    let (ok, out) = capture(&mut train);
    if !ok {
        failed.push("train bench");
    }
    section(
        &mut doc,
        "2. Training: GPU against CPU (native wgpu)",
        &train,
        &out,
    );
    section(
        &mut doc,
        "3. The CPU/GPU crossover as d_model grows",
        &cross,
        &cross_out,
    );

    // 4: the page on the same machine's WebGPU, if Chromium starts one.
    let browser = crate::build::build_all().and_then(|()| crate::build::chromium());
    match browser {
        Ok(chromium) => {
            let mut page = Command::new("node");
            page.arg("tests/browser/gpu-bench.mjs")
                .env("TPLAY_DIST", crate::build::dist())
                .env("TPLAY_CHROMIUM", chromium);
            let (ok, out) = capture(&mut page);
            if !ok {
                failed.push("Chromium WebGPU");
            }
            section(&mut doc, "4. Headless Chromium's WebGPU", &page, &out);
        }
        Err(e) => {
            failed.push("Chromium WebGPU");
            let _ = writeln!(doc, "\n## 4. Headless Chromium's WebGPU\n\nnot run: {e}");
        }
    }

    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let head = format!(
        "# GPU bench: {adapter}\n\n`cargo xtask bench gpu`, {date}; WGPU_BACKEND {backend}; {cpus} CPU \
         threads; load average (1, 5, 15 min) at the start: {load_start}. {}\n\nThe CPU side runs \
         one thread. Failed steps: {}.\n",
        if ["llvmpipe", "lavapipe", "SwiftShader", "Cpu"]
            .iter()
            .any(|n| adapter.contains(n))
        {
            "A software adapter: every step runs, the speeds mean nothing."
        } else {
            ""
        },
        if failed.is_empty() { "none".to_string() } else { failed.join(", ") }
    );
    let dir = root().join("docs/bench");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("gpu-{}.md", slug(&adapter)));
    std::fs::write(&path, format!("{head}{doc}"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "bench gpu: failed: {} (the report says how)",
            failed.join(", ")
        ))
    }
}

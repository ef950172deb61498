//! `cargo xtask bench threads`: training on threads, natively and in the browser.
//!
//! 1. Natively: table 5 of the train bench (`TPLAY_BENCH_TRAIN=threads`): steps/s on one
//!    and two threads, the speed-up, whether the weights are the same to the bit.
//! 2. In headless Chromium: tools/wasm-threads (the core with `threads`, rayon's pool on Web
//!    Workers) built by nightly Rust with the standard library recompiled for atomics and
//!    shared memory (`-Z build-std`, which needs nightly's `rust-src`: added here when
//!    missing), bound by wasm-bindgen into `target/wasm-threads-pkg`, and trained in a
//!    cross-origin isolated page by tests/browser/threads-bench.mjs.
//!
//! Never part of CI or of `bench all`: the page's shipped builds are one-thread builds
//! (docs/bench/threads.md says what shipping this one would take).

use std::process::Command;

use crate::util::{cargo, root, sh, Result};

/// What the wasm threads build needs beyond the page's own flags: the atomics the shared
/// memory needs, shared imported memory, and the thread-local storage symbols
/// wasm-bindgen's thread start-up calls.
const THREADS_RUSTFLAGS: &str =
    "-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128 \
     -C link-arg=--shared-memory -C link-arg=--import-memory \
     -C link-arg=--max-memory=1073741824 \
     -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size \
     -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base";

pub fn run() -> Result<()> {
    sh(cargo()
        .args(["bench", "-p", "tplay", "--bench", "train"])
        .env("TPLAY_BENCH_TRAIN", "threads"))?;
    let has_src = Command::new("rustup")
        .args(["component", "list", "--installed", "--toolchain", "nightly"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("rust-src"))
        .unwrap_or(false);
    if !has_src {
        sh(Command::new("rustup").args(["component", "add", "rust-src", "--toolchain", "nightly"]))
            .map_err(|e| format!("{e}: the wasm threads build needs nightly Rust's rust-src"))?;
    }
    let dir = root().join("tools/wasm-threads");
    let target = root().join("target/wasm-threads");
    // rustup's cargo for nightly (the CARGO of this process is the stable toolchain's).
    sh(Command::new("rustup")
        .args(["run", "nightly", "cargo", "build", "--release"])
        .args([
            "--target",
            "wasm32-unknown-unknown",
            "-Z",
            "build-std=std,panic_abort",
        ])
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env("RUSTFLAGS", THREADS_RUSTFLAGS))?;
    let pkg = root().join("target/wasm-threads-pkg");
    sh(Command::new(crate::build::wasm_bindgen_cli()?)
        .arg(target.join("wasm32-unknown-unknown/release/tplay_wasm_threads.wasm"))
        .arg("--out-dir")
        .arg(&pkg)
        .args(["--target", "web"]))?;
    crate::build::npm_install()?;
    sh(Command::new("node")
        .arg(root().join("tests/browser/threads-bench.mjs"))
        .env("TPLAY_THREADS_PKG", &pkg))
}

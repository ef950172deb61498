//! `cargo xtask test`: formatting, lints, every Rust test, then the browser tests.

use crate::util::{cargo, sh, Result};

pub fn run(_args: &[String]) -> Result<()> {
    sh(cargo().args(["fmt", "--all", "--check"]))?;
    sh(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // GPU tests run on whatever Vulkan adapter wgpu finds (lavapipe in CI).
    // TPLAY_REQUIRE_GPU=1 (set by .ci/run) turns "no adapter" into a failure.
    sh(cargo()
        .args(["test", "--workspace"])
        .env("WGPU_BACKEND", "vulkan"))?;
    crate::build::browser_tests()
}

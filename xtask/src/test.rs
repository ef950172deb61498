//! `cargo xtask test`: formatting, the tree's shape (`cargo xtask arch`), lints, every Rust test, the fuzz targets (corpus replay and a
//! short run each), the page's unit tests under node, then the browser tests.
//!
//! The GPU tests must run: without a Vulkan adapter they fail (`TPLAY_REQUIRE_GPU=1`),
//! so a machine without one cannot pass by skipping ~40 tests unnoticed. A machine that
//! truly has no Vulkan opts out with `cargo xtask test --no-gpu` (or
//! `TPLAY_ALLOW_NO_GPU=1`); the run then says so loudly, before and after.

use crate::util::{cargo, sh, Result};

const NO_GPU_BANNER: &str = "\
################################################################################
#  GPU TESTS NOT REQUIRED (--no-gpu / TPLAY_ALLOW_NO_GPU=1): without a Vulkan   #
#  adapter every GPU test SKIPS and passes. The WGSL kernels are NOT checked     #
#  against the CPU on this run. Install mesa-vulkan-drivers libvulkan1 (apt)    #
#  and run `cargo xtask test` without the opt-out to test them.                 #
################################################################################";

/// Whether this run may skip the GPU tests: `--no-gpu` or `TPLAY_ALLOW_NO_GPU=1`.
fn gpu_optional(args: &[String], allow_env: Option<&str>) -> Result<bool> {
    let mut optional = allow_env == Some("1");
    for a in args {
        match a.as_str() {
            "--no-gpu" => optional = true,
            other => {
                return Err(format!(
                    "unknown argument '{other}' (cargo xtask test [--no-gpu])"
                ))
            }
        }
    }
    Ok(optional)
}

pub fn run(args: &[String]) -> Result<()> {
    let optional = gpu_optional(args, std::env::var("TPLAY_ALLOW_NO_GPU").ok().as_deref())?;
    if optional {
        eprintln!("{NO_GPU_BANNER}");
    }
    // What the system must provide, in the first seconds (installed as root with apt),
    // then the page's npm packages: before fifteen minutes of compiling, not after.
    crate::setup::ensure(!optional)?;
    crate::build::npm_install()?;
    sh(cargo().args(["fmt", "--all", "--check"]))?;
    // The tree's shape: no import circle, no overlong hand-written file.
    crate::arch::run(&[])?;
    sh(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // GPU tests run on whatever Vulkan adapter wgpu finds (lavapipe without a GPU); a
    // missing adapter fails them unless this run opted out.
    sh(cargo()
        .args(["test", "--workspace"])
        .env("WGPU_BACKEND", "vulkan")
        .env("TPLAY_REQUIRE_GPU", if optional { "0" } else { "1" }))?;
    // Everything read from strangers, fuzzed: corpus replay plus a short run per target.
    crate::fuzz::ci()?;
    crate::build::unit_tests()?;
    crate::build::browser_tests()?;
    if optional {
        eprintln!("{NO_GPU_BANNER}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::gpu_optional;

    #[test]
    fn the_gpu_is_required_unless_the_run_opts_out() {
        assert!(!gpu_optional(&[], None).unwrap());
        assert!(!gpu_optional(&[], Some("0")).unwrap());
        assert!(gpu_optional(&["--no-gpu".into()], None).unwrap());
        assert!(gpu_optional(&[], Some("1")).unwrap());
        assert!(gpu_optional(&["--gpu-please".into()], None).is_err());
    }
}

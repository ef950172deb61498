//! `cargo xtask bench`: programs that print numbers (never assertions on time).
//!
//! The native benches live in crate/benches/ (forward passes per backend, decoding with
//! and without the KV cache, training); the browser bench drives headless Chromium and
//! prints the first load's bytes by kind and the time to first token.
//! `cargo xtask bench native` or `cargo xtask bench browser` runs one half.

use crate::util::{cargo, sh, Result};

pub fn run(args: &[String]) -> Result<()> {
    let which = args.first().map(String::as_str).unwrap_or("all");
    if !matches!(which, "all" | "native" | "browser") {
        return Err(format!("unknown bench '{which}' (known: native, browser)"));
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

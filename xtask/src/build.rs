//! `cargo xtask build`: the wasm engine and the page.

use crate::util::Result;

pub fn run(_args: &[String]) -> Result<()> {
    Err("the page build is not available yet".into())
}

/// The headless-Chromium tests of the page.
pub fn browser_tests() -> Result<()> {
    Ok(())
}

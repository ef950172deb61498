//! `cargo xtask bench`: programs that print numbers (never assertions on time).

use crate::util::{cargo, sh, Result};

pub fn run(_args: &[String]) -> Result<()> {
    sh(cargo().args(["bench", "-p", "tplay"]))
}

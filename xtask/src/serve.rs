//! `cargo xtask serve`: build everything, then serve the playground on 127.0.0.1.

use crate::util::Result;

pub fn run(_args: &[String]) -> Result<()> {
    Err("the playground page is not available yet".into())
}

//! `tplay generate`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> tplay::Result<()> {
    Err(tplay::Error::Other(
        "`tplay generate` is not available in this build".into(),
    ))
}

//! `tplay info`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> tplay::Result<()> {
    Err(tplay::Error::Other(
        "`tplay info` is not available in this build".into(),
    ))
}

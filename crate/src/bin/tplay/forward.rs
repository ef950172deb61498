//! `tplay forward`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> tplay::Result<()> {
    Err(tplay::Error::Other(
        "`tplay forward` is not available in this build".into(),
    ))
}

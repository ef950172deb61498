//! The `tplay` binary as the CLI tests run it, and the checkpoints they hand it.

use std::process::{Command, Output};

/// The `tplay` binary this package builds, to be given its arguments.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tplay"))
}

/// `tplay args…`, run to the end.
pub fn tplay(args: &[&str]) -> Output {
    command()
        .args(args)
        .output()
        .expect("the tplay binary runs")
}

/// `tplay args…`, which must succeed.
pub fn tplay_ok(args: &[&str]) -> Output {
    let out = tplay(args);
    assert!(
        out.status.success(),
        "tplay {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `tplay args…` exits non-zero, prints nothing on stdout, and one line on stderr
/// containing `needle` (clap's own usage errors, `error: …`, may take more lines).
pub fn fails_with(args: &[&str], needle: &str) {
    let out = tplay(args);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed to stdout on failure"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(needle),
        "{args:?}: stderr {err:?} lacks {needle:?}"
    );
    if !needle.starts_with("error:") {
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
    }
}

/// The path of the PyTorch fixture checkpoint `tests/fixtures/<name>.safetensors`.
pub fn fixture_checkpoint(name: &str) -> String {
    let p = super::fixtures::dir().join(format!("{name}.safetensors"));
    p.to_str().expect("a UTF-8 path").to_string()
}

/// The path of the shipped model `models/<file>`.
pub fn shipped_model(file: &str) -> String {
    let p = super::models_dir().join(file);
    p.to_str().expect("a UTF-8 path").to_string()
}

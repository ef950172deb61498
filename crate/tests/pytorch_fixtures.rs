//! The CPU forward pass against PyTorch: every forward fixture in `tests/fixtures/`
//! (made by `tests/fixtures/make_fixtures.py` from docs/model.md) is loaded from its
//! checkpoint, every case is run, and logits, class logits and attention probabilities
//! must agree within 1e-5. The same test body runs on the GPU in `gpu_forward.rs`.

mod support;

use support::fixtures::{every_forward_fixture_matches_pytorch, Tolerance};
use support::Device;

/// Largest allowed absolute difference from the fixture's numbers.
const TOL: f32 = 1e-5;

#[test]
fn cpu_forward_matches_pytorch_on_every_forward_fixture() {
    every_forward_fixture_matches_pytorch(
        &Device::Cpu,
        Tolerance {
            logits: TOL,
            probs: TOL,
        },
        |_, _, _, _, _| Ok(()),
    );
}

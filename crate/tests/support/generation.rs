//! Generation run to its end, and two runs compared step by step.

use pollster::block_on;
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Step, Summary};
use tplay::model::Model;

use super::{flat, max_diff};

/// Every step of a generation from `prompt` (and `src` for an encoder-decoder), and the
/// summary.
pub fn run_to_end(
    m: &Model,
    backend: Backend,
    prompt: &[u32],
    src: Option<Vec<u32>>,
    opts: GenerateOptions,
) -> (Vec<Step>, Summary) {
    let mut g = Generator::new(m, backend, prompt.to_vec(), src, opts).unwrap();
    let mut steps = vec![];
    while let Some(s) = block_on(g.step()).unwrap() {
        steps.push(s);
    }
    (steps, g.summary())
}

/// Two runs agree step by step: logits and attention (self and cross) within `tol`, and
/// the same tokens, cache lengths and stop reasons. Returns the largest logit difference.
pub fn runs_agree(what: &str, want: &[Step], got: &[Step], tol: f32) -> f32 {
    assert_eq!(want.len(), got.len(), "{what}: step counts differ");
    let mut worst = 0.0f32;
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let d = max_diff(&w.logits, &g.logits);
        assert!(d <= tol, "{what}, step {i}: logits differ by {d}");
        worst = worst.max(d);
        assert_eq!(w.token, g.token, "{what}, step {i}: tokens differ");
        assert_eq!(w.cache_len, g.cache_len, "{what}, step {i}: cache lengths");
        let (wa, ga) = (flat(&w.attention), flat(&g.attention));
        assert!(!wa.is_empty(), "{what}, step {i}: no attention reported");
        let d = max_diff(&wa, &ga);
        assert!(d <= tol, "{what}, step {i}: attention differs by {d}");
        let d = max_diff(&flat(&w.cross_attention), &flat(&g.cross_attention));
        assert!(d <= tol, "{what}, step {i}: cross-attention differs by {d}");
        assert_eq!(w.stop, g.stop, "{what}, step {i}: stop reasons");
    }
    worst
}

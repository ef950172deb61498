//! Two decoding steps (or two prompt traces) agree: logits, every traced attention's
//! scores and probabilities (masked entries −∞ on both sides), and the residual stream.

use tplay::model::cache::StepOutput;
use tplay::model::forward::HiddenTrace;

use super::max_diff;

/// Largest |x| among the finite values, at least 1: the scale of a relative tolerance.
pub fn largest(x: &[f32]) -> f32 {
    x.iter()
        .filter(|v| v.is_finite())
        .fold(1.0f32, |m, v| m.max(v.abs()))
}

/// Hidden states agree within `tol` relative to their size (a post-norm BatchNorm model's
/// residual stream is far from 1, where f32 itself rounds at ~1e-5 relative).
pub fn hidden_agree(what: &str, want: &[HiddenTrace], got: &[HiddenTrace], tol: f32) {
    assert_eq!(want.len(), got.len(), "{what}: hidden traces");
    for (w, g) in want.iter().zip(got) {
        assert_eq!(w.stack, g.stack, "{what}: hidden trace order");
        assert_eq!(w.states.len(), g.states.len(), "{what}: hidden states");
        for (i, (ws, gs)) in w.states.iter().zip(&g.states).enumerate() {
            assert_eq!(ws.shape, gs.shape, "{what}: hidden state {i} shape");
            let d = max_diff(&ws.data, &gs.data);
            assert!(
                d <= tol * largest(&ws.data),
                "{what}: hidden state {i} differs by {d}"
            );
        }
    }
}

/// Step `got` agrees with step `want` within `tol`: logits, every traced attention's
/// scores (relative to their size) and probabilities, and the hidden states. Returns the
/// largest logit gap.
pub fn steps_agree(what: &str, want: &StepOutput, got: &StepOutput, tol: f32) -> f32 {
    assert_eq!(want.position, got.position, "{what}: positions");
    assert_eq!(want.logits.shape, got.logits.shape, "{what}: logit shapes");
    let d = max_diff(&want.logits.data, &got.logits.data);
    assert!(d <= tol, "{what}: logits differ by {d}");
    assert_eq!(want.attention.len(), got.attention.len(), "{what}: traces");
    for (w, g) in want.attention.iter().zip(&got.attention) {
        assert_eq!((w.site, w.layer), (g.site, g.layer), "{what}: trace order");
        assert_eq!(w.probs.shape, g.probs.shape, "{what}: trace shapes");
        let dp = max_diff(&w.probs.data, &g.probs.data);
        assert!(
            dp <= tol,
            "{what}: {:?} {} probs differ by {dp}",
            w.site,
            w.layer
        );
        let ds = max_diff(&w.scores.data, &g.scores.data);
        assert!(
            ds <= tol * largest(&w.scores.data),
            "{what}: {:?} {} scores differ by {ds}",
            w.site,
            w.layer
        );
    }
    hidden_agree(what, &want.hidden, &got.hidden, tol);
    d
}

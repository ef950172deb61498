//! Backward of the heads (`model/forward.rs`, step 5): the LM head over every position and
//! the classifier over position 0.

use super::ffn::linear_backward;

/// Backward of the LM head `logits (B·T, V) = x (B·T, C) · Wᵀ + b`: adds into `dx`, `dweight`
/// (V, C) — the embedding table's gradient when the head is tied — and `dbias` (V).
#[allow(clippy::too_many_arguments)]
pub fn lm_head_backward(
    dx: &mut [f32],
    dweight: &mut [f32],
    dbias: Option<&mut [f32]>,
    dlogits: &[f32],
    x: &[f32],
    weight: &[f32],
    rows: usize,
    c: usize,
    v: usize,
) {
    linear_backward(Some(dx), dweight, dbias, dlogits, x, weight, rows, c, v);
}

/// Backward of the classifier `class_logits (B, N) = x[:, 0] (B, C) · Wᵀ + b`: only the
/// first position of each sequence gets a gradient.
#[allow(clippy::too_many_arguments)]
pub fn classifier_backward(
    dx: &mut [f32],
    dweight: &mut [f32],
    dbias: &mut [f32],
    dclass: &[f32],
    x: &[f32],
    weight: &[f32],
    b: usize,
    t: usize,
    c: usize,
    n: usize,
) {
    // forward: first (B, C) = x[:, 0]
    let first: Vec<f32> = x
        .chunks_exact(t * c)
        .flat_map(|seq| seq[..c].iter().copied())
        .collect(); // (B, C)
    let mut dfirst = vec![0.0f32; b * c]; // (B, C)
    linear_backward(
        Some(&mut dfirst),
        dweight,
        Some(dbias),
        dclass,
        &first,
        weight,
        b,
        c,
        n,
    );
    for (seq, g) in dx.chunks_exact_mut(t * c).zip(dfirst.chunks_exact(c)) {
        for (a, bv) in seq[..c].iter_mut().zip(g) {
            *a += bv;
        }
    }
}

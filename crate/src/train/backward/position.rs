//! Backward of `model/position.rs`.
//!
//! Sinusoidal positions and ALiBi have no parameters and add constants: their backward
//! passes the gradient through unchanged, so they have no function here. Relative (Shaw)
//! tables get their gradients inside `attention_backward`.

use crate::model::position::rope_angle;

/// Backward of `learned_positions_forward`: `x[b, t] += pos_embed[pos0 + t]`, so
/// `dpos_embed[pos0 + t] += Σ_b dx[b, t]`.
pub fn learned_positions_backward(
    dpos_embed: &mut [f32],
    dx: &[f32],
    pos0: usize,
    b: usize,
    t: usize,
    c: usize,
) {
    assert_eq!(
        dx.len(),
        b * t * c,
        "learned_positions_backward: dx is not (B, T, C)"
    );
    let rows = &mut dpos_embed[pos0 * c..(pos0 + t) * c]; // (T, C)
    for seq in dx.chunks_exact(t * c) {
        for (d, g) in rows.iter_mut().zip(seq) {
            *d += g;
        }
    }
}

/// Backward of `rope_forward`, in place on `dx (B, T, H·D)`: the forward rotates each pair
/// by angle a, `(y₀, y₁) = (x₀ cos a − x₁ sin a, x₀ sin a + x₁ cos a)`; its transpose rotates
/// by −a: `(dx₀, dx₁) = (dy₀ cos a + dy₁ sin a, −dy₀ sin a + dy₁ cos a)`.
pub fn rope_backward(
    dx: &mut [f32],
    pos0: usize,
    b: usize,
    t: usize,
    n_heads: usize,
    d_head: usize,
) {
    let c = n_heads * d_head;
    assert_eq!(dx.len(), b * t * c, "rope_backward: dx is not (B, T, H·D)");
    let half = d_head / 2;
    let mut cs = vec![(0.0f32, 0.0f32); t * half]; // (T, D/2)
    for r in 0..t {
        for p in 0..half {
            cs[r * half + p] = rope_angle(pos0 + r, p, d_head);
        }
    }
    for seq in dx.chunks_exact_mut(t * c) {
        for (r, row) in seq.chunks_exact_mut(c).enumerate() {
            for head in row.chunks_exact_mut(d_head) {
                for (p, pair) in head.chunks_exact_mut(2).enumerate() {
                    let (cos, sin) = cs[r * half + p];
                    let (g0, g1) = (pair[0], pair[1]);
                    pair[0] = g0 * cos + g1 * sin;
                    pair[1] = -g0 * sin + g1 * cos;
                }
            }
        }
    }
}

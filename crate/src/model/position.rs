//! Position encodings (docs/model.md, "Absolute positions" and "Attention").
//!
//! Two schemes add a vector to the embeddings before the first layer:
//! - **sinusoidal** (Vaswani et al. 2017): `PE[t, 2i] = sin(t / 10000^(2i/C))`,
//!   `PE[t, 2i+1] = cos(t / 10000^(2i/C))`;
//! - **learned**: `PE[t] = pos_embed[t]`, a trained table that stops at `max_len`.
//!
//! Three act inside self-attention, on every layer:
//! - **RoPE** (Su et al. 2021): q and k are rotated pair by pair by an angle that grows with
//!   the absolute position, so `q_i · k_j` depends on `i − j` only;
//! - **ALiBi** (Press et al. 2022): a per-head penalty `−m_h |i − j|` added to the scores;
//! - **relative** (Shaw et al. 2018): trained vectors indexed by the clipped distance
//!   `clip(j − i, −K, K)` added to the keys and the values.
//!
//! Every function takes absolute positions (`pos0` is the position of the first row), so a
//! cached decoding step at position `len` computes exactly what the full pass computes there.

/// `PE[pos, dim]` of the sinusoidal table for width `c`: `sin(pos / 10000^(2i/C))` when
/// `dim = 2i`, `cos(pos / 10000^(2i/C))` when `dim = 2i + 1`. Computed in f64, then rounded.
pub fn sinusoidal_value(pos: usize, dim: usize, c: usize) -> f32 {
    let two_i = (dim - dim % 2) as f64;
    let angle = pos as f64 / 10000f64.powf(two_i / c as f64);
    if dim.is_multiple_of(2) {
        angle.sin() as f32
    } else {
        angle.cos() as f32
    }
}

/// `out (T, C) = PE[pos0 .. pos0 + T]`: the sinusoidal table for T consecutive positions.
pub fn sinusoidal_table(out: &mut [f32], pos0: usize, t: usize, c: usize) {
    assert_eq!(out.len(), t * c, "sinusoidal_table: out is not (T, C)");
    for (r, row) in out.chunks_exact_mut(c).enumerate() {
        for (dim, o) in row.iter_mut().enumerate() {
            *o = sinusoidal_value(pos0 + r, dim, c);
        }
    }
}

/// Positions of the sinusoidal table kept per width (`sinusoidal_forward` computes rows
/// past it on the fly).
const KEPT_POSITIONS: usize = 4096;

thread_local! {
    /// Per width C, the rows of `PE` computed so far (P, C): a decoding step adds one row
    /// of the table per token, which would otherwise cost C sines or cosines each time.
    static TABLES: std::cell::RefCell<Vec<(usize, Vec<f32>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `x (B, T, C) += PE[pos0 + t]` for every sequence: adds the sinusoidal encoding of
/// positions `pos0 .. pos0 + T` to each of the B sequences. Rows come from a table kept
/// per width (the same numbers [`sinusoidal_value`] gives, computed once).
/// Backward: none needed: a constant is added, so the gradient passes through unchanged.
pub fn sinusoidal_forward(x: &mut [f32], pos0: usize, b: usize, t: usize, c: usize) {
    assert_eq!(x.len(), b * t * c, "sinusoidal_forward: x is not (B, T, C)");
    let add = |pe: &[f32], x: &mut [f32]| {
        for seq in x.chunks_exact_mut(t * c) {
            for (xv, pv) in seq.iter_mut().zip(pe) {
                *xv += pv;
            }
        }
    };
    if pos0 + t > KEPT_POSITIONS || c == 0 {
        let mut pe = vec![0.0f32; t * c]; // (T, C)
        sinusoidal_table(&mut pe, pos0, t, c);
        add(&pe, x);
        return;
    }
    TABLES.with(|tables| {
        let mut tables = tables.borrow_mut();
        let at = match tables.iter().position(|(w, _)| *w == c) {
            Some(at) => at,
            None => {
                tables.push((c, vec![]));
                tables.len() - 1
            }
        };
        let table = &mut tables[at].1; // (P, C)
        let have = table.len() / c;
        if have < pos0 + t {
            let rows = (pos0 + t).next_power_of_two().clamp(64, KEPT_POSITIONS);
            table.resize(rows * c, 0.0);
            sinusoidal_table(&mut table[have * c..], have, rows - have, c);
        }
        add(&table[pos0 * c..(pos0 + t) * c], x);
    });
}

/// `x (B, T, C) += pos_embed[pos0 + t]` for every sequence, with `pos_embed` (max_len, C).
/// The caller checks `pos0 + T ≤ max_len` (the table has no row beyond it).
/// Backward: `train::backward::position::learned_positions_backward`.
pub fn learned_positions_forward(
    x: &mut [f32],
    pos_embed: &[f32],
    pos0: usize,
    b: usize,
    t: usize,
    c: usize,
) {
    assert_eq!(
        x.len(),
        b * t * c,
        "learned_positions_forward: x is not (B, T, C)"
    );
    let rows = &pos_embed[pos0 * c..(pos0 + t) * c]; // (T, C)
    for seq in x.chunks_exact_mut(t * c) {
        for (xv, pv) in seq.iter_mut().zip(rows) {
            *xv += pv;
        }
    }
}

/// `(cos a, sin a)` of the RoPE angle `a = pos · θ_p` with `θ_p = 10000^(−2p/D)`, for the
/// dimension pair `(2p, 2p + 1)` of a head of D dimensions. Computed in f64, then rounded.
pub fn rope_angle(pos: usize, p: usize, d_head: usize) -> (f32, f32) {
    let theta = 10000f64.powf(-2.0 * p as f64 / d_head as f64);
    let a = pos as f64 * theta;
    (a.cos() as f32, a.sin() as f32)
}

/// Rotate, in place, every head of `x (B, T, H·D)` at positions `pos0 .. pos0 + T`:
/// for each pair p < D/2 with angle a = pos · θ_p,
/// `(x₂ₚ, x₂ₚ₊₁) → (x₂ₚ cos a − x₂ₚ₊₁ sin a, x₂ₚ sin a + x₂ₚ₊₁ cos a)`.
/// A rotation: it keeps the norm of every pair. D must be even.
/// Backward: `train::backward::position::rope_backward`.
pub fn rope_forward(x: &mut [f32], pos0: usize, b: usize, t: usize, n_heads: usize, d_head: usize) {
    let c = n_heads * d_head;
    assert_eq!(x.len(), b * t * c, "rope_forward: x is not (B, T, H·D)");
    assert!(d_head.is_multiple_of(2), "rope_forward: D must be even");
    let half = d_head / 2;
    let mut cs = vec![(0.0f32, 0.0f32); t * half]; // (T, D/2)
    for r in 0..t {
        for p in 0..half {
            cs[r * half + p] = rope_angle(pos0 + r, p, d_head);
        }
    }
    for seq in x.chunks_exact_mut(t * c) {
        for (r, row) in seq.chunks_exact_mut(c).enumerate() {
            for head in row.chunks_exact_mut(d_head) {
                for (p, pair) in head.chunks_exact_mut(2).enumerate() {
                    let (cos, sin) = cs[r * half + p];
                    let (x0, x1) = (pair[0], pair[1]);
                    pair[0] = x0 * cos - x1 * sin;
                    pair[1] = x0 * sin + x1 * cos;
                }
            }
        }
    }
}

/// ALiBi slopes `m_h` for `n` heads (Press et al. 2022). If n is a power of two,
/// `m_h = 2^(−8(h+1)/n)`; otherwise, with n' = 2^⌊log₂ n⌋, the n' slopes for n' heads
/// followed by the slopes for 2n' heads at even indices (0, 2, 4, …), the first n − n'.
pub fn alibi_slopes(n: usize) -> Vec<f32> {
    fn pow2(n: usize) -> Vec<f64> {
        (0..n)
            .map(|h| 2f64.powf(-8.0 * (h + 1) as f64 / n as f64))
            .collect()
    }
    if n == 0 {
        return vec![];
    }
    let n2 = 1usize << (usize::BITS - 1 - n.leading_zeros()); // largest power of two ≤ n
    let mut slopes = pow2(n2);
    if n2 < n {
        slopes.extend(pow2(2 * n2).into_iter().step_by(2).take(n - n2));
    }
    slopes.into_iter().map(|m| m as f32).collect()
}

/// The ALiBi score bias of a query at position `q_pos` and a key at `k_pos`:
/// `−m · |q_pos − k_pos|`.
pub fn alibi_bias(slope: f32, q_pos: usize, k_pos: usize) -> f32 {
    -slope * q_pos.abs_diff(k_pos) as f32
}

/// Row of the Shaw tables (`rel_k`, `rel_v`, each (2K+1, D)) used by a query at position
/// `q_pos` and a key at `k_pos`: `clip(k_pos − q_pos, −K, K) + K`.
pub fn relative_index(q_pos: usize, k_pos: usize, max_distance: usize) -> usize {
    let k = max_distance as i64;
    ((k_pos as i64 - q_pos as i64).clamp(-k, k) + k) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinusoidal_values_match_the_formula_at_hand_computed_points() {
        // Position 0: sin 0 = 0 on even dimensions, cos 0 = 1 on odd ones.
        assert_eq!(sinusoidal_value(0, 0, 16), 0.0);
        assert_eq!(sinusoidal_value(0, 1, 16), 1.0);
        // Position 1, dimensions 0 and 1: angle 1 / 10000^0 = 1 rad.
        assert!((sinusoidal_value(1, 0, 16) - 0.841_470_96).abs() < 1e-7);
        assert!((sinusoidal_value(1, 1, 16) - 0.540_302_3).abs() < 1e-7);
        // Position 3, dimensions 4 and 5 of C = 8: angle 3 / 10000^(4/8) = 0.03 rad.
        assert!((sinusoidal_value(3, 4, 8) - 0.029_995_5).abs() < 1e-7);
        assert!((sinusoidal_value(3, 5, 8) - 0.999_550_03).abs() < 1e-7);
    }

    #[test]
    fn sinusoidal_forward_adds_the_table_to_every_sequence() {
        // Inside the kept table, growing it, and past its end.
        for &(pos0, b, t, c) in &[
            (5, 2, 3, 4),
            (60, 1, 10, 4),
            (0, 2, 130, 6),
            (4094, 2, 5, 4),
        ] {
            let mut x = vec![1.0f32; b * t * c]; // (B, T, C)
            sinusoidal_forward(&mut x, pos0, b, t, c);
            for s in 0..b {
                for r in 0..t {
                    for d in 0..c {
                        let want = 1.0 + sinusoidal_value(pos0 + r, d, c);
                        assert_eq!(x[(s * t + r) * c + d], want, "({pos0}, {t}, {c})");
                    }
                }
            }
        }
    }

    #[test]
    fn learned_positions_read_rows_from_pos0() {
        let (t, c) = (2, 3);
        let table: Vec<f32> = (0..5 * c).map(|i| i as f32).collect(); // (max_len 5, C)
        let mut x = vec![0.0f32; t * c]; // (1, T, C)
        learned_positions_forward(&mut x, &table, 2, 1, t, c);
        assert_eq!(x, vec![6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
    }

    #[test]
    fn rope_preserves_the_norm_of_every_head() {
        let (t, h, d) = (5, 2, 6);
        let orig: Vec<f32> = (0..t * h * d)
            .map(|i| ((i * 7 % 11) as f32) - 5.0)
            .collect();
        let mut x = orig.clone(); // (1, T, H·D)
        rope_forward(&mut x, 3, 1, t, h, d);
        assert_ne!(x, orig, "positions 3.. must rotate something");
        for (a, b) in orig.chunks(d).zip(x.chunks(d)) {
            let na: f32 = a.iter().map(|v| v * v).sum();
            let nb: f32 = b.iter().map(|v| v * v).sum();
            assert!((na - nb).abs() < 1e-4 * na.max(1.0), "{na} vs {nb}");
        }
    }

    #[test]
    fn rope_at_position_zero_is_the_identity_and_scores_depend_on_distance_only() {
        let (h, d) = (1, 4);
        let q = [0.3f32, -1.2, 0.7, 0.5];
        let k = [1.1f32, 0.4, -0.6, 0.9];
        let mut q0 = q.to_vec();
        rope_forward(&mut q0, 0, 1, 1, h, d);
        assert_eq!(q0, q.to_vec());
        let score = |qp: usize, kp: usize| {
            let mut qr = q.to_vec();
            let mut kr = k.to_vec();
            rope_forward(&mut qr, qp, 1, 1, h, d);
            rope_forward(&mut kr, kp, 1, 1, h, d);
            qr.iter().zip(&kr).map(|(a, b)| a * b).sum::<f32>()
        };
        assert!((score(5, 2) - score(13, 10)).abs() < 1e-5);
        assert!((score(2, 5) - score(9, 12)).abs() < 1e-5);
    }

    #[test]
    fn rope_rotates_the_first_pair_by_the_position_in_radians() {
        // θ_0 = 1: at position 2 the pair (1, 0) becomes (cos 2, sin 2).
        let mut x = vec![1.0f32, 0.0];
        rope_forward(&mut x, 2, 1, 1, 1, 2);
        assert!((x[0] - (-0.416_146_84)).abs() < 1e-7);
        assert!((x[1] - 0.909_297_4).abs() < 1e-7);
    }

    #[test]
    fn alibi_slopes_for_eight_heads_are_powers_of_one_half() {
        // 2^(−8(h+1)/8) = 1/2, 1/4, …, 1/256.
        let want = [
            0.5,
            0.25,
            0.125,
            0.0625,
            0.031_25,
            0.015_625,
            0.007_812_5,
            0.003_906_25,
        ];
        assert_eq!(alibi_slopes(8), want.to_vec());
    }

    #[test]
    fn alibi_slopes_for_three_and_six_heads_follow_the_papers_rule() {
        // n = 3: n' = 2 gives 2^-4, 2^-8; then the slopes of 4 heads (2^-2, 2^-4, 2^-6,
        // 2^-8) at even indices, first one: 2^-2.
        assert_eq!(alibi_slopes(3), vec![0.0625, 0.003_906_25, 0.25]);
        // n = 6: n' = 4 gives 2^-2, 2^-4, 2^-6, 2^-8; the slopes of 8 heads (2^-1 … 2^-8)
        // at even indices are 2^-1, 2^-3, 2^-5, 2^-7, first two: 2^-1, 2^-3.
        assert_eq!(
            alibi_slopes(6),
            vec![0.25, 0.0625, 0.015_625, 0.003_906_25, 0.5, 0.125]
        );
        // n = 1: 2^-8.
        assert_eq!(alibi_slopes(1), vec![0.003_906_25]);
    }

    #[test]
    fn alibi_bias_penalises_distance_in_both_directions() {
        assert_eq!(alibi_bias(0.5, 7, 7), 0.0);
        assert_eq!(alibi_bias(0.5, 7, 3), -2.0);
        assert_eq!(alibi_bias(0.5, 3, 7), -2.0);
    }

    #[test]
    fn relative_index_clips_the_signed_distance() {
        let k = 3;
        assert_eq!(relative_index(5, 5, k), 3);
        assert_eq!(relative_index(5, 6, k), 4);
        assert_eq!(relative_index(5, 4, k), 2);
        assert_eq!(relative_index(0, 20, k), 6);
        assert_eq!(relative_index(20, 0, k), 0);
    }
}

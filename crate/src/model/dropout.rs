//! Inverted dropout (docs/model.md, "Dropout"): the multipliers a train-mode pass draws.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Inverted-dropout multipliers for n elements: each is 0 with probability p (a uniform
/// draw in [0, 1) below p) and 1/(1 − p) otherwise, drawn in order from `rng`.
/// Backward: the same multipliers are applied to the gradient (`train::backward::model::sublayer_backward`, `ffn_backward`, `attention_backward`).
pub fn dropout_mask(rng: &mut ChaCha8Rng, p: f32, n: usize) -> Vec<f32> {
    let keep = 1.0 / (1.0 - p);
    (0..n)
        .map(|_| if rng.random::<f32>() < p { 0.0 } else { keep })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn dropout_mask_keeps_about_one_minus_p_and_scales_survivors() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let m = dropout_mask(&mut rng, 0.25, 10_000);
        let kept = m.iter().filter(|&&x| x != 0.0).count();
        assert!((7_200..7_800).contains(&kept), "{kept}");
        assert!(m.iter().all(|&x| x == 0.0 || (x - 1.0 / 0.75).abs() < 1e-7));
    }
}

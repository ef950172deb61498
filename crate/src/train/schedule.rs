//! The Noam learning-rate schedule (Vaswani et al. 2017, §5.3):
//! `lr = factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)` — a linear warmup
//! for `warmup` steps, then decay with the inverse square root of the step. Steps count
//! from 1; the peak, at `step = warmup`, is `factor · (d_model · warmup)^−0.5`.

/// The learning rate of step `step` (≥ 1; step 0 is treated as step 1).
pub fn noam_lr(step: u64, d_model: usize, warmup: u64, factor: f32) -> f32 {
    let step = step.max(1) as f64;
    let warmup = warmup.max(1) as f64;
    let lr =
        factor as f64 * (d_model as f64).powf(-0.5) * step.powf(-0.5).min(step * warmup.powf(-1.5));
    lr as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noam_warms_up_linearly_peaks_at_warmup_then_decays_as_inverse_sqrt() {
        let (c, w, f) = (512, 4000, 1.0);
        // The paper's numbers: peak 512^−0.5 · 4000^−0.5 ≈ 7.0e-4.
        let peak = noam_lr(4000, c, w, f);
        assert!((peak - 6.987_712e-4).abs() < 1e-9, "{peak}");
        // Linear during warmup.
        assert!((noam_lr(1000, c, w, f) * 4.0 - peak).abs() < 1e-9);
        // Inverse square root after: 4× the steps halves the rate.
        assert!((noam_lr(16_000, c, w, f) * 2.0 - peak).abs() < 1e-9);
        assert!(noam_lr(3999, c, w, f) < peak && noam_lr(4001, c, w, f) < peak);
        // factor scales everything.
        assert!((noam_lr(10, c, w, 2.0) - 2.0 * noam_lr(10, c, w, 1.0)).abs() < 1e-12);
    }
}

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

/// The steps of a `steps`-step run's cooldown when it takes `share` (0 to 1) of them: the
/// nearest whole number, computed from the f32 share as it is stored (the page draws the
/// planned rate with the same rule).
pub fn cooldown_steps(share: f32, steps: u64) -> u64 {
    ((share.clamp(0.0, 1.0) as f64) * steps as f64).round() as u64
}

/// The cooldown's share of the rate at step `step` (from 1) of a `steps`-step run whose
/// last `cooldown` steps bring the rate down in a straight line: 1 before the cooldown,
/// then `(steps − step + 1) / cooldown`, so the first cooldown step keeps the whole rate and
/// the last keeps `1 / cooldown` of it. `cooldown` 0 is no cooldown.
pub fn cooldown_scale(step: u64, steps: u64, cooldown: u64) -> f32 {
    let start = steps.saturating_sub(cooldown);
    if cooldown == 0 || step <= start {
        return 1.0;
    }
    (steps.saturating_sub(step) + 1).min(cooldown) as f32 / cooldown as f32
}

/// The step with the highest learning rate among steps 1..=`last_step`, in closed form:
/// the rate rises linearly up to `warmup` and falls after it, so the peak is at
/// `min(warmup, last_step)` (with `warmup` 0 treated as 1, like `noam_lr`).
pub fn noam_peak_step(warmup: u64, last_step: u64) -> u64 {
    warmup.max(1).min(last_step.max(1))
}

/// The Noam curve (factor 1) for `d_model` and `warmup` as the page draws it, over a run
/// of `last_step` steps whose last `cooldown_steps` bring the rate down in a straight line:
/// the rate at `points` evenly spaced steps from 1 to `last_step` (and, with a cooldown, at
/// the last step before it bends), and the peak.
#[derive(Clone, Debug, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct Schedule {
    pub d_model: usize,
    pub warmup: u64,
    /// The steps at the end of the run that cool down (0: none).
    pub cooldown_steps: u64,
    pub steps: Vec<u64>,
    pub lr: Vec<f32>,
    pub peak_step: u64,
    pub peak_lr: f32,
}

/// The rate a trainer uses at `step` of a `steps`-step run: Noam's (or `constant`), times
/// the cooldown's share ([`cooldown_scale`]).
pub fn scheduled_lr(
    step: u64,
    d_model: usize,
    warmup: u64,
    factor: f32,
    constant: Option<f32>,
    steps: u64,
    cooldown_steps: u64,
) -> f32 {
    let base = constant.unwrap_or_else(|| noam_lr(step, d_model, warmup, factor));
    // Without a cooldown the scale is exactly 1, which leaves every rate's bits as they are.
    base * cooldown_scale(step, steps, cooldown_steps)
}

/// [`Schedule`] for steps 1..=`last_step` (≥ 2) at `points` (≥ 2) evenly spaced steps, the
/// last `share` (0 to 1) of them cooling down.
pub fn noam_curve(
    d_model: usize,
    warmup: u64,
    last_step: u64,
    points: u64,
    share: f32,
) -> Schedule {
    let (last, points) = (last_step.max(2), points.max(2));
    let cooldown_steps = cooldown_steps(share, last);
    let mut steps: Vec<u64> = (0..points)
        .map(|i| 1 + i * (last - 1) / (points - 1))
        .collect();
    if cooldown_steps > 0 && cooldown_steps < last {
        // The bend: the last step at the whole rate, drawn exactly.
        steps.push(last - cooldown_steps + 1);
        crate::sorting::sort_by(&mut steps, Ord::cmp);
        steps.dedup();
    }
    let rate = |s: u64| scheduled_lr(s, d_model, warmup, 1.0, None, last, cooldown_steps);
    let lr = steps.iter().map(|&s| rate(s)).collect();
    // Without a cooldown, or with one that starts after the warmup, the peak has a closed
    // form; a cooldown that starts earlier multiplies the rising rate by a falling line,
    // so every step is looked at.
    let peak_step = if cooldown_steps == 0 || last - cooldown_steps + 1 >= warmup {
        noam_peak_step(warmup, last)
    } else {
        (2..=last)
            .fold((1, rate(1)), |(best, top), s| match rate(s) {
                r if r > top => (s, r),
                _ => (best, top),
            })
            .0
    };
    Schedule {
        d_model,
        warmup,
        cooldown_steps,
        steps,
        lr,
        peak_step,
        peak_lr: rate(peak_step),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cooled_curve_bends_where_the_cooldown_starts_and_keeps_the_highest_rate_as_its_peak() {
        for (c, w, last, share) in [
            (32, 4000, 20_000, 0.3),
            (32, 4000, 5000, 0.5),
            (64, 100, 400, 1.0),
        ] {
            let curve = noam_curve(c, w, last, 240, share);
            let cool = cooldown_steps(share, last);
            assert_eq!(curve.cooldown_steps, cool);
            assert!(
                curve.steps.contains(&(last - cool + 1)),
                "the bend is a point"
            );
            for (&s, &lr) in curve.steps.iter().zip(&curve.lr) {
                assert_eq!(lr, noam_lr(s, c, w, 1.0) * cooldown_scale(s, last, cool));
            }
            let best = (1..=last)
                .map(|s| noam_lr(s, c, w, 1.0) * cooldown_scale(s, last, cool))
                .fold(f32::MIN, f32::max);
            assert_eq!(
                curve.peak_lr, best,
                "d_model {c}, warmup {w}, last {last}, share {share}"
            );
        }
    }

    #[test]
    fn the_cooldown_falls_in_a_straight_line_over_the_last_steps() {
        // 10 steps, the last 4 cooled: steps 7..=10 keep 4/4, 3/4, 2/4, 1/4 of the rate.
        let got: Vec<f32> = (1..=10).map(|s| cooldown_scale(s, 10, 4)).collect();
        assert_eq!(got, [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25]);
        assert_eq!(cooldown_scale(7, 10, 0), 1.0);
        // A cooldown as long as the run starts at once; steps past the run stay at 1/cooldown.
        assert_eq!(cooldown_scale(1, 4, 4), 1.0);
        assert_eq!(cooldown_scale(2, 4, 4), 0.75);
        assert_eq!(cooldown_scale(9, 4, 4), 0.25);
    }

    #[test]
    fn a_share_of_the_run_rounds_to_the_nearest_step_from_the_stored_f32() {
        assert_eq!(cooldown_steps(0.4, 1000), 400);
        // 0.7 as an f32 is 0.69999998…: 699.99998 rounds to 700, where truncating gives 699.
        assert_eq!(cooldown_steps(0.7, 1000), 700);
        assert_eq!(cooldown_steps(0.0, 1000), 0);
        assert_eq!(cooldown_steps(1.0, 7), 7);
        assert_eq!(cooldown_steps(0.5, 3), 2);
    }

    #[test]
    fn the_closed_form_peak_is_the_highest_rate_of_every_step() {
        for (c, w, last) in [(32, 4000, 20_000), (512, 1, 50), (64, 300, 100), (16, 7, 7)] {
            let (mut best_step, mut best) = (1, f32::MIN);
            for s in 1..=last {
                let v = noam_lr(s, c, w, 1.0);
                if v > best {
                    (best_step, best) = (s, v);
                }
            }
            let curve = noam_curve(c, w, last, 240, 0.0);
            assert_eq!(
                curve.peak_step, best_step,
                "d_model {c}, warmup {w}, last {last}"
            );
            assert_eq!(curve.peak_lr, best);
        }
    }

    #[test]
    fn the_curve_spans_step_one_to_the_last_evenly() {
        let s = noam_curve(32, 4000, 20_000, 5, 0.0);
        assert_eq!(s.steps, vec![1, 5000, 10_000, 15_000, 20_000]);
        assert_eq!(s.lr[2], noam_lr(10_000, 32, 4000, 1.0));
        // The textbook peak (d_model · warmup)^−0.5 at step = warmup.
        assert_eq!(s.peak_step, 4000);
        assert!((s.peak_lr as f64 - (32.0f64 * 4000.0).powf(-0.5)).abs() < 1e-9);
    }

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

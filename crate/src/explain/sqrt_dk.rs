//! Why scores are divided by √d_k, measured rather than asserted.
//!
//! Draw a query q and a key k of d_k entries, each entry independent with mean 0 and
//! variance 1. Then `q·k = Σ_d q_d k_d` is a sum of d_k independent terms of variance 1, so
//! `Var(q·k) = d_k`: the raw scores spread wider as heads get wider, and a softmax over
//! them puts nearly all its weight on one key (its entropy falls toward 0, its largest
//! probability climbs toward 1). Dividing by √d_k gives `Var(q·k / √d_k) = 1` at every
//! width, and the softmax keeps the same spread.
//!
//! [`score_scaling`] samples this with a seeded generator, so the page and the tests see
//! the same numbers.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Error, Result};

/// The widths the page plots: 1, 2, 4, …, 512.
pub const WIDTHS: [usize; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// The most (q, k) pairs one width may be sampled with.
pub const MAX_SAMPLES: usize = 200_000;
/// The most keys one softmax row may have.
pub const MAX_KEYS: usize = 1024;

/// What was measured at one width d_k.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WidthStats {
    pub d_k: usize,
    /// Sample mean of q·k (near 0).
    pub mean_raw: f64,
    /// Sample variance of q·k (near d_k).
    pub var_raw: f64,
    /// Sample variance of q·k / √d_k (near 1).
    pub var_scaled: f64,
    /// Mean entropy (nats) of softmax_j(q·k_j) over a row of `keys` keys.
    pub entropy_raw: f64,
    /// The same with the scores divided by √d_k.
    pub entropy_scaled: f64,
    /// Mean largest probability of a row, unscaled scores.
    pub max_prob_raw: f64,
    /// The same with the scores divided by √d_k.
    pub max_prob_scaled: f64,
}

/// The whole measurement: one [`WidthStats`] per width.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreScaling {
    /// (q, k) pairs sampled per width for the variances.
    pub samples: usize,
    /// Keys per softmax row.
    pub keys: usize,
    /// Softmax rows per width (each a fresh q and `keys` fresh keys).
    pub rows: usize,
    pub seed: u64,
    /// ln(keys): the entropy of a uniform row, the most a row can have.
    pub max_entropy: f64,
    pub widths: Vec<WidthStats>,
}

/// One draw from the standard normal distribution (Box–Muller, in f64).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // 1 − u lies in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `out (n)` filled with standard normal draws.
fn normals(rng: &mut ChaCha8Rng, out: &mut [f64]) {
    for x in out.iter_mut() {
        *x = normal(rng);
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Entropy (nats) and largest probability of softmax(scores).
pub fn softmax_spread(scores: &[f64]) -> (f64, f64) {
    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
    let z: f64 = e.iter().sum();
    let mut entropy = 0.0;
    let mut top = 0.0f64;
    for x in &e {
        let p = x / z;
        if p > 0.0 {
            entropy -= p * p.ln();
        }
        top = top.max(p);
    }
    (entropy, top)
}

/// Sample mean and (unbiased) variance.
fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// For every width in `widths`: `samples` independent (q, k) pairs with N(0, 1) entries
/// give the variance of q·k before and after dividing by √d_k; `rows` softmax rows of
/// `keys` keys each give the mean entropy and largest probability, unscaled and scaled.
/// Each width draws from its own generator seeded by (`seed`, d_k), so adding a width
/// changes no other width's numbers.
pub fn score_scaling(
    widths: &[usize],
    samples: usize,
    keys: usize,
    rows: usize,
    seed: u64,
) -> Result<ScoreScaling> {
    if !(2..=MAX_SAMPLES).contains(&samples) {
        return Err(Error::Input(format!(
            "√d_k: samples must be from 2 to {MAX_SAMPLES}, got {samples}"
        )));
    }
    if !(2..=MAX_KEYS).contains(&keys) {
        return Err(Error::Input(format!(
            "√d_k: keys per row must be from 2 to {MAX_KEYS}, got {keys}"
        )));
    }
    if rows == 0 || rows > 10_000 {
        return Err(Error::Input(format!(
            "√d_k: rows must be from 1 to 10000, got {rows}"
        )));
    }
    if let Some(&w) = widths.iter().find(|&&w| w == 0 || w > 4096) {
        return Err(Error::Input(format!(
            "√d_k: every width must be from 1 to 4096, got {w}"
        )));
    }
    let mut out = Vec::with_capacity(widths.len());
    for &d in widths {
        let mut rng =
            ChaCha8Rng::seed_from_u64(seed ^ (d as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let root = (d as f64).sqrt();
        let (mut q, mut k) = (vec![0.0; d], vec![0.0; d]); // (D), (D)
        let raw: Vec<f64> = (0..samples) // (samples)
            .map(|_| {
                normals(&mut rng, &mut q);
                normals(&mut rng, &mut k);
                dot(&q, &k)
            })
            .collect();
        let scaled: Vec<f64> = raw.iter().map(|s| s / root).collect();
        let (mean_raw, var_raw) = mean_var(&raw);
        let (_, var_scaled) = mean_var(&scaled);

        let mut ks = vec![0.0; keys * d]; // (keys, D)
        let (mut e_raw, mut e_sc, mut m_raw, mut m_sc) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..rows {
            normals(&mut rng, &mut q);
            normals(&mut rng, &mut ks);
            let s: Vec<f64> = ks.chunks_exact(d).map(|kj| dot(&q, kj)).collect(); // (keys)
            let (e, m) = softmax_spread(&s);
            e_raw += e;
            m_raw += m;
            let s: Vec<f64> = s.iter().map(|x| x / root).collect();
            let (e, m) = softmax_spread(&s);
            e_sc += e;
            m_sc += m;
        }
        let n = rows as f64;
        out.push(WidthStats {
            d_k: d,
            mean_raw,
            var_raw,
            var_scaled,
            entropy_raw: e_raw / n,
            entropy_scaled: e_sc / n,
            max_prob_raw: m_raw / n,
            max_prob_scaled: m_sc / n,
        });
    }
    Ok(ScoreScaling {
        samples,
        keys,
        rows,
        seed,
        max_entropy: (keys as f64).ln(),
        widths: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_score_variance_is_within_ten_percent_of_d_k_and_scaled_variance_of_one() {
        let r = score_scaling(&WIDTHS, 10_000, 16, 200, 7).unwrap();
        for w in &r.widths {
            let d = w.d_k as f64;
            assert!(
                (w.var_raw - d).abs() < 0.1 * d,
                "d_k {}: Var(q·k) = {}",
                w.d_k,
                w.var_raw
            );
            assert!(
                (w.var_scaled - 1.0).abs() < 0.1,
                "d_k {}: Var(q·k/√d_k) = {}",
                w.d_k,
                w.var_scaled
            );
            assert!(w.mean_raw.abs() < 0.05 * d.sqrt(), "mean {}", w.mean_raw);
        }
    }

    #[test]
    fn without_scaling_wider_heads_saturate_the_softmax_and_with_it_they_do_not() {
        let r = score_scaling(&WIDTHS, 100, 16, 500, 3).unwrap();
        let first = &r.widths[0];
        let last = r.widths.last().unwrap();
        // Unscaled at d_k = 512 a row of 16 keys is nearly one-hot (uniform would be ln 16 ≈ 2.77).
        assert!(
            last.entropy_raw < 0.25,
            "d_k 512 unscaled: {}",
            last.entropy_raw
        );
        assert!(
            last.max_prob_raw > 0.9,
            "d_k 512 unscaled: {}",
            last.max_prob_raw
        );
        assert!(
            last.max_prob_scaled < 0.4,
            "d_k 512 scaled: {}",
            last.max_prob_scaled
        );
        // Unscaled, each doubling of d_k makes the rows sharper.
        for pair in r.widths.windows(2) {
            assert!(pair[1].entropy_raw < pair[0].entropy_raw + 0.02);
        }
        // Scaled, the spread is the same at every width (within sampling noise).
        for w in &r.widths {
            assert!(
                (w.entropy_scaled - first.entropy_scaled).abs() < 0.1,
                "d_k {}: {} vs {}",
                w.d_k,
                w.entropy_scaled,
                first.entropy_scaled
            );
            assert!(w.entropy_scaled <= r.max_entropy);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_numbers_and_widths_do_not_disturb_each_other() {
        let a = score_scaling(&[4, 64], 500, 8, 10, 11).unwrap();
        let b = score_scaling(&[64], 500, 8, 10, 11).unwrap();
        assert_eq!(a.widths[1], b.widths[0]);
        let c = score_scaling(&[64], 500, 8, 10, 12).unwrap();
        assert_ne!(b.widths[0], c.widths[0]);
    }

    #[test]
    fn softmax_spread_of_equal_scores_is_uniform() {
        let (e, m) = softmax_spread(&[2.0; 4]);
        assert!((e - 4f64.ln()).abs() < 1e-12);
        assert!((m - 0.25).abs() < 1e-12);
    }

    #[test]
    fn out_of_range_requests_are_refused_by_name() {
        let e = score_scaling(&[0], 100, 8, 1, 0).unwrap_err().to_string();
        assert!(e.contains("width"), "{e}");
        let e = score_scaling(&[4], 1, 8, 1, 0).unwrap_err().to_string();
        assert!(e.contains("samples"), "{e}");
        let e = score_scaling(&[4], 100, 1, 1, 0).unwrap_err().to_string();
        assert!(e.contains("keys"), "{e}");
    }
}

//! Decoding strategies over one logits vector: greedy, temperature, top-k, top-p.
//!
//! A sampling step goes, in this order (as most libraries do):
//!
//! 1. **temperature** τ: `p_i ∝ exp((l_i − max l) / τ)`. τ = 1 leaves the model's
//!    distribution alone, τ < 1 sharpens it, τ > 1 flattens it, and τ = 0 is greedy.
//! 2. **top-k**: keep the k most probable tokens (ties broken towards the lower id), zero
//!    the rest, renormalise.
//! 3. **top-p** (nucleus): sort what is left by probability (ties towards the lower id)
//!    and keep the smallest prefix whose mass reaches p; zero the rest, renormalise.
//! 4. **draw**: one uniform number u ∈ [0, 1) from the caller's generator; the token is
//!    the first, in id order, whose cumulative probability exceeds u.
//!
//! Every probability is computed in f64 so that the filters do not depend on the order
//! in which f32 rounding happens to fall.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Mass comparisons in top-p allow this much rounding: a prefix whose mass is within
/// `TOP_P_TOLERANCE` of p counts as reaching p, so that `[0.5, 0.3, 0.2]` with p = 0.8
/// keeps two tokens, not three, whatever the rounding of 0.5 + 0.3.
pub const TOP_P_TOLERANCE: f64 = 1e-6;

/// The knobs of sampling. `temperature = 0` means greedy; `None` filters are off.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// τ ≥ 0.
    pub temperature: f32,
    /// Keep only the k most probable tokens (k ≥ 1).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Keep the smallest set of most probable tokens whose mass reaches p (0 < p ≤ 1).
    #[serde(default)]
    pub top_p: Option<f32>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 1.0,
            top_k: None,
            top_p: None,
        }
    }
}

impl Sampling {
    /// Reject values no distribution can be built from, naming the knob.
    pub fn validate(&self) -> Result<()> {
        if !self.temperature.is_finite() || self.temperature < 0.0 {
            return Err(Error::Input(format!(
                "temperature must be a finite number ≥ 0, got {}",
                self.temperature
            )));
        }
        if self.top_k == Some(0) {
            return Err(Error::Input("top_k must be at least 1, got 0".into()));
        }
        if let Some(p) = self.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return Err(Error::Input(format!("top_p must be in (0, 1], got {p}")));
            }
        }
        Ok(())
    }

    /// True when this configuration always picks the most probable token.
    pub fn is_greedy(&self) -> bool {
        self.temperature == 0.0 || self.top_k == Some(1)
    }
}

/// Fail on NaN or +∞ logits (a broken model), naming the first bad position.
/// −∞ is allowed: it is how a token is forbidden.
pub fn check_logits(logits: &[f32]) -> Result<()> {
    if logits.is_empty() {
        return Err(Error::Input(
            "logits are empty: the vocabulary has no tokens".into(),
        ));
    }
    if let Some(i) = logits
        .iter()
        .position(|x| x.is_nan() || *x == f32::INFINITY)
    {
        return Err(Error::Other(format!(
            "logit of token {i} is {}: the model produced a value no distribution can use",
            logits[i]
        )));
    }
    if logits.iter().all(|x| *x == f32::NEG_INFINITY) {
        return Err(Error::Other(
            "every logit is −∞: no token can be chosen".into(),
        ));
    }
    Ok(())
}

/// The most probable token; ties go to the lowest id.
pub fn argmax(logits: &[f32]) -> Result<u32> {
    check_logits(logits)?;
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    Ok(best as u32)
}

/// `softmax(l / τ)` over the whole vocabulary, in f64. τ must be > 0.
pub fn softmax_with_temperature(logits: &[f32], temperature: f64) -> Vec<f64> {
    let max = crate::lanes::max_of(logits) as f64;
    // (l − max) ≤ 0, so dividing by a tiny τ gives −huge or 0, never ∞ − ∞.
    let e: Vec<f64> = logits
        .iter()
        .map(|&l| ((l as f64 - max) / temperature).exp())
        .collect(); // (V)
    let z: f64 = e.iter().sum();
    e.into_iter().map(|x| x / z).collect() // (V)
}

/// The model's own distribution, `softmax(l)` (τ = 1), as f32 for display.
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    softmax_and_lse(logits).0 // (V)
}

/// `softmax(l)` as f32 and the log-normaliser `max + ln Σ exp(l − max)` of [`log_softmax`]
/// from one pass of exponentials: `l[i] − lse` is `log_softmax(l)[i]` to the bit, and the
/// probabilities are `softmax_with_temperature(l, 1)`'s as f32 (dividing by τ = 1 is exact).
pub fn softmax_and_lse(logits: &[f32]) -> (Vec<f32>, f64) {
    let max = crate::lanes::max_of(logits) as f64;
    let e: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp()).collect(); // (V)
    let z: f64 = e.iter().sum();
    let probs = e.into_iter().map(|x| (x / z) as f32).collect(); // (V)
    (probs, max + z.ln())
}

/// `log softmax(l)` in f64: the per-token log-probabilities beam search adds up.
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = crate::lanes::max_of(logits) as f64;
    let lse = max
        + logits
            .iter()
            .map(|&l| (l as f64 - max).exp())
            .sum::<f64>()
            .ln();
    logits.iter().map(|&l| l as f64 - lse).collect() // (V)
}

/// Token ids ordered by decreasing probability, ties towards the lower id.
pub fn rank(probs: &[f64]) -> Vec<usize> {
    // A stable order on the probability alone keeps equal ones in id order.
    crate::sorting::stable_order(probs.len(), &|a, b| probs[b].total_cmp(&probs[a]))
}

/// The first `k` ids of [`rank`] (all of them when `k` ≥ V), in one pass over the
/// vocabulary instead of sorting all of it: the best `k` so far are kept in order, and an
/// id enters before the first kept id it beats (`total_cmp`, strictly), so equal
/// probabilities stay in id order.
pub fn top_ranked(probs: &[f64], k: usize) -> Vec<usize> {
    if k >= probs.len() {
        return rank(probs);
    }
    let mut best: Vec<usize> = Vec::with_capacity(k + 1);
    for (i, p) in probs.iter().enumerate() {
        let beats = |&b: &usize| p.total_cmp(&probs[b]).is_gt();
        if best.len() == k && !best.last().is_some_and(beats) {
            continue;
        }
        let at = best.iter().position(beats).unwrap_or(best.len());
        best.insert(at, i);
        best.truncate(k);
    }
    best
}

/// Keep the `k` most probable tokens (ties towards the lower id) and renormalise.
pub fn top_k_filter(probs: &mut [f64], k: usize) {
    if k >= probs.len() {
        return;
    }
    for &i in &rank(probs)[k..] {
        probs[i] = 0.0;
    }
    renormalise(probs);
}

/// Keep the smallest set of most probable tokens whose mass reaches `p` (within
/// [`TOP_P_TOLERANCE`]) and renormalise. Ties are taken towards the lower id, so with
/// four tokens of 0.25 and p = 0.5 tokens 0 and 1 stay. Tokens of probability 0 are
/// never kept, so p = 1 keeps exactly the tokens that can occur.
pub fn top_p_filter(probs: &mut [f64], p: f64) {
    let total: f64 = probs.iter().sum();
    let mut mass = 0.0;
    let mut reached = false;
    for i in rank(probs) {
        if reached || probs[i] == 0.0 {
            probs[i] = 0.0;
            continue;
        }
        mass += probs[i] / total;
        reached = mass >= p - TOP_P_TOLERANCE;
    }
    renormalise(probs);
}

fn renormalise(probs: &mut [f64]) {
    let z: f64 = probs.iter().sum();
    if z > 0.0 {
        probs.iter_mut().for_each(|p| *p /= z);
    }
}

/// The distribution a sampling step draws from, over the whole vocabulary (filtered
/// tokens have probability 0). Greedy configurations give a one-hot vector.
pub fn sampling_distribution(logits: &[f32], s: &Sampling) -> Result<Vec<f64>> {
    s.validate()?;
    check_logits(logits)?;
    if s.temperature == 0.0 {
        let mut one_hot = vec![0.0; logits.len()]; // (V)
        one_hot[argmax(logits)? as usize] = 1.0;
        return Ok(one_hot);
    }
    let mut probs = softmax_with_temperature(logits, s.temperature as f64); // (V)
    if let Some(k) = s.top_k {
        top_k_filter(&mut probs, k);
    }
    if let Some(p) = s.top_p {
        top_p_filter(&mut probs, p as f64);
    }
    Ok(probs)
}

/// Draw one token from `probs` (which need not sum exactly to one) with one uniform
/// number from `rng`: the first token, in id order, whose cumulative mass exceeds u.
pub fn draw<R: RngExt + ?Sized>(probs: &[f64], rng: &mut R) -> u32 {
    draw_with_u(probs, rng).0
}

/// [`draw`], also returning the threshold it compared the running sum with: the uniform
/// number times the distribution's total mass (≈ u itself, since the mass is ≈ 1).
pub fn draw_with_u<R: RngExt + ?Sized>(probs: &[f64], rng: &mut R) -> (u32, f64) {
    let total: f64 = probs.iter().sum();
    let u = rng.random::<f64>() * total;
    (walk(probs, u), u)
}

/// The sampler's walk: tokens in id order (probability 0 skipped), a running sum, and the
/// first token whose running sum exceeds `u`.
fn walk(probs: &[f64], u: f64) -> u32 {
    let mut cum = 0.0;
    let mut last = 0;
    for (i, &p) in probs.iter().enumerate() {
        if p <= 0.0 {
            continue;
        }
        cum += p;
        last = i;
        if u < cum {
            return i as u32;
        }
    }
    // u landed on the rounding gap at the very top: the last possible token.
    last as u32
}

/// At most this many intervals are listed in a [`SampleDraw`] (the most probable ones and
/// the chosen one); the rest of the mass lies in the gaps between them.
pub const DRAW_INTERVALS: usize = 64;

/// How one sampled token was drawn: the shaped distribution's tokens in the order the
/// sampler walks them (id order, tokens of probability 0 skipped), each with its interval
/// `[cum − prob, cum)` of the running sum, and the number `u` that fell into the chosen
/// token's interval. Made from the sampler's own distribution and threshold
/// ([`draw_with_u`]), not recomputed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct SampleDraw {
    /// The threshold the running sum was compared with: a uniform number in [0, 1) times
    /// `total`.
    pub u: f64,
    /// The shaped distribution's total mass (1 up to rounding).
    pub total: f64,
    /// (N) listed tokens, in walk order: the `DRAW_INTERVALS` most probable ones and the
    /// chosen one (every token of probability > 0 when there are no more than that).
    pub ids: Vec<u32>,
    /// (N) their probabilities in the shaped distribution.
    pub probs: Vec<f64>,
    /// (N) the running sum after each: its interval is `[cum − prob, cum)`.
    pub cum: Vec<f64>,
    /// The token drawn.
    pub chosen: u32,
    /// Where the chosen token is in `ids`.
    pub chosen_at: usize,
    /// The chosen token's interval: `lo ≤ u < hi` (`u ≥ hi` only when u landed in the
    /// rounding gap above the last token, which then is the one chosen).
    pub lo: f64,
    pub hi: f64,
    /// The most probable token of the shaped distribution (ties: the lower id).
    pub most_likely: u32,
    /// Tokens of probability > 0 the sampler walked past or could have (all of them).
    pub possible: usize,
}

/// The record of a draw from `probs` at threshold `u` that chose `chosen`.
pub fn explain_draw(probs: &[f64], u: f64, chosen: u32) -> SampleDraw {
    let total: f64 = probs.iter().sum();
    let possible = probs.iter().filter(|&&p| p > 0.0).count();
    let ranked = rank(probs);
    let most_likely = ranked.first().copied().unwrap_or(0) as u32;
    let mut listed = vec![false; probs.len()];
    for &i in ranked.iter().take(DRAW_INTERVALS) {
        listed[i] = probs[i] > 0.0;
    }
    if let Some(l) = listed.get_mut(chosen as usize) {
        *l = true;
    }
    let (mut ids, mut ps, mut cums) = (vec![], vec![], vec![]);
    let (mut cum, mut lo, mut hi, mut chosen_at) = (0.0, 0.0, 0.0, 0);
    for (i, &p) in probs.iter().enumerate() {
        if p <= 0.0 && i != chosen as usize {
            continue;
        }
        let before = cum;
        cum += p.max(0.0);
        if i == chosen as usize {
            (lo, hi, chosen_at) = (before, cum, ids.len());
        }
        if listed[i] {
            ids.push(i as u32);
            ps.push(p);
            cums.push(cum);
        }
    }
    SampleDraw {
        u,
        total,
        ids,
        probs: ps,
        cum: cums,
        chosen,
        chosen_at,
        lo,
        hi,
        most_likely,
        possible,
    }
}

/// One sampling step: greedy configurations take the argmax without consuming a random
/// number, anything else draws from [`sampling_distribution`].
pub fn choose<R: RngExt + ?Sized>(logits: &[f32], s: &Sampling, rng: &mut R) -> Result<u32> {
    s.validate()?;
    if s.is_greedy() {
        return argmax(logits);
    }
    let probs = sampling_distribution(logits, s)?; // (V)
    Ok(draw(&probs, rng))
}

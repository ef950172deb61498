//! Training is parallel, inference is serial, and the KV cache is what keeps the serial
//! part affordable — measured on the loaded model and the running backend.
//!
//! One sequence of N tokens (the prompt, then the model's own greedy continuation) is run
//! three ways:
//!
//! ```text
//! teacher-forced: one forward pass over positions 0..n        (what training does)
//! cached:         prefill position 0, then one decode step per token: step n feeds the
//!                 token at n − 1 and attends to the n cached keys
//! uncached:       step n runs the whole prefix 0..n through the model again
//! ```
//!
//! Each run reads the clock after every step, so the time to produce the first n tokens
//! is one interval (a page's clock ticks in tenths of a millisecond, longer than a small
//! model's step); runs are averaged back to back until they span `SPAN_MS`, and each
//! length's time is the median of `repeats` such averages. FLOPs are counted
//! (`generate::flops`). The cost of the whole sequence so far is the sum of its steps: with the cache it grows
//! about linearly with n (each step costs about the same, plus 2·C·n for attention: for
//! the nano models the total's slope is ≈ 1.1 up to n = 64 and ≈ 1.2 up to 128), without
//! it quadratically (step n reruns n positions). The attention work of one new
//! token alone is 2·C·n per layer with the cache and C·n(n + 1) without: linear against
//! quadratic exactly. The growth exponents are least-squares slopes of log cost against
//! log n over the upper three quarters of the lengths, where the constant terms matter
//! least; the serial totals are counted from the end of their first step (the prefill of
//! position 0, a one-off).
//!
//! The continuation is greedy with `<eos>` set aside, so the sequence always reaches N;
//! the prompt is fed one token at a time like the rest, so every context length from 1 to
//! N is one step.

use serde::Serialize;

use crate::backend::{Backend, Placed};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::generate::clock::{ClockFn, Stopwatch};
use crate::generate::flops::decoder_macs;
use crate::generate::sampling::argmax;
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};

/// Longest sequence measured (the uncached runs cost about N²/2 positions).
pub const MAX_LENGTH: usize = 256;
/// Most repeats of each measurement.
pub const MAX_REPEATS: usize = 9;

/// Growth exponents: slopes of log cost against log n.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct Exponents {
    /// Whole sequence so far, serial with the cache: measured time, and FLOPs.
    pub cached_ms: f64,
    pub cached_flops: f64,
    /// Whole sequence so far, serial without the cache.
    pub uncached_ms: f64,
    pub uncached_flops: f64,
    /// One teacher-forced pass over n positions.
    pub forward_ms: f64,
    pub forward_flops: f64,
    /// Attention work of one new token: 2·C·n·L with the cache, C·n(n+1)·L without.
    pub cached_attention_flops: f64,
    pub uncached_attention_flops: f64,
}

/// The three ways of running one sequence, measured.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct ParallelTiming {
    /// The sequence (N ids): the prompt, then the greedy continuation.
    pub tokens: Vec<u32>,
    pub prompt_len: usize,
    pub repeats: usize,
    /// Index i is length n = i + 1. Median milliseconds to produce the first n tokens
    /// token by token with the cache (the first step prefills position 0).
    pub cached_ms: Vec<f64>,
    /// The same without the cache (step i is a forward pass over positions 0..=i).
    pub uncached_ms: Vec<f64>,
    /// FLOPs of the step that computes position i (index i): with the cache one token,
    /// without it the whole prefix.
    pub cached_step_flops: Vec<f64>,
    pub uncached_step_flops: Vec<f64>,
    /// FLOPs of the attention scores and weighted sums of each step (all layers).
    pub cached_step_attention_flops: Vec<f64>,
    pub uncached_step_attention_flops: Vec<f64>,
    /// The lengths n at which one teacher-forced pass over positions 0..n was timed.
    pub forward_lengths: Vec<usize>,
    /// Median milliseconds of one of those passes (each timed as a batch of about N / n
    /// passes in a row, so that a short pass still spans many clock ticks).
    pub forward_ms: Vec<f64>,
    pub forward_flops: Vec<f64>,
    /// The fits start at this length (the upper three quarters of 1..N).
    pub fit_from: usize,
    pub exponents: Exponents,
}

fn median(xs: &mut [f64]) -> f64 {
    crate::sorting::sort_by(xs, f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        0.5 * (xs[n / 2 - 1] + xs[n / 2])
    }
}

/// Least-squares slope of ln y against ln x over the points with x ≥ `from` and y > 0.
pub fn growth_exponent(xs: &[usize], ys: &[f64], from: usize) -> f64 {
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .zip(ys)
        .filter(|(&x, &y)| x >= from && y > 0.0)
        .map(|(&x, &y)| ((x as f64).ln(), y.ln()))
        .collect();
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return f64::NAN;
    }
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

/// Running sums: the cost of the whole sequence up to each step.
fn cumulative(xs: &[f64]) -> Vec<f64> {
    xs.iter()
        .scan(0.0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect()
}

/// A page's clock ticks in steps of about 0.1 ms: a measurement repeats what it times
/// back to back until the runs together span at least this long.
pub const SPAN_MS: f64 = 20.0;

/// How many runs of about `estimate_ms` each span `SPAN_MS` (at least 1, at most 200).
fn runs_to_span(estimate_ms: f64) -> usize {
    (SPAN_MS / estimate_ms.max(SPAN_MS / 200.0))
        .ceil()
        .clamp(1.0, 200.0) as usize
}

/// Greedy choice with `<eos>` set aside (the sequence must reach its length).
fn next_token(logits: &[f32], eos: u32) -> Result<u32> {
    let mut l = logits.to_vec();
    if let Some(x) = l.get_mut(eos as usize) {
        *x = f32::NEG_INFINITY;
    }
    argmax(&l)
}

/// The options of every measured pass: the caller's switches, no traces.
fn quiet(opts: &ForwardOptions) -> ForwardOptions {
    ForwardOptions {
        trace_attention: false,
        trace_hidden: false,
        ..opts.clone()
    }
}

/// One serial run with the KV cache over `seq` (or, with `seq` shorter than `length`,
/// extending it greedily): the milliseconds from the start to the end of each step.
async fn cached_run(
    model: &Model,
    placed: &Placed,
    seq: &mut Vec<u32>,
    length: usize,
    opts: &ForwardOptions,
    clock: Option<ClockFn>,
) -> Result<Vec<f64>> {
    let eos = model.tokenizer.spec.eos;
    let v = model.config.vocab_size;
    let mut times = Vec::with_capacity(length);
    let first = Batch::single(&seq[..1])?; // (1, 1)
    let sw = Stopwatch::start(clock);
    enum Cache {
        Cpu(crate::model::cache::KvCache),
        Gpu(Box<crate::backend::gpu::GpuKvCache>),
    }
    let (mut cache, trace) = match placed {
        Placed::Cpu => {
            let (c, t) = model.prefill(&first, opts)?;
            (Cache::Cpu(c), t)
        }
        Placed::Gpu(gm) => {
            let (c, t) = gm.prefill(model, &first, opts, Some(length)).await?;
            (Cache::Gpu(Box::new(c)), t)
        }
    };
    let mut chosen = next_token(&trace.logits.data[..v], eos)?;
    times.push(sw.elapsed_ms());
    for i in 1..length {
        if seq.len() == i {
            seq.push(chosen);
        }
        let fed = [seq[i]];
        let step = match &mut cache {
            Cache::Cpu(c) => model.decode_step(c, &fed, opts)?,
            Cache::Gpu(c) => c.decode_step(model, &fed, opts).await?,
        };
        chosen = next_token(&step.logits.data[..v], eos)?;
        times.push(sw.elapsed_ms());
    }
    Ok(times)
}

/// One serial run without the cache: step i runs positions 0..=i. The milliseconds from
/// the start to the end of each step.
async fn uncached_run(
    model: &Model,
    placed: &Placed,
    seq: &[u32],
    opts: &ForwardOptions,
    clock: Option<ClockFn>,
) -> Result<Vec<f64>> {
    let eos = model.tokenizer.spec.eos;
    let v = model.config.vocab_size;
    let mut times = Vec::with_capacity(seq.len());
    let sw = Stopwatch::start(clock);
    for i in 0..seq.len() {
        let batch = Batch::single(&seq[..=i])?; // (1, i + 1)
        let trace = placed.forward(model, &batch, opts).await?;
        next_token(&trace.logits.data[i * v..(i + 1) * v], eos)?;
        times.push(sw.elapsed_ms());
    }
    Ok(times)
}

/// Lengths for the teacher-forced passes: about eight, spread evenly on a log scale,
/// ending at N.
fn forward_lengths(n: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..8)
        .map(|k| ((n as f64).powf(k as f64 / 7.0)).round() as usize)
        .map(|x| x.clamp(1, n))
        .collect();
    out.dedup();
    out
}

/// Run `prompt` extended to `length` tokens the three ways on `backend`, each measurement
/// the median of `repeats`. `clock` (milliseconds) replaces the platform clock if given.
pub async fn parallel_vs_serial(
    model: &Model,
    backend: &Backend,
    prompt: &[u32],
    length: usize,
    repeats: usize,
    opts: &ForwardOptions,
    clock: Option<ClockFn>,
) -> Result<ParallelTiming> {
    let cfg = &model.config;
    if cfg.arch != Arch::DecoderOnly {
        return Err(Error::Input(
            "parallel vs serial: needs a decoder-only model (it generates from a prompt alone)"
                .into(),
        ));
    }
    let top = cfg.max_len.min(MAX_LENGTH);
    if !(4..=top).contains(&length) {
        return Err(Error::Input(format!(
            "parallel vs serial: the length must be from 4 to {top}, got {length}"
        )));
    }
    if prompt.is_empty() || prompt.len() > length {
        return Err(Error::Input(format!(
            "parallel vs serial: the prompt must have 1 to {length} tokens, got {}",
            prompt.len()
        )));
    }
    if let Some(&bad) = prompt.iter().find(|&&t| t as usize >= cfg.vocab_size) {
        return Err(Error::Input(format!(
            "parallel vs serial: token id {bad} is outside the vocabulary of {}",
            cfg.vocab_size
        )));
    }
    if !(1..=MAX_REPEATS).contains(&repeats) {
        return Err(Error::Input(format!(
            "parallel vs serial: repeats must be from 1 to {MAX_REPEATS}, got {repeats}"
        )));
    }
    let opts = quiet(opts);
    // The weights placed once, so every timed pass measures the pass alone.
    let placed = &backend.place(model)?;
    let mut seq = prompt.to_vec();
    // A warm-up of each kind, untimed but for an estimate: it also extends the prompt to
    // N tokens. Each measurement below averages enough runs back to back to span
    // `SPAN_MS`, and the median over `repeats` such averages is kept.
    // (The first cached run also pays for first-time allocations: the estimate is the
    // second's.)
    cached_run(model, placed, &mut seq, length, &opts, clock).await?;
    let c0 = cached_run(model, placed, &mut seq, length, &opts, clock).await?;
    let u0 = uncached_run(model, placed, &seq, &opts, clock).await?;
    let (kc, ku) = (runs_to_span(c0[length - 1]), runs_to_span(u0[length - 1]));
    let mut cached = vec![vec![]; length];
    let mut uncached = vec![vec![]; length];
    let lengths = forward_lengths(length);
    let mut forward = vec![vec![]; lengths.len()];
    let mut forward_runs = vec![];
    for &n in &lengths {
        let batch = Batch::single(&seq[..n])?; // (1, n)
        let sw = Stopwatch::start(clock);
        placed.forward(model, &batch, &opts).await?;
        forward_runs.push(runs_to_span(sw.elapsed_ms()));
    }
    for _ in 0..repeats {
        let mut c = vec![0.0; length];
        for _ in 0..kc {
            let t = cached_run(model, placed, &mut seq, length, &opts, clock).await?;
            c.iter_mut().zip(&t).for_each(|(a, b)| *a += b / kc as f64);
        }
        let mut u = vec![0.0; length];
        for _ in 0..ku {
            let t = uncached_run(model, placed, &seq, &opts, clock).await?;
            u.iter_mut().zip(&t).for_each(|(a, b)| *a += b / ku as f64);
        }
        for i in 0..length {
            cached[i].push(c[i]);
            uncached[i].push(u[i]);
        }
        for (k, &n) in lengths.iter().enumerate() {
            let batch = Batch::single(&seq[..n])?; // (1, n)
            let inner = forward_runs[k];
            let sw = Stopwatch::start(clock);
            for _ in 0..inner {
                placed.forward(model, &batch, &opts).await?;
            }
            forward[k].push(sw.elapsed_ms() / inner as f64);
        }
    }
    let cached_ms: Vec<f64> = cached.iter_mut().map(|x| median(x)).collect();
    let uncached_ms: Vec<f64> = uncached.iter_mut().map(|x| median(x)).collect();
    let forward_ms: Vec<f64> = forward.iter_mut().map(|x| median(x)).collect();

    let flops = |macs: u64| 2.0 * macs as f64;
    // Step i feeds one token at position i (cached) or positions 0..=i (uncached).
    let cached_step_flops: Vec<f64> = (0..length)
        .map(|i| flops(decoder_macs(cfg, i, 1, 0, false, 1)))
        .collect();
    let uncached_step_flops: Vec<f64> = (0..length)
        .map(|i| flops(decoder_macs(cfg, 0, i + 1, 0, false, i + 1)))
        .collect();
    // Scores and weighted sums only: C per (query, key) pair for each, all layers.
    let (c, l) = (cfg.d_model as f64, cfg.decoder_layers() as f64);
    let cached_step_attention_flops: Vec<f64> = (0..length)
        .map(|i| l * 2.0 * (2.0 * c * (i + 1) as f64))
        .collect();
    let uncached_step_attention_flops: Vec<f64> = (0..length)
        .map(|i| {
            let n = (i + 1) as f64;
            l * 2.0 * (c * n * (n + 1.0))
        })
        .collect();
    let forward_flops: Vec<f64> = lengths
        .iter()
        .map(|&n| flops(decoder_macs(cfg, 0, n, 0, false, n)))
        .collect();

    let ns: Vec<usize> = (1..=length).collect();
    let fit_from = (length / 4).max(2);
    let fit = |ys: &[f64]| growth_exponent(&ns, ys, fit_from);
    // The serial totals are fitted after their first step, the prefill of position 0: a
    // one-off whose fixed cost (larger than a decode step's) would flatten the slope.
    let after_first = |ys: &[f64]| -> Vec<f64> { ys.iter().map(|y| y - ys[0]).collect() };
    let fit_forward = |ys: &[f64]| growth_exponent(&lengths, ys, fit_from);
    let exponents = Exponents {
        cached_ms: fit(&after_first(&cached_ms)),
        cached_flops: fit(&after_first(&cumulative(&cached_step_flops))),
        uncached_ms: fit(&after_first(&uncached_ms)),
        uncached_flops: fit(&after_first(&cumulative(&uncached_step_flops))),
        forward_ms: fit_forward(&forward_ms),
        forward_flops: fit_forward(&forward_flops),
        cached_attention_flops: fit(&cached_step_attention_flops),
        uncached_attention_flops: fit(&uncached_step_attention_flops),
    };
    Ok(ParallelTiming {
        tokens: seq,
        prompt_len: prompt.len(),
        repeats,
        cached_ms,
        uncached_ms,
        cached_step_flops,
        uncached_step_flops,
        cached_step_attention_flops,
        uncached_step_attention_flops,
        forward_lengths: lengths,
        forward_ms,
        forward_flops,
        fit_from,
        exponents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_exponent_recovers_the_power_of_a_power_law() {
        let xs: Vec<usize> = (1..=64).collect();
        for p in [1.0, 2.0, 0.5] {
            let ys: Vec<f64> = xs.iter().map(|&x| 3.0 * (x as f64).powf(p)).collect();
            assert!((growth_exponent(&xs, &ys, 8) - p).abs() < 1e-9, "{p}");
        }
    }

    #[test]
    fn short_runs_are_repeated_to_span_several_clock_ticks() {
        assert_eq!(runs_to_span(100.0), 1);
        assert_eq!(runs_to_span(1.0), 20);
        assert_eq!(runs_to_span(0.0), 200);
    }

    #[test]
    fn forward_lengths_spread_from_one_to_n() {
        let l = forward_lengths(128);
        assert_eq!((l[0], *l.last().unwrap()), (1, 128));
        assert!(l.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(forward_lengths(4), vec![1, 2, 3, 4]);
    }
}

//! Which backend is faster for the loaded model on this device. A model that generates is
//! timed as the page generates: greedy decoding from `<bos>` with the KV cache, one token a
//! step, up to [`DECODE_TOKENS`] tokens a generation (an encoder-decoder reads the check's
//! source). A model that does not generate (an encoder, a classifier) is timed on the
//! parity input's forward pass (`<bos>` and up to 7 tokens, `parity::parity_batch`), what
//! the page runs for it. Both sides are timed in interleaved rounds after one untimed
//! warm-up each (the GPU compiles its pipelines there), and the median round kept; the
//! GPU's time includes reading its results back. The page keeps WebGPU only where it
//! agrees (`parity`) and wins this race, unless the learner insists on it.

use crate::backend::Placed;
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::generate::clock::Stopwatch;
use crate::generate::{GenerateOptions, Generator, Strategy};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};
use crate::protocol::RaceUnit;

use super::parity::parity_batch;

/// Rounds per backend; each round repeats generations (or passes) until [`ROUND_MS`] have
/// passed.
pub const ROUNDS: usize = 3;
/// A round's length: long enough that the browser's coarse clock (0.1 ms in a worker) does
/// not decide the result for a step of a few microseconds.
pub const ROUND_MS: f64 = 4.0;
/// Tokens a timed generation decodes at most (fewer when the model stops or its context
/// ends first).
pub const DECODE_TOKENS: usize = 8;

/// What one race measured: milliseconds per generated token (or per pass), the median of
/// [`ROUNDS`] rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Race {
    pub cpu_ms: f32,
    pub gpu_ms: f32,
    pub unit: RaceUnit,
}

impl Race {
    /// The GPU wins only when it is strictly faster.
    pub fn gpu_wins(&self) -> bool {
        self.gpu_ms < self.cpu_ms
    }
}

/// Test-only time added to every timed token (or pass) of one side, spent busy as a slow
/// dispatch or a slow processor would spend it (the tests make each side lose on purpose).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Handicap {
    pub gpu_ms: f64,
    pub cpu_ms: f64,
}

pub(crate) fn busy(ms: f64) {
    if ms <= 0.0 {
        return;
    }
    let sw = Stopwatch::start(None);
    while sw.elapsed_ms() < ms {
        std::hint::spin_loop();
    }
}

/// Time the loaded model on the CPU and on `gpu` (the model placed on a GPU).
pub async fn race(m: &Model, gpu: &Placed, handicap: Handicap) -> Result<Race> {
    if !matches!(gpu, Placed::Gpu(_)) {
        return Err(Error::Input(
            "the race needs the GPU backend: call use_gpu() first".into(),
        ));
    }
    let generates = m.config.arch != Arch::EncoderOnly && !m.config.is_classifier();
    let unit = if generates {
        RaceUnit::Token
    } else {
        RaceUnit::Pass
    };
    // The check's input: its passes, or its `<bos>` and source for a generation.
    let batch = parity_batch(m)?;
    let cpu_side = Placed::Cpu;
    let sides = [(&cpu_side, handicap.cpu_ms), (gpu, handicap.gpu_ms)];
    for (placed, _) in sides {
        timed(m, &batch, placed, generates, 0.0).await?; // the warm-up
    }
    let mut per = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
    for _ in 0..ROUNDS {
        for (k, (placed, extra)) in sides.iter().enumerate() {
            let sw = Stopwatch::start(None);
            let mut units = 0u32;
            while units == 0 || sw.elapsed_ms() < ROUND_MS {
                units += timed(m, &batch, placed, generates, *extra).await?;
            }
            per[k].push(sw.elapsed_ms() / units as f64);
        }
    }
    let [mut cpu, mut gpu_ms] = per;
    Ok(Race {
        cpu_ms: median(&mut cpu) as f32,
        gpu_ms: median(&mut gpu_ms) as f32,
        unit,
    })
}

/// One timed unit of work on `placed`: a greedy generation with the KV cache from the
/// check's `<bos>` (and its source) with its tokens counted, or one pass of the check's
/// input `batch`; `extra` ms of busy time after each.
async fn timed(
    m: &Model,
    batch: &Batch,
    placed: &Placed,
    generates: bool,
    extra: f64,
) -> Result<u32> {
    if !generates {
        placed.forward(m, batch, &ForwardOptions::default()).await?;
        busy(extra);
        return Ok(1);
    }
    let prompt = batch.tokens[..1].to_vec();
    let src = batch.src_tokens.clone();
    let mut g = Generator::on(m, placed.clone(), prompt, src, timed_greedy(m))?;
    let mut tokens = 0;
    while g.step().await?.is_some() {
        busy(extra);
        tokens += 1;
    }
    Ok(tokens.max(1))
}

/// A timed generation's options: greedy with the KV cache, up to [`DECODE_TOKENS`] tokens,
/// nothing traced.
pub(crate) fn timed_greedy(m: &Model) -> GenerateOptions {
    GenerateOptions {
        strategy: Strategy::Greedy,
        seed: 0,
        max_new_tokens: DECODE_TOKENS.min(m.config.max_len.saturating_sub(1)).max(1),
        use_cache: true,
        top_candidates: 1,
        trace_attention: false,
        forward: ForwardOptions::default(),
    }
}

/// The middle value (the upper one of an even count), sorting `xs`.
pub(crate) fn median(xs: &mut [f64]) -> f64 {
    crate::sorting::sort_by(xs, f64::total_cmp);
    xs[xs.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_wins_only_when_strictly_faster() {
        let r = |cpu_ms, gpu_ms| Race {
            cpu_ms,
            gpu_ms,
            unit: RaceUnit::Token,
        };
        assert!(r(2.0, 1.0).gpu_wins());
        assert!(!r(1.0, 1.0).gpu_wins());
        assert!(!r(1.0, 4.0).gpu_wins());
    }

    #[test]
    fn a_handicap_is_spent_busy() {
        let sw = Stopwatch::start(None);
        busy(3.0);
        assert!(sw.elapsed_ms() >= 3.0);
    }

    #[test]
    fn the_median_is_the_middle_round() {
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
    }
}

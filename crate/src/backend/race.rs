//! Which backend is faster for the loaded model on this device: the parity input's forward
//! pass (the check's `<bos>` and up to 7 tokens, `parity::parity_batch`) timed on the CPU
//! and on the GPU, in interleaved rounds, the median of each. The GPU's time includes the
//! readback of its logits, as every pass the page asks for does. The page keeps WebGPU only
//! where it agrees (`parity`) and wins this race, unless the learner insists on it.

use crate::backend::{Backend, Placed};
use crate::error::{Error, Result};
use crate::generate::clock::Stopwatch;
use crate::model::{ForwardOptions, Model};

use super::parity::parity_batch;

/// Rounds per backend; each round repeats the pass until [`ROUND_MS`] have passed.
pub const ROUNDS: usize = 3;
/// A round's length: long enough that the browser's coarse clock (0.1 ms in a worker) does
/// not decide the result for a pass of a few microseconds.
pub const ROUND_MS: f64 = 4.0;

/// What one race measured: milliseconds per pass, the median of [`ROUNDS`] rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Race {
    pub cpu_ms: f32,
    pub gpu_ms: f32,
}

impl Race {
    /// The GPU wins only when it is strictly faster.
    pub fn gpu_wins(&self) -> bool {
        self.gpu_ms < self.cpu_ms
    }
}

/// Test-only time added to every timed pass of one side, spent busy as a slow dispatch or
/// a slow processor would spend it (the browser tests make each side lose on purpose).
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

/// Time the parity input on the CPU and on `gpu` (the model placed on a GPU).
pub async fn race(m: &Model, gpu: &Placed, handicap: Handicap) -> Result<Race> {
    if !matches!(gpu, Placed::Gpu(_)) {
        return Err(Error::Input(
            "the race needs the GPU backend: call use_gpu() first".into(),
        ));
    }
    let batch = parity_batch(m)?;
    let opts = ForwardOptions::default();
    let (mut cpu, mut gpu_ms) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for _ in 0..ROUNDS {
        let sw = Stopwatch::start(None);
        let mut n = 0u32;
        while n == 0 || sw.elapsed_ms() < ROUND_MS {
            Backend::Cpu.forward(m, &batch, &opts).await?;
            busy(handicap.cpu_ms);
            n += 1;
        }
        cpu.push(sw.elapsed_ms() / n as f64);
        let sw = Stopwatch::start(None);
        let mut n = 0u32;
        while n == 0 || sw.elapsed_ms() < ROUND_MS {
            gpu.forward(m, &batch, &opts).await?;
            busy(handicap.gpu_ms);
            n += 1;
        }
        gpu_ms.push(sw.elapsed_ms() / n as f64);
    }
    Ok(Race {
        cpu_ms: median(&mut cpu) as f32,
        gpu_ms: median(&mut gpu_ms) as f32,
    })
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_wins_only_when_strictly_faster() {
        let r = |cpu_ms, gpu_ms| Race { cpu_ms, gpu_ms };
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

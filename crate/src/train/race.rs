//! Which backend trains a run faster on this device, measured on the run's own next steps:
//! under `auto`, before a run's first step on a GPU, [`STEPS`] steps of its next batches
//! (the same batches, dropout masks and learning rates the run is about to take) are taken
//! on copies of its weights and optimiser on the CPU and on a throwaway GPU trainer. The
//! run itself is untouched: its data generator, step count and weights are where they
//! were, and its steps are the same whichever way the race goes.
//!
//! The losses of the two sides are compared step by step, NaN-aware: a NaN or an infinity
//! on either side, or a relative difference above [`LOSS_TOL`], is a disagreement. The
//! first step of each side is not timed (the GPU compiles its pipelines there, the CPU
//! grows its buffers); a side's time per step is the median of the others. The run keeps
//! the GPU only where it agrees and is strictly faster per step.

use crate::backend::gpu::{GpuContext, GpuTrainer};
use crate::backend::race::{busy, median, Handicap};
use crate::error::Result;
use crate::generate::clock::Stopwatch;
use crate::protocol::RunBackend;

use super::health;
use super::step::{train_step_observed, LossGrads};
use super::trainer::Trainer;

/// Steps taken on each side; the first of each is a warm-up, not timed.
pub const STEPS: usize = 4;
/// The largest relative loss difference per step at which the GPU agrees: the lab's own
/// tests hold whole curves of the two backends to it.
pub const LOSS_TOL: f32 = 1e-4;

/// What one race measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainRace {
    /// Milliseconds per step, the median of the timed steps.
    pub cpu_ms: f32,
    pub gpu_ms: f32,
    /// The largest relative loss difference of a step; `None`: a NaN or an infinity on
    /// either side.
    pub loss_diff: Option<f32>,
}

impl TrainRace {
    pub fn agrees(&self) -> bool {
        self.loss_diff.is_some_and(|d| d <= LOSS_TOL)
    }

    /// The GPU wins only when it is strictly faster.
    pub fn gpu_wins(&self) -> bool {
        self.gpu_ms < self.cpu_ms
    }
}

/// The largest relative difference of two runs of losses (relative to the CPU's), or
/// `None` when a loss on either side is not finite (`f32::max` would drop a NaN).
pub fn loss_difference(cpu: &[f32], gpu: &[f32]) -> Option<f32> {
    if cpu.len() != gpu.len() {
        return None;
    }
    let mut worst = 0.0f32;
    for (c, g) in cpu.iter().zip(gpu) {
        if !(c.is_finite() && g.is_finite()) {
            return None;
        }
        worst = worst.max((g - c).abs() / c.abs().max(1e-6));
    }
    Some(worst)
}

fn median_after_warmup(times: &mut [f64]) -> f32 {
    median(&mut times[1..]) as f32
}

/// Time the run's next [`STEPS`] steps on the CPU and on `ctx`, from copies of its state;
/// `handicap` adds busy time to every step of a side (tests only). `Err`: the GPU failed.
pub async fn race_steps(
    ctx: &GpuContext,
    trainer: &Trainer<'_>,
    handicap: Handicap,
) -> Result<TrainRace> {
    let inputs = trainer.upcoming_steps(STEPS, true);
    let smoothing = trainer.opts.label_smoothing;
    let clip = trainer.opts.clip;
    let cfg = &trainer.model.config;
    let mut gpu = GpuTrainer::new(ctx, &trainer.model, trainer.adam())?;
    let (mut model, mut adam) = (trainer.model.clone(), trainer.adam().clone());
    let (mut cpu_loss, mut cpu_ms) = (vec![], vec![]);
    for (tb, fwd, lr) in &inputs {
        // The run's own CPU step: the same watching of the residual stream and the layers.
        let sw = Stopwatch::start(None);
        let mut watch = |lg: &LossGrads| {
            std::hint::black_box((
                health::residual_norms(&lg.trace.hidden),
                health::layer_grad_norms(cfg, &lg.grads),
            ));
        };
        let loss = train_step_observed(
            &mut model, &mut adam, tb, fwd, smoothing, *lr, clip, &mut watch,
        )
        .map_or(f32::NAN, |s| s.loss);
        busy(handicap.cpu_ms);
        cpu_ms.push(sw.elapsed_ms());
        cpu_loss.push(loss);
    }
    let (mut gpu_loss, mut gpu_ms) = (vec![], vec![]);
    for (tb, fwd, lr) in &inputs {
        let sw = Stopwatch::start(None);
        let (stats, _) = gpu.step_watched(tb, fwd, smoothing, *lr, clip).await?;
        busy(handicap.gpu_ms);
        gpu_ms.push(sw.elapsed_ms());
        gpu_loss.push(stats.loss);
    }
    Ok(TrainRace {
        cpu_ms: median_after_warmup(&mut cpu_ms),
        gpu_ms: median_after_warmup(&mut gpu_ms),
        loss_diff: loss_difference(&cpu_loss, &gpu_loss),
    })
}

/// Where a run under `auto` trains, measured: `WebgpuChecked` when the GPU (`adapter`)
/// agrees and wins, else the CPU with the reason and the figures.
pub async fn measured(
    ctx: &GpuContext,
    trainer: &Trainer<'_>,
    adapter: String,
    handicap: Handicap,
) -> RunBackend {
    match race_steps(ctx, trainer, handicap).await {
        Err(e) => RunBackend::CpuTestFailed {
            adapter,
            detail: e.to_string(),
        },
        Ok(r) if !r.agrees() => RunBackend::CpuDisagrees {
            adapter,
            max_abs_diff: r.loss_diff,
        },
        Ok(r) if r.gpu_wins() => RunBackend::WebgpuChecked {
            adapter,
            parity: r.loss_diff.unwrap_or(0.0),
            cpu_ms: r.cpu_ms,
            gpu_ms: r.gpu_ms,
            unit: crate::protocol::RaceUnit::Step,
        },
        Ok(r) => RunBackend::CpuFaster {
            adapter,
            parity: r.loss_diff.unwrap_or(0.0),
            cpu_ms: r.cpu_ms,
            gpu_ms: r.gpu_ms,
            unit: crate::protocol::RaceUnit::Step,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_agree_only_when_finite_on_both_sides_and_close() {
        assert_eq!(loss_difference(&[2.0, 1.0], &[2.0, 1.0]), Some(0.0));
        let d = loss_difference(&[2.0, 1.0], &[2.0002, 1.0]).unwrap();
        assert!((d - 1e-4).abs() < 1e-6, "{d}");
        assert_eq!(loss_difference(&[2.0, f32::NAN], &[2.0, 1.0]), None);
        assert_eq!(loss_difference(&[2.0, 1.0], &[f32::INFINITY, 1.0]), None);
        assert_eq!(loss_difference(&[f32::NAN], &[f32::NAN]), None);
        assert_eq!(loss_difference(&[1.0], &[]), None);
        let race = |loss_diff| TrainRace {
            cpu_ms: 2.0,
            gpu_ms: 1.0,
            loss_diff,
        };
        assert!(race(Some(1e-5)).agrees());
        assert!(!race(Some(1e-3)).agrees());
        assert!(!race(None).agrees());
    }

    #[test]
    fn the_gpu_wins_only_when_strictly_faster_and_the_warmup_is_not_timed() {
        let r = |cpu_ms, gpu_ms| TrainRace {
            cpu_ms,
            gpu_ms,
            loss_diff: Some(0.0),
        };
        assert!(r(2.0, 1.0).gpu_wins());
        assert!(!r(1.0, 1.0).gpu_wins());
        assert_eq!(median_after_warmup(&mut [900.0, 3.0, 1.0, 2.0]), 2.0);
    }
}

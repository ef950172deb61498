//! What a training run will need before it starts (the lab's pre-flight): the memory its
//! worker holds at its peak, the storage its saved weights take, and the largest single
//! buffer a GPU would have to bind. The page compares these with the device (its memory,
//! the browser's storage quota) and refuses a run that would fail halfway, offering the
//! largest batch that fits.
//!
//! The memory is an estimate from the model's sizes, counted in f32 values:
//! - the weights, their gradients and Adam's two moments (4 × params);
//! - two more copies of the weights: the one an evaluation or an export reads, and the
//!   one a checkpoint is written from;
//! - the activations one step keeps for its backward pass, at the model's longest
//!   sequence: per self-attention block about 10 (B, T, d_model) tensors, two
//!   (B, T, d_ff) and two (B, heads, T, T); per cross-attention block 5 (B, T, d_model)
//!   and two (B, heads, T, S); the logits and their gradient, two (B, T, vocab);
//! - the forward pass's buffers once more for the evaluation's greedy decoding.
//!
//! `tests/browser/lab-preflight.test.mjs` holds the estimate against the memory a run's
//! worker was measured to use.

use serde::Serialize;
use ts_rs::TS;

use crate::config::{Arch, ModelConfig};
use crate::error::Result;
use crate::protocol::RunSettings;

/// `runFootprint`: what a run with these settings needs.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct RunFootprint {
    /// Trained parameters of the model.
    pub params: u64,
    /// Bytes the run's worker holds at its peak (an estimate, see the module).
    pub memory_bytes: u64,
    /// Bytes the browser keeps for the run: its weights and Adam's two moments, saved so
    /// that it can resume (the curves are a few bytes a step more).
    pub storage_bytes: u64,
    /// The largest single buffer on a GPU, in bytes: the largest weight matrix, the
    /// logits of a batch, or one layer's attention probabilities.
    pub largest_buffer_bytes: u64,
}

/// f32 values.
const F32: u64 = 4;

impl RunFootprint {
    /// The footprint of `settings` (refused by field as `trainStart` would refuse them).
    pub fn of(settings: &RunSettings) -> Result<RunFootprint> {
        let spec = settings.to_spec()?;
        let task = spec.task()?;
        let cfg = spec.model_config(task.as_ref())?;
        let mut f = Self::of_config(&cfg, settings.batch as u64);
        if let Some(text) = &settings.text {
            // A text run keeps its text with its record, and while it trains holds it twice
            // (the settings, the task's source) and one id per character.
            let bytes = text.len() as u64;
            f.storage_bytes += bytes;
            f.memory_bytes += 2 * bytes + 4 * text.chars().count() as u64;
        }
        Ok(f)
    }

    /// The footprint of training `cfg` on batches of `b` sequences of its longest length.
    pub fn of_config(cfg: &ModelConfig, b: u64) -> RunFootprint {
        let u = |x: usize| x as u64;
        let (d, f, v, h, t) = (
            u(cfg.d_model),
            u(cfg.d_ff),
            u(cfg.vocab_size),
            u(cfg.n_heads),
            u(cfg.max_len),
        );
        let params = cfg.param_count_u64();
        let activations = activation_values(cfg, b, t);
        let memory = F32 * (6 * params + 2 * activations);
        let largest_weight = (v * d).max(d * f).max(d * d);
        let largest = largest_weight.max(b * t * v).max(b * h * t * t);
        RunFootprint {
            params,
            memory_bytes: memory,
            storage_bytes: F32 * 3 * params,
            largest_buffer_bytes: F32 * largest,
        }
    }
}

/// f32 values of the activations one training step of `cfg` keeps for its backward pass,
/// on batches of `b` sequences of `t` positions (the module's list).
pub fn activation_values(cfg: &ModelConfig, b: u64, t: u64) -> u64 {
    let u = |x: usize| x as u64;
    let (d, f, v, h) = (
        u(cfg.d_model),
        u(cfg.d_ff),
        u(cfg.vocab_size),
        u(cfg.n_heads),
    );
    let self_block = b * t * (10 * d + 2 * f) + 2 * b * h * t * t;
    let cross_block = 5 * b * t * d + 2 * b * h * t * t;
    let blocks = u(cfg.encoder_layers() + cfg.decoder_layers());
    let cross = if cfg.arch == Arch::EncoderDecoder {
        u(cfg.decoder_layers())
    } else {
        0
    };
    let out = if cfg.is_classifier() {
        2 * b * u(cfg.num_classes)
    } else {
        2 * b * t * v
    };
    blocks * self_block + cross * cross_block + out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(task: &str) -> RunSettings {
        RunSettings::defaults(task).unwrap().settings
    }

    #[test]
    fn the_footprint_grows_with_the_batch_and_the_weights_are_counted_six_times() {
        let mut s = settings("reverse");
        let a = RunFootprint::of(&s).unwrap();
        s.batch = 1;
        let one = RunFootprint::of(&s).unwrap();
        assert_eq!(a.params, one.params);
        assert!(a.memory_bytes > one.memory_bytes);
        assert!(one.memory_bytes > 6 * F32 * one.params);
        assert_eq!(one.storage_bytes, 12 * one.params);
    }

    #[test]
    fn bad_settings_are_refused_by_field() {
        let mut s = settings("reverse");
        s.batch = 0;
        let e = RunFootprint::of(&s).unwrap_err().to_string();
        assert!(e.contains("batch"), "{e}");
    }
}

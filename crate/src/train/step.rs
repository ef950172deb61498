//! One training step: a recorded forward pass, the loss, the backward pass, clipping and
//! an Adam update.

use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, ModelParams, Trace};
use crate::tasks::TrainBatch;
use crate::tensor::Tensor;

use super::backward::{model_backward, zero_grads, HeadGrad};
use super::loss::{cross_entropy_backward, cross_entropy_forward};
use super::optim::{clip_grad_norm, Adam};

/// The forward pass's input for a training batch.
pub fn to_batch(tb: &TrainBatch) -> Batch {
    Batch {
        tokens: tb.tokens.clone(),
        batch: tb.b,
        len: tb.t,
        src_tokens: (tb.s > 0).then(|| tb.src.clone()),
        src_len: tb.s,
    }
}

/// What [`loss_and_grads`] computes.
pub struct LossGrads {
    /// Mean cross-entropy over the counted positions (or examples).
    pub loss: f32,
    /// Positions (LM) or examples (classifier) the loss counts.
    pub count: usize,
    /// d(loss)/d(parameter), in the model's own tree.
    pub grads: ModelParams<Tensor>,
    /// The forward pass (logits, BatchNorm running-statistic updates).
    pub trace: Trace,
}

/// The loss's side of a batch, checked against the model before any work: a classifier
/// gets one label per example below `num_classes`, an LM head one target per position
/// inside the vocabulary. The CPU step and the GPU step (`backend::gpu::train`) both ask.
pub fn check_targets(cfg: &crate::config::ModelConfig, tb: &TrainBatch) -> Result<()> {
    if cfg.is_classifier() {
        let n = cfg.num_classes;
        if tb.labels.len() != tb.b {
            return Err(Error::Input(format!(
                "a classifier batch needs one label per example: {} labels for {} examples",
                tb.labels.len(),
                tb.b
            )));
        }
        if let Some(&bad) = tb.labels.iter().find(|&&l| l as usize >= n) {
            return Err(Error::Input(format!(
                "label {bad} is outside the model's {n} classes"
            )));
        }
    } else {
        let v = cfg.vocab_size;
        let rows = tb.b * tb.t;
        if tb.targets.len() != rows {
            return Err(Error::Input(format!(
                "an LM batch needs one target per position: {} targets for {rows} positions",
                tb.targets.len()
            )));
        }
        if let Some(&bad) = tb.targets.iter().find(|&&y| y as usize >= v) {
            return Err(Error::Input(format!(
                "target id {bad} is outside the vocabulary of {v} tokens"
            )));
        }
    }
    Ok(())
}

/// Cross-entropy (label smoothing `smoothing`) of the model on a batch and its gradient.
/// LM heads are scored on every target that is not `<pad>`; classifiers on every label.
pub fn loss_and_grads(
    model: &Model,
    tb: &TrainBatch,
    opts: &ForwardOptions,
    smoothing: f32,
) -> Result<LossGrads> {
    check_targets(&model.config, tb)?;
    let batch = to_batch(tb);
    let (trace, acts) = model.forward_recorded(&batch, opts)?;
    let mut grads = zero_grads(model);
    let (loss, count) = if let Some(class_logits) = &trace.class_logits {
        let n = model.config.num_classes;
        let mut probs = vec![0.0f32; tb.b * n]; // (B, N)
        let (loss, count) = cross_entropy_forward(
            &mut probs,
            &class_logits.data,
            &tb.labels,
            None,
            smoothing,
            tb.b,
            n,
        );
        let mut dclass = vec![0.0f32; tb.b * n]; // (B, N)
        cross_entropy_backward(
            &mut dclass,
            &probs,
            &tb.labels,
            None,
            smoothing,
            count,
            1.0,
            tb.b,
            n,
        );
        let _t = crate::profile::scope(crate::profile::Phase::Backward);
        model_backward(
            &mut grads,
            HeadGrad::Classifier(&dclass),
            model,
            &batch,
            opts,
            &acts,
        )?;
        (loss, count)
    } else {
        let v = model.config.vocab_size;
        let rows = tb.b * tb.t;
        let pad = model.tokenizer.spec.pad;
        let mut probs = vec![0.0f32; rows * v]; // (B·T, V)
        let (loss, count) = cross_entropy_forward(
            &mut probs,
            &trace.logits.data,
            &tb.targets,
            Some(pad),
            smoothing,
            rows,
            v,
        );
        let mut dlogits = vec![0.0f32; rows * v]; // (B·T, V)
        cross_entropy_backward(
            &mut dlogits,
            &probs,
            &tb.targets,
            Some(pad),
            smoothing,
            count,
            1.0,
            rows,
            v,
        );
        let _t = crate::profile::scope(crate::profile::Phase::Backward);
        model_backward(
            &mut grads,
            HeadGrad::Lm(&dlogits),
            model,
            &batch,
            opts,
            &acts,
        )?;
        (loss, count)
    };
    Ok(LossGrads {
        loss,
        count,
        grads,
        trace,
    })
}

/// What one step reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    pub loss: f32,
    /// Global gradient norm before clipping.
    pub grad_norm: f32,
    pub lr: f32,
}

/// One step: loss and gradients, optional global-norm clipping to `clip`, an Adam update at
/// `lr`, and (BatchNorm in train mode) the new running statistics.
pub fn train_step(
    model: &mut Model,
    adam: &mut Adam,
    tb: &TrainBatch,
    opts: &ForwardOptions,
    smoothing: f32,
    lr: f32,
    clip: Option<f32>,
) -> Result<StepStats> {
    train_step_observed(model, adam, tb, opts, smoothing, lr, clip, &mut |_| {})
}

/// [`train_step`], showing `observe` the loss, the gradients (before clipping) and the
/// forward pass before the update: the same step, watched. A step whose loss or gradient
/// norm is not finite updates nothing.
#[allow(clippy::too_many_arguments)]
pub fn train_step_observed(
    model: &mut Model,
    adam: &mut Adam,
    tb: &TrainBatch,
    opts: &ForwardOptions,
    smoothing: f32,
    lr: f32,
    clip: Option<f32>,
    observe: &mut dyn FnMut(&LossGrads),
) -> Result<StepStats> {
    let mut lg = loss_and_grads(model, tb, opts, smoothing)?;
    observe(&lg);
    let _t = crate::profile::scope(crate::profile::Phase::Optimizer);
    let grad_norm = match clip {
        Some(max) => clip_grad_norm(&mut lg.grads, max),
        None => super::optim::grad_norm(&lg.grads),
    };
    if !(lg.loss.is_finite() && grad_norm.is_finite()) {
        // A NaN or an infinity: the weights stay as they were (the caller stops the run;
        // `Trainer::count_step` says so).
        return Ok(StepStats {
            loss: lg.loss,
            grad_norm,
            lr,
        });
    }
    adam.step(model, &lg.grads, lr);
    model.apply_running_stats(&lg.trace.running_stats)?;
    Ok(StepStats {
        loss: lg.loss,
        grad_norm,
        lr,
    })
}

//! A model's trained weights and Adam state resident on the GPU, updated by recorded
//! optimiser steps (clipping, Adam, the shared Q/K copy) and read back only when asked.
//!
//! The GPU twin of `train::optim::Adam`: [`GpuAdam::upload`] takes a model and its CPU
//! optimiser, [`GpuAdam::record_step`] records what `clip_grad_norm` + `Adam::step` do, and
//! [`GpuAdam::download`] gives back the model and an `Adam` the CPU trainer can continue
//! from (the checkpoint export, or the CPU taking over from the last synchronised step).

use super::context::{GpuBuffer, GpuContext, Recorder};
use super::kernels::{AdamArgs, CopyArgs, LrRule, SeqRows};
use crate::error::{Error, Result};
use crate::model::{Model, ParamKind};
use crate::train::optim::{Adam, AdamConfig};

/// One trained tensor: its weights and Adam's two moments, each (n).
#[derive(Debug)]
struct Slot {
    name: String,
    w: GpuBuffer,
    m: GpuBuffer,
    v: GpuBuffer,
}

/// Weights and Adam state of every trained tensor of a model, on the GPU, in the model's
/// walk order (`Model::visit_params`, trained tensors only).
#[derive(Debug)]
pub struct GpuAdam {
    pub config: AdamConfig,
    /// Steps recorded so far (`Adam::step`).
    pub step: u64,
    slots: Vec<Slot>,
    /// C when the model shares Q and K (`share_qk`): after each update the K rows of every
    /// `in_proj_weight` / `in_proj_bias` are copied from the Q rows, as
    /// `Model::sync_shared_qk` does.
    share_qk: Option<usize>,
    /// (C, C) scratch for that copy (a buffer may not be read and written by one dispatch).
    scratch: GpuBuffer,
    /// (1) the squared global gradient norm of the last step, before clipping.
    norm_sq: GpuBuffer,
    /// (1) the learning rate of the last step.
    lr: GpuBuffer,
}

impl GpuAdam {
    /// Upload `model`'s trained tensors and `adam`'s step and moments.
    pub fn upload(ctx: &GpuContext, model: &Model, adam: &Adam) -> Result<GpuAdam> {
        let (ms, vs) = adam.moments();
        let mut weights = vec![];
        model.visit_params(&mut |name, t, k| {
            if k == ParamKind::Trained {
                weights.push((name.to_string(), t.data.clone()));
            }
        });
        if ms.len() != weights.len() || vs.len() != weights.len() {
            return Err(Error::Input(format!(
                "optimiser state for {} tensors, the model trains {}",
                ms.len(),
                weights.len()
            )));
        }
        let mut slots = vec![];
        for ((name, w), (m, v)) in weights.into_iter().zip(ms.into_iter().zip(vs)) {
            slots.push(Slot {
                w: ctx.upload(&name, &w)?,
                m: ctx.upload("Adam first moment", &m)?,
                v: ctx.upload("Adam second moment", &v)?,
                name,
            });
        }
        let c = model.config.d_model;
        let share_qk = model.config.share_qk.then_some(c);
        Ok(GpuAdam {
            config: adam.config,
            step: adam.step,
            slots,
            share_qk,
            scratch: ctx.zeros(
                "shared Q/K rows",
                if share_qk.is_some() { c * c } else { 1 },
            )?,
            norm_sq: ctx.zeros("squared gradient norm", 1)?,
            lr: ctx.zeros("learning rate", 1)?,
        })
    }

    /// The trained tensors' names and weight buffers, in walk order: what the forward and
    /// backward kernels read.
    pub fn weights(&self) -> impl Iterator<Item = (&str, &GpuBuffer)> {
        self.slots.iter().map(|s| (s.name.as_str(), &s.w))
    }

    /// (1): the squared global norm of the last recorded step's gradients, before clipping.
    pub fn norm_sq(&self) -> &GpuBuffer {
        &self.norm_sq
    }

    /// (1): the learning rate of the last recorded step.
    pub fn lr(&self) -> &GpuBuffer {
        &self.lr
    }

    /// Record one optimiser step with `grads` (one buffer per trained tensor, in walk order,
    /// each at least as long as its tensor): the global norm, clipping to `clip`, Adam at
    /// the rate `lr` gives for the new step, and the shared Q/K copy. Mirrors
    /// `train::step::train_step_observed` after the backward pass. The step counts as
    /// taken once recorded: if the submission fails, discard this `GpuAdam` and continue
    /// from the last [`GpuAdam::download`].
    pub fn record_step(
        &mut self,
        rec: &mut Recorder,
        grads: &[&GpuBuffer],
        lr: LrRule,
        clip: Option<f32>,
    ) -> Result<()> {
        if grads.len() != self.slots.len() {
            return Err(Error::Gpu(format!(
                "an optimiser step with {} gradients for {} trained tensors",
                grads.len(),
                self.slots.len()
            )));
        }
        let list: Vec<(&GpuBuffer, usize)> = grads
            .iter()
            .zip(&self.slots)
            .map(|(g, s)| (*g, s.w.len()))
            .collect();
        match clip {
            Some(max_norm) => rec.clip_grad_norm(&list, &self.norm_sq, max_norm)?,
            None => rec.grad_norm_squared(&list, &self.norm_sq)?,
        }
        let step = self.step + 1;
        for (s, g) in self.slots.iter().zip(grads) {
            rec.adam(&AdamArgs {
                grad: g,
                weight: &s.w,
                m: &s.m,
                v: &s.v,
                lr_out: &self.lr,
                n: s.w.len(),
                step,
                lr,
                config: self.config,
            })?;
        }
        if let Some(c) = self.share_qk {
            for s in &self.slots {
                // forward: K = Q  →  the K block of in_proj takes the updated Q block.
                let (rows, width) = if s.name.ends_with("in_proj_weight") {
                    (c, c)
                } else if s.name.ends_with("in_proj_bias") {
                    (1, c)
                } else {
                    continue;
                };
                let block = |first| SeqRows {
                    buf: &s.w,
                    seq_rows: 3 * rows,
                    first,
                    stride: width,
                    col: 0,
                };
                let scratch = SeqRows {
                    buf: &self.scratch,
                    seq_rows: rows,
                    first: 0,
                    stride: width,
                    col: 0,
                };
                let copy = |src, dst| CopyArgs {
                    src,
                    dst,
                    from_seq: None,
                    batch: 1,
                    t_len: rows,
                    width,
                };
                rec.copy_rows(&copy(block(0), scratch))?;
                rec.copy_rows(&copy(scratch, block(rows)))?;
            }
        }
        self.step = step;
        Ok(())
    }

    /// Read every weight and moment back (one submission, one readback): `model`'s trained
    /// tensors are overwritten and the returned `Adam` continues from this step on the CPU.
    pub async fn download(&self, ctx: &GpuContext, model: &mut Model) -> Result<Adam> {
        let mut rec = ctx.recorder()?;
        let mut slots = vec![];
        for s in &self.slots {
            slots.push((
                rec.read_all(&s.w)?,
                rec.read_all(&s.m)?,
                rec.read_all(&s.v)?,
            ));
        }
        let back = rec.finish().await?;
        let mut i = 0;
        let mut mismatch = None;
        model.visit_params_mut(&mut |name, t, k| {
            if k != ParamKind::Trained {
                return;
            }
            match slots.get(i) {
                Some(&(w, _, _)) if back.f32(w).len() == t.data.len() => {
                    t.data.copy_from_slice(back.f32(w));
                }
                _ => mismatch = Some(name.to_string()),
            }
            i += 1;
        });
        if let Some(name) = mismatch.or((i != slots.len()).then(|| "the tensor count".into())) {
            return Err(Error::Input(format!(
                "the GPU optimiser state does not fit this model ({name})"
            )));
        }
        let m = slots
            .iter()
            .map(|&(_, m, _)| back.f32(m).to_vec())
            .collect();
        let v = slots
            .iter()
            .map(|&(_, _, v)| back.f32(v).to_vec())
            .collect();
        Adam::resume(model, self.config, self.step, m, v)
    }
}

// STAND-IN: replaced by the real GPU trainer at merge
//
// This file has the signatures of the GPU training step and nothing of its kernels: it keeps
// the model and Adam on the CPU and takes `crate::train::step::train_step`, routing each
// step's statistics through one GPU round trip so that a lost device fails the step with an
// `Err`, as the real trainer does. It exists so the lab's backend choice, its chunk loop and
// its fall-back to the CPU can be built and tested before the real trainer lands.

//! Training steps with the model resident on the GPU (`GpuTrainer`).

use super::context::GpuContext;
use crate::error::Result;
use crate::model::{ForwardOptions, Model, ParamKind};
use crate::tasks::TrainBatch;
use crate::train::optim::Adam;
use crate::train::step::{train_step, StepStats};

/// Dispatch/submission counts of the last step (for the bench and the lab badge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounts {
    pub dispatches: usize,
    pub submissions: usize,
    pub readbacks: usize,
}

/// A model and its Adam state being trained on a GPU device.
pub struct GpuTrainer {
    ctx: GpuContext,
    model: Model,
    adam: Adam,
    counts: StepCounts,
}

impl GpuTrainer {
    /// Uploads the model's weights and Adam's state. Err (a clear message naming what the
    /// GPU cannot train, or the size limit) when this model/config cannot be trained on
    /// this device.
    pub fn new(ctx: &GpuContext, model: &Model, adam: &Adam) -> Result<GpuTrainer> {
        let mut too_big = None;
        model.visit_params(&mut |name, t, k| {
            if k == ParamKind::Trained && too_big.is_none() {
                too_big = ctx.check_buffer_size(name, t.data.len()).err();
            }
        });
        if let Some(e) = too_big {
            return Err(e);
        }
        ctx.zeros("step statistics", 3)?;
        Ok(GpuTrainer {
            ctx: ctx.clone(),
            model: model.clone(),
            adam: adam.clone(),
            counts: StepCounts::default(),
        })
    }

    /// Exactly `crate::train::step::train_step(model, adam, tb, opts, smoothing, lr, clip)`
    /// on the resident model. Weights stay where they are.
    pub async fn step(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
    ) -> Result<StepStats> {
        let s = train_step(
            &mut self.model,
            &mut self.adam,
            tb,
            opts,
            smoothing,
            lr,
            clip,
        )?;
        let back = self.round_trip(&[s.loss, s.grad_norm, s.lr]).await?;
        self.counts = StepCounts {
            dispatches: 0,
            submissions: 1,
            readbacks: 1,
        };
        Ok(StepStats {
            loss: back[0],
            grad_norm: back[1],
            lr: back[2],
        })
    }

    /// Copies weights, BatchNorm running statistics and Adam's state (step, m, v) back.
    pub async fn download(&self, model: &mut Model) -> Result<Adam> {
        self.round_trip(&[0.0]).await?;
        *model = self.model.clone();
        Ok(self.adam.clone())
    }

    pub fn counts(&self) -> StepCounts {
        self.counts
    }

    /// `values` uploaded and read back in one submission: an `Err` once the device is gone.
    async fn round_trip(&self, values: &[f32]) -> Result<Vec<f32>> {
        let buf = self.ctx.upload("step statistics", values)?;
        let mut rec = self.ctx.recorder()?;
        let slot = rec.read_all(&buf)?;
        let back = rec.finish().await?;
        Ok(back.f32(slot).to_vec())
    }
}

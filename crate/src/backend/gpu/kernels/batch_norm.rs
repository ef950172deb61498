//! BatchNorm: eval mode with the running statistics (`shaders/batch_norm.wgsl`), train mode
//! with the batch's statistics and the running update (`shaders/batch_norm_train.wgsl`),
//! and the train-mode backward (`shaders/batch_norm_backward.wgsl`), mirroring
//! `model::norm::batchnorm_eval_forward`, `batchnorm_train_forward` and
//! `train::backward::norm::batchnorm_train_backward`.

use bytemuck::{Pod, Zeroable};

use super::launch::{groups_for, need, u, RowParams};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};
use crate::model::norm::BN_MOMENTUM;

impl Recorder {
    /// `y (R, C) = (x − running_mean) / √(running_var + ε) · γ + β`:
    /// `shaders/batch_norm.wgsl`, mirroring `model::norm::batchnorm_eval_forward`.
    /// `stats` is (running_mean, running_var).
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        beta: &GpuBuffer,
        stats: (&GpuBuffer, &GpuBuffer),
        y: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "batch norm input")?;
        for (b, what) in [
            (gamma, "batch norm weight"),
            (beta, "batch norm bias"),
            (stats.0, "running mean"),
            (stats.1, "running var"),
        ] {
            need(b, c, what)?;
        }
        need(y, rows * c, "batch norm output")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::BatchNorm),
            bytemuck::bytes_of(&p),
            &[
                &x.buffer,
                &gamma.buffer,
                &beta.buffer,
                &stats.0.buffer,
                &stats.1.buffer,
                &y.buffer,
            ],
            groups_for(rows * c)?,
        )
    }
}

/// Arguments of [`Recorder::batch_norm_train`].
#[derive(Clone, Copy, Debug)]
pub struct BatchNormTrainArgs<'a> {
    /// (R, C)
    pub x: &'a GpuBuffer,
    /// (C) γ and β.
    pub gamma: &'a GpuBuffer,
    pub beta: &'a GpuBuffer,
    /// (R, C), written.
    pub y: &'a GpuBuffer,
    /// (3, C), written: μ, σ² (biased), rstd.
    pub stats: &'a GpuBuffer,
    /// (running_mean, running_var), each (C), updated in place; `None` leaves them.
    pub running: Option<(&'a GpuBuffer, &'a GpuBuffer)>,
    pub rows: usize,
    pub c: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BatchNormTrainParams {
    rows: u32,
    c: u32,
    keep: f32,
    momentum: f32,
    unbias: f32,
    _pad: [u32; 3],
}

impl Recorder {
    /// BatchNorm with the batch's statistics (and the running update):
    /// `shaders/batch_norm_train.wgsl`, mirroring `model::norm::batchnorm_train_forward`
    /// and `batchnorm_running_update` (which needs at least two rows).
    pub fn batch_norm_train(&mut self, x: &BatchNormTrainArgs) -> Result<()> {
        let (rows, c) = (x.rows, x.c);
        if rows == 0 {
            return Err(Error::Gpu("batch norm over zero rows".into()));
        }
        if x.running.is_some() && rows < 2 {
            return Err(Error::Gpu(
                "the running variance needs at least two rows (R / (R − 1))".into(),
            ));
        }
        need(x.x, rows * c, "batch norm input")?;
        need(x.gamma, c, "batch norm weight")?;
        need(x.beta, c, "batch norm bias")?;
        need(x.y, rows * c, "batch norm output")?;
        need(x.stats, 3 * c, "batch norm statistics")?;
        if let Some((m, v)) = x.running {
            need(m, c, "running mean")?;
            need(v, c, "running var")?;
        }
        let p = BatchNormTrainParams {
            rows: u(rows, "rows")?,
            c: u(c, "C")?,
            // As `batchnorm_running_update` computes them, in f32.
            keep: 1.0 - BN_MOMENTUM,
            momentum: BN_MOMENTUM,
            unbias: rows as f32 / (rows.max(2) - 1) as f32,
            _pad: [0; 3],
        };
        let key = PipelineKey {
            kernel: Kernel::BatchNormTrain,
            constants: vec![("HAS_UPDATE", x.running.is_some() as u32)],
        };
        let dummy = self.ctx().dummy().clone();
        let (rm, rv) = match x.running {
            Some((m, v)) => (&m.buffer, &v.buffer),
            None => (&dummy, &dummy),
        };
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[
                &x.x.buffer,
                &x.gamma.buffer,
                &x.beta.buffer,
                &x.y.buffer,
                &x.stats.buffer,
                rm,
                rv,
            ],
            u(c, "C")?,
        )
    }
}

/// Arguments of [`Recorder::batch_norm_backward`].
#[derive(Clone, Copy, Debug)]
pub struct BatchNormGradArgs<'a> {
    /// (R, C) gradient of the output.
    pub dy: &'a GpuBuffer,
    /// (R, C) the forward's input.
    pub x: &'a GpuBuffer,
    /// (C)
    pub gamma: &'a GpuBuffer,
    /// (3, C) from [`Recorder::batch_norm_train`].
    pub stats: &'a GpuBuffer,
    /// (R, C), (C), (C): ADDED to.
    pub dx: &'a GpuBuffer,
    pub dgamma: &'a GpuBuffer,
    pub dbeta: &'a GpuBuffer,
    pub rows: usize,
    pub c: usize,
}

impl Recorder {
    /// dx, dγ, dβ (added) of train-mode BatchNorm: `shaders/batch_norm_backward.wgsl`,
    /// mirroring `train::backward::norm::batchnorm_train_backward`.
    pub fn batch_norm_backward(&mut self, x: &BatchNormGradArgs) -> Result<()> {
        let (rows, c) = (x.rows, x.c);
        need(x.dy, rows * c, "batch norm output gradient")?;
        need(x.x, rows * c, "batch norm input")?;
        need(x.gamma, c, "batch norm weight")?;
        need(x.stats, 3 * c, "batch norm statistics")?;
        need(x.dx, rows * c, "batch norm input gradient")?;
        need(x.dgamma, c, "batch norm weight gradient")?;
        need(x.dbeta, c, "batch norm bias gradient")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::BatchNormBackward),
            bytemuck::bytes_of(&p),
            &[
                &x.dy.buffer,
                &x.x.buffer,
                &x.gamma.buffer,
                &x.stats.buffer,
                &x.dx.buffer,
                &x.dgamma.buffer,
                &x.dbeta.buffer,
            ],
            u(c, "C")?,
        )
    }
}

//! LayerNorm (`shaders/layer_norm.wgsl`) and its backward
//! (`shaders/layer_norm_backward.wgsl`), mirroring `model::norm::layernorm_forward` and
//! `train::backward::norm::layernorm_backward`.

use super::launch::{chunks, groups_for, need, u, with_mode, FourU32, RowParams, MAX_LOOP};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::Result;

impl Recorder {
    /// `y (R, C) = LayerNorm(x (R, C)) · γ + β`: `shaders/layer_norm.wgsl`, mirroring
    /// `model::norm::layernorm_forward`.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        beta: &GpuBuffer,
        y: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "layer norm input")?;
        need(gamma, c, "layer norm weight")?;
        need(beta, c, "layer norm bias")?;
        need(y, rows * c, "layer norm output")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::LayerNorm),
            bytemuck::bytes_of(&p),
            &[&x.buffer, &gamma.buffer, &beta.buffer, &y.buffer],
            u(rows, "rows")?,
        )
    }

    /// Backward of `y (R, C) = LayerNorm(x) · γ + β`: adds into `dx` (R, C), `dgamma` and
    /// `dbeta` (C); `shaders/layer_norm_backward.wgsl` (two dispatches), mirroring
    /// `train::backward::norm::layernorm_backward`.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm_backward(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        dy: &GpuBuffer,
        dx: &GpuBuffer,
        dgamma: &GpuBuffer,
        dbeta: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "layer norm input")?;
        need(gamma, c, "layer norm weight")?;
        need(dy, rows * c, "layer norm output gradient")?;
        need(dx, rows * c, "layer norm input gradient")?;
        need(dgamma, c, "layer norm weight gradient")?;
        need(dbeta, c, "layer norm bias gradient")?;
        let stats = self.ctx().zeros("layer norm statistics", 2 * rows)?; // (R, 2)
        let params = |r0: usize, r1: usize| -> Result<FourU32> {
            Ok(FourU32 {
                a: u(rows, "rows")?,
                b: u(c, "C")?,
                c: u(r0, "first row")?,
                d: u(r1, "last row")?,
            })
        };
        let bufs = [
            &x.buffer,
            &gamma.buffer,
            &dy.buffer,
            &stats.buffer,
            &dx.buffer,
            &dgamma.buffer,
            &dbeta.buffer,
        ];
        self.dispatch(
            with_mode(Kernel::LayerNormBackward, 0),
            bytemuck::bytes_of(&params(0, rows)?),
            &bufs,
            u(rows, "rows")?,
        )?;
        for (r0, r1) in chunks(rows, MAX_LOOP) {
            self.dispatch(
                with_mode(Kernel::LayerNormBackward, 1),
                bytemuck::bytes_of(&params(r0, r1)?),
                &bufs,
                groups_for(c)?,
            )?;
        }
        Ok(())
    }
}

//! The masked softmax of attention scores (`shaders/softmax.wgsl`) and its backward
//! (`shaders/softmax_backward.wgsl`), mirroring the softmax step of `model::attention` and
//! of `train::backward::attention::attention_backward`.

use super::launch::{need, u, RowParams};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::Result;

impl Recorder {
    /// `probs (R, S) = masked softmax(scores (R, S))` row by row:
    /// `shaders/softmax.wgsl`, mirroring the softmax step of `model::attention`.
    pub fn softmax(
        &mut self,
        scores: &GpuBuffer,
        probs: &GpuBuffer,
        rows: usize,
        s_len: usize,
    ) -> Result<()> {
        need(scores, rows * s_len, "scores")?;
        need(probs, rows * s_len, "probabilities")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(s_len, "S")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::Softmax),
            bytemuck::bytes_of(&p),
            &[&scores.buffer, &probs.buffer],
            u(rows, "rows")?,
        )
    }

    /// `dscores (R, S) = probs ⊙ (dprobs − rowsum(dprobs ⊙ probs))`:
    /// `shaders/softmax_backward.wgsl`, mirroring the softmax step of
    /// `train::backward::attention::attention_backward`. `dscores` is written.
    pub fn softmax_backward(
        &mut self,
        probs: &GpuBuffer,
        dprobs: &GpuBuffer,
        dscores: &GpuBuffer,
        rows: usize,
        s_len: usize,
    ) -> Result<()> {
        need(probs, rows * s_len, "probabilities")?;
        need(dprobs, rows * s_len, "probability gradient")?;
        need(dscores, rows * s_len, "score gradient")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(s_len, "S")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::SoftmaxBackward),
            bytemuck::bytes_of(&p),
            &[&probs.buffer, &dprobs.buffer, &dscores.buffer],
            u(rows, "rows")?,
        )
    }
}

//! The training loss with label smoothing and its gradient in one kernel
//! (`shaders/cross_entropy.wgsl`, three dispatches), mirroring
//! `train::loss::cross_entropy_forward` and `cross_entropy_backward`.

use bytemuck::{Pod, Zeroable};

use super::launch::{groups_for, need, u, with_mode};
use crate::backend::gpu::catalogue::Kernel;
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

/// Arguments of [`Recorder::cross_entropy`]: N rows of V logits.
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropyArgs<'a> {
    /// (N, V)
    pub logits: &'a GpuBuffer,
    /// (N) u32, each < V.
    pub targets: &'a GpuBuffer,
    /// A target id whose rows are not counted (the LM's pad id); `None` counts every row.
    pub ignore: Option<u32>,
    pub smoothing: f32,
    /// d(objective)/d(mean loss), 1 for training.
    pub dloss: f32,
    /// (2) written: (mean loss, counted rows).
    pub loss: &'a GpuBuffer,
    /// (N, V) added to; `None` computes the loss alone.
    pub dlogits: Option<&'a GpuBuffer>,
    pub rows: usize,
    pub v: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CrossEntropyParams {
    rows: u32,
    v: u32,
    ignore_id: u32,
    has_ignore: u32,
    smoothing: f32,
    dloss: f32,
    _pad: [u32; 2],
}

impl Recorder {
    /// Cross-entropy with label smoothing: the mean loss and count into `loss`, and (when
    /// asked) the logits' gradient added to `dlogits`: `shaders/cross_entropy.wgsl` (three
    /// dispatches), mirroring `train::loss::cross_entropy_forward` and
    /// `cross_entropy_backward`. Targets must be below V.
    pub fn cross_entropy(&mut self, x: &CrossEntropyArgs) -> Result<()> {
        let (rows, v) = (x.rows, x.v);
        if v == 0 && rows > 0 {
            return Err(Error::Gpu("cross-entropy over 0 classes".into()));
        }
        need(x.logits, rows * v, "logits")?;
        need(x.targets, rows, "targets")?;
        need(x.loss, 2, "loss")?;
        if let Some(d) = x.dlogits {
            need(d, rows * v, "logits gradient")?;
        }
        let probs = self.ctx().zeros("probabilities", rows * v)?; // (N, V)
        let row_loss = self.ctx().zeros("row losses", rows)?; // (N)
        let p = CrossEntropyParams {
            rows: u(rows, "rows")?,
            v: u(v, "V")?,
            ignore_id: x.ignore.unwrap_or(0),
            has_ignore: x.ignore.is_some() as u32,
            smoothing: x.smoothing,
            dloss: x.dloss,
            _pad: [0; 2],
        };
        let dummy = self.ctx().zeros("no logits gradient", 1)?;
        let dlogits = x.dlogits.unwrap_or(&dummy);
        let bufs = [
            &x.logits.buffer,
            &x.targets.buffer,
            &probs.buffer,
            &row_loss.buffer,
            &x.loss.buffer,
            &dlogits.buffer,
        ];
        let uniform = bytemuck::bytes_of(&p);
        self.dispatch(
            with_mode(Kernel::CrossEntropy, 0),
            uniform,
            &bufs,
            u(rows, "rows")?,
        )?;
        self.dispatch(with_mode(Kernel::CrossEntropy, 1), uniform, &bufs, 1)?;
        if x.dlogits.is_some() {
            self.dispatch(
                with_mode(Kernel::CrossEntropy, 2),
                uniform,
                &bufs,
                groups_for(rows * v)?,
            )?;
        }
        Ok(())
    }
}

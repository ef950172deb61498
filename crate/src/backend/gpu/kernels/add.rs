//! The residual connection, `x += y` (`shaders/add.wgsl`). Its backward is the gradient
//! itself, passed to both branches, and needs no kernel.

use super::launch::{groups_for, need, u, CountParams};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::Result;

impl Recorder {
    /// `x[..n] += y[..n]`: `shaders/add.wgsl`, the residual connection.
    pub fn add(&mut self, x: &GpuBuffer, y: &GpuBuffer, n: usize) -> Result<()> {
        need(x, n, "residual")?;
        need(y, n, "sublayer output")?;
        let p = CountParams {
            n: u(n, "N")?,
            _pad: [0; 3],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::Add),
            bytemuck::bytes_of(&p),
            &[&y.buffer, &x.buffer],
            groups_for(n)?,
        )
    }
}

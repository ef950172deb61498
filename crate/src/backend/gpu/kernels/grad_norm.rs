//! The global gradient norm and clipping (`shaders/grad_norm.wgsl`), mirroring
//! `train::optim::grad_norm` and `clip_grad_norm`.

use bytemuck::{Pod, Zeroable};

use super::launch::{chunks, groups_for, need, u, with_mode, MAX_LOOP};
use crate::backend::gpu::catalogue::Kernel;
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::Result;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct NormParams {
    n: u32,
    accumulate: u32,
    max_norm: f32,
    start: u32,
}

impl Recorder {
    /// The sum of squares of every gradient in `grads` ((buffer, elements) pairs) into
    /// `acc[0]`: the global norm is its square root. `shaders/grad_norm.wgsl`, mirroring
    /// `train::optim::grad_norm`.
    pub fn grad_norm_squared(
        &mut self,
        grads: &[(&GpuBuffer, usize)],
        acc: &GpuBuffer,
    ) -> Result<()> {
        need(acc, 1, "norm accumulator")?;
        let mut first = true;
        for &(g, n) in grads {
            need(g, n, "gradient")?;
            // Each of the 64 threads loops at most MAX_LOOP times per dispatch.
            for (start, end) in chunks(n, 64 * MAX_LOOP) {
                let p = NormParams {
                    n: u(end, "N")?,
                    accumulate: (!first) as u32,
                    max_norm: 0.0,
                    start: u(start, "first element")?,
                };
                first = false;
                self.dispatch(
                    with_mode(Kernel::GradNorm, 0),
                    bytemuck::bytes_of(&p),
                    &[&g.buffer, &acc.buffer],
                    1,
                )?;
            }
        }
        Ok(())
    }

    /// Global-norm clipping: [`Recorder::grad_norm_squared`], then every gradient scaled by
    /// `max_norm / (norm + 1e-6)` when that is below 1. `acc[0]` keeps the squared norm
    /// before clipping. Mirrors `train::optim::clip_grad_norm`.
    pub fn clip_grad_norm(
        &mut self,
        grads: &[(&GpuBuffer, usize)],
        acc: &GpuBuffer,
        max_norm: f32,
    ) -> Result<()> {
        self.grad_norm_squared(grads, acc)?;
        for &(g, n) in grads {
            let p = NormParams {
                n: u(n, "N")?,
                accumulate: 0,
                max_norm,
                start: 0,
            };
            self.dispatch(
                with_mode(Kernel::GradNorm, 1),
                bytemuck::bytes_of(&p),
                &[&g.buffer, &acc.buffer],
                groups_for(n)?,
            )?;
        }
        Ok(())
    }
}

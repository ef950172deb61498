//! Rotary positions on q and k in place (`shaders/rope.wgsl`) and the rotation of their
//! gradients back (`shaders/rope_backward.wgsl`), mirroring `model::position::rope_forward`
//! and `train::backward::position::rope_backward`.

use bytemuck::{Pod, Zeroable};

use super::launch::{groups_for, need, u, Rows};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct RopeParams {
    rows: u32,
    t_len: u32,
    stride: u32,
    col: u32,
    n_heads: u32,
    d_head: u32,
    pos0: u32,
    _pad: u32,
}

impl Recorder {
    /// Rotate `n_heads` heads of D columns of every row of `x` in place by the RoPE angle
    /// of position `pos0 + r % T`: `shaders/rope.wgsl`, mirroring
    /// `model::position::rope_forward`. `rot` is the (max_len, D/2, 2) cos/sin table.
    #[allow(clippy::too_many_arguments)]
    pub fn rope(
        &mut self,
        rot: &GpuBuffer,
        x: Rows,
        rows: usize,
        t_len: usize,
        n_heads: usize,
        d_head: usize,
        pos0: usize,
    ) -> Result<()> {
        self.rope_pass(
            Kernel::Rope,
            "rope input",
            rot,
            x,
            rows,
            t_len,
            n_heads,
            d_head,
            pos0,
        )
    }

    /// Rotate the gradients of `n_heads` heads of every row of `dx` back by the RoPE angle
    /// of position `pos0 + r % T`, in place: `shaders/rope_backward.wgsl`, mirroring
    /// `train::backward::position::rope_backward`. `rot` is the (max_len, D/2, 2) table.
    #[allow(clippy::too_many_arguments)]
    pub fn rope_backward(
        &mut self,
        rot: &GpuBuffer,
        dx: Rows,
        rows: usize,
        t_len: usize,
        n_heads: usize,
        d_head: usize,
        pos0: usize,
    ) -> Result<()> {
        self.rope_pass(
            Kernel::RopeBackward,
            "rope gradient",
            rot,
            dx,
            rows,
            t_len,
            n_heads,
            d_head,
            pos0,
        )
    }

    /// One rotation pass over `x` in place (`Kernel::Rope` forward, `Kernel::RopeBackward`
    /// by −angle): the two kernels share their bindings, parameters and grid.
    #[allow(clippy::too_many_arguments)]
    fn rope_pass(
        &mut self,
        kernel: Kernel,
        what: &str,
        rot: &GpuBuffer,
        x: Rows,
        rows: usize,
        t_len: usize,
        n_heads: usize,
        d_head: usize,
        pos0: usize,
    ) -> Result<()> {
        if !d_head.is_multiple_of(2) {
            return Err(Error::Gpu(format!("rope needs an even D, got {d_head}")));
        }
        need(x.buf, x.extent(rows, n_heads * d_head), what)?;
        let last = if rows == 0 { 0 } else { pos0 + t_len };
        need(rot, last * d_head, "rope table")?;
        let p = RopeParams {
            rows: u(rows, "rows")?,
            t_len: u(t_len.max(1), "T")?,
            stride: u(x.stride, "stride")?,
            col: u(x.col, "col")?,
            n_heads: u(n_heads, "H")?,
            d_head: u(d_head, "D")?,
            pos0: u(pos0, "pos0")?,
            _pad: 0,
        };
        self.dispatch(
            PipelineKey::plain(kernel),
            bytemuck::bytes_of(&p),
            &[&rot.buffer, &x.buf.buffer],
            groups_for(rows * n_heads * d_head / 2)?,
        )
    }
}

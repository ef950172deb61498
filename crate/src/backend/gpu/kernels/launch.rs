//! What every launch function uses: the checks of its arguments, rows of a buffer, the
//! uniform blocks several kernels share and the split of long loops into dispatches.

use bytemuck::{Pod, Zeroable};

use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::GpuBuffer;
use crate::error::{Error, Result};

/// Threads per workgroup of the element-wise kernels.
const WG: usize = 64;

pub(super) fn groups_for(n: usize) -> Result<u32> {
    u32::try_from(n.div_ceil(WG))
        .map_err(|_| Error::Gpu(format!("{n} elements are too many for one dispatch")))
}

pub(super) fn u(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Gpu(format!("{what} = {n} does not fit in 32 bits")))
}

/// An argument check: the kernel would read or write element `needed - 1` of `buf`.
pub(super) fn need(buf: &GpuBuffer, needed: usize, what: &str) -> Result<()> {
    if needed > buf.len() {
        return Err(Error::Gpu(format!(
            "{what} holds {} elements, the kernel needs {needed}",
            buf.len()
        )));
    }
    Ok(())
}

/// Rows of a buffer: row r starts at element `r · stride + col`.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    pub buf: &'a GpuBuffer,
    pub stride: usize,
    pub col: usize,
}

impl<'a> Rows<'a> {
    /// A plain row-major (R, width) buffer.
    pub fn dense(buf: &'a GpuBuffer, width: usize) -> Self {
        Rows {
            buf,
            stride: width,
            col: 0,
        }
    }

    /// Elements needed to hold `rows` rows of `width` columns.
    pub(super) fn extent(&self, rows: usize, width: usize) -> usize {
        if rows == 0 || width == 0 {
            0
        } else {
            (rows - 1) * self.stride + self.col + width
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(super) struct CountParams {
    pub n: u32,
    pub _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(super) struct RowParams {
    pub rows: u32,
    pub width: u32,
    pub _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(super) struct FourU32 {
    pub a: u32,
    pub b: u32,
    pub c: u32,
    pub d: u32,
}

/// The most iterations a thread's loops may run in one dispatch: llvmpipe (software
/// Vulkan) counts every loop iteration of one invocation, across all its loops, and after
/// 65 535 ends every loop it is in or enters (docs/gpu-training.md). A launch splits longer
/// sums into dispatches of at most this many rows, each adding to the last in order.
pub(super) const MAX_LOOP: usize = 32_768;

/// [start, end) ranges of at most `step` covering 0..n; one empty range when n is 0.
pub(super) fn chunks(n: usize, step: usize) -> Vec<(usize, usize)> {
    if n == 0 {
        return vec![(0, 0)];
    }
    (0..n)
        .step_by(step)
        .map(|s| (s, (s + step).min(n)))
        .collect()
}

pub(super) fn with_mode(kernel: Kernel, mode: u32) -> PipelineKey {
    PipelineKey {
        kernel,
        constants: vec![("MODE", mode)],
    }
}

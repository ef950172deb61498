//! Inverted dropout with the CPU's ChaCha8 stream (`shaders/dropout.wgsl`) and its backward,
//! the gradient times the saved mask (`shaders/dropout_backward.wgsl`), mirroring
//! `model::dropout::dropout_mask` and the dropout lines of `train::backward`.

use bytemuck::{Pod, Zeroable};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::launch::{groups_for, need, u, RowParams};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

/// The key of the ChaCha8 stream a train-mode forward pass draws its dropout masks from:
/// the 32-byte seed `ChaCha8Rng::seed_from_u64(seed)` expands `seed` into, as 8 little-endian
/// words (what `shaders/dropout.wgsl` needs to produce the same words).
pub fn dropout_key(seed: u64) -> [u32; 8] {
    let bytes = ChaCha8Rng::seed_from_u64(seed).get_seed();
    let mut key = [0u32; 8];
    for (k, b) in key.iter_mut().zip(bytes.chunks_exact(4)) {
        *k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    key
}

/// Arguments of [`Recorder::dropout`]: masks for the `n` draws at stream positions
/// `offset .. offset + n` (`offset` = the draws the forward pass made before this one).
#[derive(Clone, Copy, Debug)]
pub struct DropoutArgs<'a> {
    /// [`dropout_key`] of the pass's seed.
    pub key: [u32; 8],
    /// Stream position (in 32-bit words = earlier draws) of element 0.
    pub offset: u64,
    /// The drop probability, in [0, 1).
    pub p: f32,
    pub n: usize,
    /// (N), written: 0 or 1/(1 − p).
    pub mask: &'a GpuBuffer,
    /// (N), multiplied by the mask in place, if given.
    pub x: Option<&'a GpuBuffer>,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DropoutParams {
    key: [u32; 8],
    n: u32,
    offset_lo: u32,
    offset_hi: u32,
    p: f32,
    keep: f32,
    _pad: [u32; 3],
}

impl Recorder {
    /// Dropout masks from the CPU's ChaCha8 stream (and, with `x`, applied in place):
    /// `shaders/dropout.wgsl`, mirroring `model::dropout::dropout_mask`.
    pub fn dropout(&mut self, x: &DropoutArgs) -> Result<()> {
        if !(0.0..1.0).contains(&x.p) {
            return Err(Error::Gpu(format!(
                "dropout probability {} is outside [0, 1)",
                x.p
            )));
        }
        need(x.mask, x.n, "dropout mask")?;
        if let Some(b) = x.x {
            need(b, x.n, "dropout input")?;
        }
        let p = DropoutParams {
            key: x.key,
            n: u(x.n, "N")?,
            offset_lo: x.offset as u32,
            offset_hi: (x.offset >> 32) as u32,
            p: x.p,
            // As `dropout_mask` computes it.
            keep: 1.0 / (1.0 - x.p),
            _pad: [0; 3],
        };
        let key = PipelineKey {
            kernel: Kernel::Dropout,
            constants: vec![("APPLY", x.x.is_some() as u32)],
        };
        let dummy = self.ctx().dummy().clone();
        let target = x.x.map(|b| &b.buffer).unwrap_or(&dummy);
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[&x.mask.buffer, target],
            groups_for(x.n)?,
        )
    }

    /// `dx[..n] *= mask[..n]` in place: `shaders/dropout_backward.wgsl`, the backward of
    /// [`Recorder::dropout`].
    pub fn dropout_backward(&mut self, mask: &GpuBuffer, dx: &GpuBuffer, n: usize) -> Result<()> {
        need(mask, n, "dropout mask")?;
        need(dx, n, "dropout gradient")?;
        let p = RowParams {
            rows: u(n, "N")?,
            width: 0,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::DropoutBackward),
            bytemuck::bytes_of(&p),
            &[&mask.buffer, &dx.buffer],
            groups_for(n)?,
        )
    }
}

//! Token embedding with scaling and absolute positions (`shaders/embedding.wgsl`), and the
//! gradients of its two tables: the tokens' (`shaders/embedding_backward.wgsl`) and the
//! learned positions' (`shaders/positions_backward.wgsl`). Mirrors
//! `model::embedding::embedding_forward`, `train::backward::embedding::embedding_backward`
//! and `train::backward::position::learned_positions_backward`.

use bytemuck::{Pod, Zeroable};

use super::launch::{chunks, groups_for, need, u, FourU32, MAX_LOOP};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct EmbeddingParams {
    rows: u32,
    t_len: u32,
    c: u32,
    pos0: u32,
    scale: f32,
    _pad: [u32; 3],
}

impl Recorder {
    /// `out (B·T, C) = table[tokens] · scale + pos[pos0 + t]`: `shaders/embedding.wgsl`,
    /// mirroring `model::embedding::embedding_forward` and the absolute position step.
    /// Token ids must already be checked to be below V.
    #[allow(clippy::too_many_arguments)]
    pub fn embedding(
        &mut self,
        tokens: &GpuBuffer,
        table: &GpuBuffer,
        pos: Option<&GpuBuffer>,
        out: &GpuBuffer,
        (rows, t_len, c): (usize, usize, usize),
        pos0: usize,
        scale: f32,
    ) -> Result<()> {
        need(tokens, rows, "tokens")?;
        need(out, rows * c, "embedding output")?;
        if let Some(pt) = pos {
            let last = if rows == 0 { 0 } else { pos0 + t_len };
            need(pt, last * c, "position table")?;
        }
        if t_len == 0 && rows > 0 {
            return Err(Error::Gpu("embedding: T is 0 with rows to fill".into()));
        }
        let p = EmbeddingParams {
            rows: u(rows, "rows")?,
            t_len: u(t_len.max(1), "T")?,
            c: u(c, "C")?,
            pos0: u(pos0, "pos0")?,
            scale,
            _pad: [0; 3],
        };
        let key = PipelineKey {
            kernel: Kernel::Embedding,
            constants: vec![("HAS_POS", pos.is_some() as u32)],
        };
        let dummy = self.ctx().dummy().clone();
        let pos = pos.map(|b| &b.buffer).unwrap_or(&dummy);
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[&tokens.buffer, &table.buffer, pos, &out.buffer],
            groups_for(rows * c)?,
        )
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct EmbeddingGradParams {
    rows: u32,
    v: u32,
    c: u32,
    scale: f32,
    r0: u32,
    r1: u32,
    _pad: [u32; 2],
}

impl Recorder {
    /// `dtable (V, C) += dx[r] · scale` at the row of each token:
    /// `shaders/embedding_backward.wgsl`, mirroring
    /// `train::backward::embedding::embedding_backward`. Token ids must be below V.
    pub fn embedding_backward(
        &mut self,
        tokens: &GpuBuffer,
        dx: &GpuBuffer,
        dtable: &GpuBuffer,
        (rows, v, c): (usize, usize, usize),
        scale: f32,
    ) -> Result<()> {
        need(tokens, rows, "tokens")?;
        need(dx, rows * c, "embedding output gradient")?;
        need(dtable, v * c, "embedding table gradient")?;
        for (r0, r1) in chunks(rows, MAX_LOOP) {
            let p = EmbeddingGradParams {
                rows: u(rows, "rows")?,
                v: u(v, "V")?,
                c: u(c, "C")?,
                scale,
                r0: u(r0, "first row")?,
                r1: u(r1, "last row")?,
                _pad: [0; 2],
            };
            self.dispatch(
                PipelineKey::plain(Kernel::EmbeddingBackward),
                bytemuck::bytes_of(&p),
                &[&tokens.buffer, &dx.buffer, &dtable.buffer],
                groups_for(v * c)?,
            )?;
        }
        Ok(())
    }

    /// `dpos[pos0 + t] += Σ_b dx[b, t]`: `shaders/positions_backward.wgsl`, mirroring
    /// `train::backward::position::learned_positions_backward`.
    pub fn positions_backward(
        &mut self,
        dx: &GpuBuffer,
        dpos: &GpuBuffer,
        (b, t, c): (usize, usize, usize),
        pos0: usize,
    ) -> Result<()> {
        need(dx, b * t * c, "embedding output gradient")?;
        need(dpos, (pos0 + t) * c, "position table gradient")?;
        let p = FourU32 {
            a: u(b, "B")?,
            b: u(t, "T")?,
            c: u(c, "C")?,
            d: u(pos0, "pos0")?,
        };
        self.dispatch(
            PipelineKey::plain(Kernel::PositionsBackward),
            bytemuck::bytes_of(&p),
            &[&dx.buffer, &dpos.buffer],
            groups_for(t * c)?,
        )
    }
}

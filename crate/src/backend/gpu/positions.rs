//! The constant position tables the kernels read, for every encoding at once: the absolute
//! table the embedding step adds (the learned `pos_embed.weight`, or the sinusoidal table),
//! RoPE's angles and ALiBi's slopes. Computed on the CPU by the same functions the CPU pass
//! uses (`model::position`), uploaded once, and made again only for a longer input.
//!
//! Relative positions have no table: their embeddings are parameters of each attention
//! sublayer (`rel_k`, `rel_v`).

use super::context::{GpuBuffer, GpuContext};
use crate::config::{ModelConfig, PosEncoding};
use crate::error::{Error, Result};
use crate::model::position::{alibi_slopes, rope_angle, sinusoidal_table};

/// `(cos a, sin a)` for positions `0..n` and every pair of a D-wide head:
/// (n, D/2, 2), the table rope.wgsl reads, from the CPU's `position::rope_angle`.
pub fn rope_table(n: usize, d_head: usize) -> Vec<f32> {
    let half = d_head / 2;
    let mut out = Vec::with_capacity(n * half * 2); // (n, D/2, 2)
    for pos in 0..n {
        for p in 0..half {
            let (c, s) = rope_angle(pos, p, d_head);
            out.push(c);
            out.push(s);
        }
    }
    out
}

/// A model's position tables on one device, covering positions `0..len`.
#[derive(Clone)]
pub struct PositionTables {
    encoding: PosEncoding,
    /// P: positions the tables cover.
    len: usize,
    /// (P, C) added by the embedding step: learned (P = max_len) or sinusoidal.
    absolute: Option<GpuBuffer>,
    /// (P, D/2, 2) RoPE cos/sin.
    rope: Option<GpuBuffer>,
    /// (H) ALiBi slopes.
    alibi: Option<GpuBuffer>,
}

impl PositionTables {
    /// The tables of `cfg` for at least `len` positions (and never fewer than max_len).
    /// `learned` is the model's uploaded `pos_embed.weight` (learned positions only).
    pub fn new(
        ctx: &GpuContext,
        cfg: &ModelConfig,
        learned: Option<&GpuBuffer>,
        len: usize,
    ) -> Result<PositionTables> {
        let p = len.max(cfg.max_len);
        let (c, d) = (cfg.d_model, cfg.d_head());
        let absolute = match cfg.pos_encoding {
            PosEncoding::Learned => Some(
                learned
                    .ok_or_else(|| {
                        Error::Checkpoint("learned positions need pos_embed.weight".into())
                    })?
                    .clone(),
            ),
            PosEncoding::Sinusoidal => {
                let mut table = vec![0.0f32; p * c]; // (P, C)
                sinusoidal_table(&mut table, 0, p, c);
                Some(ctx.upload("sinusoidal table", &table)?)
            }
            _ => None,
        };
        let rope = (cfg.pos_encoding == PosEncoding::Rope)
            .then(|| ctx.upload("rope table", &rope_table(p, d)))
            .transpose()?;
        let alibi = (cfg.pos_encoding == PosEncoding::Alibi)
            .then(|| ctx.upload("alibi slopes", &alibi_slopes(cfg.n_heads)))
            .transpose()?;
        // Learned positions stop at max_len (the batch checks refuse longer inputs).
        let len = if cfg.pos_encoding == PosEncoding::Learned {
            cfg.max_len
        } else {
            p
        };
        Ok(PositionTables {
            encoding: cfg.pos_encoding,
            len,
            absolute,
            rope,
            alibi,
        })
    }

    /// Tables for `len` positions: a copy of these when they cover them (the buffers are
    /// shared), otherwise new ones as long as `len`. Sinusoidal positions and RoPE go on
    /// past max_len; learned ones stop there.
    pub fn covering(
        &self,
        ctx: &GpuContext,
        cfg: &ModelConfig,
        len: usize,
    ) -> Result<PositionTables> {
        if len <= self.len || !self.grows() {
            return Ok(self.clone());
        }
        PositionTables::new(ctx, cfg, self.absolute.as_ref(), len)
    }

    /// Grow these tables in place to cover `len` positions (see [`Self::covering`]).
    pub fn grow(&mut self, ctx: &GpuContext, cfg: &ModelConfig, len: usize) -> Result<()> {
        if len > self.len && self.grows() {
            *self = self.covering(ctx, cfg, len)?;
        }
        Ok(())
    }

    /// Whether a longer input needs longer tables.
    fn grows(&self) -> bool {
        matches!(self.encoding, PosEncoding::Sinusoidal | PosEncoding::Rope)
    }

    /// P: positions covered.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// (P, C) the absolute table the embedding step adds, if the encoding has one.
    pub fn absolute(&self) -> Option<&GpuBuffer> {
        self.absolute.as_ref()
    }

    /// (P, D/2, 2) RoPE's angles.
    pub fn rope(&self) -> Option<&GpuBuffer> {
        self.rope.as_ref()
    }

    /// (H) ALiBi's slopes.
    pub fn alibi(&self) -> Option<&GpuBuffer> {
        self.alibi.as_ref()
    }
}

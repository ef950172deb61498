//! The attention sublayers of the GPU pass: self-attention (over the batch, or appending to
//! and attending over a KV cache) and cross-attention (over the encoder output, or the
//! cache's keys and values of it), both through one scores → softmax → dropout → values →
//! W_O recording with its trace reads.

use super::{LayerCache, Memory, Pass};
use crate::backend::gpu::activations::AttnActs;
use crate::backend::gpu::context::GpuBuffer;
use crate::backend::gpu::trace::PlannedAttention;
use crate::backend::gpu::{
    AttnDims, CopyArgs, DecodeAttnArgs, MatmulArgs, Rows, ScoreArgs, SeqRows, ValueArgs,
};
use crate::config::{PosEncoding, Score};
use crate::error::Result;
use crate::model::mask::MaskSpec;
use crate::model::{AttentionParams, AttnSite};

/// The keys and values one attention reads and the tokens of its keys.
struct Keys<'b> {
    k: Rows<'b>,
    v: Rows<'b>,
    tokens: &'b GpuBuffer,
}

impl Pass<'_> {
    /// Self-attention of one layer: `out (N, C)` from `inp (N, C)`. With `cache` the new
    /// keys and values are appended to the layer's cache first and the queries attend
    /// over all `pos0 + T` cached positions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn self_attention(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        (inp, out): (&GpuBuffer, &GpuBuffer),
        (site, layer): (AttnSite, usize),
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        mask: (&MaskSpec, Option<(&GpuBuffer, usize)>),
        ablate: &GpuBuffer,
        cache: Option<&LayerCache>,
    ) -> Result<()> {
        let cfg = self.cfg();
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let n = b * t;
        let pos0 = cache.map_or(0, |k| k.pos0);
        // q | k | v = inp · [W_Q; W_K; W_V]ᵀ + b: (N, 3C) in one matmul.
        self.rec.matmul(&MatmulArgs::linear(
            inp,
            &p.in_proj_weight,
            Some(&p.in_proj_bias),
            &a.qkv,
            (n, c, 3 * c),
        ))?;
        if let Some(rot) = self.w.tables.rope() {
            // The H query heads and the H key heads are 2H consecutive heads of D columns,
            // row r at position pos0 + r % T.
            self.rec
                .rope(rot, Rows::dense(&a.qkv, 3 * c), n, t, 2 * h, d, pos0)?;
        }
        let qkv = |col| Rows {
            buf: &a.qkv,
            stride: 3 * c,
            col,
        };
        // Keys and values: the (N, 3C) projections themselves, or the cache after the
        // new rows' K | V columns have been appended to it.
        let (keys, dims) = match cache {
            None => (
                Keys {
                    k: qkv(c),
                    v: qkv(2 * c),
                    tokens,
                },
                AttnDims {
                    batch: b,
                    n_heads: h,
                    t_len: t,
                    s_len: t,
                    d_head: d,
                    pos0: 0,
                    kv_rows: t,
                },
            ),
            Some(k) => {
                // (B·T, 3C) columns C..3C → rows (b, pos0 + t) of the (B'·P, 2C) cache.
                self.rec.copy_rows(&CopyArgs {
                    src: SeqRows {
                        buf: &a.qkv,
                        seq_rows: t,
                        first: 0,
                        stride: 3 * c,
                        col: c,
                    },
                    dst: SeqRows {
                        buf: k.kv,
                        seq_rows: k.capacity,
                        first: k.pos0,
                        stride: 2 * c,
                        col: 0,
                    },
                    from_seq: None,
                    batch: b,
                    t_len: t,
                    width: 2 * c,
                })?;
                let kv = |col| Rows {
                    buf: k.kv,
                    stride: 2 * c,
                    col,
                };
                (
                    Keys {
                        k: kv(0),
                        v: kv(c),
                        tokens: k.key_tokens,
                    },
                    AttnDims {
                        batch: b,
                        n_heads: h,
                        t_len: t,
                        s_len: k.pos0 + t,
                        d_head: d,
                        pos0: k.pos0,
                        kv_rows: k.capacity,
                    },
                )
            }
        };
        let relative = cfg.pos_encoding == PosEncoding::Relative;
        self.attend(
            p,
            a,
            (site, layer),
            qkv(0),
            keys,
            dims,
            mask,
            relative,
            ablate,
            out,
        )
    }

    /// Cross-attention of one decoder layer: queries from `inp (N, C)`, keys and values
    /// `a.kv (B·S, 2C)` from the encoder output — computed here from `mem.x` when it is
    /// given, read as they are otherwise (the KV cache's, computed at prefill).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cross_attention(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        (inp, out): (&GpuBuffer, &GpuBuffer),
        layer: usize,
        mem: &Memory,
        (b, t): (usize, usize),
        mask: &MaskSpec,
        ablate: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg();
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let s = mem.s;
        let kv =
            a.kv.as_ref()
                .ok_or_else(|| super::missing("cross-attention K | V buffers"))?;
        // q = inp · W_Qᵀ + b_Q into the first C columns of the (N, 3C) buffer.
        self.rec.matmul(&MatmulArgs {
            a: Rows::dense(inp, c),
            w: &p.in_proj_weight,
            w_offset: 0,
            bias: Some(&p.in_proj_bias),
            b_offset: 0,
            out: Rows::dense(&a.qkv, 3 * c),
            m: b * t,
            k: c,
            n: c,
        })?;
        if let Some(memory) = mem.x {
            // k | v = memory · [W_K; W_V]ᵀ + [b_K; b_V]: (B·S, 2C).
            self.rec.matmul(&MatmulArgs {
                a: Rows::dense(memory, c),
                w: &p.in_proj_weight,
                w_offset: c * c,
                bias: Some(&p.in_proj_bias),
                b_offset: c,
                out: Rows::dense(kv, 2 * c),
                m: b * s,
                k: c,
                n: 2 * c,
            })?;
        }
        let dims = AttnDims {
            batch: b,
            n_heads: h,
            t_len: t,
            s_len: s,
            d_head: d,
            pos0: 0,
            kv_rows: s,
        };
        let kv_rows = |col| Rows {
            buf: kv,
            stride: 2 * c,
            col,
        };
        let q = Rows {
            buf: &a.qkv,
            stride: 3 * c,
            col: 0,
        };
        let keys = Keys {
            k: kv_rows(0),
            v: kv_rows(c),
            tokens: mem.tokens,
        };
        self.attend(
            p,
            a,
            (AttnSite::Cross, layer),
            q,
            keys,
            dims,
            (mask, None),
            false,
            ablate,
            out,
        )
    }

    /// Scores → softmax → dropout → weighted values → W_O into `out`, with the trace
    /// reads.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        (site, layer): (AttnSite, usize),
        q: Rows,
        keys: Keys,
        dims: AttnDims,
        (mask, cells): (&MaskSpec, Option<(&GpuBuffer, usize)>),
        relative: bool,
        ablate: &GpuBuffer,
        out: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg();
        let (c, k_rel) = (cfg.d_model, cfg.relative_max_distance);
        let divisor = self.w.score_divisor(self.opts);
        let (rel_k, rel_v) = if relative {
            (p.rel_k.as_ref(), p.rel_v.as_ref())
        } else {
            (None, None)
        };
        let additive_v = if cfg.score == Score::Additive {
            p.additive_v.as_ref()
        } else {
            None
        };
        let alibi = if site == AttnSite::Cross {
            None
        } else {
            self.w.tables.alibi()
        };
        let Keys { k, v, tokens } = keys;
        // One query row in a pass that keeps nothing, no dropout on the probabilities, at
        // most one table, keys and values side by side in one buffer (the KV cache, or
        // the cross-attention memory): the three kernels below in one dispatch.
        let fused = dims.t_len == 1
            && matches!(self.keep, super::Keep::Nothing)
            && self.drop.is_none()
            && dims.n_heads <= 64
            && rel_k.is_none()
            && rel_v.is_none()
            && !(alibi.is_some() && additive_v.is_some())
            && k.buf.buffer == v.buf.buffer
            && k.stride == v.stride;
        if fused {
            let ablated = self.opts.ablated_heads(site, layer, dims.n_heads); // (H)
            self.rec.attention_decode(&DecodeAttnArgs {
                q,
                k,
                v,
                key_tokens: tokens,
                alibi_slopes: alibi,
                additive_v,
                divisor,
                mask,
                cells,
                pad_id: self.w.pad,
                ablate: &ablated,
                scores: &a.scores,
                probs: &a.probs,
                out: &a.z,
                dims,
            })?;
        } else {
            self.rec.attention_scores(&ScoreArgs {
                q,
                k,
                key_tokens: tokens,
                rel_k,
                rel_max: k_rel,
                alibi_slopes: alibi,
                additive_v,
                divisor,
                mask,
                cells,
                pad_id: self.w.pad,
                out: &a.scores,
                dims,
            })?;
            let rows = dims.batch * dims.n_heads * dims.t_len;
            self.rec.softmax(&a.scores, &a.probs, rows, dims.s_len)?;
            // Train mode: the values are weighted by dropout(p); the trace keeps p.
            let made;
            let weights = if self.drop.is_some() {
                let hts = rows * dims.s_len;
                let (dropped, mask) = match &a.dropped {
                    Some((d, m)) => (d, Some(m)),
                    None => {
                        made = self.rec.ctx().zeros("dropped probabilities", hts)?;
                        (&made, None)
                    }
                };
                self.rec.copy(&a.probs, dropped, hts)?;
                self.drop(dropped, mask, hts)?;
                dropped
            } else {
                &a.probs
            };
            self.rec.attention_values(&ValueArgs {
                probs: weights,
                v,
                rel_v,
                rel_max: k_rel,
                ablate,
                out: &a.z,
                dims,
            })?;
        }
        self.read_trace(site, layer, dims, a)?;
        // out = z · W_Oᵀ + b_O
        let n = dims.batch * dims.t_len;
        self.last_matmul(&MatmulArgs::linear(
            &a.z,
            &p.out_proj_weight,
            Some(&p.out_proj_bias),
            out,
            (n, c, c),
        ))
    }

    /// With `trace_attention`: read an attention's scores and probabilities back.
    fn read_trace(
        &mut self,
        site: AttnSite,
        layer: usize,
        dims: AttnDims,
        a: &AttnActs,
    ) -> Result<()> {
        if self.opts.trace_attention {
            let rows = dims.batch * dims.n_heads * dims.t_len;
            let shape = [dims.batch, dims.n_heads, dims.t_len, dims.s_len];
            let scores = self.rec.read(&a.scores, 0, rows * dims.s_len)?;
            let probs = self.rec.read(&a.probs, 0, rows * dims.s_len)?;
            self.attention.push(PlannedAttention {
                site,
                layer,
                shape,
                scores,
                probs,
            });
        }
        Ok(())
    }
}

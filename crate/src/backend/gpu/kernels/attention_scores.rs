//! Attention scores with masks and position biases (`shaders/attention_scores.wgsl`) and
//! the gradients of q, k, the relative keys and the additive `w`
//! (`shaders/attention_scores_backward.wgsl`), mirroring the score step of
//! `model::attention` and the score part of `train::backward::attention::attention_backward`.

use bytemuck::{Pod, Zeroable};

use super::attention::{check_train_dims, seq_chunks, AttnDims};
use super::launch::{groups_for, need, u, Rows};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};
use crate::model::mask::MaskSpec;

/// The value attention_scores.wgsl writes for a masked score (WGSL has no −∞; see the
/// shader header). Trace readers map it back to `f32::NEG_INFINITY`.
pub const MASKED: f32 = -f32::MAX;

/// Arguments of [`Recorder::attention_scores`].
#[derive(Clone, Copy, Debug)]
pub struct ScoreArgs<'a> {
    /// (B·T) query rows; head h at columns `col + h·D ..`.
    pub q: Rows<'a>,
    /// (B·R) key rows (R = `dims.kv_rows`); head h at columns `col + h·D ..`.
    pub k: Rows<'a>,
    /// (B, R) u32: the token behind each key.
    pub key_tokens: &'a GpuBuffer,
    /// (2K+1, D) Shaw relative keys, with K = `rel_max`.
    pub rel_k: Option<&'a GpuBuffer>,
    pub rel_max: usize,
    /// (H) ALiBi slopes.
    pub alibi_slopes: Option<&'a GpuBuffer>,
    /// (H, D) `additive_v`: present for additive scoring, absent for dot products.
    pub additive_v: Option<&'a GpuBuffer>,
    /// Divisor of dot-product scores: √D for `scaled_dot` with scaling on, else 1.
    pub divisor: f32,
    /// The mask's rule and whether it hides padding keys (`MaskSpec::gpu_rule`).
    pub mask: &'a MaskSpec,
    /// (N, N) u32 painted cells and N (`MaskSpec::cell_table`), uploaded by the caller;
    /// `None` when the mask has none.
    pub cells: Option<(&'a GpuBuffer, usize)>,
    pub pad_id: u32,
    /// (B, H, T, S), written; masked entries hold `MASKED`.
    pub out: &'a GpuBuffer,
    pub dims: AttnDims,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ScoreParams {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    q_stride: u32,
    q_col: u32,
    k_stride: u32,
    k_col: u32,
    pos0: u32,
    rule: u32,
    padding: u32,
    pad_id: u32,
    rel_max: u32,
    divisor: f32,
    kv_rows: u32,
    rule_arg: u32,
    cell_n: u32,
    _pad0: u32,
    _pad1: u32,
}

impl Recorder {
    /// Scores (B, H, T, S) with masks and position biases: `shaders/attention_scores.wgsl`,
    /// mirroring the score step of `model::attention`.
    pub fn attention_scores(&mut self, x: &ScoreArgs) -> Result<()> {
        let d = x.dims;
        let c = d.n_heads * d.d_head;
        d.check_rows()?;
        need(x.q.buf, x.q.extent(d.batch * d.t_len, c), "queries")?;
        need(x.k.buf, x.k.extent(d.key_rows(), c), "keys")?;
        need(x.key_tokens, d.key_rows(), "key tokens")?;
        if let Some(r) = x.rel_k {
            need(r, (2 * x.rel_max + 1) * d.d_head, "rel_k")?;
        }
        if let Some(s) = x.alibi_slopes {
            need(s, d.n_heads, "ALiBi slopes")?;
        }
        if let Some(a) = x.additive_v {
            need(a, c, "additive_v")?;
        }
        let n = d.batch * d.n_heads * d.t_len * d.s_len;
        need(x.out, n, "scores")?;
        if let Some((cells, side)) = x.cells {
            need(cells, side * side, "painted mask cells")?;
        }
        let (rule, rule_arg) = x.mask.gpu_rule();
        let p = ScoreParams {
            batch: u(d.batch, "B")?,
            n_heads: u(d.n_heads, "H")?,
            t_len: u(d.t_len, "T")?,
            s_len: u(d.s_len, "S")?,
            d_head: u(d.d_head, "D")?,
            q_stride: u(x.q.stride, "q stride")?,
            q_col: u(x.q.col, "q col")?,
            k_stride: u(x.k.stride, "k stride")?,
            k_col: u(x.k.col, "k col")?,
            pos0: u(d.pos0, "pos0")?,
            rule,
            padding: x.mask.padding as u32,
            pad_id: x.pad_id,
            rel_max: u(x.rel_max, "K")?,
            divisor: x.divisor,
            kv_rows: u(d.kv_rows, "R")?,
            rule_arg,
            cell_n: u(x.cells.map_or(0, |(_, side)| side), "N")?,
            _pad0: 0,
            _pad1: 0,
        };
        let key = PipelineKey {
            kernel: Kernel::AttentionScores,
            constants: vec![
                ("SCORE", x.additive_v.is_some() as u32),
                ("HAS_REL", x.rel_k.is_some() as u32),
                ("HAS_ALIBI", x.alibi_slopes.is_some() as u32),
            ],
        };
        let dummy = self.ctx().dummy().clone();
        let or_dummy = |b: Option<&GpuBuffer>| b.map(|b| b.buffer.clone()).unwrap_or(dummy.clone());
        let (rel_k, slopes, add_v, cells) = (
            or_dummy(x.rel_k),
            or_dummy(x.alibi_slopes),
            or_dummy(x.additive_v),
            or_dummy(x.cells.map(|(c, _)| c)),
        );
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[
                &x.q.buf.buffer,
                &x.k.buf.buffer,
                &x.key_tokens.buffer,
                &rel_k,
                &slopes,
                &add_v,
                &x.out.buffer,
                &cells,
            ],
            groups_for(n)?,
        )
    }
}

/// Arguments of [`Recorder::attention_scores_backward`]: from `dscores` (B, H, T, S), the
/// gradients of q, k, `rel_k` and the additive `w`.
#[derive(Clone, Copy, Debug)]
pub struct ScoreGradArgs<'a> {
    /// (B, H, T, S) gradient of the scores (0 at masked keys).
    pub dscores: &'a GpuBuffer,
    /// (B·T) query rows as the forward scored them (after RoPE).
    pub q: Rows<'a>,
    /// (B·S) key rows as the forward scored them (after RoPE).
    pub k: Rows<'a>,
    /// (2K+1, D) Shaw relative keys, with K = `rel_max`.
    pub rel_k: Option<&'a GpuBuffer>,
    pub rel_max: usize,
    /// (H, D) `additive_v`: present for additive scoring, absent for dot products.
    pub additive_v: Option<&'a GpuBuffer>,
    /// Factor of dot-product scores: 1/√D for `scaled_dot` with scaling on, else 1.
    pub alpha: f32,
    /// (B·T) rows, ADDED to.
    pub dq: Rows<'a>,
    /// (B·S) rows, ADDED to.
    pub dk: Rows<'a>,
    /// (2K+1, D), ADDED to (needs `rel_k`).
    pub drel_k: Option<&'a GpuBuffer>,
    /// (H, D), ADDED to (needs `additive_v`).
    pub dadditive_v: Option<&'a GpuBuffer>,
    /// Sizes; `kv_rows` must equal `s_len`.
    pub dims: AttnDims,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ScoreGradParams {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    q_stride: u32,
    q_col: u32,
    k_stride: u32,
    k_col: u32,
    out_stride: u32,
    out_col: u32,
    pos0: u32,
    rel_max: u32,
    alpha: f32,
    b0: u32,
    b_end: u32,
}

impl Recorder {
    /// dq, dk, drel_k and dadditive_v (all added) from dscores:
    /// `shaders/attention_scores_backward.wgsl` (one dispatch per output), mirroring the
    /// score part of `train::backward::attention::attention_backward`.
    pub fn attention_scores_backward(&mut self, x: &ScoreGradArgs) -> Result<()> {
        let d = x.dims;
        check_train_dims(&d)?;
        let c = d.n_heads * d.d_head;
        let hts = d.batch * d.n_heads * d.t_len * d.s_len;
        need(x.dscores, hts, "score gradient")?;
        need(x.q.buf, x.q.extent(d.batch * d.t_len, c), "queries")?;
        need(x.k.buf, x.k.extent(d.batch * d.s_len, c), "keys")?;
        need(
            x.dq.buf,
            x.dq.extent(d.batch * d.t_len, c),
            "query gradient",
        )?;
        need(x.dk.buf, x.dk.extent(d.batch * d.s_len, c), "key gradient")?;
        let table = (2 * x.rel_max + 1) * d.d_head;
        if let Some(r) = x.rel_k {
            need(r, table, "rel_k")?;
        }
        if let Some(a) = x.additive_v {
            need(a, c, "additive_v")?;
        }
        match (x.rel_k, x.drel_k) {
            (_, None) => {}
            (Some(_), Some(g)) => need(g, table, "rel_k gradient")?,
            (None, Some(_)) => {
                return Err(Error::Gpu(
                    "a rel_k gradient was asked for without rel_k".into(),
                ))
            }
        }
        match (x.additive_v, x.dadditive_v) {
            (_, None) => {}
            (Some(_), Some(g)) => need(g, c, "additive_v gradient")?,
            (None, Some(_)) => {
                return Err(Error::Gpu(
                    "an additive_v gradient was asked for with dot-product scores".into(),
                ))
            }
        }
        let dummy = self.ctx().dummy().clone();
        let rel_k = x.rel_k.map(|b| &b.buffer).unwrap_or(&dummy);
        let add_v = x.additive_v.map(|b| &b.buffer).unwrap_or(&dummy);
        let outputs: [(u32, Option<Rows>, usize); 4] = [
            (0, Some(x.dq), d.batch * d.t_len * c),
            (1, Some(x.dk), d.batch * d.s_len * c),
            (2, x.drel_k.map(|g| Rows::dense(g, d.d_head)), table),
            (3, x.dadditive_v.map(|g| Rows::dense(g, d.d_head)), c),
        ];
        // The tables' sums walk H · T · (up to S) (rel_k) or T · S (w) scores per sequence.
        for (output, out, n) in outputs {
            let Some(out) = out else { continue };
            let chunks = match output {
                2 => seq_chunks(d.batch, d.n_heads * d.t_len * (d.s_len + 1)),
                3 => seq_chunks(d.batch, d.t_len * (d.s_len + 1)),
                _ => vec![(0, d.batch)],
            };
            for (b0, b_end) in chunks {
                let p = ScoreGradParams {
                    batch: u(d.batch, "B")?,
                    n_heads: u(d.n_heads, "H")?,
                    t_len: u(d.t_len, "T")?,
                    s_len: u(d.s_len, "S")?,
                    d_head: u(d.d_head, "D")?,
                    q_stride: u(x.q.stride, "q stride")?,
                    q_col: u(x.q.col, "q col")?,
                    k_stride: u(x.k.stride, "k stride")?,
                    k_col: u(x.k.col, "k col")?,
                    out_stride: u(out.stride, "out stride")?,
                    out_col: u(out.col, "out col")?,
                    pos0: u(d.pos0, "pos0")?,
                    rel_max: u(x.rel_max, "K")?,
                    alpha: x.alpha,
                    b0: u(b0, "b0")?,
                    b_end: u(b_end, "b_end")?,
                };
                let key = PipelineKey {
                    kernel: Kernel::AttentionScoresBackward,
                    constants: vec![
                        ("OUTPUT", output),
                        ("SCORE", x.additive_v.is_some() as u32),
                        ("HAS_REL", x.rel_k.is_some() as u32),
                    ],
                };
                self.dispatch(
                    key,
                    bytemuck::bytes_of(&p),
                    &[
                        &x.dscores.buffer,
                        &x.q.buf.buffer,
                        &x.k.buf.buffer,
                        rel_k,
                        add_v,
                        &out.buf.buffer,
                    ],
                    groups_for(n)?,
                )?;
            }
        }
        Ok(())
    }
}

//! Attention of one query row per sequence in one dispatch (`shaders/attention_decode.wgsl`):
//! what `attention_scores`, `softmax` and `attention_values` compute together, for the KV
//! cache's decoding step. Inference only, so there is no backward.

use bytemuck::{Pod, Zeroable};

use super::attention::AttnDims;
use super::launch::{need, u, Rows};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};
use crate::model::mask::MaskSpec;

/// Arguments of [`Recorder::attention_decode`]: one query row per sequence (T = 1).
#[derive(Clone, Copy, Debug)]
pub struct DecodeAttnArgs<'a> {
    /// (B) query rows; head h at columns `col + h·D ..`.
    pub q: Rows<'a>,
    /// (B·R) key rows (R = `dims.kv_rows`); head h at columns `col + h·D ..`.
    pub k: Rows<'a>,
    /// (B·R) value rows, in the same buffer and with the same stride as `k`.
    pub v: Rows<'a>,
    /// (B, R) u32: the token behind each key.
    pub key_tokens: &'a GpuBuffer,
    /// (H) ALiBi slopes.
    pub alibi_slopes: Option<&'a GpuBuffer>,
    /// (H, D) `additive_v`: present for additive scoring, absent for dot products.
    pub additive_v: Option<&'a GpuBuffer>,
    /// Divisor of dot-product scores: √D for `scaled_dot` with scaling on, else 1.
    pub divisor: f32,
    pub mask: &'a MaskSpec,
    /// (N, N) u32 painted cells and N (`MaskSpec::cell_table`), or `None`.
    pub cells: Option<(&'a GpuBuffer, usize)>,
    pub pad_id: u32,
    /// (H): true for an ablated head (at most 64 heads).
    pub ablate: &'a [bool],
    /// (B, H, 1, S), written; masked entries hold `MASKED`.
    pub scores: &'a GpuBuffer,
    /// (B, H, 1, S), written.
    pub probs: &'a GpuBuffer,
    /// (B, C) with C = H·D, written.
    pub out: &'a GpuBuffer,
    /// `t_len` must be 1.
    pub dims: AttnDims,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DecodeAttnParams {
    batch: u32,
    n_heads: u32,
    s_len: u32,
    d_head: u32,
    q_stride: u32,
    q_col: u32,
    kv_stride: u32,
    k_col: u32,
    v_col: u32,
    pos0: u32,
    rule: u32,
    padding: u32,
    pad_id: u32,
    divisor: f32,
    kv_rows: u32,
    rule_arg: u32,
    cell_n: u32,
    ablate_lo: u32,
    ablate_hi: u32,
    _pad: u32,
}

impl Recorder {
    /// Attention of one query row per sequence in one dispatch — scores, masked softmax,
    /// `z (B, C) = Σ_j probs · v`, ablated heads zero: `shaders/attention_decode.wgsl`,
    /// mirroring `model::attention::attention_forward` with T = 1 and writing what
    /// [`Recorder::attention_scores`], [`Recorder::softmax`] and
    /// [`Recorder::attention_values`] write together.
    pub fn attention_decode(&mut self, x: &DecodeAttnArgs) -> Result<()> {
        let d = x.dims;
        let c = d.n_heads * d.d_head;
        if d.t_len != 1 {
            return Err(Error::Gpu(format!(
                "attention_decode takes one query row per sequence, not {}",
                d.t_len
            )));
        }
        if x.k.buf.buffer != x.v.buf.buffer || x.k.stride != x.v.stride {
            return Err(Error::Gpu(
                "attention_decode reads keys and values from one buffer with one stride".into(),
            ));
        }
        if x.alibi_slopes.is_some() && x.additive_v.is_some() {
            return Err(Error::Gpu(
                "attention_decode has one table: ALiBi with additive scores takes the \
                 three-kernel path"
                    .into(),
            ));
        }
        d.check_rows()?;
        need(x.q.buf, x.q.extent(d.batch, c), "queries")?;
        need(x.k.buf, x.k.extent(d.key_rows(), c), "keys")?;
        need(x.v.buf, x.v.extent(d.key_rows(), c), "values")?;
        need(x.key_tokens, d.key_rows(), "key tokens")?;
        if let Some(s) = x.alibi_slopes {
            need(s, d.n_heads, "ALiBi slopes")?;
        }
        if let Some(a) = x.additive_v {
            need(a, c, "additive_v")?;
        }
        if let Some((cells, side)) = x.cells {
            need(cells, side * side, "painted mask cells")?;
        }
        if x.ablate.len() != d.n_heads || d.n_heads > 64 {
            return Err(Error::Gpu(format!(
                "attention_decode: {} ablation flags for {} heads (at most 64)",
                x.ablate.len(),
                d.n_heads
            )));
        }
        let bits = x
            .ablate
            .iter()
            .enumerate()
            .fold(0u64, |m, (h, &a)| m | ((a as u64) << h));
        need(x.scores, d.batch * d.n_heads * d.s_len, "scores")?;
        need(x.probs, d.batch * d.n_heads * d.s_len, "probabilities")?;
        need(x.out, d.batch * c, "attention output")?;
        let (rule, rule_arg) = x.mask.gpu_rule();
        let p = DecodeAttnParams {
            batch: u(d.batch, "B")?,
            n_heads: u(d.n_heads, "H")?,
            s_len: u(d.s_len, "S")?,
            d_head: u(d.d_head, "D")?,
            q_stride: u(x.q.stride, "q stride")?,
            q_col: u(x.q.col, "q col")?,
            kv_stride: u(x.k.stride, "kv stride")?,
            k_col: u(x.k.col, "k col")?,
            v_col: u(x.v.col, "v col")?,
            pos0: u(d.pos0, "pos0")?,
            rule,
            padding: x.mask.padding as u32,
            pad_id: x.pad_id,
            divisor: x.divisor,
            kv_rows: u(d.kv_rows, "R")?,
            rule_arg,
            cell_n: u(x.cells.map_or(0, |(_, side)| side), "N")?,
            ablate_lo: bits as u32,
            ablate_hi: (bits >> 32) as u32,
            _pad: 0,
        };
        let key = PipelineKey {
            kernel: Kernel::AttentionDecode,
            constants: vec![
                ("SCORE", x.additive_v.is_some() as u32),
                ("HAS_ALIBI", x.alibi_slopes.is_some() as u32),
            ],
        };
        let dummy = self.ctx().dummy().clone();
        let or_dummy = |b: Option<&GpuBuffer>| b.map(|b| b.buffer.clone()).unwrap_or(dummy.clone());
        let table = or_dummy(x.alibi_slopes.or(x.additive_v));
        let cells = or_dummy(x.cells.map(|(c, _)| c));
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[
                &x.q.buf.buffer,
                &x.k.buf.buffer,
                &x.key_tokens.buffer,
                &table,
                &cells,
                &x.scores.buffer,
                &x.probs.buffer,
                &x.out.buffer,
            ],
            u(d.batch * d.n_heads, "B·H")?,
        )
    }
}

//! The probability-weighted sum of the values, heads merged
//! (`shaders/attention_values.wgsl`), and the gradients of the probabilities, the values
//! and the relative values (`shaders/attention_values_backward.wgsl`), mirroring the
//! weighted sum of `model::attention` and the weighted-sum part of
//! `train::backward::attention::attention_backward`.

use bytemuck::{Pod, Zeroable};

use super::attention::{check_train_dims, seq_chunks, AttnDims};
use super::launch::{groups_for, need, u, Rows};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

/// Arguments of [`Recorder::attention_values`].
#[derive(Clone, Copy, Debug)]
pub struct ValueArgs<'a> {
    /// (B, H, T, S)
    pub probs: &'a GpuBuffer,
    /// (B·R) value rows (R = `dims.kv_rows`); head h at columns `col + h·D ..`.
    pub v: Rows<'a>,
    /// (2K+1, D) Shaw relative values, with K = `rel_max`.
    pub rel_v: Option<&'a GpuBuffer>,
    pub rel_max: usize,
    /// (H) u32: non-zero for an ablated head.
    pub ablate: &'a GpuBuffer,
    /// (B·T, C) with C = H·D, written.
    pub out: &'a GpuBuffer,
    pub dims: AttnDims,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ValueParams {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    v_stride: u32,
    v_col: u32,
    pos0: u32,
    rel_max: u32,
    kv_rows: u32,
    _pad: [u32; 2],
}

impl Recorder {
    /// `z (B·T, C) = Σ_j probs · (v + rel_v)`, ablated heads zero:
    /// `shaders/attention_values.wgsl`, mirroring the weighted sum of `model::attention`.
    pub fn attention_values(&mut self, x: &ValueArgs) -> Result<()> {
        let d = x.dims;
        let c = d.n_heads * d.d_head;
        need(
            x.probs,
            d.batch * d.n_heads * d.t_len * d.s_len,
            "probabilities",
        )?;
        d.check_rows()?;
        need(x.v.buf, x.v.extent(d.key_rows(), c), "values")?;
        if let Some(r) = x.rel_v {
            need(r, (2 * x.rel_max + 1) * d.d_head, "rel_v")?;
        }
        need(x.ablate, d.n_heads, "ablation flags")?;
        let n = d.batch * d.t_len * c;
        need(x.out, n, "attention output")?;
        let p = ValueParams {
            batch: u(d.batch, "B")?,
            n_heads: u(d.n_heads, "H")?,
            t_len: u(d.t_len, "T")?,
            s_len: u(d.s_len, "S")?,
            d_head: u(d.d_head, "D")?,
            v_stride: u(x.v.stride, "v stride")?,
            v_col: u(x.v.col, "v col")?,
            pos0: u(d.pos0, "pos0")?,
            rel_max: u(x.rel_max, "K")?,
            kv_rows: u(d.kv_rows, "R")?,
            _pad: [0; 2],
        };
        let key = PipelineKey {
            kernel: Kernel::AttentionValues,
            constants: vec![("HAS_REL", x.rel_v.is_some() as u32)],
        };
        let dummy = self.ctx().dummy().clone();
        let rel_v = x.rel_v.map(|b| &b.buffer).unwrap_or(&dummy);
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[
                &x.probs.buffer,
                &x.v.buf.buffer,
                rel_v,
                &x.ablate.buffer,
                &x.out.buffer,
            ],
            groups_for(n)?,
        )
    }
}

/// Arguments of [`Recorder::attention_values_backward`]: from `dz`, the gradient of the
/// forward's z (B·T, C), the gradients of the probabilities, the values and `rel_v`.
#[derive(Clone, Copy, Debug)]
pub struct ValueGradArgs<'a> {
    /// (B·T) rows of dz; head h at columns `col + h·D ..`.
    pub dz: Rows<'a>,
    /// (B, H, T, S) the forward's probabilities, before dropout.
    pub probs: &'a GpuBuffer,
    /// (B, H, T, S) the dropout multipliers the forward applied to them, if any.
    pub dropout: Option<&'a GpuBuffer>,
    /// (B·S) value rows; head h at columns `col + h·D ..`.
    pub v: Rows<'a>,
    /// (2K+1, D) Shaw relative values, with K = `rel_max`.
    pub rel_v: Option<&'a GpuBuffer>,
    pub rel_max: usize,
    /// (B, H, T, S) the forward's scores, `MASKED` where a key was hidden.
    pub scores: &'a GpuBuffer,
    /// (H) u32: non-zero for an ablated head.
    pub ablate: &'a GpuBuffer,
    /// (B, H, T, S), WRITTEN: the gradient of the probabilities (before dropout).
    pub dprobs: &'a GpuBuffer,
    /// (B·S) rows, ADDED to: the gradient of the values.
    pub dv: Rows<'a>,
    /// (2K+1, D), ADDED to: the gradient of `rel_v` (needs `rel_v`).
    pub drel_v: Option<&'a GpuBuffer>,
    /// Sizes; `kv_rows` must equal `s_len` (training has no cache).
    pub dims: AttnDims,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ValueGradParams {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    dz_stride: u32,
    dz_col: u32,
    v_stride: u32,
    v_col: u32,
    out_stride: u32,
    out_col: u32,
    pos0: u32,
    rel_max: u32,
    b0: u32,
    b_end: u32,
    _pad: u32,
}

impl Recorder {
    /// dprobs (written), dv and drel_v (added) from dz:
    /// `shaders/attention_values_backward.wgsl` (one dispatch per output), mirroring the
    /// weighted-sum part of `train::backward::attention::attention_backward`.
    pub fn attention_values_backward(&mut self, x: &ValueGradArgs) -> Result<()> {
        let d = x.dims;
        check_train_dims(&d)?;
        let c = d.n_heads * d.d_head;
        let hts = d.batch * d.n_heads * d.t_len * d.s_len;
        need(
            x.dz.buf,
            x.dz.extent(d.batch * d.t_len, c),
            "attention output gradient",
        )?;
        need(x.probs, hts, "probabilities")?;
        need(x.scores, hts, "scores")?;
        need(x.dprobs, hts, "probability gradient")?;
        if let Some(m) = x.dropout {
            need(m, hts, "attention dropout mask")?;
        }
        need(x.v.buf, x.v.extent(d.batch * d.s_len, c), "values")?;
        need(
            x.dv.buf,
            x.dv.extent(d.batch * d.s_len, c),
            "value gradient",
        )?;
        let table = (2 * x.rel_max + 1) * d.d_head;
        if let Some(r) = x.rel_v {
            need(r, table, "rel_v")?;
        }
        match (x.rel_v, x.drel_v) {
            (_, None) => {}
            (Some(_), Some(g)) => need(g, table, "rel_v gradient")?,
            (None, Some(_)) => {
                return Err(Error::Gpu(
                    "a rel_v gradient was asked for without rel_v".into(),
                ))
            }
        }
        need(x.ablate, d.n_heads, "ablation flags")?;
        let dummy = self.ctx().dummy().clone();
        let drop = x.dropout.map(|b| &b.buffer).unwrap_or(&dummy);
        let rel_v = x.rel_v.map(|b| &b.buffer).unwrap_or(&dummy);
        let outputs: [(u32, Option<Rows>, usize); 3] = [
            (0, Some(Rows::dense(x.dprobs, d.s_len)), hts),
            (1, Some(x.dv), d.batch * d.s_len * c),
            (2, x.drel_v.map(|g| Rows::dense(g, d.d_head)), table),
        ];
        // The table's sum walks H · T · (up to S) scores per sequence.
        let per_seq = d.n_heads * d.t_len * (d.s_len + 1);
        for (output, out, n) in outputs {
            let Some(out) = out else { continue };
            let chunks = if output == 2 {
                seq_chunks(d.batch, per_seq)
            } else {
                vec![(0, d.batch)]
            };
            for (b0, b_end) in chunks {
                let p = ValueGradParams {
                    batch: u(d.batch, "B")?,
                    n_heads: u(d.n_heads, "H")?,
                    t_len: u(d.t_len, "T")?,
                    s_len: u(d.s_len, "S")?,
                    d_head: u(d.d_head, "D")?,
                    dz_stride: u(x.dz.stride, "dz stride")?,
                    dz_col: u(x.dz.col, "dz col")?,
                    v_stride: u(x.v.stride, "v stride")?,
                    v_col: u(x.v.col, "v col")?,
                    out_stride: u(out.stride, "out stride")?,
                    out_col: u(out.col, "out col")?,
                    pos0: u(d.pos0, "pos0")?,
                    rel_max: u(x.rel_max, "K")?,
                    b0: u(b0, "b0")?,
                    b_end: u(b_end, "b_end")?,
                    _pad: 0,
                };
                let key = PipelineKey {
                    kernel: Kernel::AttentionValuesBackward,
                    constants: vec![
                        ("OUTPUT", output),
                        ("HAS_DROP", x.dropout.is_some() as u32),
                        ("HAS_REL", x.rel_v.is_some() as u32),
                    ],
                };
                self.dispatch(
                    key,
                    bytemuck::bytes_of(&p),
                    &[
                        &x.dz.buf.buffer,
                        &x.probs.buffer,
                        drop,
                        &x.v.buf.buffer,
                        rel_v,
                        &x.scores.buffer,
                        &x.ablate.buffer,
                        &out.buf.buffer,
                    ],
                    groups_for(n)?,
                )?;
            }
        }
        Ok(())
    }
}

//! Launch functions of the train-mode kernels around attention and normalisation: the
//! backward of attention (softmax, weighted values, scores for every score function with
//! masks, ALiBi and Shaw tables), the backward of RoPE, BatchNorm with batch statistics
//! and its backward, and dropout with the CPU's random stream.
//!
//! Each launch mirrors one CPU function (`train::backward::*`, `model::norm`,
//! `model::dropout`); `crate/tests/gpu_attention_backward.rs` runs both on the same inputs.
//! Backward launches ADD into their gradient outputs, as the CPU's backward functions do;
//! the intermediate (B, H, T, S) gradients (`dprobs`, `dscores`) are written.

use bytemuck::{Pod, Zeroable};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::catalogue::{Kernel, PipelineKey};
use super::context::{GpuBuffer, Recorder};
use super::kernels::{groups_for, need, u, AttnDims, Rows};
use crate::error::{Error, Result};
use crate::model::norm::BN_MOMENTUM;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct RowParams {
    rows: u32,
    width: u32,
    _pad: [u32; 2],
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

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BatchNormTrainParams {
    rows: u32,
    c: u32,
    keep: f32,
    momentum: f32,
    unbias: f32,
    _pad: [u32; 3],
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

/// Arguments of [`Recorder::batch_norm_train`].
#[derive(Clone, Copy, Debug)]
pub struct BatchNormTrainArgs<'a> {
    /// (R, C)
    pub x: &'a GpuBuffer,
    /// (C) γ and β.
    pub gamma: &'a GpuBuffer,
    pub beta: &'a GpuBuffer,
    /// (R, C), written.
    pub y: &'a GpuBuffer,
    /// (3, C), written: μ, σ² (biased), rstd.
    pub stats: &'a GpuBuffer,
    /// (running_mean, running_var), each (C), updated in place; `None` leaves them.
    pub running: Option<(&'a GpuBuffer, &'a GpuBuffer)>,
    pub rows: usize,
    pub c: usize,
}

/// Arguments of [`Recorder::batch_norm_backward`].
#[derive(Clone, Copy, Debug)]
pub struct BatchNormGradArgs<'a> {
    /// (R, C) gradient of the output.
    pub dy: &'a GpuBuffer,
    /// (R, C) the forward's input.
    pub x: &'a GpuBuffer,
    /// (C)
    pub gamma: &'a GpuBuffer,
    /// (3, C) from [`Recorder::batch_norm_train`].
    pub stats: &'a GpuBuffer,
    /// (R, C), (C), (C): ADDED to.
    pub dx: &'a GpuBuffer,
    pub dgamma: &'a GpuBuffer,
    pub dbeta: &'a GpuBuffer,
    pub rows: usize,
    pub c: usize,
}

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

/// Iterations one thread may run in one dispatch: llvmpipe ends every loop of an invocation
/// after 65 535 in all (docs/gpu-training.md), so long sums are split into dispatches.
const MAX_THREAD_ITERATIONS: usize = 32_768;

/// The sequence ranges `b0 .. b_end` of the dispatches that sum a shared table's gradient
/// over B sequences, when one sequence costs `per_seq` iterations per thread.
fn seq_chunks(batch: usize, per_seq: usize) -> Vec<(usize, usize)> {
    let step = (MAX_THREAD_ITERATIONS / per_seq.max(1)).max(1);
    (0..batch)
        .step_by(step)
        .map(|b0| (b0, (b0 + step).min(batch)))
        .collect()
}

fn check_train_dims(d: &AttnDims) -> Result<()> {
    if d.kv_rows != d.s_len {
        return Err(Error::Gpu(format!(
            "the attention backward reads S = {} keys per sequence, not a cache of {} rows",
            d.s_len, d.kv_rows
        )));
    }
    Ok(())
}

impl Recorder {
    /// `dscores (R, S) = probs ⊙ (dprobs − rowsum(dprobs ⊙ probs))`:
    /// `shaders/softmax_backward.wgsl`, mirroring the softmax step of
    /// `train::backward::attention::attention_backward`. `dscores` is written.
    pub fn softmax_backward(
        &mut self,
        probs: &GpuBuffer,
        dprobs: &GpuBuffer,
        dscores: &GpuBuffer,
        rows: usize,
        s_len: usize,
    ) -> Result<()> {
        need(probs, rows * s_len, "probabilities")?;
        need(dprobs, rows * s_len, "probability gradient")?;
        need(dscores, rows * s_len, "score gradient")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(s_len, "S")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::SoftmaxBackward),
            bytemuck::bytes_of(&p),
            &[&probs.buffer, &dprobs.buffer, &dscores.buffer],
            u(rows, "rows")?,
        )
    }

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

    /// BatchNorm with the batch's statistics (and the running update):
    /// `shaders/batch_norm_train.wgsl`, mirroring `model::norm::batchnorm_train_forward`
    /// and `batchnorm_running_update` (which needs at least two rows).
    pub fn batch_norm_train(&mut self, x: &BatchNormTrainArgs) -> Result<()> {
        let (rows, c) = (x.rows, x.c);
        if rows == 0 {
            return Err(Error::Gpu("batch norm over zero rows".into()));
        }
        if x.running.is_some() && rows < 2 {
            return Err(Error::Gpu(
                "the running variance needs at least two rows (R / (R − 1))".into(),
            ));
        }
        need(x.x, rows * c, "batch norm input")?;
        need(x.gamma, c, "batch norm weight")?;
        need(x.beta, c, "batch norm bias")?;
        need(x.y, rows * c, "batch norm output")?;
        need(x.stats, 3 * c, "batch norm statistics")?;
        if let Some((m, v)) = x.running {
            need(m, c, "running mean")?;
            need(v, c, "running var")?;
        }
        let p = BatchNormTrainParams {
            rows: u(rows, "rows")?,
            c: u(c, "C")?,
            // As `batchnorm_running_update` computes them, in f32.
            keep: 1.0 - BN_MOMENTUM,
            momentum: BN_MOMENTUM,
            unbias: rows as f32 / (rows.max(2) - 1) as f32,
            _pad: [0; 3],
        };
        let key = PipelineKey {
            kernel: Kernel::BatchNormTrain,
            constants: vec![("HAS_UPDATE", x.running.is_some() as u32)],
        };
        let dummy = self.ctx().dummy().clone();
        let (rm, rv) = match x.running {
            Some((m, v)) => (&m.buffer, &v.buffer),
            None => (&dummy, &dummy),
        };
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[
                &x.x.buffer,
                &x.gamma.buffer,
                &x.beta.buffer,
                &x.y.buffer,
                &x.stats.buffer,
                rm,
                rv,
            ],
            u(c, "C")?,
        )
    }

    /// dx, dγ, dβ (added) of train-mode BatchNorm: `shaders/batch_norm_backward.wgsl`,
    /// mirroring `train::backward::norm::batchnorm_train_backward`.
    pub fn batch_norm_backward(&mut self, x: &BatchNormGradArgs) -> Result<()> {
        let (rows, c) = (x.rows, x.c);
        need(x.dy, rows * c, "batch norm output gradient")?;
        need(x.x, rows * c, "batch norm input")?;
        need(x.gamma, c, "batch norm weight")?;
        need(x.stats, 3 * c, "batch norm statistics")?;
        need(x.dx, rows * c, "batch norm input gradient")?;
        need(x.dgamma, c, "batch norm weight gradient")?;
        need(x.dbeta, c, "batch norm bias gradient")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::BatchNormBackward),
            bytemuck::bytes_of(&p),
            &[
                &x.dy.buffer,
                &x.x.buffer,
                &x.gamma.buffer,
                &x.stats.buffer,
                &x.dx.buffer,
                &x.dgamma.buffer,
                &x.dbeta.buffer,
            ],
            u(c, "C")?,
        )
    }

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

//! One launch function per WGSL kernel (`shaders/`, listed in `catalogue.rs`) that checks
//! its arguments and records a dispatch.
//!
//! Each launch mirrors one CPU function of `model::*`; `crate/tests/gpu_kernels.rs` runs
//! both on the same inputs. Kernels are specialised with WGSL `override` constants (set
//! when the pipeline is created) and a uniform block of sizes, never by editing source.

use bytemuck::{Pod, Zeroable};

use super::catalogue::{Kernel, PipelineKey};
use super::context::{GpuBuffer, Recorder};
use crate::config::Activation;
use crate::error::{Error, Result};
use crate::model::mask::MaskSpec;

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

/// Arguments of [`Recorder::matmul`]: `out (M, N) = a (M, K) · w (N, K)ᵀ + bias (N)`.
#[derive(Clone, Copy, Debug)]
pub struct MatmulArgs<'a> {
    /// (M, K) rows.
    pub a: Rows<'a>,
    /// (N, K) row-major from element `w_offset`.
    pub w: &'a GpuBuffer,
    pub w_offset: usize,
    /// (N) from element `b_offset`, or no bias.
    pub bias: Option<&'a GpuBuffer>,
    pub b_offset: usize,
    /// (M, N) rows, written.
    pub out: Rows<'a>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

impl<'a> MatmulArgs<'a> {
    /// The common case, a `Linear` layer: `out (M, N) = inp (M, K) · Wᵀ + b` with dense
    /// rows and the whole of W (N, K) and b (N).
    pub fn linear(
        inp: &'a GpuBuffer,
        w: &'a GpuBuffer,
        bias: Option<&'a GpuBuffer>,
        out: &'a GpuBuffer,
        (m, k, n): (usize, usize, usize),
    ) -> Self {
        MatmulArgs {
            a: Rows::dense(inp, k),
            w,
            w_offset: 0,
            bias,
            b_offset: 0,
            out: Rows::dense(out, n),
            m,
            k,
            n,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct MatmulParams {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_stride: u32,
    w_offset: u32,
    b_offset: u32,
    c_offset: u32,
    c_stride: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CountParams {
    n: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct RowParams {
    rows: u32,
    width: u32,
    _pad: [u32; 2],
}

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

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CopyParams {
    batch: u32,
    t_len: u32,
    width: u32,
    src_seq: u32,
    src_t0: u32,
    src_stride: u32,
    src_col: u32,
    dst_seq: u32,
    dst_t0: u32,
    dst_stride: u32,
    dst_col: u32,
    _pad: u32,
}

/// Sizes shared by the attention kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnDims {
    /// B
    pub batch: usize,
    /// H
    pub n_heads: usize,
    /// T: queries per sequence.
    pub t_len: usize,
    /// S: keys per sequence.
    pub s_len: usize,
    /// D
    pub d_head: usize,
    /// Absolute position of query 0 (the cache length in a cached decoding step).
    pub pos0: usize,
    /// R ≥ S: rows each sequence occupies in the key, value and key-token buffers (key j
    /// of sequence b is row b·R + j). S in a plain forward pass; the capacity of the KV
    /// cache, of which the first S rows are filled, in a cached step.
    pub kv_rows: usize,
}

impl AttnDims {
    /// Rows of the key / value buffers the kernels read: the last sequence's S keys
    /// after the B − 1 sequences before it.
    fn key_rows(&self) -> usize {
        if self.batch == 0 || self.s_len == 0 {
            0
        } else {
            (self.batch - 1) * self.kv_rows + self.s_len
        }
    }

    fn check_rows(&self) -> Result<()> {
        if self.kv_rows < self.s_len {
            return Err(Error::Gpu(format!(
                "attention over S = {} keys in buffers of {} rows per sequence",
                self.s_len, self.kv_rows
            )));
        }
        Ok(())
    }
}

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

/// What [`Recorder::matmul_then`] does to each output element after the bias.
#[derive(Clone, Copy, Debug)]
pub enum Epilogue<'a> {
    None,
    /// The FFN's non-linearity.
    Activation(Activation),
    /// Add the element of this buffer at the output's place (a residual connection).
    Residual(&'a GpuBuffer),
}

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

/// Rows of a buffer laid out sequence by sequence: row t of sequence b starts at element
/// `(b · seq_rows + first + t) · stride + col`.
#[derive(Clone, Copy, Debug)]
pub struct SeqRows<'a> {
    pub buf: &'a GpuBuffer,
    /// Rows each sequence occupies.
    pub seq_rows: usize,
    /// The first row of each sequence this copy touches.
    pub first: usize,
    pub stride: usize,
    pub col: usize,
}

impl SeqRows<'_> {
    /// Elements needed for rows `first .. first + t_len` of sequences `0..=last_seq`,
    /// `width` wide.
    fn extent(&self, last_seq: usize, t_len: usize, width: usize) -> usize {
        if t_len == 0 || width == 0 {
            0
        } else {
            (last_seq * self.seq_rows + self.first + t_len - 1) * self.stride + self.col + width
        }
    }
}

/// Arguments of [`Recorder::copy_rows`]: for b < `batch`, t < `t_len`, copy `width`
/// elements of row t of sequence `from_seq[b]` (or b) of `src` to row t of sequence b of
/// `dst`. `src` and `dst` are different buffers.
#[derive(Clone, Copy, Debug)]
pub struct CopyArgs<'a> {
    pub src: SeqRows<'a>,
    pub dst: SeqRows<'a>,
    /// (B) the source sequence of each destination sequence; `None`: sequence b itself.
    pub from_seq: Option<&'a [u32]>,
    pub batch: usize,
    pub t_len: usize,
    pub width: usize,
}

/// The value attention_scores.wgsl writes for a masked score (WGSL has no −∞; see the
/// shader header). Trace readers map it back to `f32::NEG_INFINITY`.
pub const MASKED: f32 = -f32::MAX;

impl Recorder {
    /// `out (M, N) = a (M, K) · w (N, K)ᵀ + bias`: `shaders/matmul.wgsl`, mirroring
    /// `model::ffn::linear_forward`.
    pub fn matmul(&mut self, x: &MatmulArgs) -> Result<()> {
        self.matmul_then(x, Epilogue::None)
    }

    /// [`Recorder::matmul`] followed, in the same dispatch, by `then`: the activation
    /// (`linear_forward` then `activation_forward`) or the residual sum (`out += res`,
    /// `res` laid out as `out`), as `Run::sublayer` and `Run::ffn` compute them.
    pub fn matmul_then(&mut self, x: &MatmulArgs, then: Epilogue) -> Result<()> {
        need(x.a.buf, x.a.extent(x.m, x.k), "matmul input")?;
        need(x.w, x.w_offset + x.n * x.k, "matmul weight")?;
        if let Some(b) = x.bias {
            need(b, x.b_offset + x.n, "matmul bias")?;
        }
        need(x.out.buf, x.out.extent(x.m, x.n), "matmul output")?;
        let p = MatmulParams {
            m: u(x.m, "M")?,
            n: u(x.n, "N")?,
            k: u(x.k, "K")?,
            a_offset: u(x.a.col, "a offset")?,
            a_stride: u(x.a.stride, "a stride")?,
            w_offset: u(x.w_offset, "w offset")?,
            b_offset: u(x.b_offset, "bias offset")?,
            c_offset: u(x.out.col, "out offset")?,
            c_stride: u(x.out.stride, "out stride")?,
            _pad: [0; 3],
        };
        let (act, res) = match then {
            Epilogue::None => (0, None),
            Epilogue::Activation(Activation::Relu) => (1, None),
            Epilogue::Activation(Activation::Gelu) => (2, None),
            Epilogue::Residual(r) => {
                need(r, x.out.extent(x.m, x.n), "matmul residual")?;
                if r.buffer == x.out.buf.buffer {
                    return Err(Error::Gpu(
                        "matmul's residual must be another buffer than its output".into(),
                    ));
                }
                (0, Some(r))
            }
        };
        let key = PipelineKey {
            kernel: Kernel::Matmul,
            constants: vec![
                ("HAS_BIAS", x.bias.is_some() as u32),
                ("ACT", act),
                ("HAS_RESIDUAL", res.is_some() as u32),
            ],
        };
        let dummy = self.ctx().dummy().clone();
        let bias = x.bias.map(|b| &b.buffer).unwrap_or(&dummy);
        let res = res.map(|b| &b.buffer).unwrap_or(&dummy);
        let grid = (u(x.n.div_ceil(16), "N")?, u(x.m.div_ceil(16), "M")?);
        self.dispatch_2d(
            key,
            bytemuck::bytes_of(&p),
            &[&x.a.buf.buffer, &x.w.buffer, bias, &x.out.buf.buffer, res],
            grid,
        )
    }

    /// `x[..n] = act(x[..n])` in place: `shaders/activation.wgsl`, mirroring
    /// `model::ffn::activation_forward`.
    pub fn activation(&mut self, x: &GpuBuffer, n: usize, act: Activation) -> Result<()> {
        need(x, n, "activation input")?;
        let p = CountParams {
            n: u(n, "N")?,
            _pad: [0; 3],
        };
        let code = match act {
            Activation::Relu => 0,
            Activation::Gelu => 1,
        };
        let key = PipelineKey {
            kernel: Kernel::Activation,
            constants: vec![("ACT", code)],
        };
        self.dispatch(key, bytemuck::bytes_of(&p), &[&x.buffer], groups_for(n)?)
    }

    /// `x[..n] += y[..n]`: `shaders/add.wgsl`, the residual connection.
    pub fn add(&mut self, x: &GpuBuffer, y: &GpuBuffer, n: usize) -> Result<()> {
        need(x, n, "residual")?;
        need(y, n, "sublayer output")?;
        let p = CountParams {
            n: u(n, "N")?,
            _pad: [0; 3],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::Add),
            bytemuck::bytes_of(&p),
            &[&y.buffer, &x.buffer],
            groups_for(n)?,
        )
    }

    /// `y (R, C) = LayerNorm(x (R, C)) · γ + β`: `shaders/layer_norm.wgsl`, mirroring
    /// `model::norm::layernorm_forward`.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        beta: &GpuBuffer,
        y: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "layer norm input")?;
        need(gamma, c, "layer norm weight")?;
        need(beta, c, "layer norm bias")?;
        need(y, rows * c, "layer norm output")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::LayerNorm),
            bytemuck::bytes_of(&p),
            &[&x.buffer, &gamma.buffer, &beta.buffer, &y.buffer],
            u(rows, "rows")?,
        )
    }

    /// `y (R, C) = (x − running_mean) / √(running_var + ε) · γ + β`:
    /// `shaders/batch_norm.wgsl`, mirroring `model::norm::batchnorm_eval_forward`.
    /// `stats` is (running_mean, running_var).
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        beta: &GpuBuffer,
        stats: (&GpuBuffer, &GpuBuffer),
        y: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "batch norm input")?;
        for (b, what) in [
            (gamma, "batch norm weight"),
            (beta, "batch norm bias"),
            (stats.0, "running mean"),
            (stats.1, "running var"),
        ] {
            need(b, c, what)?;
        }
        need(y, rows * c, "batch norm output")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(c, "C")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::BatchNorm),
            bytemuck::bytes_of(&p),
            &[
                &x.buffer,
                &gamma.buffer,
                &beta.buffer,
                &stats.0.buffer,
                &stats.1.buffer,
                &y.buffer,
            ],
            groups_for(rows * c)?,
        )
    }

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

    /// One rotation pass over `x` in place (`Kernel::Rope` forward, `Kernel::RopeBackward`
    /// by −angle): the two kernels share their bindings, parameters and grid.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rope_pass(
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

    /// `probs (R, S) = masked softmax(scores (R, S))` row by row:
    /// `shaders/softmax.wgsl`, mirroring the softmax step of `model::attention`.
    pub fn softmax(
        &mut self,
        scores: &GpuBuffer,
        probs: &GpuBuffer,
        rows: usize,
        s_len: usize,
    ) -> Result<()> {
        need(scores, rows * s_len, "scores")?;
        need(probs, rows * s_len, "probabilities")?;
        let p = RowParams {
            rows: u(rows, "rows")?,
            width: u(s_len, "S")?,
            _pad: [0; 2],
        };
        self.dispatch(
            PipelineKey::plain(Kernel::Softmax),
            bytemuck::bytes_of(&p),
            &[&scores.buffer, &probs.buffer],
            u(rows, "rows")?,
        )
    }

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

    /// Copy rows of 32-bit values between two buffers (f32 bits or u32 ids, unchanged):
    /// `shaders/copy_rows.wgsl`, the KV cache's append (mirroring `extend_from_slice` in
    /// `Model::decode_step`) and beam reorder (mirroring
    /// `generate::generator::select_sequences`).
    pub fn copy_rows(&mut self, x: &CopyArgs) -> Result<()> {
        if x.src.seq_rows < x.src.first + x.t_len || x.dst.seq_rows < x.dst.first + x.t_len {
            return Err(Error::Gpu(format!(
                "copy of rows {}..{} (source) to {}..{} (destination) past the {} / {} rows \
                 of a sequence",
                x.src.first,
                x.src.first + x.t_len,
                x.dst.first,
                x.dst.first + x.t_len,
                x.src.seq_rows,
                x.dst.seq_rows
            )));
        }
        if x.batch == 0 {
            return Ok(());
        }
        let last_src = match x.from_seq {
            Some(m) => {
                if m.len() != x.batch {
                    return Err(Error::Gpu(format!(
                        "copy of {} sequences with {} source indices",
                        x.batch,
                        m.len()
                    )));
                }
                m.iter().copied().max().unwrap_or(0) as usize
            }
            None => x.batch - 1,
        };
        need(
            x.src.buf,
            x.src.extent(last_src, x.t_len, x.width),
            "copy source",
        )?;
        need(
            x.dst.buf,
            x.dst.extent(x.batch - 1, x.t_len, x.width),
            "copy destination",
        )?;
        let p = CopyParams {
            batch: u(x.batch, "B")?,
            t_len: u(x.t_len, "T")?,
            width: u(x.width, "W")?,
            src_seq: u(x.src.seq_rows, "source rows")?,
            src_t0: u(x.src.first, "source first row")?,
            src_stride: u(x.src.stride, "source stride")?,
            src_col: u(x.src.col, "source col")?,
            dst_seq: u(x.dst.seq_rows, "destination rows")?,
            dst_t0: u(x.dst.first, "destination first row")?,
            dst_stride: u(x.dst.stride, "destination stride")?,
            dst_col: u(x.dst.col, "destination col")?,
            _pad: 0,
        };
        let key = PipelineKey {
            kernel: Kernel::CopyRows,
            constants: vec![("HAS_FROM", x.from_seq.is_some() as u32)],
        };
        let from = x
            .from_seq
            .map(|m| self.ctx().upload_u32("source sequences", m))
            .transpose()?;
        let dummy = self.ctx().dummy().clone();
        let from = from.as_ref().map(|b| &b.buffer).unwrap_or(&dummy);
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[&x.src.buf.buffer, from, &x.dst.buf.buffer],
            groups_for(x.batch * x.t_len * x.width)?,
        )
    }
}

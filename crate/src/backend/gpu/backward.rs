//! Launch functions of the training kernels: the backward passes of the dense and
//! element-wise ops, the loss, gradient clipping and Adam.
//!
//! Each launch mirrors one CPU function of `train::*` and, like it, ADDS into gradient
//! buffers the caller zeroed once per step; `crate/tests/gpu_backward.rs` runs both on the
//! same inputs.

use bytemuck::{Pod, Zeroable};

use super::catalogue::{Kernel, PipelineKey};
use super::context::{GpuBuffer, Recorder};
use super::kernels::{groups_for, need, u, Rows};
use crate::config::Activation;
use crate::error::{Error, Result};
use crate::train::optim::AdamConfig;

/// A strided matrix view: element (r, c) is `buf[offset + r·row + c·col]`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a> {
    pub buf: &'a GpuBuffer,
    pub offset: usize,
    pub row: usize,
    pub col: usize,
}

impl<'a> Strided<'a> {
    /// A row-major (R, width) matrix.
    pub fn rows(buf: &'a GpuBuffer, width: usize) -> Self {
        Strided {
            buf,
            offset: 0,
            row: width,
            col: 1,
        }
    }

    /// The transpose of a row-major (R, width) matrix, seen as (width, R).
    pub fn transposed(buf: &'a GpuBuffer, width: usize) -> Self {
        Strided {
            buf,
            offset: 0,
            row: 1,
            col: width,
        }
    }

    fn of(r: Rows<'a>) -> Self {
        Strided {
            buf: r.buf,
            offset: r.col,
            row: r.stride,
            col: 1,
        }
    }

    fn transpose(self) -> Self {
        Strided {
            row: self.col,
            col: self.row,
            ..self
        }
    }

    /// Elements needed to hold `rows` × `cols`.
    fn extent(&self, rows: usize, cols: usize) -> usize {
        if rows == 0 || cols == 0 {
            0
        } else {
            self.offset + (rows - 1) * self.row + (cols - 1) * self.col + 1
        }
    }
}

/// Arguments of [`Recorder::gemm`]: `c (M, N) (+)= a (M, K) · b (K, N)`.
#[derive(Clone, Copy, Debug)]
pub struct GemmArgs<'a> {
    pub a: Strided<'a>,
    pub b: Strided<'a>,
    /// (M, N) rows, added to (`accumulate`) or overwritten.
    pub c: Rows<'a>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub accumulate: bool,
}

/// Arguments of [`Recorder::linear_backward`], for the forward
/// `out (N, OUT) = inp (N, IN) · Wᵀ + b`.
#[derive(Clone, Copy, Debug)]
pub struct LinearBackwardArgs<'a> {
    /// (N, OUT) rows: the gradient of the output.
    pub dout: Rows<'a>,
    /// (N, IN) rows: the forward's input (a row stride of T·C reads position 0 of each
    /// sequence, as the classifier does).
    pub inp: Rows<'a>,
    /// (OUT, IN) row-major from element `w_offset`.
    pub weight: &'a GpuBuffer,
    pub w_offset: usize,
    /// (N, IN) rows, added to; `None` when the input needs no gradient.
    pub dinp: Option<Rows<'a>>,
    /// (OUT, IN) from element `dw_offset`, added to.
    pub dweight: &'a GpuBuffer,
    pub dw_offset: usize,
    /// (OUT) from element `db_offset`, added to; `None` for a layer without bias.
    pub dbias: Option<&'a GpuBuffer>,
    pub db_offset: usize,
    pub n: usize,
    pub c_in: usize,
    pub c_out: usize,
}

impl<'a> LinearBackwardArgs<'a> {
    /// The common case: dense rows and whole tensors.
    #[allow(clippy::too_many_arguments)]
    pub fn dense(
        dout: &'a GpuBuffer,
        inp: &'a GpuBuffer,
        weight: &'a GpuBuffer,
        dinp: Option<&'a GpuBuffer>,
        dweight: &'a GpuBuffer,
        dbias: Option<&'a GpuBuffer>,
        (n, c_in, c_out): (usize, usize, usize),
    ) -> Self {
        LinearBackwardArgs {
            dout: Rows::dense(dout, c_out),
            inp: Rows::dense(inp, c_in),
            weight,
            w_offset: 0,
            dinp: dinp.map(|b| Rows::dense(b, c_in)),
            dweight,
            dw_offset: 0,
            dbias,
            db_offset: 0,
            n,
            c_in,
            c_out,
        }
    }
}

/// The learning rate of an Adam step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LrRule {
    /// The same rate every step.
    Constant(f32),
    /// `train::schedule::noam_lr(step, d_model, warmup, factor)`, computed on the GPU.
    Noam {
        d_model: usize,
        warmup: u64,
        factor: f32,
    },
}

/// Arguments of [`Recorder::adam`]: one trained tensor of `n` elements.
#[derive(Clone, Copy, Debug)]
pub struct AdamArgs<'a> {
    /// (n) the gradient, already clipped.
    pub grad: &'a GpuBuffer,
    /// (n) the weights, updated.
    pub weight: &'a GpuBuffer,
    /// (n) first and second moments, updated.
    pub m: &'a GpuBuffer,
    pub v: &'a GpuBuffer,
    /// (1) the step's learning rate, written.
    pub lr_out: &'a GpuBuffer,
    pub n: usize,
    /// The step being taken, from 1 (`Adam::step` after its increment).
    pub step: u64,
    pub lr: LrRule,
    pub config: AdamConfig,
}

/// Arguments of [`Recorder::cross_entropy`]: N rows of V logits.
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropyArgs<'a> {
    /// (N, V)
    pub logits: &'a GpuBuffer,
    /// (N) u32, each < V.
    pub targets: &'a GpuBuffer,
    /// A target id whose rows are not counted (the LM's pad id); `None` counts every row.
    pub ignore: Option<u32>,
    pub smoothing: f32,
    /// d(objective)/d(mean loss), 1 for training.
    pub dloss: f32,
    /// (2) written: (mean loss, counted rows).
    pub loss: &'a GpuBuffer,
    /// (N, V) added to; `None` computes the loss alone.
    pub dlogits: Option<&'a GpuBuffer>,
    pub rows: usize,
    pub v: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct GemmParams {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_row: u32,
    a_col: u32,
    b_offset: u32,
    b_row: u32,
    b_col: u32,
    c_offset: u32,
    c_stride: u32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BiasParams {
    rows: u32,
    n: u32,
    stride: u32,
    b_offset: u32,
    d_col: u32,
    r0: u32,
    r1: u32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct FourU32 {
    a: u32,
    b: u32,
    c: u32,
    d: u32,
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

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CrossEntropyParams {
    rows: u32,
    v: u32,
    ignore_id: u32,
    has_ignore: u32,
    smoothing: f32,
    dloss: f32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct NormParams {
    n: u32,
    accumulate: u32,
    max_norm: f32,
    start: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct AdamParams {
    n: u32,
    step: u32,
    lr_rule: u32,
    d_model: u32,
    warmup: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    _pad: [u32; 3],
}

/// The most iterations a thread's loops may run: llvmpipe (software Vulkan) counts every
/// loop iteration of one invocation, across all its loops, and after 65 535 ends every loop
/// it is in or enters. A launch splits longer sums into dispatches of at most this many
/// rows, each adding to the last in order.
const MAX_LOOP: usize = 32_768;

/// [start, end) ranges of at most `step` covering 0..n; one empty range when n is 0.
fn chunks(n: usize, step: usize) -> Vec<(usize, usize)> {
    if n == 0 {
        return vec![(0, 0)];
    }
    (0..n)
        .step_by(step)
        .map(|s| (s, (s + step).min(n)))
        .collect()
}

fn with_mode(kernel: Kernel, mode: u32) -> PipelineKey {
    PipelineKey {
        kernel,
        constants: vec![("MODE", mode)],
    }
}

impl Recorder {
    /// `c (M, N) (+)= a (M, K) · b (K, N)` through strides: `shaders/matmul_backward.wgsl`,
    /// mirroring `tensor::gemm` (`matmul_nn`, `matmul_tn`).
    ///
    /// A long K (the rows of a weight gradient's `doutᵀ · inp`) is split into dispatches of
    /// at most [`MAX_LOOP`] products per output, each adding to the last: llvmpipe stops a
    /// thread after 65 535 loop iterations in all.
    pub fn gemm(&mut self, x: &GemmArgs) -> Result<()> {
        need(x.a.buf, x.a.extent(x.m, x.k), "gemm left operand")?;
        need(x.b.buf, x.b.extent(x.k, x.n), "gemm right operand")?;
        need(x.c.buf, x.c.extent(x.m, x.n), "gemm output")?;
        let grid = (u(x.n.div_ceil(16), "N")?, u(x.m.div_ceil(16), "M")?);
        for (k0, k1) in chunks(x.k, MAX_LOOP) {
            let p = GemmParams {
                m: u(x.m, "M")?,
                n: u(x.n, "N")?,
                k: u(k1 - k0, "K")?,
                a_offset: u(x.a.offset + k0 * x.a.col, "a offset")?,
                a_row: u(x.a.row, "a row stride")?,
                a_col: u(x.a.col, "a column stride")?,
                b_offset: u(x.b.offset + k0 * x.b.row, "b offset")?,
                b_row: u(x.b.row, "b row stride")?,
                b_col: u(x.b.col, "b column stride")?,
                c_offset: u(x.c.col, "c offset")?,
                c_stride: u(x.c.stride, "c stride")?,
                _pad: 0,
            };
            let key = PipelineKey {
                kernel: Kernel::MatmulBackward,
                constants: vec![("ACCUMULATE", (x.accumulate || k0 > 0) as u32)],
            };
            self.dispatch_2d(
                key,
                bytemuck::bytes_of(&p),
                &[&x.a.buf.buffer, &x.b.buf.buffer, &x.c.buf.buffer],
                grid,
            )?;
        }
        Ok(())
    }

    /// `db[n] += Σ_r dout[r, n]` over `rows` rows of `width` (from column `dout.col`): `shaders/bias_backward.wgsl`,
    /// the bias step of `train::backward::ffn::linear_backward`.
    pub fn bias_backward(
        &mut self,
        dout: Rows,
        db: &GpuBuffer,
        db_offset: usize,
        rows: usize,
        width: usize,
    ) -> Result<()> {
        need(dout.buf, dout.extent(rows, width), "bias gradient input")?;
        need(db, db_offset + width, "bias gradient")?;
        for (r0, r1) in chunks(rows, MAX_LOOP) {
            let p = BiasParams {
                rows: u(rows, "rows")?,
                n: u(width, "N")?,
                stride: u(dout.stride, "stride")?,
                b_offset: u(db_offset, "bias offset")?,
                d_col: u(dout.col, "column offset")?,
                r0: u(r0, "first row")?,
                r1: u(r1, "last row")?,
                _pad: 0,
            };
            self.dispatch(
                PipelineKey::plain(Kernel::BiasBackward),
                bytemuck::bytes_of(&p),
                &[&dout.buf.buffer, &db.buffer],
                groups_for(width)?,
            )?;
        }
        Ok(())
    }

    /// Backward of a `Linear` layer, `out (N, OUT) = inp (N, IN) · Wᵀ + b`: up to three
    /// dispatches, mirroring `train::backward::ffn::linear_backward`:
    /// `dinp += dout · W`, `dW += doutᵀ · inp`, `db += Σ_n dout[n]`.
    pub fn linear_backward(&mut self, x: &LinearBackwardArgs) -> Result<()> {
        let (n, c_in, c_out) = (x.n, x.c_in, x.c_out);
        let w = Strided {
            buf: x.weight,
            offset: x.w_offset,
            row: c_in,
            col: 1,
        }; // (OUT, IN)
        if let Some(dinp) = x.dinp {
            // forward: out = inp · Wᵀ  →  dinp (N, IN) += dout (N, OUT) · W (OUT, IN)
            self.gemm(&GemmArgs {
                a: Strided::of(x.dout),
                b: w,
                c: dinp,
                m: n,
                k: c_out,
                n: c_in,
                accumulate: true,
            })?;
        }
        // forward: out[n, o] = Σ_i inp[n, i] · W[o, i]  →  dW (OUT, IN) += doutᵀ · inp
        self.gemm(&GemmArgs {
            a: Strided::of(x.dout).transpose(),
            b: Strided::of(x.inp),
            c: Rows {
                buf: x.dweight,
                stride: c_in,
                col: x.dw_offset,
            },
            m: c_out,
            k: n,
            n: c_in,
            accumulate: true,
        })?;
        if let Some(db) = x.dbias {
            // forward: out[n] += b  →  db += Σ_n dout[n]
            self.bias_backward(x.dout, db, x.db_offset, n, c_out)?;
        }
        Ok(())
    }

    /// `dinp[..n] += dout · act'(inp)`: `shaders/activation_backward.wgsl`, mirroring
    /// `train::backward::ffn::activation_backward`.
    pub fn activation_backward(
        &mut self,
        dout: &GpuBuffer,
        inp: &GpuBuffer,
        dinp: &GpuBuffer,
        n: usize,
        act: Activation,
    ) -> Result<()> {
        need(dout, n, "activation output gradient")?;
        need(inp, n, "activation input")?;
        need(dinp, n, "activation input gradient")?;
        let p = FourU32 {
            a: u(n, "N")?,
            b: 0,
            c: 0,
            d: 0,
        };
        let code = match act {
            Activation::Relu => 0,
            Activation::Gelu => 1,
        };
        let key = PipelineKey {
            kernel: Kernel::ActivationBackward,
            constants: vec![("ACT", code)],
        };
        self.dispatch(
            key,
            bytemuck::bytes_of(&p),
            &[&dout.buffer, &inp.buffer, &dinp.buffer],
            groups_for(n)?,
        )
    }

    /// Backward of `y (R, C) = LayerNorm(x) · γ + β`: adds into `dx` (R, C), `dgamma` and
    /// `dbeta` (C); `shaders/layer_norm_backward.wgsl` (two dispatches), mirroring
    /// `train::backward::norm::layernorm_backward`.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm_backward(
        &mut self,
        x: &GpuBuffer,
        gamma: &GpuBuffer,
        dy: &GpuBuffer,
        dx: &GpuBuffer,
        dgamma: &GpuBuffer,
        dbeta: &GpuBuffer,
        rows: usize,
        c: usize,
    ) -> Result<()> {
        need(x, rows * c, "layer norm input")?;
        need(gamma, c, "layer norm weight")?;
        need(dy, rows * c, "layer norm output gradient")?;
        need(dx, rows * c, "layer norm input gradient")?;
        need(dgamma, c, "layer norm weight gradient")?;
        need(dbeta, c, "layer norm bias gradient")?;
        let stats = self.ctx().zeros("layer norm statistics", 2 * rows)?; // (R, 2)
        let params = |r0: usize, r1: usize| -> Result<FourU32> {
            Ok(FourU32 {
                a: u(rows, "rows")?,
                b: u(c, "C")?,
                c: u(r0, "first row")?,
                d: u(r1, "last row")?,
            })
        };
        let bufs = [
            &x.buffer,
            &gamma.buffer,
            &dy.buffer,
            &stats.buffer,
            &dx.buffer,
            &dgamma.buffer,
            &dbeta.buffer,
        ];
        self.dispatch(
            with_mode(Kernel::LayerNormBackward, 0),
            bytemuck::bytes_of(&params(0, rows)?),
            &bufs,
            u(rows, "rows")?,
        )?;
        for (r0, r1) in chunks(rows, MAX_LOOP) {
            self.dispatch(
                with_mode(Kernel::LayerNormBackward, 1),
                bytemuck::bytes_of(&params(r0, r1)?),
                &bufs,
                groups_for(c)?,
            )?;
        }
        Ok(())
    }

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

    /// Cross-entropy with label smoothing: the mean loss and count into `loss`, and (when
    /// asked) the logits' gradient added to `dlogits`: `shaders/cross_entropy.wgsl` (three
    /// dispatches), mirroring `train::loss::cross_entropy_forward` and
    /// `cross_entropy_backward`. Targets must be below V.
    pub fn cross_entropy(&mut self, x: &CrossEntropyArgs) -> Result<()> {
        let (rows, v) = (x.rows, x.v);
        if v == 0 && rows > 0 {
            return Err(Error::Gpu("cross-entropy over 0 classes".into()));
        }
        need(x.logits, rows * v, "logits")?;
        need(x.targets, rows, "targets")?;
        need(x.loss, 2, "loss")?;
        if let Some(d) = x.dlogits {
            need(d, rows * v, "logits gradient")?;
        }
        let probs = self.ctx().zeros("probabilities", rows * v)?; // (N, V)
        let row_loss = self.ctx().zeros("row losses", rows)?; // (N)
        let p = CrossEntropyParams {
            rows: u(rows, "rows")?,
            v: u(v, "V")?,
            ignore_id: x.ignore.unwrap_or(0),
            has_ignore: x.ignore.is_some() as u32,
            smoothing: x.smoothing,
            dloss: x.dloss,
            _pad: [0; 2],
        };
        let dummy = self.ctx().zeros("no logits gradient", 1)?;
        let dlogits = x.dlogits.unwrap_or(&dummy);
        let bufs = [
            &x.logits.buffer,
            &x.targets.buffer,
            &probs.buffer,
            &row_loss.buffer,
            &x.loss.buffer,
            &dlogits.buffer,
        ];
        let uniform = bytemuck::bytes_of(&p);
        self.dispatch(
            with_mode(Kernel::CrossEntropy, 0),
            uniform,
            &bufs,
            u(rows, "rows")?,
        )?;
        self.dispatch(with_mode(Kernel::CrossEntropy, 1), uniform, &bufs, 1)?;
        if x.dlogits.is_some() {
            self.dispatch(
                with_mode(Kernel::CrossEntropy, 2),
                uniform,
                &bufs,
                groups_for(rows * v)?,
            )?;
        }
        Ok(())
    }

    /// The sum of squares of every gradient in `grads` ((buffer, elements) pairs) into
    /// `acc[0]`: the global norm is its square root. `shaders/grad_norm.wgsl`, mirroring
    /// `train::optim::grad_norm`.
    pub fn grad_norm_squared(
        &mut self,
        grads: &[(&GpuBuffer, usize)],
        acc: &GpuBuffer,
    ) -> Result<()> {
        need(acc, 1, "norm accumulator")?;
        let mut first = true;
        for &(g, n) in grads {
            need(g, n, "gradient")?;
            // Each of the 64 threads loops at most MAX_LOOP times per dispatch.
            for (start, end) in chunks(n, 64 * MAX_LOOP) {
                let p = NormParams {
                    n: u(end, "N")?,
                    accumulate: (!first) as u32,
                    max_norm: 0.0,
                    start: u(start, "first element")?,
                };
                first = false;
                self.dispatch(
                    with_mode(Kernel::GradNorm, 0),
                    bytemuck::bytes_of(&p),
                    &[&g.buffer, &acc.buffer],
                    1,
                )?;
            }
        }
        Ok(())
    }

    /// Global-norm clipping: [`Recorder::grad_norm_squared`], then every gradient scaled by
    /// `max_norm / (norm + 1e-6)` when that is below 1. `acc[0]` keeps the squared norm
    /// before clipping. Mirrors `train::optim::clip_grad_norm`.
    pub fn clip_grad_norm(
        &mut self,
        grads: &[(&GpuBuffer, usize)],
        acc: &GpuBuffer,
        max_norm: f32,
    ) -> Result<()> {
        self.grad_norm_squared(grads, acc)?;
        for &(g, n) in grads {
            let p = NormParams {
                n: u(n, "N")?,
                accumulate: 0,
                max_norm,
                start: 0,
            };
            self.dispatch(
                with_mode(Kernel::GradNorm, 1),
                bytemuck::bytes_of(&p),
                &[&g.buffer, &acc.buffer],
                groups_for(n)?,
            )?;
        }
        Ok(())
    }

    /// One Adam update of one trained tensor: `shaders/adam.wgsl`, mirroring
    /// `train::optim::Adam::step` (and `train::schedule::noam_lr` for [`LrRule::Noam`]).
    pub fn adam(&mut self, x: &AdamArgs) -> Result<()> {
        for (b, what) in [
            (x.grad, "gradient"),
            (x.weight, "weights"),
            (x.m, "first moment"),
            (x.v, "second moment"),
        ] {
            need(b, x.n, what)?;
        }
        need(x.lr_out, 1, "learning rate")?;
        if x.step == 0 {
            return Err(Error::Gpu("Adam steps count from 1".into()));
        }
        let step = u32::try_from(x.step)
            .map_err(|_| Error::Gpu(format!("Adam step {} does not fit in 32 bits", x.step)))?;
        let (lr_rule, d_model, warmup, lr) = match x.lr {
            LrRule::Constant(lr) => (0, 0, 0, lr),
            LrRule::Noam {
                d_model,
                warmup,
                factor,
            } => (
                1,
                u(d_model, "d_model")?,
                u32::try_from(warmup)
                    .map_err(|_| Error::Gpu(format!("warmup {warmup} does not fit in 32 bits")))?,
                factor,
            ),
        };
        let p = AdamParams {
            n: u(x.n, "N")?,
            step,
            lr_rule,
            d_model,
            warmup,
            lr,
            beta1: x.config.beta1,
            beta2: x.config.beta2,
            eps: x.config.eps,
            _pad: [0; 3],
        };
        // At least one thread, so the learning rate is written even for an empty tensor.
        self.dispatch(
            PipelineKey::plain(Kernel::Adam),
            bytemuck::bytes_of(&p),
            &[
                &x.grad.buffer,
                &x.weight.buffer,
                &x.m.buffer,
                &x.v.buffer,
                &x.lr_out.buffer,
            ],
            groups_for(x.n.max(1))?,
        )
    }
}

//! `Linear` layers: the product with its bias and epilogue (`shaders/matmul.wgsl`), and its
//! backward, a strided product that adds into its output (`shaders/matmul_backward.wgsl`)
//! plus the bias's column sums (`shaders/bias_backward.wgsl`).
//!
//! Mirrors `model::ffn::linear_forward` and `train::backward::ffn::linear_backward`.

use bytemuck::{Pod, Zeroable};

use super::launch::{chunks, groups_for, need, u, Rows, MAX_LOOP};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::config::Activation;
use crate::error::{Error, Result};

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

/// What [`Recorder::matmul_then`] does to each output element after the bias.
#[derive(Clone, Copy, Debug)]
pub enum Epilogue<'a> {
    None,
    /// The FFN's non-linearity.
    Activation(Activation),
    /// Add the element of this buffer at the output's place (a residual connection).
    Residual(&'a GpuBuffer),
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
            Epilogue::Activation(Activation::GeluTanh) => (3, None),
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
}

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

impl Recorder {
    /// `c (M, N) (+)= a (M, K) · b (K, N)` through strides: `shaders/matmul_backward.wgsl`,
    /// mirroring `tensor::gemm_into` (`matmul_nn`, `matmul_tn`).
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
}

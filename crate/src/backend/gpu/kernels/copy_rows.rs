//! Rows of 32-bit values copied between buffers sequence by sequence
//! (`shaders/copy_rows.wgsl`): the KV cache's append and beam search's reorder. Moves no
//! gradient, so there is no backward.

use bytemuck::{Pod, Zeroable};

use super::launch::{groups_for, need, u};
use crate::backend::gpu::catalogue::{Kernel, PipelineKey};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::error::{Error, Result};

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

impl Recorder {
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

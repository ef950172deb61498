//! The KV cache on the GPU: generation that sends one token per step, not the sequence.
//!
//! The same idea as the CPU's `model::cache` (read that first): under the causal mask a
//! position never changes once computed, so every decoder layer's keys and values can be
//! kept. Here they stay on the device:
//!
//! ```text
//! per decoder layer   self_kv  (B·P, 2C)  K (after RoPE) | V of positions 0..len; P = capacity
//!                     cross_kv (B·S, 2C)  K | V of the encoder memory (encoder-decoder)
//! per cache           key_tokens (B·P) u32, src_tokens (B·S) u32  — for the padding mask
//! ```
//!
//! [`GpuModel::prefill`] runs the prompt once (and the encoder, whose cross-attention
//! K | V it writes once: the source never changes). [`GpuKvCache::decode_step`] uploads
//! only the B new tokens; each layer projects them, writes their K | V at row `len` with
//! `copy_rows.wgsl`, and attends over the `len + 1` cached rows with the same kernels as
//! a full pass (T = 1, query offset `len`). One submission, one readback per step: the new
//! position's logits and, when asked, its attention over the cache.
//!
//! Beam search reorders the rows by parent ([`GpuKvCache::select`]): the next step
//! first gathers the surviving rows into a second set of buffers on the GPU (same
//! submission), then the two sets swap.
//!
//! A failed step leaves the cache unusable (an `Error::Gpu` now and at every later
//! step): the caller carries on with the CPU, from the tokens it has.

use super::context::{GpuBuffer, GpuContext, Recorder};
use super::model::GpuModel;
use super::pass::CacheRun;
use super::positions::PositionTables;
use super::{CopyArgs, SeqRows};
use crate::config::PosEncoding;
use crate::error::{Error, Result};
use crate::model::cache::{cache_switches, check_step_input, StepOutput};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};
use crate::tensor::Tensor;

/// One set of the cache's buffers, with room for `seqs` sequences.
struct CacheBuffers {
    seqs: usize,
    /// Per decoder layer, (seqs·P, 2C).
    self_kv: Vec<GpuBuffer>,
    /// Per decoder layer, (seqs·S, 2C); empty without an encoder.
    cross_kv: Vec<GpuBuffer>,
    /// (seqs·P) u32
    key_tokens: GpuBuffer,
    /// (seqs·S) u32; `None` without an encoder.
    src_tokens: Option<GpuBuffer>,
}

impl CacheBuffers {
    /// Zeroed buffers for `seqs` sequences of `p` positions (and `s` source positions).
    fn zeros(ctx: &GpuContext, shape: &Shape, seqs: usize) -> Result<CacheBuffers> {
        let Shape { layers, c, p, s } = *shape;
        let self_kv = (0..layers)
            .map(|l| ctx.zeros(&format!("KV cache of decoder layer {l}"), seqs * p * 2 * c)) // (B·P, 2C)
            .collect::<Result<Vec<_>>>()?;
        let cross_kv = match s {
            Some(s) => (0..layers)
                .map(|l| {
                    ctx.zeros(
                        &format!("cross-attention KV cache of decoder layer {l}"),
                        seqs * s * 2 * c,
                    ) // (B·S, 2C)
                })
                .collect::<Result<Vec<_>>>()?,
            None => vec![],
        };
        Ok(CacheBuffers {
            seqs,
            self_kv,
            cross_kv,
            key_tokens: ctx.zeros("cached tokens", seqs * p)?, // (B·P)
            src_tokens: s
                .map(|s| ctx.zeros("cached source tokens", seqs * s)) // (B·S)
                .transpose()?,
        })
    }
}

/// The sizes every set of buffers shares.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Decoder layers.
    layers: usize,
    /// C
    c: usize,
    /// P: positions per sequence.
    p: usize,
    /// S, for an encoder-decoder model.
    s: Option<usize>,
}

/// Keys and values of every decoder layer, resident on the GPU. Made by
/// [`GpuModel::prefill`]; grown one position per [`GpuKvCache::decode_step`].
pub struct GpuKvCache {
    model: GpuModel,
    /// The switches the cache was built with (trace switches off).
    opts: ForwardOptions,
    shape: Shape,
    /// B: live sequences.
    batch: usize,
    /// Positions cached so far; the next token sits at this position.
    len: usize,
    bufs: CacheBuffers,
    /// The other set of buffers, the destination of a beam reorder.
    spare: Option<CacheBuffers>,
    /// Rows to gather before the next step: new row r copies the current row `pending[r]`.
    pending: Option<Vec<u32>>,
    /// Per sequence, the tokens of the cached positions (len).
    tokens: Vec<Vec<u32>>,
    /// Per sequence, the source tokens (S); empty without an encoder.
    src_tokens: Vec<Vec<u32>>,
    /// Position tables covering the P positions.
    tables: PositionTables,
    /// Why the cache can no longer be used (a step that did not finish).
    broken: Option<String>,
}

impl std::fmt::Debug for GpuKvCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuKvCache")
            .field("batch", &self.batch)
            .field("len", &self.len)
            .field("capacity", &self.shape.p)
            .finish()
    }
}

/// The switches that must stay the same for the life of a cache.
impl GpuModel {
    /// Run the prompt `batch` (B sequences of T tokens, and for an encoder-decoder model
    /// their sources) through the model once on the GPU and keep every decoder layer's
    /// keys and values there, with room for `capacity` positions per sequence (default:
    /// max_len, or T if longer). Returns the cache and the prompt's trace (logits of
    /// every prompt position, attention when `opts.trace_attention`). Eval mode and a mask
    /// the cache can hold (`Model::check_cacheable`). One submission, one readback.
    ///
    /// `model` must be the model these weights came from; it supplies the input checks.
    pub async fn prefill(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
        capacity: Option<usize>,
    ) -> Result<(GpuKvCache, Trace)> {
        model.check_cacheable(opts, batch.len)?;
        self.check_model(model)?;
        model.check_pass(batch, opts)?;
        let cfg = self.config().clone();
        let (b, t) = (batch.batch, batch.len);
        let p = capacity.unwrap_or(cfg.max_len.max(t));
        if p < t {
            return Err(Error::Input(format!(
                "a KV cache with room for {p} positions cannot hold a prompt of {t} tokens"
            )));
        }
        if cfg.pos_encoding == PosEncoding::Learned && p > cfg.max_len {
            return Err(Error::Input(format!(
                "learned positions stop at max_len = {}; a KV cache of {p} positions would run \
                 past them",
                cfg.max_len
            )));
        }
        let ctx = self.context().clone();
        let c = cfg.d_model;
        let src_len = batch.src_tokens.as_ref().map(|_| batch.src_len);
        let shape = Shape {
            layers: cfg.decoder_layers(),
            c,
            p,
            s: src_len,
        };
        let mut bufs = CacheBuffers::zeros(&ctx, &shape, b)?;
        if let Some(src) = &batch.src_tokens {
            bufs.src_tokens = Some(ctx.upload_u32("cached source tokens", src)?);
            // (B, S)
        }
        // Positions past max_len (sinusoidal and RoPE go on; learned ones stop there).
        let tables = self.weights().tables().covering(&ctx, &cfg, p)?;
        let tokens = ctx.upload_u32("tokens", &batch.tokens)?; // (B, T)
        let run = CacheRun {
            self_kv: &bufs.self_kv,
            key_tokens: &bufs.key_tokens,
            cross_kv: &bufs.cross_kv,
            src_tokens: bufs.src_tokens.as_ref(),
            src_len: src_len.unwrap_or(0),
            encode: true,
            capacity: p,
            pos0: 0,
        };
        let (readback, plan) =
            self.record_cached(ctx.recorder()?, &tokens, (b, t), opts, (&run, &tables))?;
        let trace = plan.build(&readback.await?);
        let cache = GpuKvCache {
            model: self.clone(),
            opts: cache_switches(opts),
            shape,
            batch: b,
            len: t,
            bufs,
            spare: None,
            pending: None,
            tokens: (0..b).map(|i| batch.row(i).to_vec()).collect(),
            src_tokens: batch
                .src_tokens
                .as_ref()
                .map(|s| s.chunks_exact(batch.src_len).map(<[u32]>::to_vec).collect())
                .unwrap_or_default(),
            tables,
            broken: None,
        };
        Ok((cache, trace))
    }
}

impl GpuKvCache {
    /// B: sequences in the cache.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Positions cached so far; the next token sits at this position.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// P: positions each sequence has room for.
    pub fn capacity(&self) -> usize {
        self.shape.p
    }

    /// Per sequence, the tokens of the cached positions.
    pub fn tokens(&self) -> &[Vec<u32>] {
        &self.tokens
    }

    /// Bytes of f32 keys and values held for the cached positions (self-attention and
    /// cross-attention), as `KvCache::size_bytes` counts them on the CPU.
    pub fn size_bytes(&self) -> usize {
        let Shape { layers, c, s, .. } = self.shape;
        let per_layer = self.batch * (self.len + s.unwrap_or(0)) * 2 * c;
        layers * per_layer * std::mem::size_of::<f32>()
    }

    /// Keep sequences `rows` (in that order, repeats allowed): afterwards sequence i is
    /// a copy of the old sequence `rows[i]` — beam search following its survivors'
    /// parents. The copy itself runs on the GPU at the start of the next step.
    pub fn select(&mut self, rows: &[usize]) -> Result<()> {
        if rows.is_empty() {
            return Err(Error::Input(
                "a KV cache must keep at least one sequence".into(),
            ));
        }
        if let Some(&r) = rows.iter().find(|&&r| r >= self.batch) {
            return Err(Error::Input(format!(
                "sequence {r} does not exist: the KV cache holds {} sequences",
                self.batch
            )));
        }
        // Rows as they stand on the GPU: compose with a reorder not yet carried out.
        let from: Vec<u32> = rows
            .iter()
            .map(|&r| self.pending.as_ref().map_or(r as u32, |p| p[r]))
            .collect();
        // Keeping the first n rows in place needs no copy.
        let identity = from.iter().enumerate().all(|(i, &r)| r as usize == i);
        self.pending = (!identity).then_some(from);
        self.tokens = rows.iter().map(|&r| self.tokens[r].clone()).collect();
        if !self.src_tokens.is_empty() {
            self.src_tokens = rows.iter().map(|&r| self.src_tokens[r].clone()).collect();
        }
        self.batch = rows.len();
        Ok(())
    }

    /// Feed one new token per sequence (`tokens`, B) at position `len`: its keys and
    /// values join the cache on the GPU and the step returns that position's logits
    /// (B, V) and, with `opts.trace_attention`, its attention over the cache per layer
    /// (B, H, 1, len + 1), then cross-attention (B, H, 1, S). One submission and one
    /// readback. `opts` must carry the switches the cache was built with (trace switches
    /// may differ). Equal to `Model::decode_step` to float rounding.
    pub async fn decode_step(
        &mut self,
        model: &Model,
        tokens: &[u32],
        opts: &ForwardOptions,
    ) -> Result<StepOutput> {
        self.check_step(model, tokens, opts)?;
        let ctx = self.model.context().clone();
        let Shape { c, p, s, .. } = self.shape;
        let (b, pos) = (self.batch, self.len);
        let mut rec = ctx.recorder()?;
        // A pending beam reorder: gather the surviving rows into the spare set first.
        let reorder = match &self.pending {
            Some(from) => {
                let spare = match self.spare.take() {
                    Some(sp) if sp.seqs >= b => sp,
                    _ => CacheBuffers::zeros(&ctx, &self.shape, b.max(self.bufs.seqs))?,
                };
                if let Err(e) = gather(&mut rec, &self.bufs, &spare, from, pos, p, s, c) {
                    self.spare = Some(spare);
                    return Err(e);
                }
                Some(spare)
            }
            None => None,
        };
        let new_tokens = ctx.upload_u32("new tokens", tokens)?; // (B, 1)
        let bufs = reorder.as_ref().unwrap_or(&self.bufs);
        let run = CacheRun {
            self_kv: &bufs.self_kv,
            key_tokens: &bufs.key_tokens,
            cross_kv: &bufs.cross_kv,
            src_tokens: bufs.src_tokens.as_ref(),
            src_len: s.unwrap_or(0),
            encode: false,
            capacity: p,
            pos0: pos,
        };
        let recorded =
            self.model
                .record_cached(rec, &new_tokens, (b, 1), opts, (&run, &self.tables));
        let (readback, plan) = match recorded {
            Ok(r) => r,
            Err(e) => {
                // Nothing was submitted: the cache is as it was.
                if let Some(sp) = reorder {
                    self.spare = Some(sp);
                }
                return Err(e);
            }
        };
        // Submitted: the reordered set is now the cache, the old one the spare.
        if let Some(new) = reorder {
            self.spare = Some(std::mem::replace(&mut self.bufs, new));
            self.pending = None;
        }
        self.broken = Some("a decoding step on the GPU did not finish".into());
        let data = readback.await?;
        self.broken = None;
        let trace = plan.build(&data);
        for (row, &tok) in self.tokens.iter_mut().zip(tokens) {
            row.push(tok);
        }
        self.len += 1;
        let v = model.config.vocab_size;
        Ok(StepOutput {
            position: pos,
            logits: Tensor {
                shape: vec![b, v],
                data: trace.logits.data,
            },
            attention: trace.attention,
            hidden: trace.hidden,
        })
    }

    fn check_step(&self, model: &Model, tokens: &[u32], opts: &ForwardOptions) -> Result<()> {
        if let Some(why) = &self.broken {
            return Err(Error::Gpu(format!(
                "this GPU KV cache is unusable ({why}); prefill again, or carry on on the CPU"
            )));
        }
        model.check_cacheable(opts, self.len)?;
        let cfg = &model.config;
        if *cfg != *self.model.config() {
            return Err(Error::Input(
                "this cache was built by a different model; prefill again".into(),
            ));
        }
        check_step_input(cfg, &self.opts, opts, tokens, self.batch, self.len)?;
        if self.len >= self.shape.p {
            return Err(Error::Input(format!(
                "the KV cache is full: it has room for {} positions per sequence; prefill \
                 again with a larger capacity",
                self.shape.p
            )));
        }
        Ok(())
    }
}

/// Record the beam reorder: sequence r of every buffer of `to` becomes a copy of sequence
/// `from[r]` of `cur` (the first `len` positions; the whole source).
#[allow(clippy::too_many_arguments)]
fn gather(
    rec: &mut Recorder,
    cur: &CacheBuffers,
    to: &CacheBuffers,
    from: &[u32],
    len: usize,
    p: usize,
    s: Option<usize>,
    c: usize,
) -> Result<()> {
    let b = from.len();
    fn seq(buf: &GpuBuffer, seq_rows: usize, width: usize) -> SeqRows<'_> {
        SeqRows {
            buf,
            seq_rows,
            first: 0,
            stride: width,
            col: 0,
        }
    }
    let mut copy = |src: &GpuBuffer, dst: &GpuBuffer, seq_rows, t_len, width| {
        rec.copy_rows(&CopyArgs {
            src: seq(src, seq_rows, width),
            dst: seq(dst, seq_rows, width),
            from_seq: Some(from),
            batch: b,
            t_len,
            width,
        })
    };
    for (src, dst) in cur.self_kv.iter().zip(&to.self_kv) {
        copy(src, dst, p, len, 2 * c)?; // (B·P, 2C)
    }
    copy(&cur.key_tokens, &to.key_tokens, p, len, 1)?; // (B·P)
    if let Some(s) = s {
        for (src, dst) in cur.cross_kv.iter().zip(&to.cross_kv) {
            copy(src, dst, s, s, 2 * c)?; // (B·S, 2C)
        }
        if let (Some(src), Some(dst)) = (&cur.src_tokens, &to.src_tokens) {
            copy(src, dst, s, s, 1)?; // (B·S)
        }
    }
    Ok(())
}

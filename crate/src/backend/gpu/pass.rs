//! The one GPU walk of the layer plan: `Model::forward` (crate/src/model/forward.rs) step by
//! step, recorded into one command encoder. Inference, the KV cache's prefill and decoding
//! steps, the train-mode forward pass and the GPU trainer all run it; they differ only in
//! what it keeps ([`Keep`], the GPU twin of the CPU's `Run { keep }`):
//!
//! - [`Keep::Nothing`]: every stack's activations live in one scratch set reused layer
//!   after layer; what the trace asks for is read back.
//! - [`Keep::ForBackward`]: each sublayer writes into its own buffers of an [`Acts`], the
//!   dropout masks and BatchNorm's batch statistics included, which the trainer's backward
//!   pass (crate/src/backend/gpu/train/backward.rs) then reads.
//!
//! Train mode draws every dropout mask from the pass's seed in the CPU's order
//! (dropout.wgsl ports its generator); BatchNorm uses the batch's statistics. A sublayer,
//! a norm or a position encoding is written here once, for every caller.

mod attention;

use super::activations::{Acts, FfnActs, Scratch};
use super::context::{GpuBuffer, ReadSlot, Recorder};
use super::positions::PositionTables;
use super::trace::{HeadOut, PlannedAttention, TracePlan};
use super::{dropout_key, BatchNormTrainArgs, CopyArgs, DropoutArgs, Epilogue, MatmulArgs};
use super::{Rows, SeqRows};
use crate::config::{ModelConfig, Score};
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::mask::attention_mask;
use crate::model::plan::{NormKind, Placement, StackInput, StackPlan, SublayerKind};
use crate::model::{
    AttnSite, ForwardOptions, HeadParams, LayerParams, Mode, ModelParams, NormParams, StackParams,
};

/// What a pass keeps of its activations.
#[derive(Clone, Copy)]
pub(super) enum Keep<'a> {
    /// Nothing: inference and the KV cache.
    Nothing,
    /// Everything the backward pass reads, in these buffers (sized for this batch or a
    /// larger one).
    ForBackward(&'a Acts),
}

/// A model's parameters and tables on the device, as a pass reads them.
#[derive(Clone, Copy)]
pub(super) struct Weights<'a> {
    pub cfg: &'a ModelConfig,
    pub pad: u32,
    pub params: &'a ModelParams<GpuBuffer>,
    /// Covering every position this pass reaches.
    pub tables: &'a PositionTables,
    /// (H) u32 zeros: the ablation flags of every sublayer that zeroes no head.
    pub no_ablation: &'a GpuBuffer,
}

impl Weights<'_> {
    /// (H) u32 flags: 1 for each head of (site, layer) that `opts.ablate` zeroes; the
    /// shared zeros when it zeroes none. The forward pass and the trainer's backward read
    /// the same flags.
    pub fn ablation(
        &self,
        rec: &Recorder,
        opts: &ForwardOptions,
        site: AttnSite,
        layer: usize,
    ) -> Result<GpuBuffer> {
        let flags = opts.ablated_heads(site, layer, self.cfg.n_heads);
        if flags.iter().any(|&f| f) {
            let flags: Vec<u32> = flags.into_iter().map(u32::from).collect();
            rec.ctx().upload_u32("ablated heads", &flags)
        } else {
            Ok(self.no_ablation.clone())
        }
    }

    /// The divisor of `scaled_dot` scores: √D with the switch on, else 1.
    pub fn score_divisor(&self, opts: &ForwardOptions) -> f32 {
        if self.cfg.score == Score::ScaledDot && opts.scale {
            (self.cfg.d_head() as f32).sqrt()
        } else {
            1.0
        }
    }
}

/// The KV cache a decoder stack appends its keys and values to and attends over, in a
/// cached prefill (`pos0` = 0, the prompt) or a decoding step (`pos0` = the cache length,
/// one token per sequence). Sequence b's position j is row b·P + j of every buffer.
pub(super) struct CacheRun<'a> {
    /// Per decoder layer, (B'·P, 2C): self-attention K (after RoPE) | V.
    pub self_kv: &'a [GpuBuffer],
    /// (B'·P) u32: the token at every cached position (the padding mask's keys).
    pub key_tokens: &'a GpuBuffer,
    /// Per decoder layer, (B'·S, 2C): cross-attention K | V of the encoder memory
    /// (encoder-decoder only; empty otherwise).
    pub cross_kv: &'a [GpuBuffer],
    /// (B'·S) u32 source tokens (encoder-decoder only).
    pub src_tokens: Option<&'a GpuBuffer>,
    /// S
    pub src_len: usize,
    /// Run the encoder over `src_tokens` and write `cross_kv` (the prefill); otherwise
    /// cross-attention reads `cross_kv` as it is.
    pub encode: bool,
    /// P: positions each sequence has room for.
    pub capacity: usize,
    /// Positions already cached: the new tokens sit at pos0, pos0 + 1, …
    pub pos0: usize,
}

/// One layer's share of a [`CacheRun`].
struct LayerCache<'a> {
    /// (B'·P, 2C)
    kv: &'a GpuBuffer,
    /// (B'·P) u32
    key_tokens: &'a GpuBuffer,
    capacity: usize,
    pos0: usize,
}

/// The encoder output that cross-attention reads.
struct Memory<'a> {
    /// (B·S, C) the encoder output; `None` when the KV cache already holds every layer's
    /// cross-attention K | V of it.
    x: Option<&'a GpuBuffer>,
    /// (B, S) u32 source tokens
    tokens: &'a GpuBuffer,
    s: usize,
}

/// The one ChaCha8 stream a train-mode pass draws every dropout mask from, in the CPU's
/// order (`model::forward`: stack by stack, the embedding, then per sublayer the attention
/// probabilities or FFN hidden units, then the sublayer output).
struct DropStream {
    /// `dropout_key` of the pass's seed.
    key: [u32; 8],
    p: f32,
    /// Words drawn so far.
    offset: u64,
}

/// The recording of one pass.
pub(super) struct Pass<'a> {
    w: Weights<'a>,
    opts: &'a ForwardOptions,
    rec: &'a mut Recorder,
    keep: Keep<'a>,
    /// Train mode: BatchNorm uses the batch's statistics.
    train: bool,
    /// Train mode with dropout > 0: where the next mask starts in the pass's stream.
    drop: Option<DropStream>,
    /// The running sublayer's input when its residual is on: the sublayer's last matrix
    /// product adds it as it writes (`Epilogue::Residual`), one dispatch instead of two.
    residual: Option<GpuBuffer>,
    attention: Vec<PlannedAttention>,
    hidden: Vec<(AttnSite, Vec<ReadSlot>, [usize; 3])>,
    /// With `trace_ffn`: each FFN's hidden units (stack, layer, slot, (B, T, F)).
    ffn: Vec<(AttnSite, usize, ReadSlot, [usize; 3])>,
    /// A train-mode pass that keeps nothing: each BatchNorm's updated running statistics,
    /// read back for the trace: (parameter name, running_mean, running_var, C).
    running: Vec<(String, ReadSlot, ReadSlot, usize)>,
}

/// The stack of `params` whose self-attention is `site`.
pub(super) fn stack_of(
    params: &ModelParams<GpuBuffer>,
    site: AttnSite,
) -> Result<&StackParams<GpuBuffer>> {
    match site {
        AttnSite::EncoderSelf => params.encoder.as_ref(),
        _ => params.decoder.as_ref(),
    }
    .ok_or_else(|| missing(&format!("the {} stack", site.name())))
}

pub(super) fn missing(what: &str) -> Error {
    Error::Gpu(format!("the GPU pass has no {what}"))
}

impl<'a> Pass<'a> {
    pub fn new(
        w: Weights<'a>,
        opts: &'a ForwardOptions,
        rec: &'a mut Recorder,
        keep: Keep<'a>,
    ) -> Pass<'a> {
        let (train, drop) = match opts.mode {
            Mode::Train { seed } => (
                true,
                (w.cfg.dropout > 0.0).then(|| DropStream {
                    key: dropout_key(seed),
                    p: w.cfg.dropout,
                    offset: 0,
                }),
            ),
            Mode::Eval => (false, None),
        };
        Pass {
            w,
            opts,
            rec,
            keep,
            train,
            drop,
            residual: None,
            attention: vec![],
            hidden: vec![],
            ffn: vec![],
            running: vec![],
        }
    }

    fn cfg(&self) -> &'a ModelConfig {
        self.w.cfg
    }

    /// Whether this pass draws dropout masks.
    pub fn drops(&self) -> bool {
        self.drop.is_some()
    }

    /// With `trace_hidden`: per stack the readbacks of its residual stream (the input,
    /// then each layer's output) and its (B, T, C), taken out of the pass.
    pub fn take_hidden(&mut self) -> Vec<(AttnSite, Vec<ReadSlot>, [usize; 3])> {
        std::mem::take(&mut self.hidden)
    }

    /// The trace plan of everything read back, with the head's readback.
    pub fn into_trace(self, head: HeadOut) -> TracePlan {
        TracePlan {
            head,
            attention: self.attention,
            hidden: self.hidden,
            ffn: self.ffn,
            running: self.running,
        }
    }

    /// Every stack of the plan over (B, T) `tokens` (and the (B, S) `src` of an
    /// encoder-decoder model), the encoder's output the memory of the decoder's
    /// cross-attention. Returns the last stack's output (B·T, C).
    pub fn stacks(
        &mut self,
        plan: &[StackPlan],
        (tokens, src): (&GpuBuffer, Option<&GpuBuffer>),
        (b, t, s): (usize, usize, usize),
    ) -> Result<GpuBuffer> {
        let mut memory: Option<GpuBuffer> = None;
        let mut x = None;
        for (si, sp) in plan.iter().enumerate() {
            let (toks, len) = match sp.input {
                StackInput::Tokens => (tokens, t),
                StackInput::Source => (
                    src.ok_or_else(|| {
                        Error::Input("an encoder_decoder model needs source sequences".into())
                    })?,
                    s,
                ),
            };
            let mem = match (sp.reads_memory, &memory, src) {
                (true, Some(m), Some(src)) => Some(Memory {
                    x: Some(m),
                    tokens: src,
                    s,
                }),
                (true, ..) => return Err(missing("encoder output for cross-attention")),
                _ => None,
            };
            let out = self.stack(si, sp, toks, (b, len), mem, None)?;
            if sp.site == AttnSite::EncoderSelf {
                memory = Some(out.clone());
            }
            x = Some(out);
        }
        x.ok_or_else(|| missing("layer stack"))
    }

    /// The decoder through the KV cache: `tokens` (B, T) at positions `cache.pos0 ..`
    /// under the causal mask, each layer appending their K | V to the cache and attending
    /// over everything cached. With `cache.encode` (an encoder-decoder prefill) the
    /// encoder runs first over `cache.src_tokens` and every layer's cross-attention K | V
    /// of its output are written to `cache.cross_kv`; otherwise cross-attention reads
    /// them from there. Returns the decoder's output (B·T, C).
    pub fn cached(
        &mut self,
        plan: &[StackPlan],
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        cache: &CacheRun,
    ) -> Result<GpuBuffer> {
        if self.train {
            return Err(Error::Gpu(
                "cached decoding runs in eval mode (no dropout, BatchNorm running statistics)"
                    .into(),
            ));
        }
        let find = |site| {
            plan.iter()
                .enumerate()
                .find(|(_, sp)| sp.site == site)
                .ok_or_else(|| missing(&format!("{} stack", site.name())))
        };
        let encoded: GpuBuffer;
        let mem = match cache.src_tokens {
            Some(src) => {
                let x = if cache.encode {
                    let (si, sp) = find(AttnSite::EncoderSelf)?;
                    // The encoder output (B·S, C), read once for the cross K | V.
                    encoded = self.stack(si, sp, src, (b, cache.src_len), None, None)?;
                    Some(&encoded)
                } else {
                    None
                };
                Some(Memory {
                    x,
                    tokens: src,
                    s: cache.src_len,
                })
            }
            None => None,
        };
        let (si, sp) = find(AttnSite::DecoderSelf)?;
        self.stack(si, sp, tokens, (b, t), mem, Some(cache))
    }

    /// One encoder or decoder stack (index `si` of the plan) over (B, T) tokens; returns
    /// its output (B·T, C) (after the final norm). With `cache` the tokens sit at
    /// positions `pos0 ..`, their keys and values are appended to the cache and every
    /// query attends over it.
    fn stack(
        &mut self,
        si: usize,
        sp: &StackPlan,
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        memory: Option<Memory>,
        cache: Option<&CacheRun>,
    ) -> Result<GpuBuffer> {
        let w = self.w;
        let cfg = w.cfg;
        let stack = stack_of(w.params, sp.site)?;
        let kept = match self.keep {
            Keep::ForBackward(acts) => Some(
                acts.stacks
                    .get(si)
                    .ok_or_else(|| missing("activation buffers of a stack"))?,
            ),
            Keep::Nothing => None,
        };
        let site = sp.site;
        // The masks of this stack's self-attention and cross-attention.
        let mask = attention_mask(cfg, site, self.opts);
        let cross_mask = attention_mask(cfg, AttnSite::Cross, self.opts);
        let ctx = self.rec.ctx().clone();
        // (N, N) u32 painted cells of the mask, uploaded once for every layer.
        let cells = match mask.cell_table() {
            Some((table, side)) => Some((ctx.upload_u32("painted mask cells", &table)?, side)),
            None => None,
        };
        let c = cfg.d_model;
        let n = b * t;
        let pos0 = cache.map_or(0, |k| k.pos0);
        // Steps 1–2: x = dropout(E[tok]·scale + PE)
        let mut x = match kept {
            Some(sa) => sa.x0.clone(),
            None => ctx.zeros("residual stream", n * c)?, // (B·T, C)
        };
        let scale = embedding_scale(cfg.scale_embeddings, c);
        let table = w.params.embedding(sp.input);
        self.rec.embedding(
            tokens,
            table,
            w.tables.absolute(),
            &x,
            (n, t, c),
            pos0,
            scale,
        )?;
        self.drop(&x, kept.and_then(|sa| sa.emb_mask.as_ref()), n * c)?;
        if let Some(k) = cache {
            // The new tokens join the cache's (B'·P) key tokens at positions pos0 ..
            self.rec.copy_rows(&CopyArgs {
                src: SeqRows {
                    buf: tokens,
                    seq_rows: t,
                    first: 0,
                    stride: 1,
                    col: 0,
                },
                dst: SeqRows {
                    buf: k.key_tokens,
                    seq_rows: k.capacity,
                    first: pos0,
                    stride: 1,
                    col: 0,
                },
                from_seq: None,
                batch: b,
                t_len: t,
                width: 1,
            })?;
        }
        let mut hidden = vec![];
        if self.opts.trace_hidden {
            hidden.push(self.rec.read_all(&x)?);
        }
        let s_cross = memory.as_ref().map(|m| m.s);
        let mut scratch = match kept {
            Some(_) => None,
            None => Some(Scratch::alloc(
                &ctx,
                cfg,
                (b, t),
                pos0 + t,
                s_cross,
                cache.is_some(),
            )?),
        };
        for (li, layer) in stack.layers.iter().enumerate() {
            let layer_cache = match cache {
                Some(k) => Some(LayerCache {
                    kv: k.self_kv.get(li).ok_or_else(|| {
                        Error::Gpu(format!("the KV cache has no buffers for layer {li}"))
                    })?,
                    key_tokens: k.key_tokens,
                    capacity: k.capacity,
                    pos0,
                }),
                None => None,
            };
            let cached_kv = match (cache, &memory) {
                (Some(k), Some(_)) => Some(k.cross_kv.get(li).ok_or_else(|| {
                    Error::Gpu(format!(
                        "the KV cache has no cross-attention buffers for layer {li}"
                    ))
                })?),
                _ => None,
            };
            for (k, sub) in sp.sublayers.iter().enumerate() {
                let before = sub
                    .norm
                    .as_ref()
                    .is_some_and(|ns| ns.placement == Placement::Before);
                let bufs = match (kept, &scratch) {
                    (Some(sa), _) => sa
                        .layers
                        .get(li)
                        .and_then(|l| l.get(k))
                        .cloned()
                        .ok_or_else(|| missing("activation buffers of a sublayer"))?,
                    (None, Some(sc)) => sc.sublayer(sub.kind, before, cached_kv),
                    (None, None) => return Err(missing("scratch buffers")),
                };
                // The norm's parameters and checkpoint name (its running statistics' prefix).
                let norm = sub.norm.as_ref().and_then(|ns| {
                    let name = format!("{}.layers.{li}.{}", sp.name, ns.name);
                    layer.norms.get(ns.slot).map(|p| (ns, p, name))
                });
                // Norm before (pre-LN): the sublayer reads N(x).
                let inp = match (&norm, &bufs.h) {
                    (Some((ns, p, name)), Some(h)) if ns.placement == Placement::Before => {
                        self.norm((p, name), ns.kind, &x, h, bufs.bn.as_ref(), n)?;
                        h.clone()
                    }
                    _ => x.clone(),
                };
                // y = f(·) + x: added by f's last product when it takes the residual (not
                // in a pass that draws dropout, whose mask applies to f(·) before the sum).
                self.residual = (sub.residual && self.drop.is_none()).then(|| x.clone());
                let ablate = match sub.kind {
                    SublayerKind::SelfAttention => Some(w.ablation(self.rec, self.opts, site, li)?),
                    SublayerKind::CrossAttention => {
                        Some(w.ablation(self.rec, self.opts, AttnSite::Cross, li)?)
                    }
                    SublayerKind::Ffn => None,
                };
                let y = &bufs.y;
                match (sub.kind, &bufs.attn, &bufs.ffn, ablate) {
                    (SublayerKind::SelfAttention, Some(a), _, Some(ablate)) => self
                        .self_attention(
                            &layer.self_attn,
                            a,
                            (&inp, y),
                            (site, li),
                            tokens,
                            (b, t),
                            (&mask, cells.as_ref().map(|(buf, side)| (buf, *side))),
                            &ablate,
                            layer_cache.as_ref(),
                        )?,
                    (SublayerKind::CrossAttention, Some(a), _, Some(ablate)) => {
                        let (cross, mem) = match (&layer.cross_attn, &memory) {
                            (Some(p), Some(m)) => (p, m),
                            _ => return Err(missing("cross-attention parameters or memory")),
                        };
                        self.cross_attention(
                            cross,
                            a,
                            (&inp, y),
                            li,
                            mem,
                            (b, t),
                            &cross_mask,
                            &ablate,
                        )?
                    }
                    (SublayerKind::Ffn, _, Some(f), _) => {
                        self.ffn(layer, f, (&inp, y), (site, li), (b, t))?
                    }
                    _ => return Err(missing("buffers for a sublayer")),
                }
                self.drop(y, bufs.out_mask.as_ref(), n * c)?; // y = dropout(f(·))
                if self.residual.take().is_some() || (sub.residual && self.drop.is_some()) {
                    self.rec.add(y, &x, n * c)?; // y = f(·) + x
                }
                // Norm after (post-LN, BatchNorm): the stream goes on as N(y), written over
                // the sublayer's input when nothing is kept.
                x = match &norm {
                    Some((ns, p, name)) if ns.placement == Placement::After => {
                        let post = bufs.post.clone().unwrap_or_else(|| x.clone());
                        self.norm((p, name), ns.kind, y, &post, bufs.bn.as_ref(), n)?;
                        post
                    }
                    _ => {
                        // y becomes the stream; the stream's old buffer the next scratch.
                        if let Some(sc) = scratch.as_mut() {
                            sc.y = x.clone();
                        }
                        y.clone()
                    }
                };
            }
            if self.opts.trace_hidden {
                hidden.push(self.rec.read_all(&x)?);
            }
        }
        if self.opts.trace_hidden {
            self.hidden.push((site, hidden, [b, t, c]));
        }
        // Step 4: the final LayerNorm.
        if let Some(fnorm) = stack.final_norm.as_ref().filter(|_| sp.final_norm) {
            let out = match (kept, &scratch) {
                (Some(sa), _) => sa.fnorm.clone().ok_or_else(|| missing("final norm"))?,
                (None, Some(sc)) => sc.h.clone(),
                (None, None) => return Err(missing("scratch buffers")),
            };
            self.rec
                .layer_norm(&x, &fnorm.weight, &fnorm.bias, &out, n, c)?;
            x = out;
        }
        Ok(x)
    }

    /// Step 5, the head, on (B·T, C) rows of `x` into `out`: logits (B·T, V), or a
    /// classifier's (B, N) from position 0 of each sequence. Returns (rows, width).
    pub fn head_into(
        &mut self,
        x: &GpuBuffer,
        (b, t): (usize, usize),
        out: &GpuBuffer,
    ) -> Result<(usize, usize)> {
        let w = self.w;
        let c = w.cfg.d_model;
        match &w.params.head {
            HeadParams::Lm { weight, bias } => {
                let v = w.cfg.vocab_size;
                self.rec.matmul(&MatmulArgs::linear(
                    x,
                    weight.as_ref().unwrap_or(&w.params.embed),
                    bias.as_ref(),
                    out,
                    (b * t, c, v),
                ))?;
                Ok((b * t, v))
            }
            HeadParams::Classifier { weight, bias } => {
                let k = w.cfg.num_classes;
                // Position 0 of each sequence: rows of x with stride T·C.
                self.rec.matmul(&MatmulArgs {
                    a: Rows {
                        buf: x,
                        stride: t * c,
                        col: 0,
                    },
                    w: weight,
                    w_offset: 0,
                    bias: Some(bias),
                    b_offset: 0,
                    out: Rows::dense(out, k),
                    m: b,
                    k: c,
                    n: k,
                })?;
                Ok((b, k))
            }
        }
    }

    /// [`Pass::head_into`] a new buffer, read back at the end of the pass.
    pub fn head(&mut self, x: &GpuBuffer, (b, t): (usize, usize)) -> Result<HeadOut> {
        let cfg = self.cfg();
        let (what, len) = match &self.w.params.head {
            HeadParams::Lm { .. } => ("logits", b * t * cfg.vocab_size), // (B, T, V)
            HeadParams::Classifier { .. } => ("class logits", b * cfg.num_classes), // (B, N)
        };
        let logits = self.rec.ctx().zeros(what, len)?;
        let (_, width) = self.head_into(x, (b, t), &logits)?;
        let slot = self.rec.read_all(&logits)?;
        Ok(match &self.w.params.head {
            HeadParams::Lm { .. } => HeadOut::Logits(slot, [b, t, width]),
            HeadParams::Classifier { .. } => HeadOut::Classes(slot, [b, width]),
        })
    }

    /// A norm of (N, C) rows from `inp` into `out`: LayerNorm, or BatchNorm with its
    /// running statistics (eval mode) or with the batch's statistics (train mode). In
    /// train mode a pass that keeps its activations updates the running statistics in
    /// place and keeps the batch statistics in `stats`; one that keeps nothing updates
    /// copies and reads them back for the trace under `name`, the weights staying as
    /// they are, as on the CPU.
    fn norm(
        &mut self,
        (p, name): (&NormParams<GpuBuffer>, &str),
        kind: NormKind,
        inp: &GpuBuffer,
        out: &GpuBuffer,
        stats: Option<&GpuBuffer>,
        n: usize,
    ) -> Result<()> {
        let c = self.cfg().d_model;
        let (mean, var) = match (kind, &p.running_mean, &p.running_var) {
            (NormKind::BatchNorm, Some(mean), Some(var)) => (mean, var),
            (NormKind::BatchNorm, ..) => return Err(missing("BatchNorm running statistics")),
            _ => return self.rec.layer_norm(inp, &p.weight, &p.bias, out, n, c),
        };
        if !self.train {
            return self
                .rec
                .batch_norm(inp, &p.weight, &p.bias, (mean, var), out, n, c);
        }
        let ctx = self.rec.ctx().clone();
        let stats = match stats {
            Some(s) => s.clone(),
            None => ctx.zeros("batch statistics", 3 * c)?, // (3, C)
        };
        let running = match self.keep {
            Keep::ForBackward(_) => (mean.clone(), var.clone()),
            Keep::Nothing => {
                // Copies of the running statistics for the kernel to update.
                let copies = (ctx.zeros("running mean", c)?, ctx.zeros("running var", c)?);
                self.rec.copy(mean, &copies.0, c)?;
                self.rec.copy(var, &copies.1, c)?;
                copies
            }
        };
        self.rec.batch_norm_train(&BatchNormTrainArgs {
            x: inp,
            gamma: &p.weight,
            beta: &p.bias,
            y: out,
            stats: &stats,
            running: Some((&running.0, &running.1)),
            rows: n,
            c,
        })?;
        if let Keep::Nothing = self.keep {
            let slots = (
                self.rec.read_all(&running.0)?,
                self.rec.read_all(&running.1)?,
            );
            self.running.push((name.to_string(), slots.0, slots.1, c));
        }
        Ok(())
    }

    /// Train mode with dropout: draw the next `n` words' mask into `mask` (a new buffer
    /// when none is given) and multiply `x[..n]` by it (`Run::drop_in_place`); otherwise
    /// nothing.
    fn drop(&mut self, x: &GpuBuffer, mask: Option<&GpuBuffer>, n: usize) -> Result<()> {
        let Some(d) = self.drop.as_mut() else {
            return Ok(());
        };
        let (key, p, offset) = (d.key, d.p, d.offset);
        d.offset += n as u64;
        let made;
        let mask = match mask {
            Some(m) => m,
            None => {
                made = self.rec.ctx().zeros("dropout mask", n)?;
                &made
            }
        };
        self.rec.dropout(&DropoutArgs {
            key,
            offset,
            p,
            n,
            mask,
            x: Some(x),
        })
    }

    /// A sublayer's last product, which also adds the sublayer's residual when it has one
    /// (see [`Pass::residual`]).
    fn last_matmul(&mut self, x: &MatmulArgs) -> Result<()> {
        match self.residual.take() {
            Some(res) => self.rec.matmul_then(x, Epilogue::Residual(&res)),
            None => self.rec.matmul(x),
        }
    }

    /// The FFN sublayer of layer `li` of the stack `site`: `out = drop(act(inp · W₁ᵀ +
    /// b₁)) · W₂ᵀ + b₂` over the B·T rows. A pass that keeps the pre-activation writes it
    /// first; otherwise the activation runs in the first product's dispatch. With
    /// `trace_ffn` the hidden units are read back.
    fn ffn(
        &mut self,
        l: &LayerParams<GpuBuffer>,
        a: &FfnActs,
        (inp, out): (&GpuBuffer, &GpuBuffer),
        (site, li): (AttnSite, usize),
        (b, t): (usize, usize),
    ) -> Result<()> {
        let cfg = self.cfg();
        let (c, f, n) = (cfg.d_model, cfg.d_ff, b * t);
        let first = MatmulArgs::linear(
            inp,
            &l.linear1_weight,
            Some(&l.linear1_bias),
            a.pre.as_ref().unwrap_or(&a.hid),
            (n, c, f),
        );
        match &a.pre {
            Some(pre) => {
                self.rec.matmul(&first)?;
                self.rec.copy(pre, &a.hid, n * f)?;
                self.rec.activation(&a.hid, n * f, cfg.activation)?;
            }
            None => self
                .rec
                .matmul_then(&first, Epilogue::Activation(cfg.activation))?,
        }
        self.drop(&a.hid, a.mask.as_ref(), n * f)?; // train mode: dropout on the hidden units
        if self.opts.trace_ffn {
            let slot = self.rec.read(&a.hid, 0, n * f)?; // (B·T, F)
            self.ffn.push((site, li, slot, [b, t, f]));
        }
        self.last_matmul(&MatmulArgs::linear(
            &a.hid,
            &l.linear2_weight,
            Some(&l.linear2_bias),
            out,
            (n, f, c),
        ))
    }
}

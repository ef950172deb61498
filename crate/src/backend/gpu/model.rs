//! The whole forward pass on the GPU: weights uploaded once ([`GpuWeights`]), activations
//! kept on the GPU, every kernel of a pass recorded into one command encoder, one
//! submission, one readback of the logits and of the trace parts asked for.
//!
//! It follows `Model::forward` (crate/src/model/forward.rs) step by step; the comments name
//! the docs/model.md step each block computes. Train mode too: the dropout masks come from
//! the pass's seed in the CPU's order (dropout.wgsl ports its generator), BatchNorm uses the
//! batch's statistics and reports the running-statistic updates in the trace.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::attention_backward::{dropout_key, BatchNormTrainArgs, DropoutArgs};
use super::context::{GpuBuffer, GpuContext, ReadSlot, Readback, Recorder};
use super::kernels::{
    AttnDims, CopyArgs, DecodeAttnArgs, Epilogue, MatmulArgs, Rows, ScoreArgs, SeqRows, ValueArgs,
    MASKED,
};
use crate::config::{ModelConfig, Norm, PosEncoding, Score};
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::forward::Batch;
use crate::model::forward::{HiddenTrace, RunningStatUpdate};
use crate::model::mask::{attention_mask, MaskSpec};
use crate::model::plan::{
    layer_plan, NormKind, Placement, StackInput, StackPlan, SublayerKind, SublayerPlan,
};
use crate::model::position::{alibi_slopes, rope_angle, sinusoidal_table};
use crate::model::{
    AttentionParams, AttnSite, AttnTrace, ForwardOptions, HeadParams, LayerParams, Mode, Model,
    ModelParams, NormParams, StackParams, Trace,
};
use crate::tensor::Tensor;

/// `(cos a, sin a)` for positions `0..n` and every pair of a D-wide head:
/// (n, D/2, 2), the table rope.wgsl reads, from the CPU's `position::rope_angle`.
pub fn rope_table(n: usize, d_head: usize) -> Vec<f32> {
    let half = d_head / 2;
    let mut out = Vec::with_capacity(n * half * 2); // (n, D/2, 2)
    for pos in 0..n {
        for p in 0..half {
            let (c, s) = rope_angle(pos, p, d_head);
            out.push(c);
            out.push(s);
        }
    }
    out
}

/// Parameters on the GPU: the model's own tree ([`Model::try_map_params`]) of buffers.
type GpuAttention = AttentionParams<GpuBuffer>;
type GpuNorm = NormParams<GpuBuffer>;
type GpuLayer = LayerParams<GpuBuffer>;
type GpuStack = StackParams<GpuBuffer>;

/// A model's parameters resident on one device, plus the constant tables the kernels read
/// (sinusoidal positions, RoPE angles, ALiBi slopes), computed once on the CPU.
pub struct GpuWeights {
    config: ModelConfig,
    pad_id: u32,
    /// Every parameter, uploaded under its checkpoint name, in the model's shape.
    params: ModelParams<GpuBuffer>,
    /// (P, C): `pos_embed.weight` (P = max_len) or the sinusoidal table (P = max_len).
    pos_table: Option<GpuBuffer>,
    /// (P, D/2, 2) RoPE cos/sin, P = max_len.
    rope_table: Option<GpuBuffer>,
    /// (H) ALiBi slopes.
    alibi: Option<GpuBuffer>,
}

/// Refuse, before anything is allocated, a model that this device cannot run: a parameter,
/// or an activation of one full-length (`max_len`) sequence, larger than the largest
/// buffer the device binds. The error names the tensor and the limit.
pub fn check_fits(ctx: &GpuContext, model: &Model) -> Result<()> {
    let mut largest = (String::new(), 0usize);
    model.visit_params(&mut |name, t, _| {
        if t.numel() > largest.1 {
            largest = (name.to_string(), t.numel());
        }
    });
    ctx.check_buffer_size(&format!("parameter {}", largest.0), largest.1)?;
    let cfg = &model.config;
    let (t, c) = (cfg.max_len, cfg.d_model);
    for (what, n) in [
        (
            "the attention scores of a max_len sequence",
            cfg.n_heads * t * t,
        ),
        ("the logits of a max_len sequence", t * cfg.vocab_size),
        ("the Q|K|V projections of a max_len sequence", t * 3 * c),
        ("the FFN hidden layer of a max_len sequence", t * cfg.d_ff),
    ] {
        ctx.check_buffer_size(what, n)?;
    }
    Ok(())
}

impl GpuWeights {
    /// Upload every parameter of `model` after [`check_fits`].
    pub fn upload(ctx: &GpuContext, model: &Model) -> Result<GpuWeights> {
        check_fits(ctx, model)?;
        let cfg = &model.config;
        let c = cfg.d_model;
        // One walk uploads every parameter under its checkpoint name.
        let params = model.try_map_params(&mut |name, t, _| ctx.upload(name, &t.data))?;
        let pos_table = match cfg.pos_encoding {
            PosEncoding::Learned => Some(params.pos_embed.clone().ok_or_else(|| {
                Error::Checkpoint("learned positions need pos_embed.weight".into())
            })?),
            PosEncoding::Sinusoidal => {
                let mut table = vec![0.0f32; cfg.max_len * c]; // (max_len, C)
                sinusoidal_table(&mut table, 0, cfg.max_len, c);
                Some(ctx.upload("sinusoidal table", &table)?)
            }
            _ => None,
        };
        let rope_table = (cfg.pos_encoding == PosEncoding::Rope)
            .then(|| ctx.upload("rope table", &rope_table(cfg.max_len, cfg.d_head())))
            .transpose()?;
        let alibi = (cfg.pos_encoding == PosEncoding::Alibi)
            .then(|| ctx.upload("alibi slopes", &alibi_slopes(cfg.n_heads)))
            .transpose()?;
        Ok(GpuWeights {
            config: cfg.clone(),
            pad_id: model.tokenizer.spec.pad,
            params,
            pos_table,
            rope_table,
            alibi,
        })
    }
}

/// A fingerprint of everything a forward pass reads from a model (config, pad id, every
/// parameter's bits), so a cached upload is reused only for an identical model.
pub fn model_fingerprint(model: &Model) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    model.config.to_json().hash(&mut h);
    model.tokenizer.spec.pad.hash(&mut h);
    model.visit_params(&mut |name, t, _| {
        name.hash(&mut h);
        t.shape.hash(&mut h);
        h.write(bytemuck::cast_slice(&t.data));
    });
    h.finish()
}

/// A model uploaded to a GPU: run forward passes on it.
#[derive(Clone)]
pub struct GpuModel {
    ctx: GpuContext,
    weights: Arc<GpuWeights>,
}

/// Where one attention sublayer's scores and probabilities land in the readback.
pub(super) struct PlannedAttention {
    site: AttnSite,
    layer: usize,
    /// (B, H, T, S)
    shape: [usize; 4],
    scores: ReadSlot,
    probs: ReadSlot,
}

/// The recording of one forward pass.
struct Pass<'a> {
    w: &'a GpuWeights,
    opts: &'a ForwardOptions,
    rec: Recorder,
    attention: Vec<PlannedAttention>,
    hidden: Vec<(AttnSite, Vec<ReadSlot>, [usize; 3])>,
    /// Train mode: BatchNorm uses the batch's statistics.
    train: bool,
    /// Train mode with dropout > 0: where the next mask starts in the pass's random stream.
    drop: Option<DropStream>,
    /// Train mode: each BatchNorm's updated running statistics, read back for the trace:
    /// (parameter name, running_mean slot, running_var slot, C).
    running: Vec<(String, ReadSlot, ReadSlot, usize)>,
    /// The running sublayer's input when its residual is on: the sublayer's last matrix
    /// product adds it as it writes (`Epilogue::Residual`), one dispatch instead of two.
    residual: Option<GpuBuffer>,
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

/// The encoder output that cross-attention reads.
struct Memory<'a> {
    /// (B·S, C) the encoder output; `None` when the KV cache already holds every layer's
    /// cross-attention K | V of it.
    x: Option<&'a GpuBuffer>,
    /// (B, S) u32 source tokens
    tokens: &'a GpuBuffer,
    s: usize,
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
    /// (P, C) absolute positions for a cache longer than the weights' (max_len, C) table.
    pub pos_table: Option<&'a GpuBuffer>,
    /// (P, D/2, 2) RoPE angles likewise.
    pub rope_table: Option<&'a GpuBuffer>,
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

/// Scratch buffers of one stack, reused by every layer.
struct Scratch {
    /// (N, C) a norm's output / the sublayer input under pre-LN
    h: GpuBuffer,
    /// (N, C) a sublayer's output
    y: GpuBuffer,
    /// (N, 3C) fused Q | K | V of self-attention (Q only under cross-attention)
    qkv: GpuBuffer,
    /// (N, C) heads merged, before W_O
    z: GpuBuffer,
    /// (N, F) FFN hidden layer
    f: GpuBuffer,
    /// (B, H, T, pos0 + T) self-attention scores and probabilities
    self_scores: GpuBuffer,
    self_probs: GpuBuffer,
    /// (B·S, 2C) K | V of cross-attention, when no KV cache holds them
    cross_kv: Option<GpuBuffer>,
    /// (B, H, T, S) cross-attention scores and probabilities
    cross: Option<(GpuBuffer, GpuBuffer)>,
}

impl GpuModel {
    /// Upload `model`'s weights to `ctx`'s device.
    pub fn upload(ctx: &GpuContext, model: &Model) -> Result<GpuModel> {
        Ok(GpuModel {
            ctx: ctx.clone(),
            weights: Arc::new(GpuWeights::upload(ctx, model)?),
        })
    }

    pub(super) fn from_parts(ctx: GpuContext, weights: Arc<GpuWeights>) -> GpuModel {
        GpuModel { ctx, weights }
    }

    pub fn config(&self) -> &ModelConfig {
        &self.weights.config
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The forward pass of docs/model.md on the GPU, equal to `Model::forward` within
    /// float rounding: one submission, one readback. Eval mode only.
    ///
    /// `model` must be the model these weights came from; it supplies the input checks.
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        let (readback, plan) = self.record(model, batch, opts)?;
        let data = readback.await?;
        Ok(plan.build(&data))
    }

    /// Check the inputs, record every kernel and submit. Synchronous: the returned future
    /// only waits for the results.
    #[allow(clippy::type_complexity)]
    fn record(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<(
        impl std::future::Future<Output = Result<Readback>>,
        TracePlan,
    )> {
        if model.config != self.weights.config {
            return Err(Error::Gpu(
                "this model is not the one uploaded to the GPU (the configs differ)".into(),
            ));
        }
        model.check_pass(batch, opts)?;
        let w = &*self.weights;
        let cfg = &w.config;
        let (b, t) = (batch.batch, batch.len);
        let ctx = &self.ctx;
        let (train, drop) = match opts.mode {
            Mode::Train { seed } => (
                true,
                (cfg.dropout > 0.0).then(|| DropStream {
                    key: dropout_key(seed),
                    p: cfg.dropout,
                    offset: 0,
                }),
            ),
            _ => (false, None),
        };
        let mut pass = Pass {
            w,
            opts,
            rec: ctx.recorder()?,
            attention: vec![],
            hidden: vec![],
            train,
            drop,
            running: vec![],
            residual: None,
        };
        let tokens = ctx.upload_u32("tokens", &batch.tokens)?; // (B, T)
        let src_buf = match &batch.src_tokens {
            Some(src) => Some(ctx.upload_u32("source tokens", src)?), // (B, S)
            None => None,
        };
        let plan = layer_plan(cfg);
        // The output of the stack before: the memory cross-attention reads. (B·S, C)
        let mut memory: Option<GpuBuffer> = None;
        let mut x = None;
        for sp in &plan.stacks {
            let (toks, len) = match sp.input {
                StackInput::Tokens => (&tokens, t),
                StackInput::Source => (
                    src_buf.as_ref().ok_or_else(|| {
                        Error::Input("an encoder_decoder model needs source sequences".into())
                    })?,
                    batch.src_len,
                ),
            };
            let mem = match (sp.reads_memory, &memory, &src_buf) {
                (true, Some(m), Some(src)) => Some(Memory {
                    x: Some(m),
                    tokens: src,
                    s: batch.src_len,
                }),
                _ => None,
            };
            let out = pass.stack(sp, w.stack(sp.site)?, toks, b, len, mem, None)?;
            if sp.site == AttnSite::EncoderSelf {
                memory = Some(out.clone());
            }
            x = Some(out);
        }
        let x = x.ok_or_else(|| missing("any"))?;
        let head = pass.head(&x, b, t)?;
        let plan = TracePlan {
            head,
            attention: pass.attention,
            hidden: pass.hidden,
            running: pass.running,
        };
        Ok((pass.rec.finish(), plan))
    }

    /// Record a pass through the KV cache into `rec` (which may already hold the cache's
    /// beam reorder) and submit it: `tokens` (B, T) at positions `cache.pos0 ..` run
    /// through the decoder under the causal mask, each layer appending their K | V to the
    /// cache and attending over everything cached. With `cache.encode` (an
    /// encoder-decoder prefill) the encoder runs first over `cache.src_tokens` and every
    /// layer's cross-attention K | V of its output are written to `cache.cross_kv`;
    /// otherwise cross-attention reads them from there.
    ///
    /// The caller has checked the inputs (crate/src/backend/gpu/cache.rs).
    #[allow(clippy::type_complexity)]
    pub(super) fn record_cached(
        &self,
        rec: Recorder,
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        opts: &ForwardOptions,
        cache: &CacheRun,
    ) -> Result<(
        impl std::future::Future<Output = Result<Readback>>,
        TracePlan,
    )> {
        if let Mode::Train { .. } = opts.mode {
            return Err(Error::Gpu(
                "cached decoding runs in eval mode (no dropout, BatchNorm running statistics)"
                    .into(),
            ));
        }
        let w = &*self.weights;
        let mut pass = Pass {
            w,
            opts,
            rec,
            attention: vec![],
            hidden: vec![],
            train: false,
            drop: None,
            running: vec![],
            residual: None,
        };
        let plan = layer_plan(&w.config);
        let memory: GpuBuffer;
        let mem = match cache.src_tokens {
            Some(src) => {
                let x = if cache.encode {
                    let sp = plan
                        .stack(AttnSite::EncoderSelf)
                        .ok_or_else(|| missing("encoder"))?;
                    // The encoder output (B·S, C), read once for the cross K | V.
                    memory =
                        pass.stack(sp, w.stack(sp.site)?, src, b, cache.src_len, None, None)?;
                    Some(&memory)
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
        let sp = plan
            .stack(AttnSite::DecoderSelf)
            .ok_or_else(|| missing("decoder"))?;
        let x = pass.stack(sp, w.stack(sp.site)?, tokens, b, t, mem, Some(cache))?;
        let head = pass.head(&x, b, t)?;
        let plan = TracePlan {
            head,
            attention: pass.attention,
            hidden: pass.hidden,
            running: vec![],
        };
        Ok((pass.rec.finish(), plan))
    }
}

impl GpuWeights {
    /// The uploaded stack whose self-attention is `site`.
    fn stack(&self, site: AttnSite) -> Result<&GpuStack> {
        match site {
            AttnSite::EncoderSelf => self.params.encoder.as_ref(),
            _ => self.params.decoder.as_ref(),
        }
        .ok_or_else(|| missing(site.name()))
    }
}

fn missing(what: &str) -> Error {
    Error::Gpu(format!("the uploaded model has no {what} stack"))
}

pub(super) enum HeadOut {
    Logits(ReadSlot, [usize; 3]),
    Classes(ReadSlot, [usize; 2]),
}

/// Where each part of the trace lands in the readback.
pub(super) struct TracePlan {
    head: HeadOut,
    attention: Vec<PlannedAttention>,
    hidden: Vec<(AttnSite, Vec<ReadSlot>, [usize; 3])>,
    /// Train mode: (name, running_mean, running_var, C) of each BatchNorm.
    running: Vec<(String, ReadSlot, ReadSlot, usize)>,
}

impl TracePlan {
    pub(super) fn build(self, data: &Readback) -> Trace {
        let tensor = |slot: ReadSlot, shape: &[usize]| Tensor {
            shape: shape.to_vec(),
            data: data.f32(slot).to_vec(),
        };
        let (logits, class_logits) = match self.head {
            HeadOut::Logits(slot, shape) => (tensor(slot, &shape), None),
            HeadOut::Classes(slot, shape) => (Tensor::zeros(&[0]), Some(tensor(slot, &shape))),
        };
        let attention = self
            .attention
            .into_iter()
            .map(|p| {
                let mut scores = tensor(p.scores, &p.shape);
                // The shaders' stand-in for −∞ (see attention_scores.wgsl) back to −∞.
                for v in scores.data.iter_mut() {
                    if *v == MASKED {
                        *v = f32::NEG_INFINITY;
                    }
                }
                AttnTrace {
                    site: p.site,
                    layer: p.layer,
                    scores,
                    probs: tensor(p.probs, &p.shape),
                }
            })
            .collect();
        let hidden = self
            .hidden
            .into_iter()
            .map(|(stack, slots, shape)| HiddenTrace {
                stack,
                states: slots.into_iter().map(|s| tensor(s, &shape)).collect(),
            })
            .collect();
        let running_stats = self
            .running
            .into_iter()
            .flat_map(|(name, mean, var, c)| {
                [("running_mean", mean), ("running_var", var)].map(|(suffix, slot)| {
                    RunningStatUpdate {
                        name: format!("{name}.{suffix}"),
                        value: tensor(slot, &[c]),
                    }
                })
            })
            .collect();
        Trace {
            logits,
            class_logits,
            attention,
            hidden,
            running_stats,
        }
    }
}

impl Pass<'_> {
    fn cfg(&self) -> &ModelConfig {
        &self.w.config
    }

    /// One encoder or decoder stack over (B, T) tokens; returns its output (B·T, C)
    /// (after the final norm). With `cache` the tokens sit at positions `pos0 ..`, their
    /// keys and values are appended to the cache and every query attends over it.
    #[allow(clippy::too_many_arguments)]
    fn stack(
        &mut self,
        sp: &StackPlan,
        stack: &GpuStack,
        tokens: &GpuBuffer,
        b: usize,
        t: usize,
        memory: Option<Memory>,
        cache: Option<&CacheRun>,
    ) -> Result<GpuBuffer> {
        let w = self.w;
        let cfg = w.config.clone();
        let site = sp.site;
        // The masks of this stack's self-attention (and of its cross-attention, in attend).
        let mask = attention_mask(&cfg, site, self.opts);
        let ctx = self.rec.ctx().clone();
        // (N, N) u32 painted cells of the mask, uploaded once for every layer.
        let cells = match mask.cell_table() {
            Some((table, side)) => Some((ctx.upload_u32("painted mask cells", &table)?, side)),
            None => None,
        };
        let (c, h, f) = (cfg.d_model, cfg.n_heads, cfg.d_ff);
        let n = b * t;
        let pos0 = cache.map_or(0, |k| k.pos0);
        // Keys each sequence's queries see: the cached positions and the new ones.
        let s_self = pos0 + t;
        // Steps 1–2: embedding · scale + absolute positions.
        let mut x = ctx.zeros("residual stream", n * c)?; // (B·T, C)
        let per_forward_pos;
        let pos = match &w.pos_table {
            // A cache longer than max_len brings its own (sinusoidal) table.
            Some(table) if cache.is_some() => {
                Some(cache.and_then(|k| k.pos_table).unwrap_or(table))
            }
            // Sinusoidal positions go on past max_len: a longer input gets its own table.
            Some(_) if cfg.pos_encoding == PosEncoding::Sinusoidal && t > cfg.max_len => {
                let mut table = vec![0.0f32; t * c]; // (T, C)
                sinusoidal_table(&mut table, 0, t, c);
                per_forward_pos = ctx.upload("sinusoidal table", &table)?;
                Some(&per_forward_pos)
            }
            other => other.as_ref(),
        };
        let scale = embedding_scale(cfg.scale_embeddings, c);
        self.rec.embedding(
            tokens,
            w.params.embedding(sp.input),
            pos,
            &x,
            (n, t, c),
            pos0,
            scale,
        )?;
        self.drop(&x, n * c)?; // train mode: x = dropout(E[tok]·scale + PE)
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
        let mut sc = Scratch {
            h: ctx.zeros("normed", n * c)?,
            y: ctx.zeros("sublayer output", n * c)?,
            qkv: ctx.zeros("qkv", n * 3 * c)?,
            z: ctx.zeros("heads", n * c)?,
            f: ctx.zeros("ffn hidden", n * f)?,
            self_scores: ctx.zeros("scores", b * h * t * s_self)?,
            self_probs: ctx.zeros("probabilities", b * h * t * s_self)?,
            cross_kv: match (s_cross, cache) {
                (Some(s), None) => Some(ctx.zeros("cross kv", b * s * 2 * c)?),
                _ => None,
            },
            cross: match s_cross {
                Some(s) => Some((
                    ctx.zeros("cross scores", b * h * t * s)?,
                    ctx.zeros("cross probabilities", b * h * t * s)?,
                )),
                None => None,
            },
        };
        // Rope positions beyond max_len get their own table, like sinusoidal ones (a
        // cache longer than max_len brings its own).
        let rope_long = match &w.rope_table {
            Some(_) if cache.is_none() && t > cfg.max_len => {
                Some(ctx.upload("rope table", &rope_table(t, cfg.d_head()))?)
            }
            _ => None,
        };
        let rope = match &w.rope_table {
            Some(table) => Some(
                cache
                    .and_then(|k| k.rope_table)
                    .or(rope_long.as_ref())
                    .unwrap_or(table),
            ),
            None => None,
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
            for sub in &sp.sublayers {
                // The norm's parameters and checkpoint name (its running statistics' prefix).
                let norm = sub.norm.as_ref().and_then(|n| {
                    let name = format!("{}.layers.{li}.{}", sp.name, n.name);
                    layer.norms.get(n.slot).map(|p| (p, name))
                });
                let ablate = match sub.site {
                    Some(site) => Some(self.ablation(site, li)?),
                    None => None,
                };
                self.sublayer(&mut x, &mut sc, sub, norm.as_ref(), n, |pass, inp, sc| {
                    let ablate = ablate.as_ref();
                    let no_flags = || Error::Gpu("an attention sublayer without its site".into());
                    match sub.kind {
                        SublayerKind::SelfAttention => pass.self_attention(
                            &layer.self_attn,
                            inp,
                            sc,
                            site,
                            li,
                            tokens,
                            (b, t),
                            (&mask, cells.as_ref().map(|(buf, side)| (buf, *side))),
                            rope,
                            ablate.ok_or_else(no_flags)?,
                            layer_cache.as_ref(),
                        ),
                        SublayerKind::CrossAttention => {
                            let (cross, mem) = match (&layer.cross_attn, &memory) {
                                (Some(a), Some(m)) => (a, m),
                                _ => {
                                    return Err(Error::Gpu(
                                        "cross-attention needs an encoder output and its \
                                         parameters"
                                            .into(),
                                    ))
                                }
                            };
                            let kv = match cached_kv {
                                Some(kv) => kv,
                                None => sc.cross_kv.as_ref().ok_or_else(|| {
                                    Error::Gpu("cross-attention without its buffers".into())
                                })?,
                            };
                            let ablate = ablate.ok_or_else(no_flags)?;
                            pass.cross_attention(cross, inp, sc, li, mem, kv, (b, t), ablate)
                        }
                        SublayerKind::Ffn => pass.ffn(layer, inp, sc, n),
                    }
                })?;
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
            self.rec
                .layer_norm(&x, &fnorm.weight, &fnorm.bias, &sc.h, n, c)?;
            std::mem::swap(&mut x, &mut sc.h);
        }
        Ok(x)
    }

    /// Step 5, the head, on (B·T, C) rows of `x`: logits (B, T, V), or a classifier's
    /// (B, N) from position 0 of each sequence. Read back at the end of the pass.
    fn head(&mut self, x: &GpuBuffer, b: usize, t: usize) -> Result<HeadOut> {
        let w = self.w;
        let cfg = &w.config;
        let ctx = self.rec.ctx().clone();
        let c = cfg.d_model;
        Ok(match &w.params.head {
            HeadParams::Lm { weight, bias } => {
                let v = cfg.vocab_size;
                let logits = ctx.zeros("logits", b * t * v)?; // (B, T, V)
                self.rec.matmul(&MatmulArgs::linear(
                    x,
                    weight.as_ref().unwrap_or(&w.params.embed),
                    bias.as_ref(),
                    &logits,
                    (b * t, c, v),
                ))?;
                HeadOut::Logits(self.rec.read_all(&logits)?, [b, t, v])
            }
            HeadParams::Classifier { weight, bias } => {
                let n = cfg.num_classes;
                // Position 0 of each sequence: rows of x with stride T·C.
                let logits = ctx.zeros("class logits", b * n)?; // (B, N)
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
                    out: Rows::dense(&logits, n),
                    m: b,
                    k: c,
                    n,
                })?;
                HeadOut::Classes(self.rec.read_all(&logits)?, [b, n])
            }
        })
    }

    /// (H) u32 flags: 1 for each head of (site, layer) that `opts.ablate` zeroes.
    fn ablation(&self, site: AttnSite, layer: usize) -> Result<GpuBuffer> {
        let flags: Vec<u32> = self
            .opts
            .ablated_heads(site, layer, self.cfg().n_heads)
            .into_iter()
            .map(u32::from)
            .collect(); // (H)
        self.rec.ctx().upload_u32("ablated heads", &flags)
    }

    /// A norm of (N, C) rows from `inp` into `out`: LayerNorm, or BatchNorm with its
    /// running statistics (eval mode) or with the batch's statistics (train mode; the
    /// updated running statistics go to the trace under `name`, the weights stay as they
    /// are, as on the CPU).
    fn norm(
        &mut self,
        (p, name): (&GpuNorm, &str),
        kind: NormKind,
        inp: &GpuBuffer,
        out: &GpuBuffer,
        n: usize,
    ) -> Result<()> {
        let c = self.cfg().d_model;
        match (&p.running_mean, &p.running_var, kind) {
            (Some(mean), Some(var), NormKind::BatchNorm) if self.train => {
                let ctx = self.rec.ctx().clone();
                // Copies of the running statistics for the kernel to update.
                let (new_mean, new_var) =
                    (ctx.zeros("running mean", c)?, ctx.zeros("running var", c)?);
                for (src, dst) in [(mean, &new_mean), (var, &new_var)] {
                    let row = |buf| SeqRows {
                        buf,
                        seq_rows: 1,
                        first: 0,
                        stride: c,
                        col: 0,
                    };
                    self.rec.copy_rows(&CopyArgs {
                        src: row(src),
                        dst: row(dst),
                        from_seq: None,
                        batch: 1,
                        t_len: 1,
                        width: c,
                    })?;
                }
                let stats = ctx.zeros("batch statistics", 3 * c)?; // (3, C)
                self.rec.batch_norm_train(&BatchNormTrainArgs {
                    x: inp,
                    gamma: &p.weight,
                    beta: &p.bias,
                    y: out,
                    stats: &stats,
                    running: Some((&new_mean, &new_var)),
                    rows: n,
                    c,
                })?;
                let (m_slot, v_slot) =
                    (self.rec.read_all(&new_mean)?, self.rec.read_all(&new_var)?);
                self.running.push((name.to_string(), m_slot, v_slot, c));
                Ok(())
            }
            (Some(mean), Some(var), NormKind::BatchNorm) => {
                self.rec
                    .batch_norm(inp, &p.weight, &p.bias, (mean, var), out, n, c)
            }
            _ => self.rec.layer_norm(inp, &p.weight, &p.bias, out, n, c),
        }
    }

    /// Train mode with dropout: draw the next `n` words' mask and multiply `x[..n]` by it
    /// (`Run::drop_in_place`); otherwise nothing.
    fn drop(&mut self, x: &GpuBuffer, n: usize) -> Result<()> {
        let Some(d) = self.drop.as_mut() else {
            return Ok(());
        };
        let (key, p, offset) = (d.key, d.p, d.offset);
        d.offset += n as u64;
        let mask = self.rec.ctx().zeros("dropout mask", n)?;
        self.rec.dropout(&DropoutArgs {
            key,
            offset,
            p,
            n,
            mask: &mask,
            x: Some(x),
        })
    }

    /// One sublayer with its norm placement and residual as the plan `sub` gives them
    /// (docs/model.md step 3; the CPU's `Run::sublayer`): norm after `x = N(x + f(x))`,
    /// norm before `x = x + f(N(x))`, no norm `x = x + f(x)`; without the residual the
    /// `x +` goes away. `f` writes `sc.y`.
    fn sublayer(
        &mut self,
        x: &mut GpuBuffer,
        sc: &mut Scratch,
        sub: &SublayerPlan,
        norm: Option<&(&GpuNorm, String)>,
        n: usize,
        f: impl FnOnce(&mut Self, &GpuBuffer, &Scratch) -> Result<()>,
    ) -> Result<()> {
        let c = self.cfg().d_model;
        let norm = norm
            .map(|(p, name)| (*p, name.as_str()))
            .zip(sub.norm.as_ref());
        // y = f(·) + x: added by f's last product when it takes the residual (not in a pass
        // that draws dropout, whose mask applies to f(·) before the sum).
        self.residual = (sub.residual && self.drop.is_none()).then(|| x.clone());
        match norm {
            Some((p, step)) if step.placement == Placement::Before => {
                self.norm(p, step.kind, x, &sc.h, n)?;
                let h = sc.h.clone();
                f(self, &h, sc)?;
            }
            _ => f(self, x, sc)?,
        }
        self.drop(&sc.y, n * c)?; // train mode: y = dropout(f(·))
        if self.residual.take().is_some() || (sub.residual && self.drop.is_some()) {
            self.rec.add(&sc.y, x, n * c)?; // y = f(·) + x
        }
        match norm {
            Some((p, step)) if step.placement == Placement::After => {
                self.norm(p, step.kind, &sc.y, x, n)?
            }
            // x takes y's buffer; y's old buffer becomes the next scratch.
            _ => std::mem::swap(x, &mut sc.y),
        }
        Ok(())
    }

    /// Self-attention of one layer: `sc.y (N, C)` from `inp (N, C)`. With `cache` the
    /// new keys and values are appended to the layer's cache first and the queries
    /// attend over all `pos0 + T` cached positions.
    #[allow(clippy::too_many_arguments)]
    fn self_attention(
        &mut self,
        a: &GpuAttention,
        inp: &GpuBuffer,
        sc: &Scratch,
        site: AttnSite,
        layer: usize,
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        (mask, cells): (&MaskSpec, Option<(&GpuBuffer, usize)>),
        rope: Option<&GpuBuffer>,
        ablate: &GpuBuffer,
        cache: Option<&LayerCache>,
    ) -> Result<()> {
        let cfg = self.cfg().clone();
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let n = b * t;
        let pos0 = cache.map_or(0, |k| k.pos0);
        // q | k | v = inp · [W_Q; W_K; W_V]ᵀ + b: (N, 3C) in one matmul.
        self.rec.matmul(&MatmulArgs::linear(
            inp,
            &a.in_proj_weight,
            Some(&a.in_proj_bias),
            &sc.qkv,
            (n, c, 3 * c),
        ))?;
        if let Some(rot) = rope {
            // The H query heads and the H key heads are 2H consecutive heads of D columns,
            // row r at position pos0 + r % T.
            self.rec
                .rope(rot, Rows::dense(&sc.qkv, 3 * c), n, t, 2 * h, d, pos0)?;
        }
        let relative = cfg.pos_encoding == PosEncoding::Relative;
        let alibi = if cfg.pos_encoding == PosEncoding::Alibi {
            self.w.alibi.as_ref()
        } else {
            None
        };
        let qkv = |col| Rows {
            buf: &sc.qkv,
            stride: 3 * c,
            col,
        };
        // Keys and values: the (N, 3C) projections themselves, or the cache after the
        // new rows' K | V columns have been appended to it.
        let (keys, values, key_tokens, dims) = match cache {
            None => (
                qkv(c),
                qkv(2 * c),
                tokens,
                AttnDims {
                    batch: b,
                    n_heads: h,
                    t_len: t,
                    s_len: t,
                    d_head: d,
                    pos0: 0,
                    kv_rows: t,
                },
            ),
            Some(k) => {
                // (B·T, 3C) columns C..3C → rows (b, pos0 + t) of the (B'·P, 2C) cache.
                self.rec.copy_rows(&CopyArgs {
                    src: SeqRows {
                        buf: &sc.qkv,
                        seq_rows: t,
                        first: 0,
                        stride: 3 * c,
                        col: c,
                    },
                    dst: SeqRows {
                        buf: k.kv,
                        seq_rows: k.capacity,
                        first: k.pos0,
                        stride: 2 * c,
                        col: 0,
                    },
                    from_seq: None,
                    batch: b,
                    t_len: t,
                    width: 2 * c,
                })?;
                let kv = |col| Rows {
                    buf: k.kv,
                    stride: 2 * c,
                    col,
                };
                (
                    kv(0),
                    kv(c),
                    k.key_tokens,
                    AttnDims {
                        batch: b,
                        n_heads: h,
                        t_len: t,
                        s_len: k.pos0 + t,
                        d_head: d,
                        pos0: k.pos0,
                        kv_rows: k.capacity,
                    },
                )
            }
        };
        self.attend(
            a,
            site,
            layer,
            qkv(0),
            keys,
            values,
            key_tokens,
            (&sc.self_scores, &sc.self_probs),
            dims,
            (mask, cells),
            relative,
            alibi,
            ablate,
            &sc.z,
            &sc.y,
        )
    }

    /// Cross-attention of one decoder layer: queries from `inp (N, C)`, keys and values
    /// `kv (B·S, 2C)` from the encoder output — computed here from `mem.x` when it is
    /// given, read as they are otherwise (the KV cache's, computed at prefill).
    #[allow(clippy::too_many_arguments)]
    fn cross_attention(
        &mut self,
        a: &GpuAttention,
        inp: &GpuBuffer,
        sc: &Scratch,
        layer: usize,
        mem: &Memory,
        kv: &GpuBuffer,
        (b, t): (usize, usize),
        ablate: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg().clone();
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let s = mem.s;
        let (scores, probs) = sc
            .cross
            .as_ref()
            .ok_or_else(|| Error::Gpu("cross-attention without its buffers".into()))?;
        // q = inp · W_Qᵀ + b_Q into the first C columns of the (N, 3C) scratch.
        self.rec.matmul(&MatmulArgs {
            a: Rows::dense(inp, c),
            w: &a.in_proj_weight,
            w_offset: 0,
            bias: Some(&a.in_proj_bias),
            b_offset: 0,
            out: Rows::dense(&sc.qkv, 3 * c),
            m: b * t,
            k: c,
            n: c,
        })?;
        if let Some(memory) = mem.x {
            // k | v = memory · [W_K; W_V]ᵀ + [b_K; b_V]: (B·S, 2C).
            self.rec.matmul(&MatmulArgs {
                a: Rows::dense(memory, c),
                w: &a.in_proj_weight,
                w_offset: c * c,
                bias: Some(&a.in_proj_bias),
                b_offset: c,
                out: Rows::dense(kv, 2 * c),
                m: b * s,
                k: c,
                n: 2 * c,
            })?;
        }
        let dims = AttnDims {
            batch: b,
            n_heads: h,
            t_len: t,
            s_len: s,
            d_head: d,
            pos0: 0,
            kv_rows: s,
        };
        let kv_rows = |col| Rows {
            buf: kv,
            stride: 2 * c,
            col,
        };
        self.attend(
            a,
            AttnSite::Cross,
            layer,
            Rows {
                buf: &sc.qkv,
                stride: 3 * c,
                col: 0,
            },
            kv_rows(0),
            kv_rows(c),
            mem.tokens,
            (scores, probs),
            dims,
            (&attention_mask(&cfg, AttnSite::Cross, self.opts), None),
            false,
            None,
            ablate,
            &sc.z,
            &sc.y,
        )
    }

    /// Scores → softmax → weighted values → W_O, with the trace reads.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &mut self,
        a: &GpuAttention,
        site: AttnSite,
        layer: usize,
        q: Rows,
        k: Rows,
        v: Rows,
        key_tokens: &GpuBuffer,
        (scores, probs): (&GpuBuffer, &GpuBuffer),
        dims: AttnDims,
        (mask, cells): (&MaskSpec, Option<(&GpuBuffer, usize)>),
        relative: bool,
        alibi: Option<&GpuBuffer>,
        ablate: &GpuBuffer,
        z: &GpuBuffer,
        out: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg().clone();
        let (c, k_rel) = (cfg.d_model, cfg.relative_max_distance);
        let divisor = if cfg.score == Score::ScaledDot && self.opts.scale {
            (dims.d_head as f32).sqrt()
        } else {
            1.0
        };
        let (rel_k, rel_v) = if relative {
            (a.rel_k.as_ref(), a.rel_v.as_ref())
        } else {
            (None, None)
        };
        let additive_v = if cfg.score == Score::Additive {
            a.additive_v.as_ref()
        } else {
            None
        };
        // One query row, no dropout on the probabilities, at most one table, keys and
        // values side by side in one buffer (the KV cache, or the cross-attention memory):
        // the three kernels below in one dispatch.
        let fused = dims.t_len == 1
            && self.drop.is_none()
            && dims.n_heads <= 64
            && rel_k.is_none()
            && rel_v.is_none()
            && !(alibi.is_some() && additive_v.is_some())
            && k.buf.buffer == v.buf.buffer
            && k.stride == v.stride;
        if fused {
            let ablated = self.opts.ablated_heads(site, layer, dims.n_heads); // (H)
            self.rec.attention_decode(&DecodeAttnArgs {
                q,
                k,
                v,
                key_tokens,
                alibi_slopes: alibi,
                additive_v,
                divisor,
                mask,
                cells,
                pad_id: self.w.pad_id,
                ablate: &ablated,
                scores,
                probs,
                out: z,
                dims,
            })?;
            self.read_trace(site, layer, dims, scores, probs)?;
            let n = dims.batch;
            return self.last_matmul(&MatmulArgs::linear(
                z,
                &a.out_proj_weight,
                Some(&a.out_proj_bias),
                out,
                (n, c, c),
            ));
        }
        self.rec.attention_scores(&ScoreArgs {
            q,
            k,
            key_tokens,
            rel_k,
            rel_max: k_rel,
            alibi_slopes: alibi,
            additive_v,
            divisor,
            mask,
            cells,
            pad_id: self.w.pad_id,
            out: scores,
            dims,
        })?;
        let rows = dims.batch * dims.n_heads * dims.t_len;
        self.rec.softmax(scores, probs, rows, dims.s_len)?;
        self.read_trace(site, layer, dims, scores, probs)?;
        // Train mode: the values are weighted by dropout(p); the trace keeps p.
        let dropped;
        let weights = if self.drop.is_some() {
            let n = rows * dims.s_len;
            dropped = self.rec.ctx().zeros("dropped probabilities", n)?; // (B, H, T, S)
            let all = |buf| SeqRows {
                buf,
                seq_rows: 1,
                first: 0,
                stride: n,
                col: 0,
            };
            self.rec.copy_rows(&CopyArgs {
                src: all(probs),
                dst: all(&dropped),
                from_seq: None,
                batch: 1,
                t_len: 1,
                width: n,
            })?;
            self.drop(&dropped, n)?;
            &dropped
        } else {
            probs
        };
        self.rec.attention_values(&ValueArgs {
            probs: weights,
            v,
            rel_v,
            rel_max: k_rel,
            ablate,
            out: z,
            dims,
        })?;
        // out = z · W_Oᵀ + b_O
        let n = dims.batch * dims.t_len;
        self.last_matmul(&MatmulArgs::linear(
            z,
            &a.out_proj_weight,
            Some(&a.out_proj_bias),
            out,
            (n, c, c),
        ))
    }

    /// With `trace_attention`: read an attention's scores and probabilities back.
    fn read_trace(
        &mut self,
        site: AttnSite,
        layer: usize,
        dims: AttnDims,
        scores: &GpuBuffer,
        probs: &GpuBuffer,
    ) -> Result<()> {
        if self.opts.trace_attention {
            let rows = dims.batch * dims.n_heads * dims.t_len;
            let shape = [dims.batch, dims.n_heads, dims.t_len, dims.s_len];
            let s_slot = self.rec.read(scores, 0, rows * dims.s_len)?;
            let p_slot = self.rec.read(probs, 0, rows * dims.s_len)?;
            self.attention.push(PlannedAttention {
                site,
                layer,
                shape,
                scores: s_slot,
                probs: p_slot,
            });
        }
        Ok(())
    }

    /// A sublayer's last product, which also adds the sublayer's residual when it has one
    /// (see [`Pass::residual`]).
    fn last_matmul(&mut self, x: &MatmulArgs) -> Result<()> {
        match self.residual.take() {
            Some(res) => self.rec.matmul_then(x, Epilogue::Residual(&res)),
            None => self.rec.matmul(x),
        }
    }

    /// The FFN sublayer: `sc.y = act(inp · W₁ᵀ + b₁) · W₂ᵀ + b₂` over N rows.
    fn ffn(&mut self, l: &GpuLayer, inp: &GpuBuffer, sc: &Scratch, n: usize) -> Result<()> {
        let cfg = self.cfg().clone();
        let (c, f) = (cfg.d_model, cfg.d_ff);
        // h = act(inp · W₁ᵀ + b₁), the activation in the product's dispatch.
        self.rec.matmul_then(
            &MatmulArgs::linear(
                inp,
                &l.linear1_weight,
                Some(&l.linear1_bias),
                &sc.f,
                (n, c, f),
            ),
            Epilogue::Activation(cfg.activation),
        )?;
        self.drop(&sc.f, n * f)?; // train mode: dropout on the hidden units
        self.last_matmul(&MatmulArgs::linear(
            &sc.f,
            &l.linear2_weight,
            Some(&l.linear2_bias),
            &sc.y,
            (n, f, c),
        ))
    }
}

impl GpuContext {
    /// `Model::forward` on this GPU. The model's weights are uploaded on the first call
    /// and kept while the same model (same config and parameter values) comes back; a
    /// changed model is uploaded again.
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        let gm = self.resident(model)?;
        gm.forward(model, batch, opts).await
    }

    /// The uploaded copy of `model`, uploading it if the cached one differs.
    pub fn resident(&self, model: &Model) -> Result<GpuModel> {
        let fp = model_fingerprint(model);
        let mut cache = self.model_cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some((f, w)) = cache.as_ref() {
            if *f == fp {
                return Ok(GpuModel::from_parts(self.clone(), w.clone()));
            }
        }
        let weights = Arc::new(GpuWeights::upload(self, model)?);
        *cache = Some((fp, weights.clone()));
        Ok(GpuModel::from_parts(self.clone(), weights))
    }
}

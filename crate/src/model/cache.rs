//! The KV cache: serial generation without recomputing the past.
//!
//! Under the causal mask a position never changes once it is computed, so the keys and
//! values every decoder layer derived from it stay valid. The same holds under a sliding
//! window, a prefix-LM mask whose prefix lies inside the prompt, and painted cells that
//! never show a query a key generated after it (`MaskSpec::cacheable`); any other mask
//! is refused, and generation recomputes instead. [`Model::prefill`] runs the full
//! forward pass over the prompt once and keeps, per decoder layer, the K and V rows of
//! every position (after RoPE), and for an encoder-decoder model the K and V of the
//! encoder memory (computed once: the source never changes). [`Model::decode_step`] then
//! feeds one new token per sequence: it computes that token's q, k, v in each layer,
//! appends k and v to the cache and attends over everything cached, the same
//! [`attention_forward`] as the full pass with T = 1 and `q_offset` = cache length. The
//! logits equal a full recompute of the whole sequence (to float rounding).

use serde::Serialize;

use super::attention::{attention_forward, qkv_slices, AttnRecord};
use super::ffn::linear_forward;
use super::forward::{
    attn_spec, embed_tokens, AttnSite, AttnTrace, Batch, ForwardOptions, HiddenTrace, Mode,
    NormName, Pool, SublayerKind, Trace,
};
use super::options::attention_mask;
use super::plan::{layer_plan, NormKind, StackInput};
use super::position::{alibi_slopes, rope_forward};
use super::{AttentionParams, Model};
use crate::config::{Arch, ModelConfig, PosEncoding};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The cached keys and values of one decoder layer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerKv {
    /// Per sequence, (len, C) self-attention keys after RoPE; head h owns columns h·D..(h+1)·D.
    pub k: Vec<Vec<f32>>,
    /// Per sequence, (len, C) self-attention values.
    pub v: Vec<Vec<f32>>,
    /// Encoder-decoder only: per sequence, (S, C) cross-attention keys of the encoder memory.
    pub cross_k: Vec<Vec<f32>>,
    /// Encoder-decoder only: per sequence, (S, C) cross-attention values.
    pub cross_v: Vec<Vec<f32>>,
}

/// Keys and values of every decoder layer for every position seen so far.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KvCache {
    /// Per decoder layer.
    pub layers: Vec<LayerKv>,
    /// B
    pub batch: usize,
    /// Positions cached so far; the next token sits at this position.
    pub len: usize,
    /// Per sequence, the tokens of the cached positions (len).
    pub tokens: Vec<Vec<u32>>,
    /// Per sequence, the source tokens (S) of an encoder-decoder model; empty otherwise.
    pub src_tokens: Vec<Vec<u32>>,
    /// C
    pub d_model: usize,
    /// H
    pub n_heads: usize,
    /// Per sequence, which cached positions are padding keys (len), when the padding
    /// mask is on: grown by one entry a step rather than rebuilt from the whole prefix.
    #[serde(skip)]
    pub key_pad: Option<Vec<Vec<bool>>>,
    /// The switches the cache was built with; every step must use the same ones.
    #[serde(skip)]
    opts: ForwardOptions,
    /// What every decoding step reuses (not part of the cache's value).
    #[serde(skip)]
    scratch: Box<StepScratch>,
}

/// What stays the same from one decoding step to the next, kept so that a step asks the
/// allocator for nothing once the cache has warmed up: the layer plan, the masks, the
/// ALiBi slopes and the ablated heads of the cache's switches (fixed for its life), and
/// the buffers the step computes in ([`Pool`]). A clone starts empty; two scratches
/// always compare equal, so a cache's value is its keys, values and tokens alone.
#[derive(Default)]
struct StepScratch {
    fixed: Option<StepFixed>,
    pool: Pool,
}

struct StepFixed {
    plan: super::plan::LayerPlan,
    self_mask: super::mask::MaskSpec,
    cross_mask: super::mask::MaskSpec,
    slopes: Vec<f32>,
    /// Per decoder layer, (H) ablated self-attention heads, then (H) cross-attention heads.
    ablate: Vec<(Vec<bool>, Vec<bool>)>,
}

impl Clone for StepScratch {
    fn clone(&self) -> Self {
        StepScratch::default()
    }
}

impl PartialEq for StepScratch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for StepScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StepScratch")
    }
}

impl KvCache {
    /// D
    pub fn d_head(&self) -> usize {
        self.d_model / self.n_heads
    }

    /// (len, D): the keys of head `head` in decoder layer `layer` for sequence `seq`.
    pub fn head_keys(&self, layer: usize, seq: usize, head: usize) -> Vec<f32> {
        head_columns(
            &self.layers[layer].k[seq],
            self.d_model,
            self.d_head(),
            head,
        )
    }

    /// (len, D): the values of head `head` in decoder layer `layer` for sequence `seq`.
    pub fn head_values(&self, layer: usize, seq: usize, head: usize) -> Vec<f32> {
        head_columns(
            &self.layers[layer].v[seq],
            self.d_model,
            self.d_head(),
            head,
        )
    }

    /// Hand a step's attention traces back when the caller has no use for them, so that
    /// the next step computes its scores and probabilities in their memory.
    pub fn recycle(&mut self, traces: Vec<AttnTrace>) {
        for t in traces {
            self.scratch.pool.give(t.scores.data);
            self.scratch.pool.give(t.probs.data);
        }
    }

    /// Bytes of f32 keys and values held (self-attention and cross-attention).
    pub fn size_bytes(&self) -> usize {
        let floats: usize = self
            .layers
            .iter()
            .map(|l| {
                [&l.k, &l.v, &l.cross_k, &l.cross_v]
                    .iter()
                    .flat_map(|rows| rows.iter())
                    .map(Vec::len)
                    .sum::<usize>()
            })
            .sum();
        floats * std::mem::size_of::<f32>()
    }
}

/// Columns h·D..(h+1)·D of a (rows, C) buffer, as (rows, D).
fn head_columns(rows: &[f32], c: usize, d: usize, head: usize) -> Vec<f32> {
    rows.chunks_exact(c)
        .flat_map(|r| r[head * d..(head + 1) * d].iter().copied())
        .collect()
}

/// What one decoding step produces.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOutput {
    /// Position of the token just fed in (the cache length before the step).
    pub position: usize,
    /// (B, V) logits for the next token.
    pub logits: Tensor,
    /// Per decoder layer, in order: self-attention over the cache, scores and
    /// probabilities (B, H, 1, len + 1), then for encoder-decoder cross-attention
    /// (B, H, 1, S).
    pub attention: Vec<AttnTrace>,
    /// With `trace_hidden`: the decoder's residual stream at the new position, (B, 1, C)
    /// per state.
    pub hidden: Vec<HiddenTrace>,
}

impl Model {
    /// Run the prompt through the model once and keep every decoder layer's keys and
    /// values. Returns the cache and the prompt's full trace (logits for every prompt
    /// position). Eval mode and the causal mask only: a cache of train-mode or
    /// bidirectional activations would not equal a recompute.
    pub fn prefill(&self, batch: &Batch, opts: &ForwardOptions) -> Result<(KvCache, Trace)> {
        self.check_cacheable(opts, batch.len)?;
        let (trace, acts) = self.forward_recorded(batch, opts)?;
        let dec = acts
            .decoder
            .ok_or_else(|| Error::Input("this model has no decoder to cache".into()))?;
        let (b, c) = (batch.batch, self.config.d_model);
        // Room for every position the model can see, so that a decoding step appends in
        // place: growing a Vec by doubling would copy the whole prefix now and then (and
        // at long contexts ask the allocator for fresh pages), a step costing far more
        // than its neighbours.
        let room = self.config.max_len.max(batch.len + 1);
        // (B·n, C) rows → per sequence (n, C), with room for `room` rows.
        let split = |rows: &[f32], n: usize, room: usize| -> Vec<Vec<f32>> {
            rows.chunks_exact(n * c)
                .map(|r| {
                    let mut v = Vec::with_capacity(room * c);
                    v.extend_from_slice(r);
                    v
                })
                .collect()
        };
        let mut layers = Vec::with_capacity(dec.layers.len());
        for subs in &dec.layers {
            let attn = |kind: SublayerKind| -> Option<&AttnRecord> {
                subs.iter()
                    .find(|s| s.kind == kind)
                    .and_then(|s| s.attn.as_ref())
            };
            let own = attn(SublayerKind::SelfAttention)
                .expect("every decoder layer records its self-attention");
            let cross = attn(SublayerKind::CrossAttention);
            layers.push(LayerKv {
                k: split(&own.k, batch.len, room),
                v: split(&own.v, batch.len, room),
                cross_k: cross.map_or_else(Vec::new, |x| split(&x.k, batch.src_len, 0)),
                cross_v: cross.map_or_else(Vec::new, |x| split(&x.v, batch.src_len, 0)),
            });
        }
        let tokens: Vec<Vec<u32>> = (0..b)
            .map(|i| {
                let mut row = Vec::with_capacity(room);
                row.extend_from_slice(batch.row(i));
                row
            })
            .collect();
        let self_mask = attention_mask(&self.config, AttnSite::DecoderSelf, opts);
        let pad_id = self.tokenizer.spec.pad;
        let key_pad = tokens
            .iter()
            .map(|r| {
                self_mask.key_padding(r, pad_id).map(|p| {
                    let mut row = Vec::with_capacity(room);
                    row.extend_from_slice(&p);
                    row
                })
            })
            .collect();
        let cache = KvCache {
            layers,
            batch: b,
            len: batch.len,
            tokens,
            key_pad,
            src_tokens: batch
                .src_tokens
                .as_ref()
                .map(|s| s.chunks_exact(batch.src_len).map(<[u32]>::to_vec).collect())
                .unwrap_or_default(),
            d_model: c,
            n_heads: self.config.n_heads,
            opts: cache_switches(opts),
            scratch: Box::default(),
        };
        Ok((cache, trace))
    }

    /// Feed one new token per sequence (`tokens`, B) at position `cache.len`: the cache
    /// grows by one position and the step returns that position's logits and its
    /// attention over the cache. `opts` must carry the switches the cache was built with
    /// (trace switches may differ).
    pub fn decode_step(
        &self,
        cache: &mut KvCache,
        tokens: &[u32],
        opts: &ForwardOptions,
    ) -> Result<StepOutput> {
        self.check_cacheable(opts, cache.len)?;
        self.check_step(cache, tokens, opts)?;
        let cfg = &self.config;
        let (b, c, h) = (cache.batch, cfg.d_model, cfg.n_heads);
        let pos = cache.len;
        let decoder = self
            .decoder
            .as_ref()
            .ok_or_else(|| Error::Input("this model has no decoder to cache".into()))?;
        let pad_id = self.tokenizer.spec.pad;
        for (row, &tok) in cache.tokens.iter_mut().zip(tokens) {
            row.push(tok);
        }
        // What the cache's switches fix for its whole life, worked out at its first step:
        // the masks of the decoder's self-attention and of cross-attention, the slopes,
        // the ablated heads, the layer plan.
        let mut scratch = std::mem::take(&mut *cache.scratch);
        let fixed = match scratch.fixed.take() {
            Some(f) => f,
            None => StepFixed {
                plan: layer_plan(cfg),
                self_mask: attention_mask(cfg, AttnSite::DecoderSelf, opts),
                cross_mask: attention_mask(cfg, AttnSite::Cross, opts),
                slopes: alibi_slopes(h),
                ablate: (0..decoder.layers.len())
                    .map(|li| {
                        (
                            opts.ablated_heads(AttnSite::DecoderSelf, li, h),
                            opts.ablated_heads(AttnSite::Cross, li, h),
                        )
                    })
                    .collect(),
            },
        };
        let StepFixed {
            plan,
            self_mask,
            cross_mask,
            slopes,
            ablate,
        } = &fixed;
        // Per sequence (S): which source positions are padding keys (beam search reorders
        // the sequences, so this follows the cache's rows).
        let src_pad: Option<Vec<Vec<bool>>> = cache
            .src_tokens
            .iter()
            .map(|r| cross_mask.key_padding(r, pad_id))
            .collect();
        // Per sequence (len + 1): which keys are padding, when the mask is on; the cache
        // keeps them and adds the new token's entry.
        if let Some(pads) = cache.key_pad.as_mut() {
            for (row, &tok) in pads.iter_mut().zip(tokens) {
                row.push(tok == pad_id);
            }
        }
        let key_pad = cache.key_pad.as_deref();

        let mut run = super::forward::Run::new(self, opts, false);
        run.pool = std::mem::take(&mut scratch.pool);
        let mut x = run.pool.take(b * c); // (B, 1, C)
        embed_tokens(&mut x, self, StackInput::Tokens, tokens, pos, b, 1);
        let mut hidden = vec![];
        if opts.trace_hidden {
            hidden.push(Tensor {
                shape: vec![b, 1, c],
                data: x.clone(),
            });
        }
        let mut attention = vec![];
        let sp = plan
            .stack(AttnSite::DecoderSelf)
            .ok_or_else(|| Error::Input("this model has no decoder to cache".into()))?;
        for (li, layer) in decoder.layers.iter().enumerate() {
            let kv = &mut cache.layers[li];
            let (ablate_self, ablate_cross) = &ablate[li];
            for sub in &sp.sublayers {
                let name = sub.norm.as_ref().map(|n| NormName("decoder", li, &n.name));
                let norm = sub
                    .norm
                    .as_ref()
                    .zip(name.as_ref())
                    .map(|(n, name)| (&layer.norms[n.slot], name as &dyn std::fmt::Display));
                run.sublayer(&mut x, sub, norm, &mut |run, inp, rec| match sub.kind {
                    SublayerKind::SelfAttention => {
                        let spec = attn_spec(
                            &run.model.config,
                            &layer.self_attn,
                            AttnSite::DecoderSelf,
                            self_mask,
                            run.opts.scale,
                            pos,
                            slopes,
                            ablate_self,
                        );
                        let [mut q, mut k_new, v_new] =
                            project_row(&mut run.pool, &layer.self_attn, inp, b, c);
                        if spec.rope {
                            rope_forward(&mut q, pos, b, 1, h, c / h);
                            rope_forward(&mut k_new, pos, b, 1, h, c / h);
                        }
                        for seq in 0..b {
                            kv.k[seq].extend_from_slice(&k_new[seq * c..(seq + 1) * c]);
                            kv.v[seq].extend_from_slice(&v_new[seq * c..(seq + 1) * c]);
                        }
                        let out = attend(
                            &mut run.pool,
                            &layer.self_attn,
                            &q,
                            &kv.k,
                            &kv.v,
                            key_pad,
                            &spec,
                            (AttnSite::DecoderSelf, li),
                            (b, c),
                            &mut attention,
                        );
                        for buf in [q, k_new, v_new] {
                            run.pool.give(buf);
                        }
                        Ok(out)
                    }
                    SublayerKind::CrossAttention => {
                        let cross = layer.cross_attn.as_ref().ok_or_else(|| {
                            Error::Input("cross-attention without its parameters".into())
                        })?;
                        let spec = attn_spec(
                            &run.model.config,
                            cross,
                            AttnSite::Cross,
                            cross_mask,
                            run.opts.scale,
                            pos,
                            slopes,
                            ablate_cross,
                        );
                        let ([wq, _, _], [bq, _, _]) = qkv_slices(cross, c);
                        let mut q = run.pool.take(b * c); // (B, C)
                        linear_forward(&mut q, inp, wq, Some(bq), b, c, c);
                        let out = attend(
                            &mut run.pool,
                            cross,
                            &q,
                            &kv.cross_k,
                            &kv.cross_v,
                            src_pad.as_deref(),
                            &spec,
                            (AttnSite::Cross, li),
                            (b, c),
                            &mut attention,
                        );
                        run.pool.give(q);
                        Ok(out)
                    }
                    SublayerKind::Ffn => run.ffn(inp, layer, (AttnSite::DecoderSelf, li, 1), rec),
                })?;
            }
            if opts.trace_hidden {
                hidden.push(Tensor {
                    shape: vec![b, 1, c],
                    data: x.clone(),
                });
            }
        }
        if let Some(fnorm) = decoder.final_norm.as_ref().filter(|_| sp.final_norm) {
            let mut out = run.pool.take(x.len()); // (B, 1, C)
            let rec = run.norm(&mut out, &x, fnorm, &"decoder.norm", NormKind::LayerNorm);
            run.pool.give(rec.mean);
            run.pool.give(rec.rstd);
            run.pool.give(std::mem::replace(&mut x, out));
        }
        run.head(&x, b, 1);
        run.pool.give(x);
        cache.len += 1;
        let v = cfg.vocab_size;
        let logits = Tensor {
            shape: vec![b, v],
            data: std::mem::take(&mut run.trace.logits.data),
        };
        scratch.pool = std::mem::take(&mut run.pool);
        scratch.fixed = Some(fixed);
        *cache.scratch = scratch;
        Ok(StepOutput {
            position: pos,
            logits,
            attention,
            hidden: if opts.trace_hidden {
                vec![HiddenTrace {
                    stack: AttnSite::DecoderSelf,
                    states: hidden,
                }]
            } else {
                vec![]
            },
        })
    }

    /// A cache (CPU or GPU) of `len` positions (the prompt at prefill) holds eval-mode
    /// decoder activations that a later token cannot change: refuse a model without a
    /// decoder, a classifier, train mode, or a mask under which a position sees a key
    /// generated after it (`MaskSpec::cacheable`: bidirectional, a prefix longer than the
    /// prompt, a painted cell that shows the future).
    pub fn check_cacheable(&self, opts: &ForwardOptions, len: usize) -> Result<()> {
        if self.config.arch == Arch::EncoderOnly {
            return Err(Error::Input(
                "an encoder_only model has no decoder: there is nothing to cache".into(),
            ));
        }
        if self.config.is_classifier() {
            return Err(Error::Input(
                "a classifier has no token logits to generate from".into(),
            ));
        }
        if opts.mode != Mode::Eval {
            return Err(Error::Input(
                "the KV cache runs in eval mode: train mode draws new dropout masks at every pass"
                    .into(),
            ));
        }
        let mask = attention_mask(&self.config, AttnSite::DecoderSelf, opts);
        mask.cacheable(len).map_err(|why| {
            Error::Input(format!(
                "the KV cache needs a causal mask, a sliding window or a prefix-LM mask within \
                 the prompt: {why}; generate without the cache"
            ))
        })
    }

    fn check_step(&self, cache: &KvCache, tokens: &[u32], opts: &ForwardOptions) -> Result<()> {
        let cfg = &self.config;
        if cache.layers.len() != cfg.decoder_layers() || cache.d_model != cfg.d_model {
            return Err(Error::Input(
                "this cache was built by a different model; prefill again".into(),
            ));
        }
        check_step_input(cfg, &cache.opts, opts, tokens, cache.batch, cache.len)
    }
}

/// q, k, v (each (B, C)) of one new row per sequence, in buffers from `pool`.
fn project_row(
    pool: &mut Pool,
    params: &AttentionParams,
    inp: &[f32],
    b: usize,
    c: usize,
) -> [Vec<f32>; 3] {
    let (w, bias) = qkv_slices(params, c);
    std::array::from_fn(|i| {
        let mut out = pool.take(b * c); // (B, C)
        linear_forward(&mut out, inp, w[i], Some(bias[i]), b, c, c);
        out
    })
}

/// One query row per sequence `q (B, C)` over the cached `k[seq]`, `v[seq]` (S, C): the
/// attention output after W_O (B, C), in a buffer from `pool`; its scores and
/// probabilities (B, H, 1, S) are pushed onto `traces`, labelled `site` and `layer`.
#[allow(clippy::too_many_arguments)]
fn attend(
    pool: &mut Pool,
    params: &AttentionParams,
    q: &[f32],
    k: &[Vec<f32>],
    v: &[Vec<f32>],
    key_pad: Option<&[Vec<bool>]>,
    spec: &super::attention::AttnSpec,
    (site, layer): (AttnSite, usize),
    (b, c): (usize, usize),
    traces: &mut Vec<AttnTrace>,
) -> Vec<f32> {
    let h = spec.n_heads;
    let s = k[0].len() / c;
    let mut z = pool.take(b * c); // (B, 1, C)
    let mut scores = pool.take(b * h * s); // (B, H, 1, S)
    let mut probs = pool.take(b * h * s); // (B, H, 1, S)
    for seq in 0..b {
        attention_forward(
            &mut z[seq * c..(seq + 1) * c],
            &mut scores[seq * h * s..(seq + 1) * h * s],
            &mut probs[seq * h * s..(seq + 1) * h * s],
            &q[seq * c..(seq + 1) * c],
            &k[seq],
            &v[seq],
            key_pad.map(|p| p[seq].as_slice()),
            None,
            spec,
            1,
            s,
        );
    }
    let mut out = pool.take(b * c); // (B, 1, C)
    linear_forward(
        &mut out,
        &z,
        &params.out_proj_weight.data,
        Some(&params.out_proj_bias.data),
        b,
        c,
        c,
    );
    pool.give(z);
    let shape = vec![b, h, 1, s];
    traces.push(AttnTrace {
        site,
        layer,
        scores: Tensor {
            shape: shape.clone(),
            data: scores,
        },
        probs: Tensor { shape, data: probs },
    });
    out
}

/// The switches a cache is bound to: everything in `opts` but what is only recorded.
pub fn cache_switches(opts: &ForwardOptions) -> ForwardOptions {
    ForwardOptions {
        trace_attention: false,
        trace_hidden: false,
        trace_ffn: false,
        ..opts.clone()
    }
}

/// The checks every decoding step makes, on the CPU cache and the GPU cache alike: the
/// switches are the ones the cache was built with (`built`), one token per sequence of the
/// B = `batch` sequences, ids inside the vocabulary, and learned positions within max_len
/// for a cache already holding `len` positions.
pub fn check_step_input(
    cfg: &ModelConfig,
    built: &ForwardOptions,
    opts: &ForwardOptions,
    tokens: &[u32],
    batch: usize,
    len: usize,
) -> Result<()> {
    if cache_switches(opts) != *built {
        return Err(Error::Input(
            "the switches (causal, padding mask, scale, ablation) differ from the ones the \
                 cache was built with; prefill again"
                .into(),
        ));
    }
    if tokens.len() != batch {
        return Err(Error::Input(format!(
            "a decoding step takes one token per sequence: the cache holds {} sequences, \
                 got {} tokens",
            batch,
            tokens.len()
        )));
    }
    if let Some((i, &t)) = tokens
        .iter()
        .enumerate()
        .find(|(_, &t)| t as usize >= cfg.vocab_size)
    {
        return Err(Error::Input(format!(
            "token id {t} for sequence {i} is outside the vocabulary of {} tokens (ids 0..{})",
            cfg.vocab_size,
            cfg.vocab_size - 1
        )));
    }
    if cfg.pos_encoding == PosEncoding::Learned && len >= cfg.max_len {
        return Err(Error::Input(format!(
            "learned positions stop at max_len = {}; the cache already holds {} positions",
            cfg.max_len, len
        )));
    }
    Ok(())
}

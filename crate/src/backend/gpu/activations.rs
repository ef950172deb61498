//! The buffers a GPU forward pass writes its activations into, named after what they hold.
//!
//! A pass that keeps nothing (inference, the KV-cache step) draws every sublayer's buffers
//! from one [`Scratch`] per stack, reused layer after layer. A pass that keeps what the
//! backward pass reads (training) writes each sublayer into its own [`SubActs`] of an
//! [`Acts`], allocated once for the largest batch seen. The walk itself
//! (`super::pass`) is the same for both.

use super::context::{GpuBuffer, GpuContext};
use crate::config::ModelConfig;
use crate::error::Result;
use crate::model::plan::{HeadKind, LayerPlan, NormKind, Placement, StackInput, SublayerKind};

/// The activations of one attention sublayer.
#[derive(Clone)]
pub(super) struct AttnActs {
    /// (N, 3C) Q | K | V after RoPE (cross-attention: Q in the first C columns).
    pub qkv: GpuBuffer,
    /// (B·S, 2C) cross-attention K | V of the encoder output.
    pub kv: Option<GpuBuffer>,
    /// (B, H, T, S) scores (`MASKED` where hidden) and probabilities before dropout.
    pub scores: GpuBuffer,
    pub probs: GpuBuffer,
    /// (B, H, T, S) the probabilities after dropout and the dropout multipliers.
    pub dropped: Option<(GpuBuffer, GpuBuffer)>,
    /// (N, C) the heads merged, before W_O.
    pub z: GpuBuffer,
}

/// The activations of an FFN sublayer.
#[derive(Clone)]
pub(super) struct FfnActs {
    /// (N, F) before the activation; kept only for a backward pass (a pass that keeps
    /// nothing applies the activation in the product's dispatch).
    pub pre: Option<GpuBuffer>,
    /// (N, F) after the activation and dropout: the second Linear's input.
    pub hid: GpuBuffer,
    /// (N, F) dropout multipliers.
    pub mask: Option<GpuBuffer>,
}

/// One sublayer's activations.
#[derive(Clone)]
pub(super) struct SubActs {
    /// (N, C) N(x) of a norm placed before the sublayer.
    pub h: Option<GpuBuffer>,
    /// (N, C) the sublayer's output (after dropout and the residual sum).
    pub y: GpuBuffer,
    /// (N, C) N(y) of a norm placed after; `None` in a pass that keeps nothing, which
    /// writes it over the sublayer's input.
    pub post: Option<GpuBuffer>,
    /// (N, C) dropout multipliers of the sublayer output.
    pub out_mask: Option<GpuBuffer>,
    /// (3, C) BatchNorm's batch statistics (μ, σ², rstd).
    pub bn: Option<GpuBuffer>,
    pub attn: Option<AttnActs>,
    pub ffn: Option<FfnActs>,
}

impl SubActs {
    /// The sublayer's output: the stream the next sublayer reads.
    pub fn out(&self) -> &GpuBuffer {
        self.post.as_ref().unwrap_or(&self.y)
    }
}

/// One stack's record and its backward scratch.
pub(super) struct StackActs {
    /// (N, C) the embedding step's output (after dropout), and its dropout multipliers.
    pub x0: GpuBuffer,
    pub emb_mask: Option<GpuBuffer>,
    pub layers: Vec<Vec<SubActs>>,
    /// (N, C) the final LayerNorm's output.
    pub fnorm: Option<GpuBuffer>,
    /// (N, C) scratch of the backward pass: two stream gradients in turn, the gradient
    /// before a norm placed after, after the output dropout, and of the sublayer input.
    pub d: [GpuBuffer; 2],
    pub dysum: GpuBuffer,
    pub df: GpuBuffer,
    pub dsub: GpuBuffer,
    /// (N, C), (N, 3C), (B, H, T, max(T, S)) ×2, (N, F) ×2
    pub dz: GpuBuffer,
    pub dqkv: GpuBuffer,
    pub dprobs: GpuBuffer,
    pub dscores: GpuBuffer,
    pub dh: GpuBuffer,
    pub dpre: GpuBuffer,
    /// (B·S, 2C) cross-attention K | V gradient, and (B·S, C) the encoder output's.
    pub dkv: Option<GpuBuffer>,
    pub dmem: Option<GpuBuffer>,
}

impl StackActs {
    /// The stack's output (after the final norm).
    pub fn out(&self) -> &GpuBuffer {
        match (&self.fnorm, self.layers.last().and_then(|l| l.last())) {
            (Some(f), _) => f,
            (None, Some(s)) => s.out(),
            (None, None) => &self.x0,
        }
    }
}

/// Everything one training step's shape needs, for batches up to `cap` = (B, T, S).
pub(super) struct Acts {
    pub cap: (usize, usize, usize),
    /// (B·T) u32, (B·S) u32, and the targets: (B·T) or a classifier's (B) labels.
    pub tokens: GpuBuffer,
    pub src: GpuBuffer,
    pub targets: GpuBuffer,
    /// (B·T, V) or (B, classes), and their gradient.
    pub logits: GpuBuffer,
    pub dlogits: GpuBuffer,
    /// (2) mean loss, counted rows.
    pub loss: GpuBuffer,
    /// (B·T, C) the gradient of the head's input.
    pub dhead: GpuBuffer,
    pub stacks: Vec<StackActs>,
}

impl Acts {
    /// Buffers for batches of up to (B, T, S) = `cap` of a model with this config and
    /// plan; the dropout buffers only when the model drops.
    pub fn alloc(
        ctx: &GpuContext,
        cfg: &ModelConfig,
        plan: &LayerPlan,
        (b, t, s): (usize, usize, usize),
    ) -> Result<Acts> {
        let (c, h, f) = (cfg.d_model, cfg.n_heads, cfg.d_ff);
        let drop = cfg.dropout > 0.0;
        let z = |what: &str, n: usize| ctx.zeros(what, n);
        let opt = |on: bool, what: &str, n: usize| on.then(|| ctx.zeros(what, n)).transpose();
        let (head_rows, head_width) = match plan.head {
            HeadKind::Lm => (b * t, cfg.vocab_size),
            HeadKind::Classifier => (b, cfg.num_classes),
        };
        let mut stacks = vec![];
        for sp in &plan.stacks {
            let len = match sp.input {
                StackInput::Tokens => t,
                StackInput::Source => s,
            };
            let n = b * len;
            let cross_s = if sp.reads_memory { s } else { 0 };
            let mut layers = vec![];
            for _ in 0..sp.layers {
                let mut subs = vec![];
                for sub in &sp.sublayers {
                    let placement = sub.norm.as_ref().map(|n| n.placement);
                    let bn = sub
                        .norm
                        .as_ref()
                        .is_some_and(|n| n.kind == NormKind::BatchNorm);
                    let attn = |keys: usize, cross: bool| -> Result<AttnActs> {
                        let hts = b * h * len * keys;
                        Ok(AttnActs {
                            qkv: z("qkv", n * 3 * c)?,
                            kv: opt(cross, "cross kv", b * keys * 2 * c)?,
                            scores: z("scores", hts)?,
                            probs: z("probabilities", hts)?,
                            dropped: if drop {
                                Some((
                                    z("dropped probabilities", hts)?,
                                    z("attention dropout mask", hts)?,
                                ))
                            } else {
                                None
                            },
                            z: z("heads", n * c)?,
                        })
                    };
                    let (attn, ffn) = match sub.kind {
                        SublayerKind::SelfAttention => (Some(attn(len, false)?), None),
                        SublayerKind::CrossAttention => (Some(attn(cross_s, true)?), None),
                        SublayerKind::Ffn => (
                            None,
                            Some(FfnActs {
                                pre: Some(z("ffn pre-activation", n * f)?),
                                hid: z("ffn hidden", n * f)?,
                                mask: opt(drop, "ffn dropout mask", n * f)?,
                            }),
                        ),
                    };
                    subs.push(SubActs {
                        h: opt(placement == Some(Placement::Before), "normed", n * c)?,
                        y: z("sublayer output", n * c)?,
                        post: opt(placement == Some(Placement::After), "normed", n * c)?,
                        out_mask: opt(drop, "sublayer dropout mask", n * c)?,
                        bn: opt(bn, "batch statistics", 3 * c)?,
                        attn,
                        ffn,
                    });
                }
                layers.push(subs);
            }
            let keys = len.max(cross_s);
            stacks.push(StackActs {
                x0: z("embedded", n * c)?,
                emb_mask: opt(drop, "embedding dropout mask", n * c)?,
                layers,
                fnorm: opt(sp.final_norm, "final norm", n * c)?,
                d: [z("stream gradient", n * c)?, z("stream gradient", n * c)?],
                dysum: z("norm input gradient", n * c)?,
                df: z("sublayer output gradient", n * c)?,
                dsub: z("sublayer input gradient", n * c)?,
                dz: z("heads gradient", n * c)?,
                dqkv: z("qkv gradient", n * 3 * c)?,
                dprobs: z("probability gradient", b * h * len * keys)?,
                dscores: z("score gradient", b * h * len * keys)?,
                dh: z("ffn hidden gradient", n * f)?,
                dpre: z("ffn pre-activation gradient", n * f)?,
                dkv: opt(sp.reads_memory, "cross kv gradient", b * s * 2 * c)?,
                dmem: opt(sp.reads_memory, "memory gradient", b * s * c)?,
            });
        }
        Ok(Acts {
            cap: (b, t, s),
            tokens: z("tokens", b * t)?,
            src: z("source tokens", b * s)?,
            targets: z("targets", head_rows)?,
            logits: z("logits", head_rows * head_width)?,
            dlogits: z("logit gradient", head_rows * head_width)?,
            loss: z("loss", 2)?,
            dhead: z("head input gradient", b * t * c)?,
            stacks,
        })
    }
}

/// The buffers of one stack in a pass that keeps nothing, reused by every layer.
pub(super) struct Scratch {
    /// (N, C) a norm's output / the sublayer input under pre-LN
    pub h: GpuBuffer,
    /// (N, C) the buffer the next sublayer writes its output into (the residual stream
    /// lives in the other one)
    pub y: GpuBuffer,
    /// (N, 3C) fused Q | K | V of self-attention (Q only under cross-attention)
    pub qkv: GpuBuffer,
    /// (N, C) heads merged, before W_O
    pub z: GpuBuffer,
    /// (N, F) FFN hidden layer
    pub f: GpuBuffer,
    /// (B, H, T, pos0 + T) self-attention scores and probabilities
    pub self_scores: GpuBuffer,
    pub self_probs: GpuBuffer,
    /// (B·S, 2C) K | V of cross-attention, when no KV cache holds them
    pub cross_kv: Option<GpuBuffer>,
    /// (B, H, T, S) cross-attention scores and probabilities
    pub cross: Option<(GpuBuffer, GpuBuffer)>,
}

impl Scratch {
    /// A stack's scratch for `n` = B·T rows whose self-attention sees `s_self` keys and
    /// whose cross-attention (if any) sees `s_cross`; `cached_cross` when a KV cache
    /// holds cross-attention's keys and values.
    pub fn alloc(
        ctx: &GpuContext,
        cfg: &ModelConfig,
        (b, t): (usize, usize),
        s_self: usize,
        s_cross: Option<usize>,
        cached_cross: bool,
    ) -> Result<Scratch> {
        let (c, h, f) = (cfg.d_model, cfg.n_heads, cfg.d_ff);
        let n = b * t;
        Ok(Scratch {
            h: ctx.zeros("normed", n * c)?,
            y: ctx.zeros("sublayer output", n * c)?,
            qkv: ctx.zeros("qkv", n * 3 * c)?,
            z: ctx.zeros("heads", n * c)?,
            f: ctx.zeros("ffn hidden", n * f)?,
            self_scores: ctx.zeros("scores", b * h * t * s_self)?,
            self_probs: ctx.zeros("probabilities", b * h * t * s_self)?,
            cross_kv: match (s_cross, cached_cross) {
                (Some(s), false) => Some(ctx.zeros("cross kv", b * s * 2 * c)?),
                _ => None,
            },
            cross: match s_cross {
                Some(s) => Some((
                    ctx.zeros("cross scores", b * h * t * s)?,
                    ctx.zeros("cross probabilities", b * h * t * s)?,
                )),
                None => None,
            },
        })
    }

    /// This stack's buffers for one sublayer of `kind`; `cached_kv` is the layer's
    /// cross-attention K | V in a KV cache. Dropout masks and BatchNorm statistics are
    /// made when a pass draws them.
    pub fn sublayer(
        &self,
        kind: SublayerKind,
        norm_before: bool,
        cached_kv: Option<&GpuBuffer>,
    ) -> SubActs {
        let attn = |scores: &GpuBuffer, probs: &GpuBuffer, kv: Option<&GpuBuffer>| AttnActs {
            qkv: self.qkv.clone(),
            kv: kv.cloned(),
            scores: scores.clone(),
            probs: probs.clone(),
            dropped: None,
            z: self.z.clone(),
        };
        let (attn, ffn) = match (kind, &self.cross) {
            (SublayerKind::SelfAttention, _) => {
                (Some(attn(&self.self_scores, &self.self_probs, None)), None)
            }
            (SublayerKind::CrossAttention, Some((s, p))) => {
                (Some(attn(s, p, cached_kv.or(self.cross_kv.as_ref()))), None)
            }
            (SublayerKind::CrossAttention, None) => (None, None),
            (SublayerKind::Ffn, _) => (
                None,
                Some(FfnActs {
                    pre: None,
                    hid: self.f.clone(),
                    mask: None,
                }),
            ),
        };
        SubActs {
            h: norm_before.then(|| self.h.clone()),
            y: self.y.clone(),
            post: None,
            out_mask: None,
            bn: None,
            attn,
            ffn,
        }
    }
}

//! The block structure of a forward pass, made visible (docs/model.md, "Forward pass"):
//! what each layer's FFN and norms computed on a batch, where the dropout masks of a
//! train-mode pass fell, which rows change when one input token changes (bit-exactly),
//! and how a BatchNorm model in train mode couples the sequences of a batch while a
//! LayerNorm model never does.
//!
//! Everything here is read off one recorded CPU pass ([`Model::forward_recorded`]): the
//! numbers are the ones the model computed, not a re-derivation.
//!
//! ```text
//! probe     one recorded pass → per stack: FFN x, W₁x+b₁, act(·), W₂·+b₂; norm μ, σ²;
//!           residual stream (L+1); dropout masks; logits
//! diff      two single-sequence passes → per position: did its f32 bits change?
//! coupling  batches [this, other] and [this, other′] in train and eval mode → did this
//!           sequence's output change? (BatchNorm: yes in train mode; LayerNorm: never)
//! dropout   the masks of one train-mode pass, 1/(1 − p), and eval mode as the identity
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::config::{Arch, Norm};
use crate::error::{Error, Result};
use crate::model::ffn::linear_forward;
use crate::model::forward::{Activations, AttnSite, Batch, StackRecord, SublayerKind};
use crate::model::norm::{BN_EPS, LN_EPS};
use crate::model::plan::{layer_plan, NormKind, Placement};
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::protocol::{Dense, F32Array};

/// Train mode for a pass: dropout masks from `seed`, BatchNorm with batch statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TrainMode {
    pub seed: u64,
    /// Dropout probability for this pass; `None`: the model's own. Dropout has no
    /// parameters, so any p in [0, 1) can be switched on at run time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropout: Option<f32>,
}

/// The loaded model with the dropout probability `p` (the same weights), or itself.
pub fn with_dropout(m: &Model, p: Option<f32>) -> Result<Cow<'_, Model>> {
    match p {
        None => Ok(Cow::Borrowed(m)),
        Some(p) if (0.0..0.95).contains(&p) => {
            if p == m.config.dropout {
                return Ok(Cow::Borrowed(m));
            }
            let mut owned = m.clone();
            owned.config.dropout = p;
            Ok(Cow::Owned(owned))
        }
        Some(p) => Err(Error::Input(format!(
            "dropout must be from 0 to 0.95 (below 1), got {p}"
        ))),
    }
}

/// The forward mode a `TrainMode` asks for.
pub fn mode_of(train: Option<&TrainMode>) -> Mode {
    match train {
        Some(t) => Mode::Train { seed: t.seed },
        None => Mode::Eval,
    }
}

/// What one layer's FFN computed, for every position of the batch.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct FfnProbe {
    pub layer: usize,
    /// (B, T, C): the FFN's input (after the pre-LN norm where there is one).
    pub input: Dense,
    /// (B, T, F): x·W₁ᵀ + b₁.
    pub pre: Dense,
    /// (B, T, F): act(pre) (times the dropout mask in train mode).
    pub hidden: Dense,
    /// (B, T, C): hidden·W₂ᵀ + b₂, before dropout and the residual add.
    pub output: Dense,
    /// Fraction of `hidden` that is exactly 0 (ReLU's zeros, dropped units).
    pub zero_fraction: f32,
    /// (B, T): how many of each position's F hidden units are exactly 0.
    pub zeros: Vec<u32>,
}

/// What one norm removed: its mean and variance, and over what they were taken.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct NormProbe {
    /// `None` for the stack's final norm.
    pub layer: Option<usize>,
    /// `norm1`, `norm2`, `norm3`, or `norm` (the final one).
    pub name: String,
    /// The sublayer it belongs to (`None` for the final norm).
    pub sublayer: Option<SublayerKind>,
    pub kind: NormKind,
    /// `None` for the final norm (after the last layer).
    pub placement: Option<Placement>,
    /// true: one μ, σ² per feature over every position of the batch (BatchNorm in train
    /// mode); false with `running`: BatchNorm's stored running statistics; false
    /// otherwise: one μ, σ² per position over its C features (LayerNorm).
    pub over_batch: bool,
    pub running: bool,
    /// (B, T) per position, or (C) per feature.
    pub mean: Dense,
    /// (B, T) or (C): the biased variance σ².
    pub var: Dense,
    /// (B, T, C): what was normalised.
    pub input: Dense,
}

/// Where a dropout mask was applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DropPlace {
    /// Token embedding + positions, before the first layer (in the paper).
    Embedding,
    /// Attention probabilities, before ·V (PyTorch's `nn.MultiheadAttention` adds it).
    AttentionProbs,
    /// The FFN's hidden units, between W₁ and W₂ (PyTorch's `TransformerEncoderLayer`).
    FfnHidden,
    /// A sublayer's output, before the residual add (the paper's residual dropout).
    SublayerOutput,
}

/// One dropout mask of a train-mode pass.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct DropSite {
    pub stack: AttnSite,
    pub layer: Option<usize>,
    pub sublayer: Option<SublayerKind>,
    pub place: DropPlace,
    /// Part of the 2017 paper's recipe (embedding and sublayer outputs) or one of the
    /// places PyTorch's modules add.
    pub in_paper: bool,
    /// The mask: 0 (dropped) or 1/(1 − p) (kept); its shape is the tensor's:
    /// (B, T, C), (B, H, T, S) or (B, T, F).
    pub mask: Dense,
    pub kept_fraction: f32,
}

/// One stack of a probe.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct StackProbe {
    pub site: AttnSite,
    pub ffn: Vec<FfnProbe>,
    /// In the order they ran (the final norm last).
    pub norms: Vec<NormProbe>,
    /// (L + 1, B, T, C): the residual stream before the first layer and after each.
    pub hidden: Dense,
}

/// Every block's live tensors for one batch.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct BlockProbe {
    pub train: bool,
    /// The dropout probability the pass used (0 in eval mode has no effect either way).
    pub dropout: f32,
    pub stacks: Vec<StackProbe>,
    /// Train mode with dropout > 0: every mask, in the order they were drawn.
    pub drops: Vec<DropSite>,
    /// (B, T, V), or (B, N) for a classifier.
    pub logits: Dense,
}

fn kept(mask: &[f32]) -> f32 {
    if mask.is_empty() {
        return 0.0;
    }
    mask.iter().filter(|&&m| m != 0.0).count() as f32 / mask.len() as f32
}

/// σ² from the kept 1/√(σ² + ε), in f64.
fn var_of(rstd: &[f32], eps: f32) -> Vec<f32> {
    rstd.iter()
        .map(|&s| (1.0 / (s as f64 * s as f64) - eps as f64).max(0.0) as f32)
        .collect()
}

/// One recorded pass of `m` over `batch` with `opts`, and its trace.
fn recorded(m: &Model, batch: &Batch, opts: &ForwardOptions) -> Result<(Trace, Activations)> {
    let opts = ForwardOptions {
        trace_attention: false,
        trace_hidden: false,
        ..opts.clone()
    };
    m.forward_recorded(batch, &opts)
}

/// The probe of one recorded stack: B sequences of T positions.
fn stack_probe(
    m: &Model,
    rec: &StackRecord,
    train: bool,
    b: usize,
    t: usize,
    drops: &mut Vec<DropSite>,
) -> Result<StackProbe> {
    let cfg = &m.config;
    let (c, f, h) = (cfg.d_model, cfg.d_ff, cfg.n_heads);
    let plan = layer_plan(cfg);
    let sp = plan
        .stack(rec.site)
        .ok_or_else(|| Error::Input("this model has no such stack".into()))?;
    let params = m.stack_params(rec.site)?;
    let btc = [b, t, c];
    let mut out = StackProbe {
        site: rec.site,
        ffn: vec![],
        norms: vec![],
        hidden: Dense::new(&[0], &[]),
    };
    if let Some(mask) = &rec.embed_dropout {
        drops.push(DropSite {
            stack: rec.site,
            layer: None,
            sublayer: None,
            place: DropPlace::Embedding,
            in_paper: true,
            mask: Dense::new(&btc, mask), // (B, T, C)
            kept_fraction: kept(mask),
        });
    }
    let mut hidden = rec.embedded.clone(); // (L+1, B, T, C), grown layer by layer
    for (li, subs) in rec.layers.iter().enumerate() {
        for (si, sub) in subs.iter().enumerate() {
            let step = sp.sublayers.get(si).and_then(|s| s.norm.as_ref());
            if let (Some(n), Some(step)) = (&sub.norm, step) {
                out.norms.push(norm_probe(
                    m,
                    n,
                    Some(li),
                    step.name.clone(),
                    Some(sub.kind),
                    step.kind,
                    Some(step.placement),
                    train,
                    &params.layers[li].norms[step.slot],
                    b,
                    t,
                ));
            }
            if let Some(mask) = &sub.attn_dropout {
                let s = mask.len() / (b * h * t).max(1);
                drops.push(DropSite {
                    stack: rec.site,
                    layer: Some(li),
                    sublayer: Some(sub.kind),
                    place: DropPlace::AttentionProbs,
                    in_paper: false,
                    mask: Dense::new(&[b, h, t, s], mask), // (B, H, T, S)
                    kept_fraction: kept(mask),
                });
            }
            if let Some(mask) = &sub.ffn_dropout {
                drops.push(DropSite {
                    stack: rec.site,
                    layer: Some(li),
                    sublayer: Some(sub.kind),
                    place: DropPlace::FfnHidden,
                    in_paper: false,
                    mask: Dense::new(&[b, t, f], mask), // (B, T, F)
                    kept_fraction: kept(mask),
                });
            }
            if let Some(mask) = &sub.out_dropout {
                drops.push(DropSite {
                    stack: rec.site,
                    layer: Some(li),
                    sublayer: Some(sub.kind),
                    place: DropPlace::SublayerOutput,
                    in_paper: true,
                    mask: Dense::new(&btc, mask), // (B, T, C)
                    kept_fraction: kept(mask),
                });
            }
            if let Some(ffn) = &sub.ffn {
                let lp = &params.layers[li];
                let n = b * t;
                let mut y = vec![0.0f32; n * c]; // (B·T, C)
                linear_forward(
                    &mut y,
                    &ffn.hidden,
                    &lp.linear2_weight.data,
                    Some(&lp.linear2_bias.data),
                    n,
                    f,
                    c,
                );
                out.ffn.push(FfnProbe {
                    layer: li,
                    input: Dense::new(&btc, &sub.sub_input), // (B, T, C)
                    pre: Dense::new(&[b, t, f], &ffn.pre),   // (B, T, F)
                    hidden: Dense::new(&[b, t, f], &ffn.hidden), // (B, T, F)
                    output: Dense::new(&btc, &y),            // (B, T, C)
                    zero_fraction: ffn.hidden.iter().filter(|&&v| v == 0.0).count() as f32
                        / ffn.hidden.len().max(1) as f32,
                    zeros: ffn
                        .hidden
                        .chunks(f.max(1))
                        .map(|row| row.iter().filter(|&&v| v == 0.0).count() as u32)
                        .collect(), // (B·T)
                });
            }
        }
        if let Some(last) = subs.last() {
            hidden.extend_from_slice(&last.output);
        }
    }
    if let (Some(n), Some(p)) = (&rec.final_norm, &params.final_norm) {
        out.norms.push(norm_probe(
            m,
            n,
            None,
            "norm".into(),
            None,
            NormKind::LayerNorm,
            None,
            train,
            p,
            b,
            t,
        ));
    }
    let l1 = hidden.len() / (b * t * c).max(1);
    out.hidden = Dense::new(&[l1, b, t, c], &hidden); // (L+1, B, T, C)
    Ok(out)
}

/// μ and σ² of one recorded norm, as the kind computed them.
#[allow(clippy::too_many_arguments)]
fn norm_probe(
    m: &Model,
    n: &crate::model::forward::NormRecord,
    layer: Option<usize>,
    name: String,
    sublayer: Option<SublayerKind>,
    kind: NormKind,
    placement: Option<Placement>,
    train: bool,
    params: &crate::model::NormParams,
    b: usize,
    t: usize,
) -> NormProbe {
    let c = m.config.d_model;
    let (over_batch, running, mean, var) = match kind {
        NormKind::LayerNorm => (
            false,
            false,
            Dense::new(&[b, t], &n.mean),                  // (B, T)
            Dense::new(&[b, t], &var_of(&n.rstd, LN_EPS)), // (B, T)
        ),
        NormKind::BatchNorm if train => (
            true,
            false,
            Dense::new(&[c], &n.mean),                  // (C)
            Dense::new(&[c], &var_of(&n.rstd, BN_EPS)), // (C)
        ),
        NormKind::BatchNorm => {
            let rm = params.running_mean.as_ref().map(|x| x.data.clone());
            let rv = params.running_var.as_ref().map(|x| x.data.clone());
            (
                false,
                true,
                Dense::new(&[c], &rm.unwrap_or_default()), // (C)
                Dense::new(&[c], &rv.unwrap_or_default()), // (C)
            )
        }
    };
    NormProbe {
        layer,
        name,
        sublayer,
        kind,
        placement,
        over_batch,
        running,
        mean,
        var,
        input: Dense::new(&[b, t, c], &n.input), // (B, T, C)
    }
}

/// Every block's live tensors for `batch`: FFN, norms, residual stream, dropout masks.
pub fn block_probe(m: &Model, batch: &Batch, opts: &ForwardOptions) -> Result<BlockProbe> {
    let (trace, acts) = recorded(m, batch, opts)?;
    let train = matches!(opts.mode, Mode::Train { .. });
    let mut drops = vec![];
    let mut stacks = vec![];
    for rec in [&acts.encoder, &acts.decoder].into_iter().flatten() {
        let t = if rec.site == AttnSite::EncoderSelf && m.config.arch == Arch::EncoderDecoder {
            batch.src_len
        } else {
            batch.len
        };
        stacks.push(stack_probe(m, rec, train, batch.batch, t, &mut drops)?);
    }
    let logits = match &trace.class_logits {
        Some(cl) => Dense::new(&cl.shape, &cl.data), // (B, N)
        None => Dense::new(&trace.logits.shape, &trace.logits.data), // (B, T, V)
    };
    Ok(BlockProbe {
        train,
        dropout: m.config.dropout,
        stacks,
        drops,
        logits,
    })
}

/// One single-sequence input: the main stack's tokens, and the source of an
/// encoder-decoder model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct SequenceInput {
    pub tokens: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub src: Option<Vec<u32>>,
}

impl SequenceInput {
    pub fn batch(&self) -> Result<Batch> {
        let b = Batch::single(&self.tokens)?;
        match &self.src {
            Some(s) => b.with_source(vec![s.clone()]),
            None => Ok(b),
        }
    }
}

/// What a diff row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Probed {
    /// The FFN's input (C per position).
    FfnInput,
    /// The FFN's output, before dropout and the residual add (C per position).
    FfnOutput,
    /// The residual stream: `layer` 0 is the embedding, l + 1 the output of layer l.
    Hidden,
    /// The model's output (V logits per position, or the N class logits of position 0).
    Logits,
}

/// Which positions of one tensor changed between two inputs.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct RowDiff {
    pub stack: AttnSite,
    pub what: Probed,
    pub layer: usize,
    /// (P): position p's row holds a value whose f32 bits differ, for the positions both
    /// inputs have (P = the shorter length).
    pub changed: Vec<bool>,
    /// (P): max |after − before| over the row.
    pub max_abs: F32Array,
}

/// Two single-sequence passes compared position by position, bit-exactly.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct BlockDiff {
    /// Positions whose token differs (of the main stack, or of the source for an
    /// encoder-decoder's encoder), over the shorter length; and the lengths.
    pub edited: Vec<usize>,
    pub src_edited: Vec<usize>,
    pub len_before: usize,
    pub len_after: usize,
    pub rows: Vec<RowDiff>,
    /// The second pass's tensors (batch of one).
    pub after: BlockProbe,
}

/// Bit-exact row comparison of two (T, W) tensors over their first `p` rows.
fn row_diff(a: &[f32], b: &[f32], w: usize, p: usize) -> (Vec<bool>, Vec<f32>) {
    (0..p)
        .map(|i| {
            let (ra, rb) = (&a[i * w..(i + 1) * w], &b[i * w..(i + 1) * w]);
            let changed = ra.iter().zip(rb).any(|(x, y)| x.to_bits() != y.to_bits());
            let max = ra
                .iter()
                .zip(rb)
                .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
            (changed, max)
        })
        .unzip()
}

fn differing(a: &[u32], b: &[u32]) -> Vec<usize> {
    (0..a.len().min(b.len()))
        .filter(|&i| a[i] != b[i])
        .collect()
}

/// `before` and `after` run alone (eval or train mode as `opts` says); every FFN
/// input/output, residual-stream state and logit row compared bit-exactly per position.
pub fn block_diff(
    m: &Model,
    before: &SequenceInput,
    after: &SequenceInput,
    opts: &ForwardOptions,
) -> Result<BlockDiff> {
    let pa = block_probe(m, &before.batch()?, opts)?;
    let pb = block_probe(m, &after.batch()?, opts)?;
    let mut rows = vec![];
    for (sa, sb) in pa.stacks.iter().zip(&pb.stacks) {
        let (ta, tb) = (sa.hidden.shape[2], sb.hidden.shape[2]);
        let p = ta.min(tb);
        let c = m.config.d_model;
        let mut push = |what, layer, a: &[f32], b: &[f32], w| {
            let (changed, max_abs) = row_diff(a, b, w, p);
            rows.push(RowDiff {
                stack: sa.site,
                what,
                layer,
                changed,
                max_abs: F32Array(max_abs),
            });
        };
        for (fa, fb) in sa.ffn.iter().zip(&sb.ffn) {
            push(
                Probed::FfnInput,
                fa.layer,
                &fa.input.data.0,
                &fb.input.data.0,
                c,
            );
            push(
                Probed::FfnOutput,
                fa.layer,
                &fa.output.data.0,
                &fb.output.data.0,
                c,
            );
        }
        let l1 = sa.hidden.shape[0];
        for l in 0..l1 {
            let a = &sa.hidden.data.0[l * ta * c..(l + 1) * ta * c]; // (T, C)
            let b = &sb.hidden.data.0[l * tb * c..(l + 1) * tb * c]; // (T, C)
            push(Probed::Hidden, l, a, b, c);
        }
    }
    let last = pa
        .stacks
        .last()
        .map(|s| s.site)
        .unwrap_or(AttnSite::DecoderSelf);
    let (la, lb) = (&pa.logits, &pb.logits);
    let (p, w) = if la.shape.len() == 3 {
        (la.shape[1].min(lb.shape[1]), la.shape[2]) // (1, T, V)
    } else {
        (1, la.shape[1]) // (1, N)
    };
    let (changed, max_abs) = row_diff(&la.data.0, &lb.data.0, w, p);
    rows.push(RowDiff {
        stack: last,
        what: Probed::Logits,
        layer: 0,
        changed,
        max_abs: F32Array(max_abs),
    });
    Ok(BlockDiff {
        edited: differing(&before.tokens, &after.tokens),
        src_edited: match (&before.src, &after.src) {
            (Some(a), Some(b)) => differing(a, b),
            _ => vec![],
        },
        len_before: before.tokens.len(),
        len_after: after.tokens.len(),
        rows,
        after: pb,
    })
}

/// LayerNorm vs BatchNorm on a batch: this sequence beside another, then beside a
/// changed other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct CouplingRequest {
    /// The sequence whose output is watched (main-stack ids; the source of an
    /// encoder-decoder model).
    pub tokens: Vec<u32>,
    /// Another sequence of the batch.
    pub other: Vec<u32>,
    /// The other sequence, changed.
    pub other_changed: Vec<u32>,
    pub seed: u64,
}

/// One model's answer to the coupling question.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct CouplingModel {
    pub norm: Norm,
    /// false: built in memory with random weights (seed 0), never trained.
    pub trained: bool,
    /// What the model is, in words.
    pub label: String,
    /// max |Δ| of this sequence's outputs when only the other sequence changes: train mode.
    pub train_max_diff: f32,
    /// ... bit-identical in train mode.
    pub train_identical: bool,
    pub eval_max_diff: f32,
    pub eval_identical: bool,
    /// Layer 0's first norm in train mode on the batch [this, other] (None: no norm).
    pub stats: Option<NormProbe>,
    /// Positions the batch normalises over together (B·T, pads included).
    pub batch_rows: usize,
    /// (L + 1): mean ‖x‖ over this sequence's positions of the residual stream before
    /// the first layer and after each (eval mode, the last stack).
    pub residual_norms: F32Array,
    /// A model with its own vocabulary: the three sequences as it read them (its ids).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub other: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub other_changed: Option<Vec<u32>>,
    /// Its vocabulary, when it differs from the loaded model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub vocab: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct NormCoupling {
    /// The loaded model first, then its sibling with the other kind of norm.
    pub models: Vec<CouplingModel>,
}

/// The batch [a, b] for `m`: an encoder-decoder reads them as sources (targets `<bos>`).
fn pair_batch(m: &Model, a: &[u32], b: &[u32]) -> Result<Batch> {
    let pad = m.tokenizer.spec.pad;
    if m.config.arch == Arch::EncoderDecoder {
        let bos = m.tokenizer.spec.bos;
        Batch::padded(vec![vec![bos], vec![bos]], pad)?
            .with_padded_source(vec![a.to_vec(), b.to_vec()], pad)
    } else {
        Batch::padded(vec![a.to_vec(), b.to_vec()], pad)
    }
}

/// Row 0's outputs over its own `n` real positions (or its class logits).
fn row0_outputs(tr: &Trace, n: usize) -> Vec<f32> {
    match &tr.class_logits {
        Some(cl) => cl.data[..cl.shape[1]].to_vec(),
        None => {
            let (t, v) = (tr.logits.shape[1], tr.logits.shape[2]);
            tr.logits.data[..n.min(t) * v].to_vec()
        }
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> (f32, bool) {
    let identical = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    let max = a
        .iter()
        .zip(b)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    (max, identical)
}

/// The loaded model's shape and tokenizer with `norm`, random weights from seed 0.
pub fn sibling_with_norm(m: &Model, norm: Norm) -> Result<Model> {
    let mut cfg = m.config.clone();
    cfg.norm = norm;
    cfg.validate()?;
    Ok(Model::init(cfg, m.tokenizer.clone(), 0))
}

/// `ids` of `from`'s vocabulary spelled in `to`'s: the same token strings, `<unk>` for
/// what `to` lacks (special tokens map to `to`'s own specials).
pub fn respell(
    from: &crate::tokenizer::Tokenizer,
    to: &crate::tokenizer::Tokenizer,
    ids: &[u32],
) -> Vec<u32> {
    let (fs, ts) = (&from.spec, &to.spec);
    ids.iter()
        .map(|&id| match id {
            _ if id == fs.pad => ts.pad,
            _ if id == fs.bos => ts.bos,
            _ if id == fs.eos => ts.eos,
            _ => from.token(id).and_then(|tok| to.id(tok)).unwrap_or(ts.unk),
        })
        .collect()
}

fn coupling_of(
    m: &Model,
    req: &CouplingRequest,
    trained: bool,
    label: String,
) -> Result<CouplingModel> {
    let n = if m.config.arch == Arch::EncoderDecoder {
        1
    } else {
        req.tokens.len()
    };
    let one = pair_batch(m, &req.tokens, &req.other)?;
    let two = pair_batch(m, &req.tokens, &req.other_changed)?;
    let run = |batch: &Batch, mode: Mode| -> Result<Vec<f32>> {
        let opts = ForwardOptions {
            mode,
            ..ForwardOptions::default()
        };
        Ok(row0_outputs(&m.forward(batch, &opts)?, n))
    };
    let train = Mode::Train { seed: req.seed };
    let (train_max_diff, train_identical) = max_diff(&run(&one, train)?, &run(&two, train)?);
    let (eval_max_diff, eval_identical) =
        max_diff(&run(&one, Mode::Eval)?, &run(&two, Mode::Eval)?);
    let probe = block_probe(
        m,
        &one,
        &ForwardOptions {
            mode: train,
            ..ForwardOptions::default()
        },
    )?;
    let stats = probe
        .stacks
        .first()
        .and_then(|s| s.norms.iter().find(|n| n.layer == Some(0)).cloned());
    let rows = probe
        .stacks
        .first()
        .map_or(0, |s| s.hidden.shape[1] * s.hidden.shape[2]);
    let eval = block_probe(m, &one, &ForwardOptions::default())?;
    let last = eval
        .stacks
        .last()
        .ok_or_else(|| Error::Input("this model has no layer stack".into()))?;
    let (l1, t, c) = (
        last.hidden.shape[0],
        last.hidden.shape[2],
        last.hidden.shape[3],
    );
    let real = n.min(t).max(1);
    let residual_norms = (0..l1)
        .map(|l| {
            // Sequence 0 of (L+1, B, T, C).
            let base = l * last.hidden.shape[1] * t * c;
            let sum: f32 = (0..real)
                .map(|i| {
                    let row = &last.hidden.data.0[base + i * c..base + (i + 1) * c];
                    row.iter().map(|x| x * x).sum::<f32>().sqrt()
                })
                .sum();
            sum / real as f32
        })
        .collect();
    Ok(CouplingModel {
        norm: m.config.norm,
        trained,
        label,
        train_max_diff,
        train_identical,
        eval_max_diff,
        eval_identical,
        stats,
        batch_rows: rows,
        residual_norms: F32Array(residual_norms),
        tokens: None,
        other: None,
        other_changed: None,
        vocab: None,
    })
}

/// The coupling question for the loaded model and for a model with the other kind of
/// norm (BatchNorm beside a LayerNorm model, LayerNorm beside a BatchNorm one).
///
/// `trained` is a really trained checkpoint of that other kind (the page passes the
/// shipped reverse siblings); it reads the same sequences, spelled in its own vocabulary
/// ([`respell`]). Without one, the other model is built in memory with random weights:
/// coupling is a property of the norm, not of training, and its label says so.
pub fn norm_coupling(
    m: &Model,
    req: &CouplingRequest,
    trained: Option<(&Model, &str)>,
) -> Result<NormCoupling> {
    for (what, s) in [
        ("this sequence", &req.tokens),
        ("the other sequence", &req.other),
        ("the changed other sequence", &req.other_changed),
    ] {
        if s.is_empty() {
            return Err(Error::Input(format!("norms: {what} is empty")));
        }
        if s.len() > crate::limits::MAX_SEQUENCE_TOKENS {
            return Err(Error::Input(format!(
                "norms: {what} has {} tokens, at most {} are allowed",
                s.len(),
                crate::limits::MAX_SEQUENCE_TOKENS
            )));
        }
    }
    let own = coupling_of(m, req, true, "the loaded model".into())?;
    let is_bn = m.config.norm == Norm::BatchNorm;
    let sibling = match trained {
        Some((sib, name)) => {
            if (sib.config.norm == Norm::BatchNorm) == is_bn {
                return Err(Error::Input(format!(
                    "norms: {name} has the same kind of norm as the loaded model; it needs {}",
                    if is_bn {
                        "a LayerNorm model"
                    } else {
                        "a BatchNorm model"
                    }
                )));
            }
            let sreq = CouplingRequest {
                tokens: respell(&m.tokenizer, &sib.tokenizer, &req.tokens),
                other: respell(&m.tokenizer, &sib.tokenizer, &req.other),
                other_changed: respell(&m.tokenizer, &sib.tokenizer, &req.other_changed),
                seed: req.seed,
            };
            let mut c = coupling_of(sib, &sreq, true, format!("{name}, trained"))?;
            c.tokens = Some(sreq.tokens);
            c.other = Some(sreq.other);
            c.other_changed = Some(sreq.other_changed);
            c.vocab = Some(sib.tokenizer.spec.tokens.clone());
            c
        }
        None => {
            let other = if is_bn { Norm::PreLn } else { Norm::BatchNorm };
            let sib = sibling_with_norm(m, other)?;
            let name = match other {
                Norm::BatchNorm => "BatchNorm",
                _ => "pre-LN LayerNorm",
            };
            coupling_of(
                &sib,
                req,
                false,
                format!("an untrained {name} model of the same shape (random weights, seed 0)"),
            )?
        }
    };
    Ok(NormCoupling {
        models: vec![own, sibling],
    })
}

/// Dropout in train mode against eval mode, on one sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DropoutRequest {
    pub input: SequenceInput,
    pub seed: u64,
    /// `None`: the model's own p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropout: Option<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct DropoutDemo {
    /// The p of this demonstration, and the model's own.
    pub p: f32,
    pub model_p: f32,
    /// 1/(1 − p): what a kept unit is multiplied by.
    pub keep_scale: f32,
    pub seed: u64,
    /// Every mask of the train-mode pass with `seed`.
    pub sites: Vec<DropSite>,
    /// (T, C) the first stack's embedding + positions in eval mode and in train mode.
    pub embed_eval: Dense,
    pub embed_train: Dense,
    /// Every element of `embed_train` is `embed_eval` × its mask value, bit for bit.
    pub embed_is_masked_eval: bool,
    /// max |Δ logits| between the passes with `seed` and `seed + 1` (train mode).
    pub train_repeat_diff: f32,
    /// Two eval-mode passes: bit-identical logits.
    pub eval_repeat_identical: bool,
    /// The train-mode pass with p = 0 gives the eval-mode logits, bit for bit (a model
    /// without BatchNorm), or `None` for a BatchNorm model (train mode differs anyway).
    pub zero_p_is_eval: Option<bool>,
}

/// Where dropout acts, its masks and 1/(1 − p) scaling in train mode, and eval mode as
/// the identity.
pub fn dropout_demo(m: &Model, req: &DropoutRequest) -> Result<DropoutDemo> {
    let model_p = m.config.dropout;
    let m = with_dropout(m, req.dropout)?;
    let m = &*m;
    let p = m.config.dropout;
    let batch = req.input.batch()?;
    let train = |seed| ForwardOptions {
        mode: Mode::Train { seed },
        ..ForwardOptions::default()
    };
    let eval = ForwardOptions::default();
    let tr = block_probe(m, &batch, &train(req.seed))?;
    let tr2 = block_probe(m, &batch, &train(req.seed.wrapping_add(1)))?;
    let ev = block_probe(m, &batch, &eval)?;
    let ev2 = block_probe(m, &batch, &eval)?;
    let first = |pr: &BlockProbe| -> Result<Dense> {
        let s = pr
            .stacks
            .first()
            .ok_or_else(|| Error::Input("this model has no layer stack".into()))?;
        let (t, c) = (s.hidden.shape[2], s.hidden.shape[3]);
        Ok(Dense::new(&[t, c], &s.hidden.data.0[..t * c])) // (T, C) layer 0 = embedding
    };
    let (embed_eval, embed_train) = (first(&ev)?, first(&tr)?);
    let embed_is_masked_eval = match tr.drops.iter().find(|d| d.place == DropPlace::Embedding) {
        Some(d) => embed_eval
            .data
            .0
            .iter()
            .zip(&d.mask.data.0)
            .zip(&embed_train.data.0)
            .all(|((e, mk), t)| (e * mk).to_bits() == t.to_bits()),
        None => embed_eval.data.0 == embed_train.data.0,
    };
    let zero_p_is_eval = if m.config.norm == Norm::BatchNorm {
        None
    } else {
        let z = with_dropout(m, Some(0.0))?;
        let zp = block_probe(&z, &batch, &train(req.seed))?;
        Some(max_diff(&zp.logits.data.0, &ev.logits.data.0).1)
    };
    Ok(DropoutDemo {
        p,
        model_p,
        keep_scale: if p > 0.0 { 1.0 / (1.0 - p) } else { 1.0 },
        seed: req.seed,
        sites: tr.drops,
        embed_eval,
        embed_train,
        embed_is_masked_eval,
        train_repeat_diff: max_diff(&tr.logits.data.0, &tr2.logits.data.0).0,
        eval_repeat_identical: max_diff(&ev.logits.data.0, &ev2.logits.data.0).1,
        zero_p_is_eval,
    })
}

/// Elements of a Dense, checked against its shape (for tests).
#[cfg(test)]
fn consistent(d: &Dense) -> bool {
    d.shape.iter().product::<usize>() == d.data.0.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Activation, Norm};
    use crate::model::test_support::model;

    fn causal(on: bool) -> ForwardOptions {
        ForwardOptions {
            causal: Some(on),
            ..ForwardOptions::default()
        }
    }

    fn seq(tokens: &[u32]) -> SequenceInput {
        SequenceInput {
            tokens: tokens.to_vec(),
            src: None,
        }
    }

    fn rows(d: &BlockDiff, what: Probed) -> Vec<&RowDiff> {
        d.rows.iter().filter(|r| r.what == what).collect()
    }

    #[test]
    fn editing_a_later_token_leaves_every_earlier_row_bit_identical_under_the_causal_mask() {
        let m = model("gpt-pico", |_| {});
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(true),
        )
        .unwrap();
        assert_eq!(d.edited, vec![3]);
        for r in &d.rows {
            assert_eq!(&r.changed[..3], &[false, false, false], "{r:?}");
            if r.what != Probed::Hidden || r.layer > 0 {
                assert!(r.changed[3] && r.changed[4], "{:?} {}", r.what, r.layer);
            }
        }
        // Without the mask, every position sees the edit after the first attention.
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(false),
        )
        .unwrap();
        let logits = rows(&d, Probed::Logits)[0];
        assert!(logits.changed.iter().all(|&c| c), "{logits:?}");
    }

    #[test]
    fn the_ffn_of_an_unedited_position_is_bit_identical_where_its_input_is() {
        // The FFN never mixes positions: a row of its output changes exactly where its
        // input row changed, and the edit reaches other rows only through attention.
        let m = model("gpt-pico", |c| c.activation = Activation::Relu);
        let d = block_diff(
            &m,
            &seq(&[1, 4, 5, 6, 7]),
            &seq(&[1, 4, 5, 8, 7]),
            &causal(true),
        )
        .unwrap();
        let ins = rows(&d, Probed::FfnInput);
        let outs = rows(&d, Probed::FfnOutput);
        assert_eq!(ins.len(), m.config.decoder_layers());
        for (i, o) in ins.iter().zip(&outs) {
            assert_eq!(i.changed, o.changed);
        }
        let ffn = &d.after.stacks[0].ffn[0];
        assert!(consistent(&ffn.pre) && consistent(&ffn.hidden) && consistent(&ffn.output));
        // ReLU: every non-positive pre-activation is exactly zero in the hidden units.
        for (p, h) in ffn.pre.data.0.iter().zip(&ffn.hidden.data.0) {
            assert_eq!(*h, p.max(0.0));
        }
        assert!(ffn.zero_fraction > 0.0);
        // Per position: the count of its F hidden units that are exactly 0.
        let f = ffn.hidden.shape[2];
        let want: Vec<u32> = ffn
            .pre
            .data
            .0
            .chunks(f)
            .map(|row| row.iter().filter(|&&p| p <= 0.0).count() as u32)
            .collect();
        assert_eq!(ffn.zeros, want);
    }

    #[test]
    fn norm_probe_reports_per_position_stats_for_layernorm_and_per_feature_for_batchnorm() {
        let ln = model("gpt-pico", |c| c.norm = Norm::PreLn);
        let b = Batch::padded(vec![vec![1, 4, 5], vec![1, 6, 7]], 0).unwrap();
        let p = block_probe(&ln, &b, &ForwardOptions::default()).unwrap();
        let n = &p.stacks[0].norms[0];
        assert_eq!((n.mean.shape.clone(), n.over_batch), (vec![2, 3], false));
        // μ of position (1, 2) is the mean of its own C input features.
        let c = ln.config.d_model;
        let row = &n.input.data.0[(3 + 2) * c..(3 + 3) * c];
        let mu = row.iter().map(|&x| x as f64).sum::<f64>() / c as f64;
        assert!((n.mean.data.0[5] as f64 - mu).abs() < 1e-6);
        let bn = model("gpt-pico", |c| c.norm = Norm::BatchNorm);
        let train = ForwardOptions {
            mode: Mode::Train { seed: 1 },
            ..ForwardOptions::default()
        };
        let p = block_probe(&bn, &b, &train).unwrap();
        let n = &p.stacks[0].norms[0];
        assert_eq!((n.mean.shape.clone(), n.over_batch), (vec![c], true));
        // μ of feature 0 is the mean over all B·T = 6 rows.
        let mu = (0..6).map(|r| n.input.data.0[r * c] as f64).sum::<f64>() / 6.0;
        assert!((n.mean.data.0[0] as f64 - mu).abs() < 1e-6);
        let p = block_probe(&bn, &b, &ForwardOptions::default()).unwrap();
        assert!(p.stacks[0].norms[0].running);
    }

    #[test]
    fn batchnorm_couples_the_batch_in_train_mode_only_and_layernorm_never() {
        let ln = model("gpt-pico", |c| c.norm = Norm::PreLn);
        let req = CouplingRequest {
            tokens: vec![1, 4, 5, 6],
            other: vec![1, 7, 7, 7],
            other_changed: vec![1, 2, 3, 4],
            seed: 3,
        };
        let r = norm_coupling(&ln, &req, None).unwrap();
        assert_eq!(r.models.len(), 2);
        let (own, bn) = (&r.models[0], &r.models[1]);
        assert_eq!((own.norm, bn.norm), (Norm::PreLn, Norm::BatchNorm));
        assert!(own.train_identical && own.eval_identical, "{own:?}");
        assert!(!bn.train_identical && bn.train_max_diff > 1e-4, "{bn:?}");
        assert!(
            bn.eval_identical,
            "running statistics: no coupling in eval mode"
        );
        assert!(!bn.trained && own.trained);
        assert_eq!(bn.batch_rows, 8);
        assert_eq!(own.residual_norms.0.len(), ln.config.decoder_layers() + 1);
    }

    fn shipped(file: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../models")
            .join(file);
        crate::checkpoint::load_file(&path).unwrap()
    }

    #[test]
    fn the_trained_batchnorm_sibling_couples_the_batch_in_train_mode_and_reads_the_same_letters() {
        // The grammar model (LayerNorm, its own vocabulary) beside the shipped reverse model
        // trained with BatchNorm: the sibling reads the same characters in its vocabulary.
        let lm = shipped("grammar-sinusoidal.safetensors");
        let bn = shipped("reverse-batch-norm.safetensors");
        let ids = |text: &str| {
            let mut v = vec![lm.tokenizer.spec.bos];
            v.extend(lm.tokenizer.encode(text).ids);
            v
        };
        let req = CouplingRequest {
            tokens: ids("the cat"),
            other: ids("tac eht"),
            other_changed: ids("ubd fiu"),
            seed: 1,
        };
        let r = norm_coupling(&lm, &req, Some((&bn, "the reverse model with BatchNorm"))).unwrap();
        let (own, sib) = (&r.models[0], &r.models[1]);
        assert_eq!((own.norm, sib.norm), (Norm::PreLn, Norm::BatchNorm));
        assert!(own.trained && sib.trained);
        assert!(own.train_identical && own.eval_identical);
        assert!(!sib.train_identical && sib.train_max_diff > 1e-4, "{sib:?}");
        assert!(
            sib.eval_identical,
            "running statistics: no coupling in eval mode"
        );
        // Characters both vocabularies hold keep their spelling (the reverse task knows a
        // to j); the others, the space among them, become <unk>.
        let st = &bn.tokenizer;
        let want: Vec<u32> = std::iter::once(st.spec.bos)
            .chain(
                "the cat"
                    .chars()
                    .map(|ch| st.id(&ch.to_string()).unwrap_or(st.spec.unk)),
            )
            .collect();
        assert_eq!(sib.tokens.as_deref(), Some(&want[..]));
        assert_eq!(want[2], st.id("h").unwrap());
        assert_eq!(sib.vocab.as_deref(), Some(&st.spec.tokens[..]));
        // A sibling with the same kind of norm is refused with a reason.
        let same = shipped("reverse.safetensors");
        assert!(matches!(
            norm_coupling(&lm, &req, Some((&same, "x"))),
            Err(Error::Input(_))
        ));
        // Beside a BatchNorm model, the trained LayerNorm reverse model: no coupling ever.
        let r = norm_coupling(
            &bn,
            &CouplingRequest {
                tokens: vec![1, 5, 6],
                other: vec![1, 7, 8],
                other_changed: vec![1, 9, 10],
                seed: 2,
            },
            Some((&same, "the reverse model")),
        )
        .unwrap();
        assert!(
            !r.models[0].train_identical
                && r.models[1].train_identical
                && r.models[1].eval_identical
        );
    }

    #[test]
    fn dropout_masks_scale_kept_units_by_one_over_one_minus_p_and_eval_is_the_identity() {
        let m = model("gpt-pico", |_| {});
        let req = DropoutRequest {
            input: seq(&[1, 4, 5, 6, 7, 4, 5]),
            seed: 9,
            dropout: Some(0.25),
        };
        let d = dropout_demo(&m, &req).unwrap();
        assert_eq!(d.p, 0.25);
        let keep = 1.0 / 0.75;
        let places: Vec<DropPlace> = d.sites.iter().map(|s| s.place).collect();
        use DropPlace::*;
        // embedding; per layer: SA probs, SA out, FFN hidden, FFN out.
        let mut want = vec![Embedding];
        for _ in 0..m.config.decoder_layers() {
            want.extend([AttentionProbs, SublayerOutput, FfnHidden, SublayerOutput]);
        }
        assert_eq!(places, want);
        for s in &d.sites {
            assert!(
                s.mask.data.0.iter().all(|&x| x == 0.0 || x == keep),
                "{:?}",
                s.place
            );
            assert!(consistent(&s.mask));
        }
        assert!(d.embed_is_masked_eval);
        assert!(d.train_repeat_diff > 0.0);
        assert!(d.eval_repeat_identical);
        assert_eq!(d.zero_p_is_eval, Some(true));
        let bad = DropoutRequest {
            dropout: Some(1.0),
            ..req
        };
        assert!(matches!(dropout_demo(&m, &bad), Err(Error::Input(_))));
    }
}

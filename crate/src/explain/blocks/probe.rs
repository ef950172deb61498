//! Probe: every block's live tensors on one recorded pass (FFN x, W₁x+b₁, act(·), W₂·+b₂;
//! norm μ, σ²; the residual stream; where the dropout masks fell; the logits).

use serde::Serialize;
use ts_rs::TS;

use crate::config::Arch;
use crate::error::{Error, Result};
use crate::model::ffn::linear_forward;
use crate::model::forward::{Activations, AttnSite, Batch, StackRecord, SublayerKind};
use crate::model::norm::{BN_EPS, LN_EPS};
use crate::model::plan::{layer_plan, NormKind, Placement};
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::protocol::Dense;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Norm;
    use crate::model::test_support::model;

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
}

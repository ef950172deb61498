//! A training run's health, as the lab watches it: per layer the residual stream's norm,
//! the gradient's norm, the update-to-weight ratio and the attention entropy; the first
//! operation that gave a NaN or an infinity (named, with its layer); and the warnings the
//! run goes on through (an update too large, attention collapsed early, a gradient
//! exploding).
//!
//! Layers are numbered as the lab's plots number them: encoder layers first, then the
//! decoder's, from 1.

use crate::config::{ModelConfig, Norm};
use crate::model::record::{StackRecord, SublayerRecord};
use crate::model::trace::{AttnTrace, HiddenTrace};
use crate::model::{AttnSite, ForwardOptions, Model, ModelParams, ParamKind};
use crate::protocol::{AlarmKind, FaultOp, HealthAlarm, TrainPoint};
use crate::tasks::TrainBatch;
use crate::tensor::Tensor;

use super::step::{loss_and_grads, to_batch};
use crate::error::Result;

/// The update ratio and the attention entropy are measured every this many steps (they
/// cost a copy of the weights and of the attention probabilities).
pub const HEALTH_EVERY: u64 = 10;
/// An update larger than this fraction of a layer's weights in one step is a warning
/// (a healthy run moves them by about 1e-3 per step).
pub const UPDATE_RATIO_ALARM: f32 = 0.1;
/// A layer whose self-attention rows average less entropy than this (nats) this early
/// ([`early`]) has collapsed onto single keys before it could have learnt to.
pub const ENTROPY_ALARM: f32 = 0.05;
/// A layer's gradient norm (before clipping) above this is exploding.
pub const GRAD_ALARM: f32 = 1e3;

/// The global index (from 0) of a parameter's layer: "encoder.layers.3.linear1.weight"
/// → 3, "decoder.layers.1.…" → `n_enc` + 1; `None` outside the layers.
pub fn layer_of(name: &str, n_enc: usize) -> Option<usize> {
    let mut parts = name.splitn(4, '.');
    let (Some(stack), Some("layers"), Some(i)) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let i: usize = i.parse().ok()?;
    match stack {
        "encoder" => Some(i),
        "decoder" => Some(n_enc + i),
        _ => None,
    }
}

fn layers_of(c: &ModelConfig) -> (usize, usize) {
    (c.encoder_layers(), c.encoder_layers() + c.decoder_layers())
}

/// Per layer: the sum over its trained tensors of `f(name, tensor)`.
fn per_layer(
    cfg: &ModelConfig,
    params: &ModelParams<Tensor>,
    f: &mut dyn FnMut(&str, &Tensor) -> f64,
) -> Vec<f64> {
    let (n_enc, n) = layers_of(cfg);
    let mut sums = vec![0.0f64; n];
    params.visit(&mut |name, t, kind| {
        if kind != ParamKind::Trained {
            return;
        }
        if let Some(l) = layer_of(name, n_enc).filter(|&l| l < n) {
            sums[l] += f(name, t);
        }
    });
    sums
}

fn sq(x: &[f32]) -> f64 {
    x.iter().map(|&v| (v as f64) * (v as f64)).sum()
}

/// Per layer: the L2 norm of the gradient of the layer's parameters.
pub fn layer_grad_norms(cfg: &ModelConfig, grads: &ModelParams<Tensor>) -> Vec<f32> {
    per_layer(cfg, grads, &mut |_, t| sq(&t.data))
        .into_iter()
        .map(|s| s.sqrt() as f32)
        .collect()
}

/// The mean over rows of ‖row‖₂ of a (rows, c) matrix — the residual norm of one layer's
/// output; the GPU step computes it from its readback with this same function.
pub fn mean_row_norm(data: &[f32], c: usize) -> f32 {
    let c = c.max(1);
    let rows = data.len() / c;
    let sum: f64 = data.chunks_exact(c).map(|r| sq(r).sqrt()).sum();
    (sum / rows.max(1) as f64) as f32
}

/// Per layer (stacks in the order they ran): mean over positions of ‖x‖ after the layer.
pub fn residual_norms(hidden: &[HiddenTrace]) -> Vec<f32> {
    let mut out = vec![];
    for h in hidden {
        for state in h.states.iter().skip(1) {
            out.push(mean_row_norm(
                &state.data,
                *state.shape.last().unwrap_or(&1),
            ));
        }
    }
    out
}

/// Per layer: ‖after − before‖ / ‖before‖ over the layer's parameters.
pub fn update_ratios(before: &Model, after: &Model) -> Vec<f32> {
    let mut old: Vec<(String, Vec<f32>)> = vec![];
    before.visit_params(&mut |name, t, kind| {
        if kind == ParamKind::Trained {
            old.push((name.to_string(), t.data.clone()));
        }
    });
    let mut i = 0;
    let (n_enc, n) = layers_of(&after.config);
    let mut delta = vec![0.0f64; n];
    let mut norm = vec![0.0f64; n];
    after.visit_params(&mut |name, t, kind| {
        if kind != ParamKind::Trained {
            return;
        }
        if let (Some((on, ov)), Some(l)) = (old.get(i), layer_of(name, n_enc)) {
            if on == name && l < n && ov.len() == t.data.len() {
                delta[l] += t
                    .data
                    .iter()
                    .zip(ov)
                    .map(|(&a, &b)| ((a - b) as f64).powi(2))
                    .sum::<f64>();
                norm[l] += sq(ov);
            }
        }
        i += 1;
    });
    delta
        .iter()
        .zip(&norm)
        .map(|(d, w)| (d.sqrt() / w.sqrt().max(1e-12)) as f32)
        .collect()
}

/// A GPU step's update ratios and attention entropy, measured as a CPU step measures
/// them: from the weights before the step and after it (both copied back from the GPU),
/// and from the step's batch run forward on the weights before it, with the step's own
/// dropout (the attention the GPU computed, to the rounding the GPU tests hold).
pub fn copied_step_health(
    before: &Model,
    after: &Model,
    tb: &TrainBatch,
    fwd: &ForwardOptions,
) -> Result<(Vec<f32>, Vec<f32>)> {
    let opts = ForwardOptions {
        trace_attention: true,
        trace_hidden: false,
        ..fwd.clone()
    };
    let (trace, _) = before.forward_recorded(&to_batch(tb), &opts)?;
    Ok((
        update_ratios(before, after),
        attention_entropy(&before.config, &trace.attention),
    ))
}

/// Per layer: the mean entropy (nats) of its self-attention rows, over batch, heads and
/// query positions (rows with every key masked left out).
pub fn attention_entropy(cfg: &ModelConfig, attention: &[AttnTrace]) -> Vec<f32> {
    let (n_enc, n) = layers_of(cfg);
    let mut sum = vec![0.0f64; n];
    let mut rows = vec![0usize; n];
    for a in attention {
        let l = match a.site {
            AttnSite::EncoderSelf => a.layer,
            AttnSite::DecoderSelf => n_enc + a.layer,
            AttnSite::Cross => continue,
        };
        if l >= n {
            continue;
        }
        let s = *a.probs.shape.last().unwrap_or(&1);
        for row in a.probs.data.chunks_exact(s.max(1)) {
            let mass: f32 = row.iter().sum();
            if mass <= 0.0 {
                continue;
            }
            let h: f64 = row
                .iter()
                .filter(|&&p| p > 0.0)
                .map(|&p| -(p as f64) * (p as f64).ln())
                .sum();
            sum[l] += h;
            rows[l] += 1;
        }
    }
    sum.iter()
        .zip(&rows)
        .map(|(s, &r)| (s / r.max(1) as f64) as f32)
        .collect()
}

/// Where a NaN or an infinity first appeared in a step.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// From 0, in the plots' order; `None` outside the layers.
    pub layer: Option<usize>,
    pub op: FaultOp,
    /// A parameter that was already not finite, or whose gradient is not.
    pub param: Option<String>,
    pub value: f32,
}

/// NaN, +∞ or −∞ (`masked_ok`: −∞ is a masked score, not a fault).
fn first_bad(x: &[f32], masked_ok: bool) -> Option<f32> {
    x.iter()
        .copied()
        .find(|v| v.is_nan() || v.is_infinite() && !(masked_ok && *v < 0.0))
}

/// The first operation of one sublayer whose result is not finite.
fn sublayer_fault(rec: &SublayerRecord, post_norm: bool) -> Option<(FaultOp, f32)> {
    let mut steps: Vec<(FaultOp, &[f32], bool)> = vec![(FaultOp::Norm, &rec.sub_input, false)];
    if let Some(a) = &rec.attn {
        steps.push((FaultOp::QkvProjection, &a.q, false));
        steps.push((FaultOp::QkvProjection, &a.k, false));
        steps.push((FaultOp::QkvProjection, &a.v, false));
        steps.push((FaultOp::AttentionScores, &a.scores, true));
        steps.push((FaultOp::Softmax, &a.probs, false));
        steps.push((FaultOp::AttentionValues, &a.z, false));
    }
    if let Some(f) = &rec.ffn {
        steps.push((FaultOp::FfnLinear1, &f.pre, false));
        steps.push((FaultOp::FfnActivation, &f.hidden, false));
    }
    match (&rec.norm, post_norm) {
        (Some(n), true) => {
            steps.push((FaultOp::SublayerOutput, &n.input, false));
            steps.push((FaultOp::Norm, &rec.output, false));
        }
        _ => steps.push((FaultOp::SublayerOutput, &rec.output, false)),
    }
    steps
        .into_iter()
        .find_map(|(op, x, masked)| first_bad(x, masked).map(|v| (op, v)))
}

/// The first operation of a stack whose result is not finite, and its layer (global).
fn stack_fault(
    st: &StackRecord,
    first_layer: usize,
    post_norm: bool,
) -> Option<(Option<usize>, FaultOp, f32)> {
    if let Some(v) = first_bad(&st.embedded, false) {
        return Some((None, FaultOp::Embedding, v));
    }
    for (l, subs) in st.layers.iter().enumerate() {
        for rec in subs {
            if let Some((op, v)) = sublayer_fault(rec, post_norm) {
                return Some((Some(first_layer + l), op, v));
            }
        }
    }
    first_bad(&st.output, false).map(|v| (None, FaultOp::Norm, v))
}

/// Replay a step that gave a NaN or an infinity (its weights before the update, its batch
/// and its forward options) and name the first operation whose result was not finite:
/// a parameter already not finite, then the forward pass in the order it ran, the head,
/// the loss, and last the backward pass.
pub fn diagnose(model: &Model, tb: &TrainBatch, opts: &ForwardOptions, smoothing: f32) -> Fault {
    let (n_enc, _) = layers_of(&model.config);
    let mut bad_param: Option<(String, f32)> = None;
    model.visit_params(&mut |name, t, _| {
        if bad_param.is_none() {
            if let Some(v) = first_bad(&t.data, false) {
                bad_param = Some((name.to_string(), v));
            }
        }
    });
    let param = bad_param.as_ref().map(|(n, _)| n.clone());
    let post_norm = matches!(model.config.norm, Norm::PostLn | Norm::BatchNorm);
    let fault = |layer, op, value| Fault {
        layer,
        op,
        param: param.clone(),
        value,
    };
    let fwd = ForwardOptions {
        trace_hidden: false,
        trace_attention: false,
        ..opts.clone()
    };
    if let Ok((trace, acts)) = model.forward_recorded(&to_batch(tb), &fwd) {
        let stacks = [(acts.encoder.as_ref(), 0), (acts.decoder.as_ref(), n_enc)];
        for (st, first) in stacks {
            if let Some((layer, op, v)) = st.and_then(|s| stack_fault(s, first, post_norm)) {
                return fault(layer, op, v);
            }
        }
        let logits = trace.class_logits.as_ref().unwrap_or(&trace.logits);
        if let Some(v) = first_bad(&logits.data, false) {
            return fault(None, FaultOp::Head, v);
        }
    }
    if let Some((name, v)) = &bad_param {
        return fault(layer_of(name, n_enc), FaultOp::Weights, *v);
    }
    let Ok(lg) = loss_and_grads(model, tb, &fwd, smoothing) else {
        return fault(None, FaultOp::Loss, f32::NAN);
    };
    if !lg.loss.is_finite() {
        return fault(None, FaultOp::Loss, lg.loss);
    }
    // The backward pass runs from the head back: the last tensor in walk order first.
    let mut bad_grad: Option<(String, f32)> = None;
    lg.grads.visit(&mut |name, t, kind| {
        if kind == ParamKind::Trained {
            if let Some(v) = first_bad(&t.data, false) {
                bad_grad = Some((name.to_string(), v));
            }
        }
    });
    let (name, v) = bad_grad.unwrap_or_default();
    Fault {
        layer: layer_of(&name, n_enc),
        op: FaultOp::Gradient,
        param: (!name.is_empty()).then_some(name),
        value: v,
    }
}

/// The alarm of a step that gave a NaN or an infinity: the run stops there.
pub fn stop_alarm(step: u64, lr: f32, f: Fault) -> HealthAlarm {
    HealthAlarm {
        kind: AlarmKind::NonFinite,
        step,
        layer: f.layer.map(|l| l as u32 + 1),
        op: Some(f.op),
        param: f.param,
        value: f.value,
        limit: 0.0,
        lr,
        stopped: true,
    }
}

/// The warnings a step's point raises (`early`: the run is still in its first steps, when
/// attention that has collapsed cannot have learnt to). `seen` holds the (kind, layer) of
/// warnings already given: each is given once per run.
pub fn warnings(p: &TrainPoint, early: bool, seen: &mut Vec<(AlarmKind, u32)>) -> Vec<HealthAlarm> {
    let mut out = vec![];
    let mut warn = |kind, l: usize, value: f32, limit: f32| {
        let layer = l as u32 + 1;
        if seen.contains(&(kind, layer)) {
            return;
        }
        seen.push((kind, layer));
        out.push(HealthAlarm {
            kind,
            step: p.step,
            layer: Some(layer),
            op: None,
            param: None,
            value,
            limit,
            lr: p.lr,
            stopped: false,
        });
    };
    for (l, &g) in p.grad_norms.iter().enumerate() {
        if g > GRAD_ALARM {
            warn(AlarmKind::GradientExploding, l, g, GRAD_ALARM);
        }
    }
    for (l, &r) in p.update_ratios.iter().enumerate() {
        if r > UPDATE_RATIO_ALARM {
            warn(AlarmKind::UpdateTooLarge, l, r, UPDATE_RATIO_ALARM);
        }
    }
    if early {
        for (l, &h) in p.attn_entropy.iter().enumerate() {
            if h < ENTROPY_ALARM {
                warn(AlarmKind::AttentionCollapsed, l, h, ENTROPY_ALARM);
            }
        }
    }
    out
}

/// Test-only: make one weight of layer `layer` (from 0, the plots' order) NaN — its FFN's
/// first linear layer, the first operation it feeds. False when there is no such layer.
pub fn poison_layer(model: &mut Model, layer: usize) -> bool {
    let (n_enc, _) = layers_of(&model.config);
    let mut done = false;
    model.visit_params_mut(&mut |name, t, kind| {
        if !done
            && kind == ParamKind::Trained
            && layer_of(name, n_enc) == Some(layer)
            && name.ends_with("linear1.weight")
        {
            if let Some(x) = t.data.first_mut() {
                *x = f32::NAN;
                done = true;
            }
        }
    });
    done
}

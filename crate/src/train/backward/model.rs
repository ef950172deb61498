//! The whole model's backward pass: the head, then each stack's layers in reverse (every
//! sublayer with its norm placement, residual and dropout), then the embeddings.
//! Encoder-decoder: the decoder's cross-attention sends its key/value gradient to the
//! encoder output, and the encoder runs last.

use crate::config::PosEncoding;
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::forward::{
    attn_spec, Activations, Batch, NormRecord, StackRecord, SublayerKind, SublayerRecord,
};
use crate::model::options::attention_mask;
use crate::model::plan::{layer_plan, NormKind, Placement, StackInput, StackPlan, SublayerPlan};
use crate::model::position::alibi_slopes;
use crate::model::{
    AttnSite, ForwardOptions, HeadParams, LayerParams, Mode, Model, ModelParams, NormParams,
    StackParams,
};
use crate::tensor::Tensor;

use super::attention::mha_backward;
use super::embedding::embedding_backward;
use super::ffn::{ffn_backward, FfnGrads};
use super::head::{classifier_backward, lm_head_backward};
use super::norm::{batchnorm_eval_backward, batchnorm_train_backward, layernorm_backward};
use super::position::learned_positions_backward;

/// The gradient arriving at the model's output.
#[derive(Clone, Copy, Debug)]
pub enum HeadGrad<'a> {
    /// (B, T, V) d(objective)/d(logits).
    Lm(&'a [f32]),
    /// (B, num_classes) d(objective)/d(class_logits).
    Classifier(&'a [f32]),
}

/// Gradient buffers for every parameter of `model`: the model's own tree
/// ([`Model::map_params`]), so they have its names, shapes and walk by construction; all
/// zero. BatchNorm running statistics get a buffer too, which never receives a gradient.
pub fn zero_grads(model: &Model) -> ModelParams<Tensor> {
    model.map_params(&mut |_, t, _| Tensor::zeros(&t.shape))
}

/// Everything a stack's backward pass reads besides its own record.
struct Ctx<'a> {
    model: &'a Model,
    opts: &'a ForwardOptions,
    train: bool,
    slopes: Vec<f32>,
}

/// Backward of `Model::forward_recorded`: adds d(objective)/d(parameter) for every trained
/// parameter into `grads` (made by [`zero_grads`]), given the gradient at the head.
/// `batch`, `opts` and `acts` must be those of the recorded pass.
pub fn model_backward(
    grads: &mut ModelParams<Tensor>,
    dhead: HeadGrad,
    model: &Model,
    batch: &Batch,
    opts: &ForwardOptions,
    acts: &Activations,
) -> Result<()> {
    let cfg = &model.config;
    let (b, t, c) = (batch.batch, batch.len, cfg.d_model);
    let ModelParams {
        embed: g_embed,
        src_embed: g_src,
        pos_embed: g_pos,
        encoder: g_encoder,
        decoder: g_decoder,
        head: g_head,
    } = grads;

    // Step 5, the head.
    let mut dx = vec![0.0f32; b * t * c]; // (B, T, C) gradient of the head's input
    match (&model.head, g_head, dhead) {
        (
            HeadParams::Lm { weight, bias: _ },
            HeadParams::Lm {
                weight: gw,
                bias: gb,
            },
            HeadGrad::Lm(dlogits),
        ) => {
            let v = cfg.vocab_size;
            check_len(dlogits.len(), b * t * v, "logit gradient (B, T, V)")?;
            // forward: logits = x · Wᵀ (+ b), W = lm_head.weight or, tied, embed.weight
            let w = weight.as_ref().unwrap_or(&model.embed); // (V, C)
            let dw = match gw {
                Some(t) => &mut t.data,
                None => &mut g_embed.data,
            };
            lm_head_backward(
                &mut dx,
                dw,
                gb.as_mut().map(|t| t.data.as_mut_slice()),
                dlogits,
                &acts.head_input,
                &w.data,
                b * t,
                c,
                v,
            );
        }
        (
            HeadParams::Classifier { weight, .. },
            HeadParams::Classifier {
                weight: gw,
                bias: gb,
            },
            HeadGrad::Classifier(dclass),
        ) => {
            let n = cfg.num_classes;
            check_len(dclass.len(), b * n, "class-logit gradient (B, num_classes)")?;
            classifier_backward(
                &mut dx,
                &mut gw.data,
                &mut gb.data,
                dclass,
                &acts.head_input,
                &weight.data,
                b,
                t,
                c,
                n,
            );
        }
        _ => {
            return Err(Error::Input(
                "the output gradient does not match the model's head (LM vs classifier)".into(),
            ))
        }
    }

    let ctx = Ctx {
        model,
        opts,
        train: matches!(opts.mode, Mode::Train { .. }),
        slopes: alibi_slopes(cfg.n_heads),
    };
    let mut emb = EmbedGrads {
        embed: g_embed,
        src: g_src.as_mut(),
        pos: g_pos.as_mut(),
    };
    let missing = |what: &str| Error::Input(format!("the recorded pass has no {what} stack"));
    // The stacks in reverse: the last one receives the head's gradient; a decoder's
    // cross-attention sends its key/value gradient to the encoder output, which is the
    // encoder's output gradient.
    let plan = layer_plan(cfg);
    let mut dout = Some(dx);
    for sp in plan.stacks.iter().rev() {
        let (rec, params, grads) = match sp.site {
            AttnSite::EncoderSelf => (&acts.encoder, &model.encoder, g_encoder.as_mut()),
            _ => (&acts.decoder, &model.decoder, g_decoder.as_mut()),
        };
        let (rec, params, grads) = match (rec, params, grads) {
            (Some(r), Some(p), Some(g)) => (r, p, g),
            _ => return Err(missing(&sp.name)),
        };
        let (tokens, len) = match sp.input {
            StackInput::Tokens => (batch.tokens.as_slice(), t),
            StackInput::Source => (
                batch
                    .src_tokens
                    .as_deref()
                    .ok_or_else(|| missing("source"))?,
                batch.src_len,
            ),
        };
        let d = dout
            .take()
            .ok_or_else(|| missing("encoder-output gradient for the"))?;
        let s = batch.src_len;
        let mut dmem = vec![0.0f32; if sp.reads_memory { b * s * c } else { 0 }]; // (B, S, C)
        let memory = match (sp.reads_memory, &acts.encoder) {
            (true, Some(erec)) => Some(Memory {
                x: &erec.output,
                dx: &mut dmem,
                s,
            }),
            (true, None) => return Err(missing("encoder")),
            _ => None,
        };
        stack_backward(
            &ctx, sp, params, grads, &mut emb, rec, d, tokens, b, len, memory,
        );
        if sp.reads_memory {
            dout = Some(dmem);
        }
    }
    Ok(())
}

fn check_len(got: usize, want: usize, what: &str) -> Result<()> {
    if got != want {
        return Err(Error::Input(format!(
            "the {what} has {got} values, expected {want}"
        )));
    }
    Ok(())
}

/// Gradient buffers of the embedding tables and the learned position table.
struct EmbedGrads<'a> {
    /// (V, C)
    embed: &'a mut Tensor,
    /// (V, C) an encoder-decoder's own source table, when it has one.
    src: Option<&'a mut Tensor>,
    /// (max_len, C)
    pos: Option<&'a mut Tensor>,
}

/// The encoder output seen by cross-attention, and its gradient.
struct Memory<'a> {
    /// (B, S, C)
    x: &'a [f32],
    /// (B, S, C)
    dx: &'a mut [f32],
    s: usize,
}

/// Backward of `Run::stack`: `dout (B, T, C)` is the gradient of the stack's output.
#[allow(clippy::too_many_arguments)]
fn stack_backward(
    ctx: &Ctx,
    sp: &StackPlan,
    params: &StackParams,
    grads: &mut StackParams,
    emb: &mut EmbedGrads,
    rec: &StackRecord,
    dout: Vec<f32>,
    tokens: &[u32],
    b: usize,
    t: usize,
    mut memory: Option<Memory>,
) {
    let cfg = &ctx.model.config;
    let c = cfg.d_model;
    let mut dx = dout; // (B, T, C)
                       // forward: x = final_norm(x)
    if let (Some(p), Some(g), Some(nrec)) =
        (&params.final_norm, &mut grads.final_norm, &rec.final_norm)
    {
        let mut dprev = vec![0.0f32; b * t * c]; // (B, T, C)
        norm_backward(ctx, &mut dprev, g, &dx, nrec, p, NormKind::LayerNorm);
        dx = dprev;
    }
    // forward: for each layer, for each sublayer: x = sublayer(x)
    for (li, (layer, glayer)) in params
        .layers
        .iter()
        .zip(grads.layers.iter_mut())
        .enumerate()
        .rev()
    {
        let subs = &rec.layers[li];
        let LayerParams {
            self_attn: g_self,
            cross_attn: g_cross,
            linear1_weight: gw1,
            linear1_bias: gb1,
            linear2_weight: gw2,
            linear2_bias: gb2,
            norms: g_norms,
        } = glayer;
        for (k, sub) in subs.iter().enumerate().rev() {
            let step = &sp.sublayers[k];
            let norm = step
                .norm
                .as_ref()
                .and_then(|n| layer.norms.get(n.slot).zip(g_norms.get_mut(n.slot)));
            let ablate = ctx
                .opts
                .ablated_heads(step.site.unwrap_or(rec.site), li, cfg.n_heads); // (H)
            dx = sublayer_backward(ctx, dx, step, sub, norm, &mut |dy, dsub| match sub.kind {
                SublayerKind::SelfAttention => {
                    let saved = sub
                        .attn
                        .as_ref()
                        .expect("attention sublayers keep their record");
                    let spec = attn_spec(
                        cfg,
                        &layer.self_attn,
                        rec.site,
                        &rec.mask,
                        ctx.opts.scale,
                        0,
                        &ctx.slopes,
                        &ablate,
                    );
                    let mut dkv = vec![0.0f32; b * t * c]; // (B, T, C)
                    mha_backward(
                        dsub,
                        &mut dkv,
                        g_self,
                        dy,
                        &sub.sub_input,
                        &sub.sub_input,
                        &layer.self_attn,
                        saved,
                        sub.attn_dropout.as_deref(),
                        &spec,
                        cfg.share_qk,
                        b,
                        t,
                        t,
                    );
                    // forward: xq and xkv are the same rows
                    for (a, g) in dsub.iter_mut().zip(&dkv) {
                        *a += g;
                    }
                }
                SublayerKind::CrossAttention => {
                    let saved = sub
                        .attn
                        .as_ref()
                        .expect("attention sublayers keep their record");
                    let (p, g) = (
                        layer.cross_attn.as_ref().expect("cross-attention sublayer"),
                        g_cross.as_mut().expect("cross-attention gradients"),
                    );
                    let mem = memory
                        .as_mut()
                        .expect("cross-attention reads the encoder memory");
                    let cross_mask = attention_mask(cfg, AttnSite::Cross, ctx.opts);
                    let spec = attn_spec(
                        cfg,
                        p,
                        AttnSite::Cross,
                        &cross_mask,
                        ctx.opts.scale,
                        0,
                        &ctx.slopes,
                        &ablate,
                    );
                    mha_backward(
                        dsub,
                        mem.dx,
                        g,
                        dy,
                        &sub.sub_input,
                        mem.x,
                        p,
                        saved,
                        sub.attn_dropout.as_deref(),
                        &spec,
                        cfg.share_qk,
                        b,
                        t,
                        mem.s,
                    );
                }
                SublayerKind::Ffn => {
                    let saved = sub.ffn.as_ref().expect("FFN sublayers keep their record");
                    ffn_backward(
                        dsub,
                        FfnGrads {
                            w1: &mut gw1.data,
                            b1: &mut gb1.data,
                            w2: &mut gw2.data,
                            b2: &mut gb2.data,
                        },
                        dy,
                        &sub.sub_input,
                        saved,
                        &layer.linear1_weight.data,
                        &layer.linear2_weight.data,
                        cfg.activation,
                        sub.ffn_dropout.as_deref(),
                        b * t,
                        c,
                        cfg.d_ff,
                    );
                }
            });
        }
    }
    // forward: x = dropout(E[tok]·scale + PE)
    if let Some(mask) = &rec.embed_dropout {
        for (d, m) in dx.iter_mut().zip(mask) {
            *d *= m;
        }
    }
    let scale = embedding_scale(cfg.scale_embeddings, c);
    // The table the forward pass read (`Model::embedding`).
    let table = match (sp.input, emb.src.as_deref_mut()) {
        (StackInput::Source, Some(src)) => src,
        _ => &mut *emb.embed,
    };
    embedding_backward(&mut table.data, &dx, tokens, scale, b * t, c);
    if cfg.pos_encoding == PosEncoding::Learned {
        if let Some(gp) = emb.pos.as_deref_mut() {
            learned_positions_backward(&mut gp.data, &dx, 0, b, t, c);
        }
    }
}

/// Backward of `Run::sublayer`, with the norm placement and residual of the plan's `step`.
/// Given d(output), returns d(input). `f_backward(dy, dsub)` undoes the sublayer function:
/// from the gradient of its output (before dropout) it adds the gradient of its input into
/// `dsub`.
fn sublayer_backward(
    ctx: &Ctx,
    dout: Vec<f32>,
    step: &SublayerPlan,
    rec: &SublayerRecord,
    norm: Option<(&NormParams, &mut NormParams)>,
    f_backward: &mut dyn FnMut(&[f32], &mut [f32]),
) -> Vec<f32> {
    let n = dout.len();
    let (norm_p, mut norm_g) = match norm {
        Some((p, g)) => (Some(p), Some(g)),
        None => (None, None),
    };
    let nrec = rec.norm.as_ref();
    let (placement, kind) = match &step.norm {
        Some(s) => (Some(s.placement), s.kind),
        None => (None, NormKind::LayerNorm),
    };
    // norm after (post-LN, BatchNorm): x_out = N(y),  y = x + drop(f(x))
    let dy_sum = match (placement, norm_p, norm_g.as_deref_mut(), nrec) {
        (Some(Placement::After), Some(p), Some(g), Some(nr)) => {
            let mut d = vec![0.0f32; n]; // (B, T, C)
            norm_backward(ctx, &mut d, g, &dout, nr, p, kind);
            d
        }
        _ => dout,
    };
    // forward: y = x + drop(f(·))  →  dx += dy (the residual path)
    // (B, T, C)
    let mut dinp = if step.residual {
        dy_sum.clone()
    } else {
        vec![0.0f32; n]
    };
    // forward: drop(f)  →  df = dy · mask
    let mut df = dy_sum; // (B, T, C)
    if let Some(mask) = &rec.out_dropout {
        for (d, m) in df.iter_mut().zip(mask) {
            *d *= m;
        }
    }
    let mut dsub = vec![0.0f32; n]; // (B, T, C) gradient of the function's input
    f_backward(&df, &mut dsub);
    match (placement, norm_p, norm_g, nrec) {
        // norm before (pre-LN): the function read N(x)
        (Some(Placement::Before), Some(p), Some(g), Some(nr)) => {
            norm_backward(ctx, &mut dinp, g, &dsub, nr, p, kind)
        }
        _ => {
            for (a, g) in dinp.iter_mut().zip(&dsub) {
                *a += g;
            }
        }
    }
    dinp
}

/// Backward of `Run::norm`: LayerNorm (pre-LN, final norm, post-LN), or BatchNorm in the
/// mode the forward pass ran in.
fn norm_backward(
    ctx: &Ctx,
    dinp: &mut [f32],
    g: &mut NormParams,
    dout: &[f32],
    rec: &NormRecord,
    p: &NormParams,
    kind: NormKind,
) {
    let c = ctx.model.config.d_model;
    let rows = rec.input.len() / c;
    let (w, gw, gb) = (&p.weight.data, &mut g.weight.data, &mut g.bias.data);
    if kind == NormKind::LayerNorm {
        layernorm_backward(
            dinp, gw, gb, dout, &rec.input, w, &rec.mean, &rec.rstd, rows, c,
        );
    } else if ctx.train {
        batchnorm_train_backward(
            dinp, gw, gb, dout, &rec.input, w, &rec.mean, &rec.rstd, rows, c,
        );
    } else {
        let (rm, rv) = (
            &p.running_mean
                .as_ref()
                .expect("BatchNorm keeps running statistics")
                .data,
            &p.running_var
                .as_ref()
                .expect("BatchNorm keeps running statistics")
                .data,
        );
        batchnorm_eval_backward(dinp, gw, gb, dout, &rec.input, w, rm, rv, rows, c);
    }
}

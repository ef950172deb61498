//! One sublayer of the forward walk: its norm placement and residual (docs/model.md step 3),
//! and the two sublayer functions, multi-head attention and the FFN.

use crate::config::{ModelConfig, PosEncoding};
use crate::error::Result;
use crate::model::attention::{mha_forward, AttnRecord, AttnSpec, Relative};
use crate::model::ffn::{ffn_forward, FfnRecord};
use crate::model::mask::MaskSpec;
use crate::model::norm::{
    batchnorm_eval_forward, batchnorm_running_update, batchnorm_train_forward, layernorm_forward,
};
use crate::model::plan::{NormKind, Placement, SublayerPlan};
use crate::model::position::alibi_slopes;
use crate::model::{AttentionParams, LayerParams, NormParams};
use crate::tensor::Tensor;

use super::{Run, SublayerFn};
use crate::model::forward::{
    AttnSite, AttnTrace, FfnTrace, NormRecord, RunningStatUpdate, SublayerRecord,
};

impl<'m> Run<'m> {
    /// A norm over (R, C) rows: LayerNorm, or BatchNorm (eval: running statistics;
    /// train: batch statistics, with the running-statistic update recorded in the trace).
    /// Backward: `train::backward::model::norm_backward`.
    pub(crate) fn norm(
        &mut self,
        out: &mut [f32],
        inp: &[f32],
        p: &NormParams,
        name: &dyn std::fmt::Display,
        kind: NormKind,
    ) -> NormRecord {
        let c = self.cfg().d_model;
        let rows = inp.len() / c;
        let (w, bias) = (&p.weight.data, &p.bias.data);
        let mut rec = NormRecord::default();
        if kind == NormKind::LayerNorm {
            rec.mean = self.pool.take(rows); // (R)
            rec.rstd = self.pool.take(rows); // (R)
            layernorm_forward(out, &mut rec.mean, &mut rec.rstd, inp, w, bias, rows, c);
        } else {
            let (rm, rv) = match (&p.running_mean, &p.running_var) {
                (Some(m), Some(v)) => (&m.data, &v.data),
                _ => unreachable!("BatchNorm parameters always hold running statistics"),
            };
            if self.train {
                rec.mean = vec![0.0; c]; // (C)
                rec.rstd = vec![0.0; c]; // (C)
                let mut var = vec![0.0f32; c]; // (C)
                batchnorm_train_forward(
                    out,
                    &mut rec.mean,
                    &mut var,
                    &mut rec.rstd,
                    inp,
                    w,
                    bias,
                    rows,
                    c,
                );
                let (mut new_mean, mut new_var) = (rm.clone(), rv.clone()); // (C), (C)
                batchnorm_running_update(&mut new_mean, &mut new_var, &rec.mean, &var, rows);
                for (suffix, value) in [("running_mean", new_mean), ("running_var", new_var)] {
                    self.trace.running_stats.push(RunningStatUpdate {
                        name: format!("{name}.{suffix}"),
                        value: Tensor {
                            shape: vec![c],
                            data: value,
                        },
                    });
                }
            } else {
                batchnorm_eval_forward(out, inp, w, bias, rm, rv, rows, c);
            }
        }
        if self.keep {
            rec.input = inp.to_vec();
        }
        rec
    }

    /// One sublayer with its norm placement and residual as the plan `sub` gives them
    /// (docs/model.md step 3): norm after (post-LN, BatchNorm) `x = N(x + drop(f(x)))`,
    /// norm before (pre-LN) `x = x + drop(f(N(x)))`, no norm `x = x + drop(f(x))`; without
    /// the residual the `x +` goes away. `norm` is the sublayer's norm parameters and name.
    /// Backward: `train::backward::model::sublayer_backward`.
    pub(crate) fn sublayer(
        &mut self,
        x: &mut Vec<f32>,
        sub: &SublayerPlan,
        norm: Option<(&NormParams, &dyn std::fmt::Display)>,
        f: &mut SublayerFn<'_, 'm>,
    ) -> Result<SublayerRecord> {
        let norm = norm.zip(sub.norm.as_ref());
        let mut rec = SublayerRecord {
            kind: sub.kind,
            input: if self.keep { x.clone() } else { vec![] },
            norm: None,
            sub_input: vec![],
            attn: None,
            attn_dropout: None,
            kv_input: None,
            ffn: None,
            ffn_dropout: None,
            out_dropout: None,
            output: vec![],
        };
        let mut y = match &norm {
            Some(((p, name), step)) if step.placement == Placement::Before => {
                let mut nx = self.pool.take(x.len()); // (B, T, C)
                rec.norm = Some(self.norm(&mut nx, x, p, name, step.kind));
                let y = f(self, &nx, &mut rec)?; // (B, T, C)
                if self.keep {
                    rec.sub_input = nx;
                } else {
                    self.pool.give(nx);
                }
                y
            }
            _ => {
                let y = f(self, x, &mut rec)?; // (B, T, C)
                if self.keep {
                    rec.sub_input = x.clone();
                }
                y
            }
        };
        rec.out_dropout = self.drop_in_place(&mut y);
        if sub.residual {
            for (yv, xv) in y.iter_mut().zip(x.iter()) {
                *yv += xv;
            }
        }
        match &norm {
            Some(((p, name), step)) if step.placement == Placement::After => {
                rec.norm = Some(self.norm(x, &y, p, name, step.kind));
                self.pool.give(y);
            }
            _ => {
                let before = std::mem::replace(x, y);
                self.pool.give(before);
            }
        }
        if self.keep {
            rec.output = x.clone();
        } else if let Some(n) = rec.norm.take() {
            self.pool.give(n.mean);
            self.pool.give(n.rstd);
        }
        Ok(rec)
    }

    /// An attention sublayer's function: (B, T, C) from queries `xq` and keys/values `xkv`.
    /// Backward: `train::backward::attention::mha_backward`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention(
        &mut self,
        xq: &[f32],
        xkv: &[f32],
        params: &AttentionParams,
        site: AttnSite,
        layer: usize,
        key_pad: Option<&[bool]>,
        mask: &MaskSpec,
        b: usize,
        t: usize,
        s: usize,
        rec: &mut SublayerRecord,
    ) -> Result<Vec<f32>> {
        let cfg = self.cfg();
        let (h, c) = (cfg.n_heads, cfg.d_model);
        let slopes = alibi_slopes(h);
        // (H): which heads of this sublayer are ablated.
        let ablate = self.opts.ablated_heads(site, layer, h); // (H)
        let spec = attn_spec(
            cfg,
            params,
            site,
            mask,
            self.opts.scale,
            0,
            &slopes,
            &ablate,
        );
        let drop = self.dropout(b * h * t * s); // (B, H, T, S)
        let mut saved = AttnRecord::default();
        let mut out = vec![0.0f32; b * t * c]; // (B, T, C)
        mha_forward(
            &mut out,
            &mut saved,
            xq,
            xkv,
            params,
            key_pad,
            drop.as_deref(),
            &spec,
            b,
            t,
            s,
        );
        if self.opts.trace_attention {
            let shape = vec![b, h, t, s];
            self.trace.attention.push(AttnTrace {
                site,
                layer,
                scores: Tensor {
                    shape: shape.clone(),
                    data: saved.scores.clone(),
                },
                probs: Tensor {
                    shape,
                    data: saved.probs.clone(),
                },
            });
        }
        if self.keep {
            rec.attn = Some(saved);
            rec.attn_dropout = drop;
        }
        Ok(out)
    }

    /// The FFN sublayer's function over (B·T, C) rows of a sequence of length T, in layer
    /// `layer` of the stack `site`; with `trace_ffn` its hidden units join the trace.
    /// Backward: `train::backward::ffn::ffn_backward`.
    pub(crate) fn ffn(
        &mut self,
        inp: &[f32],
        layer: &LayerParams,
        (site, li, t): (AttnSite, usize, usize),
        rec: &mut SublayerRecord,
    ) -> Result<Vec<f32>> {
        let cfg = self.cfg();
        let (c, f, act) = (cfg.d_model, cfg.d_ff, cfg.activation);
        let n = inp.len() / c;
        let drop = self.dropout(n * f); // (N, F)
        let mut saved = FfnRecord {
            pre: self.pool.take(0),
            hidden: self.pool.take(0),
        };
        let mut out = self.pool.take(n * c); // (N, C)
        ffn_forward(
            &mut out,
            &mut saved,
            inp,
            &layer.linear1_weight.data,
            &layer.linear1_bias.data,
            &layer.linear2_weight.data,
            &layer.linear2_bias.data,
            act,
            drop.as_deref(),
            n,
            c,
            f,
        );
        if self.opts.trace_ffn {
            self.trace.ffn.push(FfnTrace {
                stack: site,
                layer: li,
                hidden: Tensor {
                    shape: vec![n / t.max(1), t, f],
                    data: saved.hidden.clone(),
                },
            });
        }
        if self.keep {
            rec.ffn = Some(saved);
            rec.ffn_dropout = drop;
        } else {
            self.pool.give(saved.pre);
            self.pool.give(saved.hidden);
        }
        Ok(out)
    }
}

/// The attention spec of one sublayer: RoPE, ALiBi and relative terms apply to
/// self-attention only; `slopes` (H) and `ablate` (H) are borrowed from the caller.
#[allow(clippy::too_many_arguments)]
pub fn attn_spec<'a>(
    cfg: &ModelConfig,
    params: &'a AttentionParams,
    site: AttnSite,
    mask: &'a MaskSpec,
    scale: bool,
    q_offset: usize,
    slopes: &'a [f32],
    ablate: &'a [bool],
) -> AttnSpec<'a> {
    let self_attn = site != AttnSite::Cross;
    let pos = cfg.pos_encoding;
    AttnSpec {
        n_heads: cfg.n_heads,
        d_head: cfg.d_head(),
        score: cfg.score,
        scale,
        mask,
        q_offset,
        rope: self_attn && pos == PosEncoding::Rope,
        alibi: (self_attn && pos == PosEncoding::Alibi).then_some(slopes),
        relative: match (&params.rel_k, &params.rel_v) {
            (Some(k), Some(v)) if self_attn && pos == PosEncoding::Relative => Some(Relative {
                rel_k: &k.data,
                rel_v: &v.data,
                max_distance: cfg.relative_max_distance,
            }),
            _ => None,
        },
        additive_v: params.additive_v.as_ref().map(|t| t.data.as_slice()),
        ablate,
    }
}

//! The backward half of a GPU training step: the loss and the head, then every stack in
//! reverse, sublayer by sublayer, reading the activations the forward pass kept
//! ([`Acts`]) — `train::backward::model::model_backward` on the device. Each launch is the
//! backward of the forward launch of the same name (`ops`), adding into the gradients.

use crate::backend::gpu::activations::{Acts, AttnActs, StackActs};
use crate::backend::gpu::context::{GpuBuffer, Recorder};
use crate::backend::gpu::pass::{stack_of, Weights};
use crate::backend::gpu::{
    AttnDims, BatchNormGradArgs, CrossEntropyArgs, LinearBackwardArgs, Rows, ScoreGradArgs,
    ValueGradArgs,
};
use crate::config::{PosEncoding, Score};
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::plan::{
    LayerPlan, NormKind, NormStep, Placement, StackInput, StackPlan, SublayerKind,
};
use crate::model::{
    AttentionParams, AttnSite, ForwardOptions, HeadParams, ModelParams, NormParams,
};

/// The recording of one step's backward half.
pub(super) struct Step<'a> {
    pub w: Weights<'a>,
    pub plan: &'a LayerPlan,
    pub grads: &'a ModelParams<GpuBuffer>,
    pub acts: &'a Acts,
    pub opts: &'a ForwardOptions,
    pub rec: &'a mut Recorder,
    /// The forward pass drew dropout masks.
    pub drops: bool,
    pub b: usize,
    pub t: usize,
    pub s: usize,
}

fn missing(what: &str) -> Error {
    Error::Gpu(format!("the GPU trainer lost track of {what}"))
}

/// A sublayer's norm: its step in the plan and its parameters and gradients.
type NormOf<'a> = (
    &'a NormStep,
    &'a NormParams<GpuBuffer>,
    &'a NormParams<GpuBuffer>,
);

impl Step<'_> {
    fn len_of(&self, sp: &StackPlan) -> usize {
        match sp.input {
            StackInput::Tokens => self.t,
            StackInput::Source => self.s,
        }
    }

    fn tokens_of(&self, sp: &StackPlan) -> &GpuBuffer {
        match sp.input {
            StackInput::Tokens => &self.acts.tokens,
            StackInput::Source => &self.acts.src,
        }
    }

    /// The encoder's output, for a stack whose cross-attention reads it (else none).
    fn memory(&self, sp: &StackPlan) -> Result<Option<GpuBuffer>> {
        if !sp.reads_memory {
            return Ok(None);
        }
        let ei = self
            .plan
            .stacks
            .iter()
            .position(|p| p.site == AttnSite::EncoderSelf)
            .ok_or_else(|| missing("the encoder"))?;
        Ok(Some(self.acts.stacks[ei].out().clone()))
    }

    // ---------------------------------------------------------------- loss and head

    /// The loss and d(loss)/d(logits) from the logits the forward pass wrote, then the
    /// head's backward into `acts.dhead` and the head's weight gradients.
    pub fn loss_and_head_backward(&mut self, smoothing: f32) -> Result<()> {
        let cfg = self.w.cfg;
        let acts = self.acts;
        let c = cfg.d_model;
        let (b, t) = (self.b, self.t);
        let last = acts.stacks.last().ok_or_else(|| missing("a stack"))?;
        let x = last.out().clone();
        self.rec.clear(&acts.dhead, b * t * c)?;
        match (&self.w.params.head, &self.grads.head) {
            (
                HeadParams::Lm { weight, .. },
                HeadParams::Lm {
                    weight: gw,
                    bias: gb,
                },
            ) => {
                let v = cfg.vocab_size;
                let rows = b * t;
                let w = weight.as_ref().unwrap_or(&self.w.params.embed);
                let dw = gw.as_ref().unwrap_or(&self.grads.embed);
                self.rec.clear(&acts.dlogits, rows * v)?;
                self.rec.cross_entropy(&CrossEntropyArgs {
                    logits: &acts.logits,
                    targets: &acts.targets,
                    ignore: Some(self.w.pad),
                    smoothing,
                    dloss: 1.0,
                    loss: &acts.loss,
                    dlogits: Some(&acts.dlogits),
                    rows,
                    v,
                })?;
                self.rec.linear_backward(&LinearBackwardArgs::dense(
                    &acts.dlogits,
                    &x,
                    w,
                    Some(&acts.dhead),
                    dw,
                    gb.as_ref(),
                    (rows, c, v),
                ))?;
            }
            (
                HeadParams::Classifier { weight, .. },
                HeadParams::Classifier {
                    weight: gw,
                    bias: gb,
                },
            ) => {
                let k = cfg.num_classes;
                let first = |buf| Rows {
                    buf,
                    stride: t * c,
                    col: 0,
                };
                self.rec.clear(&acts.dlogits, b * k)?;
                self.rec.cross_entropy(&CrossEntropyArgs {
                    logits: &acts.logits,
                    targets: &acts.targets,
                    ignore: None,
                    smoothing,
                    dloss: 1.0,
                    loss: &acts.loss,
                    dlogits: Some(&acts.dlogits),
                    rows: b,
                    v: k,
                })?;
                self.rec.linear_backward(&LinearBackwardArgs {
                    dout: Rows::dense(&acts.dlogits, k),
                    inp: first(&x),
                    weight,
                    w_offset: 0,
                    dinp: Some(first(&acts.dhead)),
                    dweight: gw,
                    dw_offset: 0,
                    dbias: Some(gb),
                    db_offset: 0,
                    n: b,
                    c_in: c,
                    c_out: k,
                })?;
            }
            _ => return Err(missing("the head")),
        }
        Ok(())
    }

    // ---------------------------------------------------------------- backward

    pub fn backward(&mut self) -> Result<()> {
        let plan = self.plan;
        let acts = self.acts;
        // The decoder's cross-attention adds the memory's gradient; it is the encoder's
        // output gradient.
        for sa in &acts.stacks {
            if let Some(dm) = &sa.dmem {
                self.rec.clear(dm, self.b * self.s * self.w.cfg.d_model)?;
            }
        }
        let mut dout = acts.dhead.clone();
        for (si, sp) in plan.stacks.iter().enumerate().rev() {
            self.stack_backward(si, sp, &dout)?;
            if let Some(dm) = &acts.stacks[si].dmem {
                dout = dm.clone();
            }
        }
        Ok(())
    }

    fn stack_backward(&mut self, si: usize, sp: &StackPlan, dout: &GpuBuffer) -> Result<()> {
        let cfg = self.w.cfg;
        let acts = self.acts;
        let sa = &acts.stacks[si];
        let params = stack_of(self.w.params, sp.site)?;
        let grads = stack_of(self.grads, sp.site)?;
        let c = cfg.d_model;
        let (b, len) = (self.b, self.len_of(sp));
        let n = b * len;
        let mut turn = 0usize;
        let mut d = dout.clone();
        // The input of each sublayer, in order; the last sublayer's output last.
        let mut inputs = vec![sa.x0.clone()];
        for subs in &sa.layers {
            for s in subs {
                inputs.push(s.out().clone());
            }
        }
        // forward: x = final_norm(x)
        if let (Some(p), Some(g), Some(_)) = (&params.final_norm, &grads.final_norm, &sa.fnorm) {
            let next = sa.d[turn].clone();
            turn ^= 1;
            self.rec.clear(&next, n * c)?;
            let x = inputs.last().ok_or_else(|| missing("the stack input"))?;
            self.rec
                .layer_norm_backward(x, &p.weight, &d, &next, &g.weight, &g.bias, n, c)?;
            d = next;
        }
        let memory = self.memory(sp)?;
        let nsub = sp.sublayers.len();
        for li in (0..params.layers.len()).rev() {
            let (layer, glayer) = (&params.layers[li], &grads.layers[li]);
            for k in (0..nsub).rev() {
                let sub = &sp.sublayers[k];
                let s = &sa.layers[li][k];
                let x_in = &inputs[li * nsub + k];
                let norm: Option<NormOf> = sub.norm.as_ref().and_then(|ns| {
                    Some((ns, layer.norms.get(ns.slot)?, glayer.norms.get(ns.slot)?))
                });
                let next = sa.d[turn].clone();
                turn ^= 1;
                // norm after: x_out = N(y)
                let dy_sum = match norm {
                    Some((ns, p, g)) if ns.placement == Placement::After => {
                        self.rec.clear(&sa.dysum, n * c)?;
                        self.norm_backward(ns.kind, p, g, &s.y, &d, &sa.dysum, s.bn.as_ref(), n)?;
                        sa.dysum.clone()
                    }
                    _ => d.clone(),
                };
                // y = x + drop(f(·)): the residual path
                self.rec.clear(&next, n * c)?;
                if sub.residual {
                    self.rec.add(&next, &dy_sum, n * c)?;
                }
                let df = match &s.out_mask {
                    Some(mask) if self.drops => {
                        self.rec.copy(&dy_sum, &sa.df, n * c)?;
                        self.rec.dropout_backward(mask, &sa.df, n * c)?;
                        sa.df.clone()
                    }
                    _ => dy_sum,
                };
                self.rec.clear(&sa.dsub, n * c)?;
                let sub_in = match (&norm, &s.h) {
                    (Some((ns, ..)), Some(h)) if ns.placement == Placement::Before => h.clone(),
                    _ => x_in.clone(),
                };
                match sub.kind {
                    SublayerKind::SelfAttention => {
                        let a = s
                            .attn
                            .as_ref()
                            .ok_or_else(|| missing("attention buffers"))?;
                        let ablate = self.w.ablation(self.rec, self.opts, sp.site, li)?;
                        self.attention_backward(
                            sa,
                            &layer.self_attn,
                            &glayer.self_attn,
                            a,
                            &df,
                            &sub_in,
                            None,
                            len,
                            &ablate,
                        )?;
                    }
                    SublayerKind::CrossAttention => {
                        let a = s
                            .attn
                            .as_ref()
                            .ok_or_else(|| missing("attention buffers"))?;
                        let (p, g) = match (&layer.cross_attn, &glayer.cross_attn) {
                            (Some(p), Some(g)) => (p, g),
                            _ => return Err(missing("cross-attention weights")),
                        };
                        let mem = memory.as_ref().ok_or_else(|| missing("the memory"))?;
                        let ablate = self.w.ablation(self.rec, self.opts, AttnSite::Cross, li)?;
                        self.attention_backward(
                            sa,
                            p,
                            g,
                            a,
                            &df,
                            &sub_in,
                            Some(mem),
                            len,
                            &ablate,
                        )?;
                    }
                    SublayerKind::Ffn => {
                        let fa = s.ffn.as_ref().ok_or_else(|| missing("FFN buffers"))?;
                        let f = cfg.d_ff;
                        self.rec.clear(&sa.dh, n * f)?;
                        self.rec.linear_backward(&LinearBackwardArgs::dense(
                            &df,
                            &fa.hid,
                            &layer.linear2_weight,
                            Some(&sa.dh),
                            &glayer.linear2_weight,
                            Some(&glayer.linear2_bias),
                            (n, f, c),
                        ))?;
                        if let (Some(mask), true) = (&fa.mask, self.drops) {
                            self.rec.dropout_backward(mask, &sa.dh, n * f)?;
                        }
                        self.rec.clear(&sa.dpre, n * f)?;
                        let pre = fa
                            .pre
                            .as_ref()
                            .ok_or_else(|| missing("the FFN pre-activation"))?;
                        self.rec.activation_backward(
                            &sa.dh,
                            pre,
                            &sa.dpre,
                            n * f,
                            cfg.activation,
                        )?;
                        self.rec.linear_backward(&LinearBackwardArgs::dense(
                            &sa.dpre,
                            &sub_in,
                            &layer.linear1_weight,
                            Some(&sa.dsub),
                            &glayer.linear1_weight,
                            Some(&glayer.linear1_bias),
                            (n, c, f),
                        ))?;
                    }
                }
                match norm {
                    // norm before (pre-LN): the function read N(x)
                    Some((ns, p, g)) if ns.placement == Placement::Before => {
                        self.norm_backward(ns.kind, p, g, x_in, &sa.dsub, &next, s.bn.as_ref(), n)?;
                    }
                    _ => self.rec.add(&next, &sa.dsub, n * c)?,
                }
                d = next;
            }
        }
        // forward: x = dropout(E[tok]·scale + PE)
        if let (Some(mask), true) = (&sa.emb_mask, self.drops) {
            self.rec.dropout_backward(mask, &d, n * c)?;
        }
        let scale = embedding_scale(cfg.scale_embeddings, c);
        let tokens = self.tokens_of(sp).clone();
        self.rec.embedding_backward(
            &tokens,
            &d,
            self.grads.embedding(sp.input),
            (n, cfg.vocab_size, c),
            scale,
        )?;
        if cfg.pos_encoding == PosEncoding::Learned {
            if let Some(gp) = &self.grads.pos_embed {
                self.rec.positions_backward(&d, gp, (b, len, c), 0)?;
            }
        }
        Ok(())
    }

    /// LayerNorm's backward (statistics recomputed from `x`), or BatchNorm's with the
    /// batch statistics of the forward. Adds into `dx` and the norm's gradients.
    #[allow(clippy::too_many_arguments)]
    fn norm_backward(
        &mut self,
        kind: NormKind,
        p: &NormParams<GpuBuffer>,
        g: &NormParams<GpuBuffer>,
        x: &GpuBuffer,
        dy: &GpuBuffer,
        dx: &GpuBuffer,
        bn: Option<&GpuBuffer>,
        n: usize,
    ) -> Result<()> {
        let c = self.w.cfg.d_model;
        match (kind, bn) {
            (NormKind::BatchNorm, Some(stats)) => {
                self.rec.batch_norm_backward(&BatchNormGradArgs {
                    dy,
                    x,
                    gamma: &p.weight,
                    stats,
                    dx,
                    dgamma: &g.weight,
                    dbeta: &g.bias,
                    rows: n,
                    c,
                })
            }
            (NormKind::BatchNorm, None) => Err(missing("BatchNorm statistics")),
            _ => self
                .rec
                .layer_norm_backward(x, &p.weight, dy, dx, &g.weight, &g.bias, n, c),
        }
    }

    /// The backward of one attention sublayer from `df` (its output's gradient): the
    /// gradients of its weights, and of its input added into `sa.dsub` (self-attention:
    /// queries, keys and values; cross-attention: queries, with the keys' and values'
    /// into the memory's gradient).
    #[allow(clippy::too_many_arguments)]
    fn attention_backward(
        &mut self,
        sa: &StackActs,
        p: &AttentionParams<GpuBuffer>,
        g: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        df: &GpuBuffer,
        sub_in: &GpuBuffer,
        memory: Option<&GpuBuffer>,
        len: usize,
        ablate: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.w.cfg;
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let b = self.b;
        let n = b * len;
        let cross = memory.is_some();
        let s_len = if cross { self.s } else { len };
        let dims = AttnDims {
            batch: b,
            n_heads: h,
            t_len: len,
            s_len,
            d_head: d,
            pos0: 0,
            kv_rows: s_len,
        };
        let relative = !cross && cfg.pos_encoding == PosEncoding::Relative;
        let additive = cfg.score == Score::Additive;
        let k_rel = cfg.relative_max_distance;
        // forward: out = z · W_Oᵀ + b_O
        self.rec.clear(&sa.dz, n * c)?;
        self.rec.linear_backward(&LinearBackwardArgs::dense(
            df,
            &a.z,
            &p.out_proj_weight,
            Some(&sa.dz),
            &g.out_proj_weight,
            Some(&g.out_proj_bias),
            (n, c, c),
        ))?;
        self.rec.clear(&sa.dqkv, n * 3 * c)?;
        let (kv, dkv) = match (&a.kv, &sa.dkv, cross) {
            (Some(kv), Some(dkv), true) => {
                self.rec.clear(dkv, b * s_len * 2 * c)?;
                (Some(kv), Some(dkv))
            }
            (_, _, true) => return Err(missing("cross-attention K | V")),
            _ => (None, None),
        };
        let three = |buf, col| Rows {
            buf,
            stride: 3 * c,
            col,
        };
        let two = |buf, col| Rows {
            buf,
            stride: 2 * c,
            col,
        };
        let (k_rows, v_rows, dk_rows, dv_rows) = match (kv, dkv) {
            (Some(kv), Some(dkv)) => (two(kv, 0), two(kv, c), two(dkv, 0), two(dkv, c)),
            _ => (
                three(&a.qkv, c),
                three(&a.qkv, 2 * c),
                three(&sa.dqkv, c),
                three(&sa.dqkv, 2 * c),
            ),
        };
        let drop_mask = match (&a.dropped, self.drops) {
            (Some((_, m)), true) => Some(m),
            _ => None,
        };
        self.rec.attention_values_backward(&ValueGradArgs {
            dz: Rows::dense(&sa.dz, c),
            probs: &a.probs,
            dropout: drop_mask,
            v: v_rows,
            rel_v: if relative { p.rel_v.as_ref() } else { None },
            rel_max: k_rel,
            scores: &a.scores,
            ablate,
            dprobs: &sa.dprobs,
            dv: dv_rows,
            drel_v: if relative { g.rel_v.as_ref() } else { None },
            dims,
        })?;
        let rows = b * h * len;
        self.rec
            .softmax_backward(&a.probs, &sa.dprobs, &sa.dscores, rows, s_len)?;
        let alpha = 1.0 / self.w.score_divisor(self.opts);
        self.rec.attention_scores_backward(&ScoreGradArgs {
            dscores: &sa.dscores,
            q: three(&a.qkv, 0),
            k: k_rows,
            rel_k: if relative { p.rel_k.as_ref() } else { None },
            rel_max: k_rel,
            additive_v: if additive {
                p.additive_v.as_ref()
            } else {
                None
            },
            alpha,
            dq: three(&sa.dqkv, 0),
            dk: dk_rows,
            drel_k: if relative { g.rel_k.as_ref() } else { None },
            dadditive_v: if additive {
                g.additive_v.as_ref()
            } else {
                None
            },
            dims,
        })?;
        if let (Some(rot), false) = (self.w.tables.rope(), cross) {
            self.rec
                .rope_backward(rot, Rows::dense(&sa.dqkv, 3 * c), n, len, 2 * h, d, 0)?;
        }
        // The three projections. With share_qk the K block's weight and bias gradients
        // land on the Q rows (W_K ≡ W_Q), as `mha_backward` adds them there.
        let k_block = if cfg.share_qk { 0 } else { 1 };
        for (blk, grad_blk) in [(0, 0), (1, k_block), (2, 2)] {
            let (dout, inp, dinp, rows) = match (blk, memory, &sa.dmem) {
                (0, _, _) | (_, None, _) => (three(&sa.dqkv, blk * c), sub_in, &sa.dsub, n),
                (_, Some(mem), Some(dmem)) => (
                    if blk == 1 { dk_rows } else { dv_rows },
                    mem,
                    dmem,
                    b * s_len,
                ),
                (_, Some(_), None) => return Err(missing("the memory gradient")),
            };
            self.rec.linear_backward(&LinearBackwardArgs {
                dout,
                inp: Rows::dense(inp, c),
                weight: &p.in_proj_weight,
                w_offset: blk * c * c,
                dinp: Some(Rows::dense(dinp, c)),
                dweight: &g.in_proj_weight,
                dw_offset: grad_blk * c * c,
                dbias: Some(&g.in_proj_bias),
                db_offset: grad_blk * c,
                n: rows,
                c_in: c,
                c_out: c,
            })?;
        }
        Ok(())
    }
}

//! A whole training step on the GPU: `train::step::train_step` with the weights, Adam's
//! moments, every activation the backward pass reads and every gradient resident on the
//! device.
//!
//! One step records, into one command encoder: the train-mode forward pass (each
//! activation the backward needs kept in its own buffer; dropout masks drawn from the
//! pass's seed in the CPU's order; BatchNorm with the batch's statistics, its running
//! statistics updated in place), the cross-entropy with label smoothing, the backward pass
//! walking the layer plan in reverse (`train::backward::model::model_backward`'s order),
//! global-norm clipping and Adam ([`GpuAdam::record_step`]). It is submitted once and one
//! small readback brings the loss and the gradient norm. The activation buffers are sized
//! for the batch and made again only when a batch is larger in B, T or S than any before.

use super::attention_backward::{
    dropout_key, BatchNormGradArgs, BatchNormTrainArgs, DropoutArgs, ScoreGradArgs, ValueGradArgs,
};
use super::backward::{CrossEntropyArgs, LinearBackwardArgs, LrRule};
use super::context::{GpuBuffer, GpuContext, ReadSlot, Recorder};
use super::kernels::{AttnDims, Epilogue, MatmulArgs, Rows, ScoreArgs, ValueArgs};
use super::model::{check_fits, rope_table};
use super::optim::GpuAdam;
use crate::config::{Arch, ModelConfig, Norm, PosEncoding, Score};
use crate::error::{Error, Result};
use crate::model::embedding::embedding_scale;
use crate::model::forward::Batch;
use crate::model::mask::{attention_mask, MaskSpec};
use crate::model::plan::{
    layer_plan, HeadKind, LayerPlan, NormKind, NormStep, Placement, StackInput, StackPlan,
    SublayerKind,
};
use crate::model::position::{alibi_slopes, sinusoidal_table};
use crate::model::{
    AttentionParams, AttnSite, ForwardOptions, HeadParams, Mode, Model, ModelParams, NormParams,
    ParamKind, StackParams,
};
use crate::tasks::TrainBatch;
use crate::tensor::Tensor;
use crate::train::optim::Adam;
use crate::train::step::{to_batch, StepStats};

/// Dispatch/submission counts of the last step (for the bench and the lab badge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounts {
    pub dispatches: usize,
    pub submissions: usize,
    pub readbacks: usize,
}

/// A model being trained on the GPU: weights and Adam's moments ([`GpuAdam`]), BatchNorm
/// running statistics, gradient buffers and the activations of the last step, resident.
pub struct GpuTrainer {
    ctx: GpuContext,
    /// The model's config and tokenizer without its parameters: the input checks.
    shell: Model,
    plan: LayerPlan,
    adam: GpuAdam,
    /// Every parameter: the trained ones are `adam`'s weight buffers, the BatchNorm
    /// running statistics live here.
    params: ModelParams<GpuBuffer>,
    /// A gradient buffer per trained parameter (one element for a running statistic).
    grads: ModelParams<GpuBuffer>,
    /// (sinusoidal (P, C), RoPE (P, D/2, 2), P): position tables, grown on demand.
    tables: Tables,
    /// (H) ALiBi slopes.
    alibi: Option<GpuBuffer>,
    acts: Option<Acts>,
    counts: StepCounts,
}

/// Constant position tables for P positions.
struct Tables {
    sinusoidal: Option<GpuBuffer>,
    rope: Option<GpuBuffer>,
    len: usize,
}

/// The activations one attention sublayer keeps for its backward pass.
struct AttnActs {
    /// (N, 3C) Q | K | V after RoPE (cross-attention: Q in the first C columns).
    qkv: GpuBuffer,
    /// (B·S, 2C) cross-attention K | V of the encoder output.
    kv: Option<GpuBuffer>,
    /// (B, H, T, S) scores (`MASKED` where hidden) and probabilities before dropout.
    scores: GpuBuffer,
    probs: GpuBuffer,
    /// (B, H, T, S) the probabilities after dropout and the dropout multipliers.
    dropped: Option<(GpuBuffer, GpuBuffer)>,
    /// (N, C) the heads merged, before W_O.
    z: GpuBuffer,
}

/// What an FFN sublayer keeps.
struct FfnActs {
    /// (N, F) before the activation.
    pre: GpuBuffer,
    /// (N, F) after the activation and dropout: the second Linear's input.
    hid: GpuBuffer,
    /// (N, F) dropout multipliers.
    mask: Option<GpuBuffer>,
}

/// One sublayer's record.
struct SubActs {
    /// (N, C) N(x) of a norm placed before the sublayer.
    h: Option<GpuBuffer>,
    /// (N, C) the sublayer's output (after dropout and the residual sum).
    y: GpuBuffer,
    /// (N, C) N(y) of a norm placed after.
    post: Option<GpuBuffer>,
    /// (N, C) dropout multipliers of the sublayer output.
    out_mask: Option<GpuBuffer>,
    /// (3, C) BatchNorm's batch statistics (μ, σ², rstd).
    bn: Option<GpuBuffer>,
    attn: Option<AttnActs>,
    ffn: Option<FfnActs>,
}

impl SubActs {
    /// The sublayer's output: the stream the next sublayer reads.
    fn out(&self) -> &GpuBuffer {
        self.post.as_ref().unwrap_or(&self.y)
    }
}

/// One stack's record and its backward scratch.
struct StackActs {
    /// (N, C) the embedding step's output (after dropout), and its dropout multipliers.
    x0: GpuBuffer,
    emb_mask: Option<GpuBuffer>,
    layers: Vec<Vec<SubActs>>,
    /// (N, C) the final LayerNorm's output.
    fnorm: Option<GpuBuffer>,
    /// (N, C) scratch of the backward pass: two stream gradients in turn, the gradient
    /// before a norm placed after, after the output dropout, and of the sublayer input.
    d: [GpuBuffer; 2],
    dysum: GpuBuffer,
    df: GpuBuffer,
    dsub: GpuBuffer,
    /// (N, C), (N, 3C), (B, H, T, max(T, S)) ×2, (N, F) ×2
    dz: GpuBuffer,
    dqkv: GpuBuffer,
    dprobs: GpuBuffer,
    dscores: GpuBuffer,
    dh: GpuBuffer,
    dpre: GpuBuffer,
    /// (B·S, 2C) cross-attention K | V gradient, and (B·S, C) the encoder output's.
    dkv: Option<GpuBuffer>,
    dmem: Option<GpuBuffer>,
}

impl StackActs {
    /// The stack's output (after the final norm).
    fn out(&self) -> &GpuBuffer {
        match (&self.fnorm, self.layers.last().and_then(|l| l.last())) {
            (Some(f), _) => f,
            (None, Some(s)) => s.out(),
            (None, None) => &self.x0,
        }
    }
}

/// Everything one step's shape needs, for batches up to `cap` = (B, T, S).
struct Acts {
    cap: (usize, usize, usize),
    /// (B·T) u32, (B·S) u32, and the targets: (B·T) or a classifier's (B) labels.
    tokens: GpuBuffer,
    src: GpuBuffer,
    targets: GpuBuffer,
    /// (B·T, V) or (B, classes), and their gradient.
    logits: GpuBuffer,
    dlogits: GpuBuffer,
    /// (2) mean loss, counted rows.
    loss: GpuBuffer,
    /// (B·T, C) the gradient of the head's input.
    dhead: GpuBuffer,
    /// (H) u32 zeros: no head ablated.
    no_ablation: GpuBuffer,
    stacks: Vec<StackActs>,
}

/// The train-mode dropout stream of one step.
struct DropState {
    key: [u32; 8],
    p: f32,
    /// Words drawn so far.
    offset: u64,
}

fn config_error(what: &str) -> Error {
    Error::Gpu(format!("the GPU trainer cannot train this model: {what}"))
}

impl GpuTrainer {
    /// Uploads the model's weights and Adam's state. Err (a clear message naming what the
    /// GPU cannot train, or the size limit) when this model/config cannot be trained on
    /// this device.
    pub fn new(ctx: &GpuContext, model: &Model, adam: &Adam) -> Result<GpuTrainer> {
        check_fits(ctx, model)?;
        let cfg = &model.config;
        if cfg.pos_encoding == PosEncoding::Rope && !cfg.d_head().is_multiple_of(2) {
            return Err(config_error("RoPE needs an even head size"));
        }
        let gadam = GpuAdam::upload(ctx, model, adam)?;
        let weights: Vec<(String, GpuBuffer)> = gadam
            .weights()
            .map(|(n, b)| (n.to_string(), b.clone()))
            .collect();
        let mut trained = weights.into_iter();
        let params = model.try_map_params(&mut |name, t, kind| -> Result<GpuBuffer> {
            match kind {
                ParamKind::Trained => match trained.next() {
                    Some((n, b)) if n == name => Ok(b),
                    _ => Err(Error::Gpu(format!(
                        "the optimiser's tensors do not follow the model's ({name})"
                    ))),
                },
                ParamKind::Buffer => ctx.upload(name, &t.data),
            }
        })?;
        let grads = params.try_map(&mut |name, b, kind| match kind {
            ParamKind::Trained => ctx.zeros(&format!("gradient of {name}"), b.len()),
            ParamKind::Buffer => ctx.zeros("no gradient", 1),
        })?;
        let alibi = (cfg.pos_encoding == PosEncoding::Alibi)
            .then(|| ctx.upload("alibi slopes", &alibi_slopes(cfg.n_heads)))
            .transpose()?;
        let shell = Model {
            config: cfg.clone(),
            tokenizer: model.tokenizer.clone(),
            embed: Tensor::zeros(&[0]),
            src_embed: None,
            pos_embed: None,
            encoder: None,
            decoder: None,
            head: HeadParams::Lm {
                weight: None,
                bias: None,
            },
        };
        let mut trainer = GpuTrainer {
            ctx: ctx.clone(),
            plan: layer_plan(cfg),
            shell,
            adam: gadam,
            params,
            grads,
            tables: Tables {
                sinusoidal: None,
                rope: None,
                len: 0,
            },
            alibi,
            acts: None,
            counts: StepCounts::default(),
        };
        trainer.ensure_tables(cfg.max_len)?;
        Ok(trainer)
    }

    fn cfg(&self) -> &ModelConfig {
        &self.shell.config
    }

    /// Counts of the last step.
    pub fn counts(&self) -> StepCounts {
        self.counts
    }

    /// Sinusoidal and RoPE tables covering at least `len` positions.
    fn ensure_tables(&mut self, len: usize) -> Result<()> {
        if len <= self.tables.len {
            return Ok(());
        }
        let cfg = self.shell.config.clone();
        let c = cfg.d_model;
        let p = len.max(cfg.max_len);
        if cfg.pos_encoding == PosEncoding::Sinusoidal {
            let mut table = vec![0.0f32; p * c]; // (P, C)
            sinusoidal_table(&mut table, 0, p, c);
            self.tables.sinusoidal = Some(self.ctx.upload("sinusoidal table", &table)?);
        }
        if cfg.pos_encoding == PosEncoding::Rope {
            self.tables.rope = Some(
                self.ctx
                    .upload("rope table", &rope_table(p, cfg.d_head()))?,
            );
        }
        self.tables.len = p;
        Ok(())
    }

    /// Exactly `crate::train::step::train_step(model, adam, tb, opts, smoothing, lr, clip)`
    /// on the resident model: train-mode forward (opts.mode = Mode::Train{seed}: dropout
    /// masks from the same seed, BatchNorm batch statistics + running-stat update),
    /// cross-entropy with label smoothing, backward, global-norm clip, Adam at `lr`. One
    /// submission, one small readback (the returned StepStats). Weights stay on the GPU.
    pub async fn step(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
    ) -> Result<StepStats> {
        let (stats, _) = self.run(tb, opts, smoothing, lr, clip, false).await?;
        Ok(stats)
    }

    /// [`GpuTrainer::step`], also reading back every trained tensor's gradient before
    /// clipping, in `Model::visit_params` order with its name (as
    /// `train_step_observed` shows the CPU's). For tests: the readback is large.
    pub async fn step_observed(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
    ) -> Result<(StepStats, Vec<(String, Vec<f32>)>)> {
        self.run(tb, opts, smoothing, lr, clip, true).await
    }

    async fn run(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
        observe: bool,
    ) -> Result<(StepStats, Vec<(String, Vec<f32>)>)> {
        self.check(tb, opts)?;
        let longest = tb.t.max(tb.s);
        self.ensure_tables(longest)?;
        self.ensure_acts(tb)?;
        let before = self.ctx.stats();
        let acts = self
            .acts
            .as_ref()
            .ok_or_else(|| Error::Gpu("no buffers".into()))?;
        self.ctx.write_u32(&acts.tokens, &tb.tokens)?;
        self.ctx.write_u32(&acts.src, &tb.src)?;
        let labels = if self.plan.head == HeadKind::Classifier {
            &tb.labels
        } else {
            &tb.targets
        };
        self.ctx.write_u32(&acts.targets, labels)?;
        let mut rec = self.ctx.recorder()?;
        let drop = match opts.mode {
            Mode::Train { seed } if self.cfg().dropout > 0.0 => Some(DropState {
                key: dropout_key(seed),
                p: self.cfg().dropout,
                offset: 0,
            }),
            _ => None,
        };
        let mut grad_list: Vec<(String, GpuBuffer)> = vec![];
        self.grads.visit(&mut |name, g, k| {
            if k == ParamKind::Trained {
                grad_list.push((name.to_string(), g.clone()));
            }
        });
        {
            let mut st = Step {
                cfg: &self.shell.config,
                pad: self.shell.tokenizer.spec.pad,
                plan: &self.plan,
                params: &self.params,
                grads: &self.grads,
                tables: &self.tables,
                alibi: self.alibi.as_ref(),
                acts,
                opts,
                rec: &mut rec,
                drop,
                residual: None,
                b: tb.b,
                t: tb.t,
                s: tb.s,
            };
            // Gradients add up from zero.
            for (_, g) in &grad_list {
                st.rec.clear(g, g.len())?;
            }
            st.forward()?;
            st.loss_and_head_backward(smoothing)?;
            st.backward()?;
        }
        let mut observed: Vec<(String, ReadSlot)> = vec![];
        if observe {
            for (name, g) in &grad_list {
                observed.push((name.clone(), rec.read_all(g)?));
            }
        }
        let loss_slot = rec.read(&acts.loss, 0, 1)?;
        let refs: Vec<&GpuBuffer> = grad_list.iter().map(|(_, g)| g).collect();
        self.adam
            .record_step(&mut rec, &refs, LrRule::Constant(lr), clip)?;
        let norm_slot = rec.read(self.adam.norm_sq(), 0, 1)?;
        let back = rec.finish().await?;
        let after = self.ctx.stats().since(&before);
        self.counts = StepCounts {
            dispatches: after.dispatches as usize,
            submissions: after.submissions as usize,
            readbacks: after.readbacks as usize,
        };
        let grads = observed
            .into_iter()
            .map(|(n, s)| (n, back.f32(s).to_vec()))
            .collect();
        Ok((
            StepStats {
                loss: back.f32(loss_slot)[0],
                grad_norm: back.f32(norm_slot)[0].max(0.0).sqrt(),
                lr,
            },
            grads,
        ))
    }

    /// The CPU step's input checks, before anything is recorded.
    fn check(&self, tb: &TrainBatch, opts: &ForwardOptions) -> Result<()> {
        let batch: Batch = to_batch(tb);
        let m = &self.shell;
        m.check_pass(&batch, opts)?;
        let cfg = &m.config;
        if cfg.norm == Norm::BatchNorm && !matches!(opts.mode, Mode::Train { .. }) {
            return Err(config_error(
                "a BatchNorm model's step in eval mode (running statistics) — \
                 train it in train mode or on the CPU",
            ));
        }
        crate::train::step::check_targets(cfg, tb)
    }

    /// Buffers for this batch's shape: the ones there are when they are large enough,
    /// otherwise new ones for the largest B, T and S seen.
    fn ensure_acts(&mut self, tb: &TrainBatch) -> Result<()> {
        let (b, t, s) = match &self.acts {
            Some(a) if tb.b <= a.cap.0 && tb.t <= a.cap.1 && tb.s <= a.cap.2 => return Ok(()),
            Some(a) => (tb.b.max(a.cap.0), tb.t.max(a.cap.1), tb.s.max(a.cap.2)),
            None => (tb.b, tb.t, tb.s),
        };
        // Drop the old buffers before making the new ones.
        self.acts = None;
        self.acts = Some(self.alloc(b, t, s)?);
        Ok(())
    }

    fn alloc(&self, b: usize, t: usize, s: usize) -> Result<Acts> {
        let ctx = &self.ctx;
        let cfg = self.cfg();
        let (c, h, f) = (cfg.d_model, cfg.n_heads, cfg.d_ff);
        let drop = cfg.dropout > 0.0;
        let z = |what: &str, n: usize| ctx.zeros(what, n);
        let opt = |on: bool, what: &str, n: usize| on.then(|| ctx.zeros(what, n)).transpose();
        let (head_rows, head_width) = match self.plan.head {
            HeadKind::Lm => (b * t, cfg.vocab_size),
            HeadKind::Classifier => (b, cfg.num_classes),
        };
        let mut stacks = vec![];
        for sp in &self.plan.stacks {
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
                                pre: z("ffn pre-activation", n * f)?,
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
            no_ablation: z("no ablated heads", h)?,
            stacks,
        })
    }

    /// Copies weights, BatchNorm running statistics and Adam's state (step, m, v) back.
    pub async fn download(&self, model: &mut Model) -> Result<Adam> {
        if model.config != *self.cfg() {
            return Err(Error::Input(
                "this model is not the one the GPU trainer holds (the configs differ)".into(),
            ));
        }
        let mut rec = self.ctx.recorder()?;
        let mut slots = vec![];
        let mut err = None;
        self.params.visit(&mut |name, b, k| {
            if k == ParamKind::Buffer {
                match rec.read_all(b) {
                    Ok(s) => slots.push((name.to_string(), s)),
                    Err(e) => err = Some(e),
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        let back = rec.finish().await?;
        let mut i = 0;
        let mut mismatch = None;
        model.visit_params_mut(&mut |name, t, k| {
            if k != ParamKind::Buffer {
                return;
            }
            match slots.get(i) {
                Some((n, s)) if n == name && back.f32(*s).len() == t.data.len() => {
                    t.data.copy_from_slice(back.f32(*s));
                }
                _ => mismatch = Some(name.to_string()),
            }
            i += 1;
        });
        if let Some(name) = mismatch {
            return Err(Error::Input(format!(
                "the GPU running statistics do not fit this model ({name})"
            )));
        }
        self.adam.download(&self.ctx, model).await
    }
}

/// The recording of one step.
struct Step<'a> {
    cfg: &'a ModelConfig,
    pad: u32,
    plan: &'a LayerPlan,
    params: &'a ModelParams<GpuBuffer>,
    grads: &'a ModelParams<GpuBuffer>,
    tables: &'a Tables,
    alibi: Option<&'a GpuBuffer>,
    acts: &'a Acts,
    opts: &'a ForwardOptions,
    rec: &'a mut Recorder,
    drop: Option<DropState>,
    /// The running sublayer's input when its residual is on and no dropout is drawn: its
    /// last product adds it (`Epilogue::Residual`).
    residual: Option<GpuBuffer>,
    b: usize,
    t: usize,
    s: usize,
}

fn stack_of(tree: &ModelParams<GpuBuffer>, site: AttnSite) -> Result<&StackParams<GpuBuffer>> {
    match site {
        AttnSite::EncoderSelf => tree.encoder.as_ref(),
        _ => tree.decoder.as_ref(),
    }
    .ok_or_else(|| Error::Gpu(format!("the model has no {} stack", site.name())))
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

    /// Draw the next `n` words' mask into `mask` and multiply `x[..n]` by it.
    fn drop(&mut self, x: &GpuBuffer, mask: Option<&GpuBuffer>, n: usize) -> Result<()> {
        let Some(d) = self.drop.as_mut() else {
            return Ok(());
        };
        let mask = mask.ok_or_else(|| missing("a dropout mask"))?;
        let (key, p, offset) = (d.key, d.p, d.offset);
        d.offset += n as u64;
        self.rec.dropout(&DropoutArgs {
            key,
            offset,
            p,
            n,
            mask,
            x: Some(x),
        })
    }

    /// (H) u32 flags of the heads `opts.ablate` zeroes at (site, layer).
    fn ablation(&self, site: AttnSite, layer: usize) -> Result<GpuBuffer> {
        let flags = self.opts.ablated_heads(site, layer, self.cfg.n_heads);
        if flags.iter().any(|&f| f) {
            let flags: Vec<u32> = flags.into_iter().map(u32::from).collect();
            self.rec.ctx().upload_u32("ablated heads", &flags)
        } else {
            Ok(self.acts.no_ablation.clone())
        }
    }

    /// The absolute position table the embedding step adds, if any.
    fn pos_table(&self) -> Option<&GpuBuffer> {
        match self.cfg.pos_encoding {
            PosEncoding::Learned => self.params.pos_embed.as_ref(),
            PosEncoding::Sinusoidal => self.tables.sinusoidal.as_ref(),
            _ => None,
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

    // ---------------------------------------------------------------- forward

    fn forward(&mut self) -> Result<()> {
        let plan = self.plan;
        for (si, sp) in plan.stacks.iter().enumerate() {
            self.stack_forward(si, sp)?;
        }
        Ok(())
    }

    fn stack_forward(&mut self, si: usize, sp: &StackPlan) -> Result<()> {
        let cfg = self.cfg;
        let acts = self.acts;
        let sa = &acts.stacks[si];
        let params = stack_of(self.params, sp.site)?;
        let c = cfg.d_model;
        let (b, len) = (self.b, self.len_of(sp));
        let n = b * len;
        let tokens = self.tokens_of(sp).clone();
        // Steps 1–2: x = dropout(E[tok]·scale + PE)
        let scale = embedding_scale(cfg.scale_embeddings, c);
        let pos = self.pos_table().cloned();
        let table = self.params.embedding(sp.input);
        self.rec
            .embedding(&tokens, table, pos.as_ref(), &sa.x0, (n, len, c), 0, scale)?;
        self.drop(&sa.x0, sa.emb_mask.as_ref(), n * c)?;
        let mask = attention_mask(cfg, sp.site, self.opts);
        let cells = match mask.cell_table() {
            Some((table, side)) => Some((
                self.rec.ctx().upload_u32("painted mask cells", &table)?,
                side,
            )),
            None => None,
        };
        let cross_mask = attention_mask(cfg, AttnSite::Cross, self.opts);
        let memory = self.memory(sp)?;
        let mut x = sa.x0.clone();
        for (li, layer) in params.layers.iter().enumerate() {
            for (k, sub) in sp.sublayers.iter().enumerate() {
                let s = &sa.layers[li][k];
                let norm = sub.norm.as_ref().and_then(|ns| {
                    layer
                        .norms
                        .get(ns.slot)
                        .map(|p| (ns, p, format!("{}.layers.{li}.{}", sp.name, ns.name)))
                });
                let inp = match (&norm, &s.h) {
                    (Some((ns, p, _)), Some(h)) if ns.placement == Placement::Before => {
                        self.norm_forward(ns.kind, p, &x, h, s.bn.as_ref(), n)?;
                        h.clone()
                    }
                    _ => x.clone(),
                };
                self.residual = (sub.residual && self.drop.is_none()).then(|| x.clone());
                match sub.kind {
                    SublayerKind::SelfAttention => {
                        let a = s
                            .attn
                            .as_ref()
                            .ok_or_else(|| missing("attention buffers"))?;
                        let ablate = self.ablation(sp.site, li)?;
                        self.self_attention(
                            &layer.self_attn,
                            a,
                            &inp,
                            &s.y,
                            &tokens,
                            len,
                            (&mask, cells.as_ref().map(|(b, side)| (b, *side))),
                            &ablate,
                        )?;
                    }
                    SublayerKind::CrossAttention => {
                        let a = s
                            .attn
                            .as_ref()
                            .ok_or_else(|| missing("attention buffers"))?;
                        let p = layer
                            .cross_attn
                            .as_ref()
                            .ok_or_else(|| missing("cross-attention weights"))?;
                        let mem = memory.as_ref().ok_or_else(|| missing("the memory"))?;
                        let ablate = self.ablation(AttnSite::Cross, li)?;
                        self.cross_attention(p, a, &inp, &s.y, mem, &cross_mask, &ablate)?;
                    }
                    SublayerKind::Ffn => {
                        let fa = s.ffn.as_ref().ok_or_else(|| missing("FFN buffers"))?;
                        let f = cfg.d_ff;
                        self.rec.matmul(&MatmulArgs::linear(
                            &inp,
                            &layer.linear1_weight,
                            Some(&layer.linear1_bias),
                            &fa.pre,
                            (n, c, f),
                        ))?;
                        self.rec.copy(&fa.pre, &fa.hid, n * f)?;
                        self.rec.activation(&fa.hid, n * f, cfg.activation)?;
                        self.drop(&fa.hid, fa.mask.as_ref(), n * f)?;
                        self.last_matmul(&MatmulArgs::linear(
                            &fa.hid,
                            &layer.linear2_weight,
                            Some(&layer.linear2_bias),
                            &s.y,
                            (n, f, c),
                        ))?;
                    }
                }
                self.drop(&s.y, s.out_mask.as_ref(), n * c)?;
                if sub.residual && self.drop.is_some() {
                    self.rec.add(&s.y, &x, n * c)?;
                }
                self.residual = None;
                x = match (&norm, &s.post) {
                    (Some((ns, p, _)), Some(post)) if ns.placement == Placement::After => {
                        self.norm_forward(ns.kind, p, &s.y, post, s.bn.as_ref(), n)?;
                        post.clone()
                    }
                    _ => s.y.clone(),
                };
            }
        }
        if let (Some(fp), Some(out)) = (params.final_norm.as_ref(), sa.fnorm.as_ref()) {
            self.rec.layer_norm(&x, &fp.weight, &fp.bias, out, n, c)?;
        }
        Ok(())
    }

    /// A norm of (N, C) rows: LayerNorm, or BatchNorm with the batch's statistics (kept in
    /// `bn`) updating its running statistics in place.
    fn norm_forward(
        &mut self,
        kind: NormKind,
        p: &NormParams<GpuBuffer>,
        inp: &GpuBuffer,
        out: &GpuBuffer,
        bn: Option<&GpuBuffer>,
        n: usize,
    ) -> Result<()> {
        let c = self.cfg.d_model;
        match (kind, &p.running_mean, &p.running_var, bn) {
            (NormKind::BatchNorm, Some(mean), Some(var), Some(stats)) => {
                self.rec.batch_norm_train(&BatchNormTrainArgs {
                    x: inp,
                    gamma: &p.weight,
                    beta: &p.bias,
                    y: out,
                    stats,
                    running: Some((mean, var)),
                    rows: n,
                    c,
                })
            }
            (NormKind::BatchNorm, ..) => Err(missing("BatchNorm statistics")),
            _ => self.rec.layer_norm(inp, &p.weight, &p.bias, out, n, c),
        }
    }

    fn last_matmul(&mut self, x: &MatmulArgs) -> Result<()> {
        match self.residual.take() {
            Some(res) => self.rec.matmul_then(x, Epilogue::Residual(&res)),
            None => self.rec.matmul(x),
        }
    }

    fn divisor(&self) -> f32 {
        if self.cfg.score == Score::ScaledDot && self.opts.scale {
            (self.cfg.d_head() as f32).sqrt()
        } else {
            1.0
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn self_attention(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        inp: &GpuBuffer,
        out: &GpuBuffer,
        tokens: &GpuBuffer,
        len: usize,
        (mask, cells): (&MaskSpec, Option<(&GpuBuffer, usize)>),
        ablate: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg;
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let n = self.b * len;
        let tables = self.tables;
        self.rec.matmul(&MatmulArgs::linear(
            inp,
            &p.in_proj_weight,
            Some(&p.in_proj_bias),
            &a.qkv,
            (n, c, 3 * c),
        ))?;
        if let Some(rot) = tables.rope.as_ref() {
            self.rec
                .rope(rot, Rows::dense(&a.qkv, 3 * c), n, len, 2 * h, d, 0)?;
        }
        let relative = cfg.pos_encoding == PosEncoding::Relative;
        let dims = AttnDims {
            batch: self.b,
            n_heads: h,
            t_len: len,
            s_len: len,
            d_head: d,
            pos0: 0,
            kv_rows: len,
        };
        let qkv = |col| Rows {
            buf: &a.qkv,
            stride: 3 * c,
            col,
        };
        let alibi = self.alibi;
        self.attend(
            p,
            a,
            (qkv(0), qkv(c), qkv(2 * c)),
            tokens,
            dims,
            (mask, cells),
            relative,
            alibi,
            ablate,
            out,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn cross_attention(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        inp: &GpuBuffer,
        out: &GpuBuffer,
        memory: &GpuBuffer,
        mask: &MaskSpec,
        ablate: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg;
        let (c, h, d) = (cfg.d_model, cfg.n_heads, cfg.d_head());
        let (b, t, s) = (self.b, self.t, self.s);
        let kv =
            a.kv.as_ref()
                .ok_or_else(|| missing("cross-attention K | V"))?;
        self.rec.matmul(&MatmulArgs {
            a: Rows::dense(inp, c),
            w: &p.in_proj_weight,
            w_offset: 0,
            bias: Some(&p.in_proj_bias),
            b_offset: 0,
            out: Rows::dense(&a.qkv, 3 * c),
            m: b * t,
            k: c,
            n: c,
        })?;
        self.rec.matmul(&MatmulArgs {
            a: Rows::dense(memory, c),
            w: &p.in_proj_weight,
            w_offset: c * c,
            bias: Some(&p.in_proj_bias),
            b_offset: c,
            out: Rows::dense(kv, 2 * c),
            m: b * s,
            k: c,
            n: 2 * c,
        })?;
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
        let q = Rows {
            buf: &a.qkv,
            stride: 3 * c,
            col: 0,
        };
        let src = self.acts.src.clone();
        self.attend(
            p,
            a,
            (q, kv_rows(0), kv_rows(c)),
            &src,
            dims,
            (mask, None),
            false,
            None,
            ablate,
            out,
        )
    }

    /// Scores → softmax → dropout → weighted values → W_O into `out`.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &mut self,
        p: &AttentionParams<GpuBuffer>,
        a: &AttnActs,
        (q, k, v): (Rows, Rows, Rows),
        key_tokens: &GpuBuffer,
        dims: AttnDims,
        (mask, cells): (&MaskSpec, Option<(&GpuBuffer, usize)>),
        relative: bool,
        alibi: Option<&GpuBuffer>,
        ablate: &GpuBuffer,
        out: &GpuBuffer,
    ) -> Result<()> {
        let cfg = self.cfg;
        let c = cfg.d_model;
        let (rel_k, rel_v) = if relative {
            (p.rel_k.as_ref(), p.rel_v.as_ref())
        } else {
            (None, None)
        };
        let additive_v = if cfg.score == Score::Additive {
            p.additive_v.as_ref()
        } else {
            None
        };
        let divisor = self.divisor();
        self.rec.attention_scores(&ScoreArgs {
            q,
            k,
            key_tokens,
            rel_k,
            rel_max: cfg.relative_max_distance,
            alibi_slopes: alibi,
            additive_v,
            divisor,
            mask,
            cells,
            pad_id: self.pad,
            out: &a.scores,
            dims,
        })?;
        let rows = dims.batch * dims.n_heads * dims.t_len;
        let hts = rows * dims.s_len;
        self.rec.softmax(&a.scores, &a.probs, rows, dims.s_len)?;
        let weights = match (&a.dropped, self.drop.is_some()) {
            (Some((dropped, dmask)), true) => {
                self.rec.copy(&a.probs, dropped, hts)?;
                self.drop(dropped, Some(dmask), hts)?;
                dropped
            }
            _ => &a.probs,
        };
        self.rec.attention_values(&ValueArgs {
            probs: weights,
            v,
            rel_v,
            rel_max: cfg.relative_max_distance,
            ablate,
            out: &a.z,
            dims,
        })?;
        let n = dims.batch * dims.t_len;
        self.last_matmul(&MatmulArgs::linear(
            &a.z,
            &p.out_proj_weight,
            Some(&p.out_proj_bias),
            out,
            (n, c, c),
        ))
    }

    // ---------------------------------------------------------------- loss and head

    /// The logits, the loss and d(loss)/d(logits), then the head's backward into
    /// `acts.dhead` and the head's weight gradients.
    fn loss_and_head_backward(&mut self, smoothing: f32) -> Result<()> {
        let cfg = self.cfg;
        let acts = self.acts;
        let c = cfg.d_model;
        let (b, t) = (self.b, self.t);
        let last = acts.stacks.last().ok_or_else(|| missing("a stack"))?;
        let x = last.out().clone();
        self.rec.clear(&acts.dhead, b * t * c)?;
        match (&self.params.head, &self.grads.head) {
            (
                HeadParams::Lm { weight, bias },
                HeadParams::Lm {
                    weight: gw,
                    bias: gb,
                },
            ) => {
                let v = cfg.vocab_size;
                let rows = b * t;
                let w = weight.as_ref().unwrap_or(&self.params.embed);
                let dw = gw.as_ref().unwrap_or(&self.grads.embed);
                self.rec.matmul(&MatmulArgs::linear(
                    &x,
                    w,
                    bias.as_ref(),
                    &acts.logits,
                    (rows, c, v),
                ))?;
                self.rec.clear(&acts.dlogits, rows * v)?;
                self.rec.cross_entropy(&CrossEntropyArgs {
                    logits: &acts.logits,
                    targets: &acts.targets,
                    ignore: Some(self.pad),
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
                HeadParams::Classifier { weight, bias },
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
                self.rec.matmul(&MatmulArgs {
                    a: first(&x),
                    w: weight,
                    w_offset: 0,
                    bias: Some(bias),
                    b_offset: 0,
                    out: Rows::dense(&acts.logits, k),
                    m: b,
                    k: c,
                    n: k,
                })?;
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

    fn backward(&mut self) -> Result<()> {
        let plan = self.plan;
        let acts = self.acts;
        // The decoder's cross-attention adds the memory's gradient; it is the encoder's
        // output gradient.
        for sa in &acts.stacks {
            if let Some(dm) = &sa.dmem {
                self.rec.clear(dm, self.b * self.s * self.cfg.d_model)?;
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
        let cfg = self.cfg;
        let acts = self.acts;
        let sa = &acts.stacks[si];
        let params = stack_of(self.params, sp.site)?;
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
                    Some(mask) if self.drop.is_some() => {
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
                        let ablate = self.ablation(sp.site, li)?;
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
                        let ablate = self.ablation(AttnSite::Cross, li)?;
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
                        if let (Some(mask), true) = (&fa.mask, self.drop.is_some()) {
                            self.rec.dropout_backward(mask, &sa.dh, n * f)?;
                        }
                        self.rec.clear(&sa.dpre, n * f)?;
                        self.rec.activation_backward(
                            &sa.dh,
                            &fa.pre,
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
        if let (Some(mask), true) = (&sa.emb_mask, self.drop.is_some()) {
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
        let c = self.cfg.d_model;
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
        let cfg = self.cfg;
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
        let drop_mask = match (&a.dropped, self.drop.is_some()) {
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
        let alpha = 1.0 / self.divisor();
        let tables = self.tables;
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
        if let (Some(rot), false) = (tables.rope.as_ref(), cross) {
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

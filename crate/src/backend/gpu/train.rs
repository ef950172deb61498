//! A whole training step on the GPU: `train::step::train_step` with the weights, Adam's
//! moments, every activation the backward pass reads and every gradient resident on the
//! device.
//!
//! One step records, into one command encoder: the train-mode forward pass — the same walk
//! of the layer plan as inference (`super::pass`), keeping each activation the backward
//! needs in its own buffer ([`Acts`]) — the cross-entropy with label smoothing, the
//! backward pass walking the layer plan in reverse ([`backward`],
//! `train::backward::model::model_backward`'s order), global-norm clipping and Adam
//! ([`GpuAdam::record_step`]). It is submitted once and one small readback brings the
//! loss and the gradient norm. The activation buffers are sized for the batch and made
//! again only when a batch is larger in B, T or S than any before.

mod backward;

use super::activations::Acts;
use super::context::{GpuBuffer, GpuContext, ReadSlot};
use super::model::check_fits;
use super::optim::GpuAdam;
use super::pass::{Keep, Pass, Weights};
use super::positions::PositionTables;
use super::LrRule;
use crate::backend::LayerStats;
use crate::config::{ModelConfig, Norm, PosEncoding};
use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::plan::{layer_plan, HeadKind, LayerPlan};
use crate::model::{ForwardOptions, HeadParams, Mode, Model, ModelParams, ParamKind};
use crate::tasks::TrainBatch;
use crate::tensor::Tensor;
use crate::train::health::{layer_of, mean_row_norm};
use crate::train::optim::Adam;
use crate::train::step::{to_batch, StepStats};
use backward::Step;

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
    /// Position tables, grown for a longer batch.
    tables: PositionTables,
    /// (H) u32 zeros: the ablation flags of a sublayer that zeroes no head.
    no_ablation: GpuBuffer,
    acts: Option<Acts>,
    counts: StepCounts,
    /// Per layer (encoder layers first): a (1) buffer for the squared norm of the
    /// layer's gradients, and the positions of those gradients among the trained ones
    /// (in `Model::visit_params` order), found once from their names.
    layer_grads: Vec<(GpuBuffer, Vec<usize>)>,
}

/// What a step reads back beyond its [`StepStats`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Report {
    /// Nothing more.
    Stats,
    /// Every trained tensor's gradient (tests).
    Grads,
    /// Per layer, the gradient's and the residual stream's norms (the lab).
    Layers,
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
        let tables = PositionTables::new(ctx, cfg, params.pos_embed.as_ref(), cfg.max_len)?;
        let no_ablation = ctx.zeros("no ablated heads", cfg.n_heads)?; // (H) u32 zeros
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
        let n_enc = cfg.encoder_layers();
        let mut layer_grads = (0..n_enc + cfg.decoder_layers())
            .map(|_| Ok((ctx.zeros("squared layer gradient norm", 1)?, vec![])))
            .collect::<Result<Vec<_>>>()?;
        let mut i = 0;
        grads.visit(&mut |name, _, k| {
            if k == ParamKind::Trained {
                if let Some((_, list)) = layer_of(name, n_enc).and_then(|l| layer_grads.get_mut(l))
                {
                    list.push(i);
                }
                i += 1;
            }
        });
        Ok(GpuTrainer {
            layer_grads,
            ctx: ctx.clone(),
            plan: layer_plan(cfg),
            shell,
            adam: gadam,
            params,
            grads,
            tables,
            no_ablation,
            acts: None,
            counts: StepCounts::default(),
        })
    }

    fn cfg(&self) -> &ModelConfig {
        &self.shell.config
    }

    /// Counts of the last step.
    pub fn counts(&self) -> StepCounts {
        self.counts
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
        let (stats, _, _) = self
            .run(tb, opts, smoothing, lr, clip, Report::Stats)
            .await?;
        Ok(stats)
    }

    /// [`GpuTrainer::step`], also measuring per layer the gradient's norm (before
    /// clipping, on the GPU) and the residual stream's norm (its readback, reduced as the
    /// CPU reduces its own): what the lab plots per step.
    pub async fn step_watched(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
    ) -> Result<(StepStats, LayerStats)> {
        let opts = ForwardOptions {
            trace_hidden: true,
            ..opts.clone()
        };
        let (stats, _, layers) = self
            .run(tb, &opts, smoothing, lr, clip, Report::Layers)
            .await?;
        Ok((stats, layers))
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
        let (stats, grads, _) = self
            .run(tb, opts, smoothing, lr, clip, Report::Grads)
            .await?;
        Ok((stats, grads))
    }

    async fn run(
        &mut self,
        tb: &TrainBatch,
        opts: &ForwardOptions,
        smoothing: f32,
        lr: f32,
        clip: Option<f32>,
        report: Report,
    ) -> Result<(StepStats, Vec<(String, Vec<f32>)>, LayerStats)> {
        self.check(tb, opts)?;
        let cfg = self.shell.config.clone();
        self.tables.grow(&self.ctx, &cfg, tb.t.max(tb.s))?;
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
        let mut grad_list: Vec<(String, GpuBuffer)> = vec![];
        self.grads.visit(&mut |name, g, k| {
            if k == ParamKind::Trained {
                grad_list.push((name.to_string(), g.clone()));
            }
        });
        // Gradients add up from zero.
        for (_, g) in &grad_list {
            rec.clear(g, g.len())?;
        }
        // The forward pass, keeping what the backward reads, and the head's logits.
        let weights = Weights {
            cfg: &self.shell.config,
            pad: self.shell.tokenizer.spec.pad,
            params: &self.params,
            tables: &self.tables,
            no_ablation: &self.no_ablation,
        };
        let (drops, hidden) = {
            let mut pass = Pass::new(weights, opts, &mut rec, Keep::ForBackward(acts));
            let src = (cfg.arch == crate::config::Arch::EncoderDecoder).then_some(&acts.src);
            let x = pass.stacks(&self.plan.stacks, (&acts.tokens, src), (tb.b, tb.t, tb.s))?;
            pass.head_into(&x, (tb.b, tb.t), &acts.logits)?;
            (pass.drops(), pass.take_hidden())
        };
        {
            let mut st = Step {
                w: weights,
                plan: &self.plan,
                grads: &self.grads,
                acts,
                opts,
                rec: &mut rec,
                drops,
                b: tb.b,
                t: tb.t,
                s: tb.s,
            };
            st.loss_and_head_backward(smoothing)?;
            st.backward()?;
        }
        let mut observed: Vec<(String, ReadSlot)> = vec![];
        if report == Report::Grads {
            for (name, g) in &grad_list {
                observed.push((name.clone(), rec.read_all(g)?));
            }
        }
        let mut layer_slots = vec![];
        if report == Report::Layers {
            for (acc, members) in &self.layer_grads {
                let list: Vec<(&GpuBuffer, usize)> = members
                    .iter()
                    .map(|&i| (&grad_list[i].1, grad_list[i].1.len()))
                    .collect();
                if list.is_empty() {
                    rec.clear(acc, 1)?;
                } else {
                    rec.grad_norm_squared(&list, acc)?;
                }
                layer_slots.push(rec.read(acc, 0, 1)?);
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
        let mut layers = LayerStats::default();
        if report == Report::Layers {
            layers.grad_norms = layer_slots.iter().map(|&s| back.f32(s)[0].sqrt()).collect();
            for (_, slots, [b, t, c]) in &hidden {
                for &s in slots.iter().skip(1) {
                    let data = back.f32(s);
                    let data = &data[..(b * t * c).min(data.len())];
                    layers.residual_norms.push(mean_row_norm(data, *c));
                }
            }
        }
        Ok((
            StepStats {
                loss: back.f32(loss_slot)[0],
                grad_norm: back.f32(norm_slot)[0].max(0.0).sqrt(),
                lr,
            },
            grads,
            layers,
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
        let cap = match &self.acts {
            Some(a) if tb.b <= a.cap.0 && tb.t <= a.cap.1 && tb.s <= a.cap.2 => return Ok(()),
            Some(a) => (tb.b.max(a.cap.0), tb.t.max(a.cap.1), tb.s.max(a.cap.2)),
            None => (tb.b, tb.t, tb.s),
        };
        // Drop the old buffers before making the new ones.
        self.acts = None;
        self.acts = Some(Acts::alloc(&self.ctx, &self.shell.config, &self.plan, cap)?);
        Ok(())
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

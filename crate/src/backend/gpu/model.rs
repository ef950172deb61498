//! A model's weights resident on one device ([`GpuWeights`]) and its forward pass there
//! ([`GpuModel`]): every kernel of a pass recorded into one command encoder by the one GPU
//! walk of the layer plan (`super::pass`), one submission, one readback of the logits and
//! of the trace parts asked for. Equal to `Model::forward` within float rounding; train
//! mode too (dropout masks from the pass's seed in the CPU's order, BatchNorm with the
//! batch's statistics and its running-statistic updates in the trace).

use std::sync::Arc;

use super::context::{GpuBuffer, GpuContext, Readback};
use super::pass::{CacheRun, Keep, Pass, Weights};
use super::positions::PositionTables;
use super::trace::TracePlan;
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::plan::layer_plan;
use crate::model::{ForwardOptions, Model, ModelParams, Trace};

/// A model's parameters resident on one device, plus the constant position tables the
/// kernels read, computed once on the CPU.
pub struct GpuWeights {
    config: ModelConfig,
    pad_id: u32,
    /// Every parameter, uploaded under its checkpoint name, in the model's shape.
    params: ModelParams<GpuBuffer>,
    /// Covering max_len positions.
    tables: PositionTables,
    /// (H) u32 zeros: the ablation flags of a sublayer that zeroes no head.
    no_ablation: GpuBuffer,
}

/// Refuse, before anything is allocated, a model that this device cannot run: a parameter,
/// or an activation of one full-length (`max_len`) sequence, larger than the largest
/// buffer the device binds. The error names the tensor and the limit.
pub fn check_fits(ctx: &GpuContext, model: &Model) -> Result<()> {
    let mut largest = (String::new(), 0usize);
    model.visit_params(&mut |name, t, _| {
        if t.numel() > largest.1 {
            largest = (name.to_string(), t.numel());
        }
    });
    ctx.check_buffer_size(&format!("parameter {}", largest.0), largest.1)?;
    let cfg = &model.config;
    let (t, c) = (cfg.max_len, cfg.d_model);
    for (what, n) in [
        (
            "the attention scores of a max_len sequence",
            cfg.n_heads * t * t,
        ),
        ("the logits of a max_len sequence", t * cfg.vocab_size),
        ("the Q|K|V projections of a max_len sequence", t * 3 * c),
        ("the FFN hidden layer of a max_len sequence", t * cfg.d_ff),
    ] {
        ctx.check_buffer_size(what, n)?;
    }
    Ok(())
}

impl GpuWeights {
    /// Upload every parameter of `model` after [`check_fits`].
    pub fn upload(ctx: &GpuContext, model: &Model) -> Result<GpuWeights> {
        check_fits(ctx, model)?;
        let cfg = &model.config;
        // One walk uploads every parameter under its checkpoint name.
        let params = model.try_map_params(&mut |name, t, _| ctx.upload(name, &t.data))?;
        let tables = PositionTables::new(ctx, cfg, params.pos_embed.as_ref(), cfg.max_len)?;
        Ok(GpuWeights {
            config: cfg.clone(),
            pad_id: model.tokenizer.spec.pad,
            params,
            tables,
            no_ablation: ctx.zeros("no ablated heads", cfg.n_heads)?, // (H) u32
        })
    }

    /// A pass's view of these weights, with position tables covering `len` positions.
    pub(super) fn view<'a>(&'a self, tables: &'a PositionTables) -> Weights<'a> {
        Weights {
            cfg: &self.config,
            pad: self.pad_id,
            params: &self.params,
            tables,
            no_ablation: &self.no_ablation,
        }
    }

    pub(super) fn tables(&self) -> &PositionTables {
        &self.tables
    }
}

/// A model uploaded to a GPU: run forward passes on it.
#[derive(Clone)]
pub struct GpuModel {
    ctx: GpuContext,
    weights: Arc<GpuWeights>,
}

impl GpuModel {
    /// Upload `model`'s weights to `ctx`'s device.
    pub fn upload(ctx: &GpuContext, model: &Model) -> Result<GpuModel> {
        Ok(GpuModel {
            ctx: ctx.clone(),
            weights: Arc::new(GpuWeights::upload(ctx, model)?),
        })
    }

    pub fn config(&self) -> &ModelConfig {
        &self.weights.config
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    pub(super) fn weights(&self) -> &GpuWeights {
        &self.weights
    }

    /// The forward pass of docs/model.md on the GPU, equal to `Model::forward` within
    /// float rounding: one submission, one readback. Eval mode only.
    ///
    /// `model` must be the model these weights came from; it supplies the input checks.
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        let (readback, plan) = self.record(model, batch, opts)?;
        let data = readback.await?;
        Ok(plan.build(&data))
    }

    /// Check the inputs, record every kernel and submit. Synchronous: the returned future
    /// only waits for the results.
    #[allow(clippy::type_complexity)]
    fn record(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<(
        impl std::future::Future<Output = Result<Readback>>,
        TracePlan,
    )> {
        self.check_model(model)?;
        model.check_pass(batch, opts)?;
        let w = &*self.weights;
        let ctx = &self.ctx;
        let (b, t) = (batch.batch, batch.len);
        let longest = t.max(batch.src_len);
        let tables = w.tables.covering(ctx, &w.config, longest)?;
        let tokens = ctx.upload_u32("tokens", &batch.tokens)?; // (B, T)
        let src = match &batch.src_tokens {
            Some(src) => Some(ctx.upload_u32("source tokens", src)?), // (B, S)
            None => None,
        };
        let plan = layer_plan(&w.config);
        let mut rec = ctx.recorder()?;
        let trace = {
            let mut pass = Pass::new(w.view(&tables), opts, &mut rec, Keep::Nothing);
            let x = pass.stacks(&plan.stacks, (&tokens, src.as_ref()), (b, t, batch.src_len))?;
            let head = pass.head(&x, (b, t))?;
            pass.into_trace(head)
        };
        Ok((rec.finish(), trace))
    }

    /// Refuse a model that is not the one these weights came from.
    pub(super) fn check_model(&self, model: &Model) -> Result<()> {
        if model.config != self.weights.config {
            return Err(Error::Gpu(
                "this model is not the one uploaded to the GPU (the configs differ)".into(),
            ));
        }
        Ok(())
    }

    /// Record a pass through the KV cache into `rec` (which may already hold the cache's
    /// beam reorder) and submit it (`Pass::cached`), with position tables covering the
    /// cache's capacity. The caller has checked the inputs
    /// (crate/src/backend/gpu/cache.rs).
    #[allow(clippy::type_complexity)]
    pub(super) fn record_cached(
        &self,
        mut rec: super::Recorder,
        tokens: &GpuBuffer,
        (b, t): (usize, usize),
        opts: &ForwardOptions,
        (cache, tables): (&CacheRun, &PositionTables),
    ) -> Result<(
        impl std::future::Future<Output = Result<Readback>>,
        TracePlan,
    )> {
        let w = &*self.weights;
        let plan = layer_plan(&w.config);
        let trace = {
            let mut pass = Pass::new(w.view(tables), opts, &mut rec, Keep::Nothing);
            let x = pass.cached(&plan.stacks, tokens, (b, t), cache)?;
            let head = pass.head(&x, (b, t))?;
            pass.into_trace(head)
        };
        Ok((rec.finish(), trace))
    }
}

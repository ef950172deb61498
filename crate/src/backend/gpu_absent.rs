//! The WebGPU backend's place in a build without it (the page's inference engine, built
//! without the `gpu` feature): the same names, of types that have no value, so every path
//! through them is known to be unreachable and compiled away. Asking for a device is the
//! one way in, and it says that this engine has no GPU; the page moves a session that
//! asks for WebGPU to the whole engine (www/src/engine/worker.ts).

use crate::error::{Error, Result};
use crate::model::cache::StepOutput;
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};
use crate::tasks::TrainBatch;
use crate::train::optim::Adam;
use crate::train::step::StepStats;

pub use super::{GpuStats, LayerStats};

/// Never made: asking for one fails.
#[derive(Clone, Debug)]
pub enum GpuContext {}

impl GpuContext {
    pub async fn request() -> Result<GpuContext> {
        Err(Error::Gpu(
            "this engine was built without its WebGPU backend".into(),
        ))
    }

    pub fn adapter_name(&self) -> &str {
        match *self {}
    }

    pub fn is_software(&self) -> bool {
        match *self {}
    }

    pub fn stats(&self) -> GpuStats {
        match *self {}
    }

    pub fn test_only_lose(&self) {
        match *self {}
    }
}

/// Never made (there is no [`GpuContext`]).
#[derive(Clone)]
pub enum GpuModel {}

impl GpuModel {
    pub fn upload(ctx: &GpuContext, _model: &Model) -> Result<GpuModel> {
        match *ctx {}
    }

    pub fn context(&self) -> &GpuContext {
        match *self {}
    }

    pub async fn forward(&self, _: &Model, _: &Batch, _: &ForwardOptions) -> Result<Trace> {
        match *self {}
    }

    pub async fn prefill(
        &self,
        _: &Model,
        _: &Batch,
        _: &ForwardOptions,
        _: Option<usize>,
    ) -> Result<(GpuKvCache, Trace)> {
        match *self {}
    }
}

/// Never made (there is no [`GpuModel`]).
pub enum GpuKvCache {}

impl GpuKvCache {
    pub async fn decode_step(
        &mut self,
        _: &Model,
        _: &[u32],
        _: &ForwardOptions,
    ) -> Result<StepOutput> {
        match *self {}
    }

    pub fn select(&mut self, _: &[usize]) -> Result<()> {
        match *self {}
    }

    pub fn len(&self) -> usize {
        match *self {}
    }

    pub fn is_empty(&self) -> bool {
        match *self {}
    }
}

/// Never made (there is no [`GpuContext`]).
pub enum GpuTrainer {}

impl GpuTrainer {
    pub fn new(ctx: &GpuContext, _: &Model, _: &Adam) -> Result<GpuTrainer> {
        match *ctx {}
    }

    pub async fn step_watched(
        &mut self,
        _: &TrainBatch,
        _: &ForwardOptions,
        _: f32,
        _: f32,
        _: Option<f32>,
    ) -> Result<(StepStats, LayerStats)> {
        match *self {}
    }

    pub async fn download(&self, _: &mut Model) -> Result<Adam> {
        match *self {}
    }
}

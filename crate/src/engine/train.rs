//! Training runs in the lab: one session per engine, placed on the backend its settings
//! choose (`train::session`).

use crate::backend::{Backend, GpuContext};
use crate::error::{Error, Result};
use crate::protocol::{
    RunDefaults, RunDefaultsRequest, RunSettings, TrainBackendChoice, TrainChunk,
    TrainChunkRequest, TrainStarted,
};
use crate::train::session::Session;

use super::{model_info, Engine};

impl Engine {
    /// The settings a task's runs start from (its shipped recipe, or its nano preset),
    /// with a line about every field and why a field does not apply. Needs no model.
    pub fn run_defaults(&self, req: &RunDefaultsRequest) -> Result<RunDefaults> {
        RunSettings::defaults(&req.task)
    }

    /// What a run with `settings` will need (memory, storage, the largest GPU buffer),
    /// for the page to compare with the device before it starts. Needs no model.
    pub fn run_footprint(
        &self,
        settings: &RunSettings,
    ) -> Result<crate::train::footprint::RunFootprint> {
        crate::train::footprint::RunFootprint::of(settings)
    }

    /// Start a training run (a fresh model from the settings' seed) on the backend its
    /// settings choose (`Session::place`); any earlier run of this engine is dropped. Bad
    /// settings are refused by field, and nothing changes.
    pub async fn train_start(&mut self, settings: &RunSettings) -> Result<TrainStarted> {
        let session = Session::new(settings.clone())?;
        self.begin_run(session).await
    }

    /// The device a run may train on: the engine's own when it runs on one, else a new one.
    async fn training_gpu(&self) -> Result<GpuContext> {
        match &self.backend {
            Backend::Gpu(ctx) => Ok(ctx.clone()),
            Backend::Cpu => GpuContext::request().await,
        }
    }

    async fn begin_run(&mut self, mut session: Session) -> Result<TrainStarted> {
        let gpu = match session.settings().backend {
            TrainBackendChoice::Cpu => Err(Error::Gpu("not asked for".into())),
            _ => self.training_gpu().await,
        };
        session.place(gpu).await?;
        let out = TrainStarted {
            info: model_info(session.model()),
            settings: session.settings().clone(),
            command: session.spec().args(),
            backend: session.backend().clone(),
        };
        self.session = Some(session);
        Ok(out)
    }

    fn session(&mut self) -> Result<&mut Session> {
        self.session
            .as_mut()
            .ok_or_else(|| Error::Input("no training run: call trainStart first".into()))
    }

    /// The next chunk of the run's steps. A failed step (a diverged loss) ends the run:
    /// later chunks are refused with the same reason; its last weights can still be
    /// exported. A GPU failure is not one: the run goes on on the CPU and says so.
    pub async fn train_chunk(&mut self, req: &TrainChunkRequest) -> Result<TrainChunk> {
        self.session()?.step_chunk(req).await
    }

    /// The run's state besides its weights (`Session::state`); with `train_export` taken
    /// right before or after it, `train_resume` continues the run exactly.
    pub async fn train_export_state(&mut self) -> Result<Vec<u8>> {
        let s = self.session()?;
        s.sync_weights().await;
        s.state()
    }

    /// Continue a saved run (its settings, weights and state) on the backend its settings
    /// choose; any earlier run of this engine is dropped. Bytes that do not fit are
    /// refused with the reason.
    pub async fn train_resume(
        &mut self,
        settings: &RunSettings,
        checkpoint: &[u8],
        state: &[u8],
    ) -> Result<TrainStarted> {
        let session = Session::resume(settings.clone(), checkpoint, state)?;
        self.begin_run(session).await
    }

    /// The run's model as it is now (copied back from the GPU first), as checkpoint bytes
    /// (DESIGN.md §3).
    pub async fn train_export(&mut self) -> Result<Vec<u8>> {
        let s = self.session()?;
        s.sync_weights().await;
        s.checkpoint()
    }
}

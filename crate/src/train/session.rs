//! A training run in chunks, for the lab: the page asks for a chunk of steps (sized by
//! time), plots what comes back, and pausing is simply not asking for the next chunk.
//!
//! A session's steps are the [`Trainer`]'s own (`Trainer::train_step_with`, the step
//! `train_pytorch.rs` holds to PyTorch), watched: per step it reports the loss, the
//! learning rate, the gradient norm, and per layer the residual stream's norm and the
//! gradient's norm; every `eval_every` steps (and at the end) the held-out loss and the
//! task's metric, as `tplay train` evaluates them. Its health is watched (`health.rs`): a
//! step that gives a NaN or an infinity stops the run with an alarm naming where, and
//! warnings (an update too large, attention collapsed early, a gradient exploding) go out
//! with the chunk.
//!
//! The page's form of a run, its checks and its conversion to a [`RunSpec`] are in
//! `settings.rs`.

use crate::backend::gpu::{GpuContext, GpuTrainer, LayerStats};
use crate::backend::race::Handicap;
use crate::error::{Error, Result};
use crate::generate::clock::Stopwatch;
use crate::model::Model;
use crate::protocol::{
    AlarmKind, BackendName, EvalPoint, HealthAlarm, RunBackend, RunSettings, TrainBackendChoice,
    TrainChunk, TrainChunkRequest, TrainPoint,
};

use super::eval::evaluate;
use super::health::{self, poison_layer, HEALTH_EVERY};
use super::optim::grad_norm;
use super::race;
use super::run::RunSpec;
use super::settings::field_err;
use super::step::{LossGrads, StepStats};
use super::trainer::{Trainer, TrainerState};

/// Held-out examples of a periodic evaluation and of the final one, and their seed: the
/// numbers `tplay train --eval-every` uses (its default `--eval-examples` is 500).
pub const EVAL_EXAMPLES: usize = 200;
pub const FINAL_EVAL_EXAMPLES: usize = 500;
pub const EVAL_SEED: u64 = 1;

/// A training run taken a chunk at a time.
///
/// On the GPU ([`Session::place`]) the weights stay on the device across steps and chunks;
/// the session's CPU copy (`trainer`'s model and optimiser) is brought up to date at the
/// end of every chunk and before every evaluation, and a chunk reports its points only
/// once their weights are copied back. Any GPU failure puts the run back on that copy (the
/// last step copied back, the data generator where it stood then) and the CPU takes the
/// steps from there, the same steps: nothing reported is lost, the curve goes on.
pub struct Session {
    /// The run's data generator and step count; its model and optimiser are the run's on
    /// the CPU, and the last copy back while the run trains on the GPU.
    trainer: Trainer<'static>,
    settings: RunSettings,
    spec: RunSpec,
    /// Compute time so far (pauses between chunks excluded).
    elapsed_ms: f64,
    gpu: Option<OnGpu>,
    backend: RunBackend,
    /// Test-only: the GPU fails as it is about to take this step.
    fail_gpu_at: Option<u64>,
    /// Test-only: busy time added to each side of the backend race.
    handicap: Handicap,
    /// Test-only: a weight of this layer (from 0) turns NaN before the next step.
    nan_at_layer: Option<usize>,
    /// The alarm the run stopped at (a NaN or an infinity); no step is taken after it.
    halted: Option<HealthAlarm>,
    /// Warnings given so far (each once per run).
    warned: Vec<(AlarmKind, u32)>,
}

/// What one CPU step gave: its point, or the alarm the run stops at.
enum Stepped {
    Point(TrainPoint),
    Stopped(HealthAlarm),
}

/// A run's steps on a GPU device.
struct OnGpu {
    ctx: GpuContext,
    trainer: GpuTrainer,
    /// The step and data position of the session's CPU copy (its last copy back).
    synced_step: u64,
    synced_data: u128,
}

/// A core error's own sentence, without its kind ("GPU backend: …").
fn sentence(e: &Error) -> String {
    match e {
        Error::Config(m)
        | Error::Checkpoint(m)
        | Error::Input(m)
        | Error::Gpu(m)
        | Error::Other(m) => m.clone(),
    }
}

/// A GPU health step's inputs, and the weights before it (copied back).
struct Watched {
    before: Model,
    tb: crate::tasks::TrainBatch,
    fwd: crate::model::ForwardOptions,
}

impl Session {
    /// A fresh model for the settings, initialised from their seed, trained on the CPU
    /// until [`Session::place`] moves it.
    pub fn new(settings: RunSettings) -> Result<Session> {
        let spec = settings.to_spec()?;
        let task = spec.task()?;
        let cfg = spec.model_config(task.as_ref())?;
        let opts = spec.train_options()?;
        let trainer = Trainer::owning(task, cfg, opts)?;
        let backend = match settings.backend {
            TrainBackendChoice::Cpu => RunBackend::CpuChosen,
            _ => RunBackend::CpuNoGpu {
                detail: "no GPU device was offered to the run".into(),
            },
        };
        Ok(Session {
            trainer,
            settings,
            spec,
            elapsed_ms: 0.0,
            gpu: None,
            backend,
            fail_gpu_at: None,
            handicap: Handicap::default(),
            nan_at_layer: None,
            halted: None,
            warned: vec![],
        })
    }

    /// Where the run's steps go, as its settings choose: `gpu` is a device (or why there is
    /// none), asked for only when the settings may use one. `auto` takes the device when
    /// the GPU trainer takes the model and, timed on the run's next steps (`race.rs`, the
    /// run itself untouched), the GPU agrees with the CPU and is faster per step; else it
    /// stays on the CPU saying why, with the figures. `webgpu` insists, unmeasured, and
    /// refuses the run with the reason where it cannot start there; `cpu` stays on the CPU.
    pub async fn place(&mut self, gpu: Result<GpuContext>) -> Result<()> {
        let choice = self.settings.backend;
        if choice == TrainBackendChoice::Cpu {
            self.gpu = None;
            self.backend = RunBackend::CpuChosen;
            return Ok(());
        }
        let insist = choice == TrainBackendChoice::Webgpu;
        let ctx = match gpu {
            Ok(ctx) => ctx,
            Err(e) if insist => {
                return Err(field_err(
                    "backend",
                    format!(
                        "WebGPU was asked for but there is no GPU device: {}",
                        sentence(&e)
                    ),
                ))
            }
            Err(e) => {
                self.backend = RunBackend::CpuNoGpu {
                    detail: sentence(&e),
                };
                return Ok(());
            }
        };
        let adapter = ctx.adapter_name().to_string();
        match GpuTrainer::new(&ctx, &self.trainer.model, self.trainer.adam()) {
            Ok(trainer) => {
                self.backend = if insist {
                    RunBackend::Webgpu { adapter }
                } else {
                    race::measured(&ctx, &self.trainer, adapter, self.handicap).await
                };
                if self.backend.name() == BackendName::Webgpu {
                    self.gpu = Some(OnGpu {
                        ctx,
                        trainer,
                        synced_step: self.trainer.step,
                        synced_data: self.trainer.data_position(),
                    });
                }
                Ok(())
            }
            Err(e) if insist => Err(field_err(
                "backend",
                format!(
                    "WebGPU was asked for but it cannot train this model: {}",
                    sentence(&e)
                ),
            )),
            Err(e) => {
                self.backend = RunBackend::CpuRefused {
                    detail: sentence(&e),
                };
                Ok(())
            }
        }
    }

    /// Test-only: busy time added to every timed step of each side of the race an `auto`
    /// run's [`Session::place`] runs, so that tests can make either side lose.
    #[doc(hidden)]
    pub fn test_only_race_with_handicap(&mut self, handicap: Handicap) {
        self.handicap = handicap;
    }

    /// Where the steps run now, and why.
    pub fn backend(&self) -> &RunBackend {
        &self.backend
    }

    /// Test-only: the GPU fails (as a lost device would) when it is about to take `step`.
    #[doc(hidden)]
    pub fn test_only_fail_gpu_at(&mut self, step: u64) {
        self.fail_gpu_at = Some(step);
    }

    /// Test-only: one weight of layer `layer` (from 0, the plots' order; its FFN's first
    /// linear layer) turns NaN before the next step, wherever the run trains; the run must
    /// stop there and name that layer. False when the model has no such layer.
    #[doc(hidden)]
    pub fn test_only_nan_at_layer(&mut self, layer: usize) -> bool {
        let cfg = &self.trainer.model.config;
        if layer >= cfg.encoder_layers() + cfg.decoder_layers() {
            return false;
        }
        self.nan_at_layer = Some(layer);
        true
    }

    /// Test-only: destroy the run's GPU device now, as a driver reset would (true when the
    /// run had one); its next GPU call fails and the run goes on on the CPU.
    pub fn test_only_lose_gpu(&self) -> bool {
        match &self.gpu {
            Some(g) => {
                g.ctx.test_only_lose();
                true
            }
            None => false,
        }
    }

    /// Bring the CPU copy up to the GPU's weights (nothing to do on the CPU or when it is
    /// up to date). `Err` only from the GPU; the copy is unchanged then.
    async fn copy_back(&mut self) -> Result<()> {
        let Some(g) = self.gpu.as_mut() else {
            return Ok(());
        };
        if g.synced_step == self.trainer.step {
            return Ok(());
        }
        let mut model = self.trainer.model.clone();
        let adam = g.trainer.download(&mut model).await?;
        self.trainer.set_weights(model, adam);
        g.synced_step = self.trainer.step;
        g.synced_data = self.trainer.data_position();
        Ok(())
    }

    /// The GPU failed taking step `step` (or copying back after it): the run goes on on the
    /// CPU from its last copy back. Returns the steps given up (taken on the GPU since).
    fn fall_back(&mut self, step: u64, e: &Error) -> u64 {
        let Some(g) = self.gpu.take() else {
            return 0;
        };
        let lost = self.trainer.step - g.synced_step;
        self.trainer.rewind(g.synced_step, g.synced_data);
        self.backend = RunBackend::CpuLost {
            step,
            from: g.synced_step,
            detail: sentence(e),
        };
        lost
    }

    /// Copy the GPU's weights back so that [`Session::checkpoint`] and [`Session::state`]
    /// are the run's now. A GPU failure moves the run to the CPU (from its last copy back,
    /// which between chunks is the run's last step).
    pub async fn sync_weights(&mut self) {
        let step = self.trainer.step;
        if let Err(e) = self.copy_back().await {
            self.fall_back(step, &e);
        }
    }

    /// One step on the GPU: its statistics and per-layer norms (`Err`: the GPU failed),
    /// not yet counted.
    /// One step on the GPU. On a health step (the first, then every `HEALTH_EVERY`th) the
    /// weights are copied back before it, and the step's inputs are handed back with that
    /// copy, for its update ratios and attention entropy once its weights are back too.
    async fn gpu_step(&mut self) -> Result<(StepStats, LayerStats, Option<Watched>)> {
        if let Some(layer) = self.nan_at_layer.take() {
            // The test's NaN goes into the weights the GPU holds and into the CPU copy
            // (brought up to date first), so that either side meets it.
            self.copy_back().await?;
            poison_layer(&mut self.trainer.model, layer);
            if let Some(g) = self.gpu.as_mut() {
                g.trainer = GpuTrainer::new(&g.ctx, &self.trainer.model, self.trainer.adam())?;
            }
        }
        let next = self.trainer.step + 1;
        let check = next == 1 || next.is_multiple_of(HEALTH_EVERY);
        if check {
            self.copy_back().await?;
        }
        let before = check.then(|| self.trainer.model.clone());
        let (tb, fwd, lr) = self.trainer.next_step_inputs(false);
        let smoothing = self.trainer.opts.label_smoothing;
        let clip = self.trainer.opts.clip;
        let Some(g) = self.gpu.as_mut() else {
            return Err(Error::Gpu("the run has no GPU".into()));
        };
        if self.fail_gpu_at == Some(next) {
            return Err(Error::Gpu(
                "the GPU device was lost (a test-only failure)".into(),
            ));
        }
        let (stats, layers) = g
            .trainer
            .step_watched(&tb, &fwd, smoothing, lr, clip)
            .await?;
        Ok((
            stats,
            layers,
            before.map(|before| Watched { before, tb, fwd }),
        ))
    }

    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// The command line's form of this run.
    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }

    pub fn model(&self) -> &Model {
        &self.trainer.model
    }

    /// Steps taken.
    pub fn step(&self) -> u64 {
        self.trainer.step
    }

    pub fn is_done(&self) -> bool {
        self.trainer.step >= self.settings.steps
    }

    /// The model as it is now, as checkpoint bytes (DESIGN.md §3).
    pub fn checkpoint(&self) -> Result<Vec<u8>> {
        crate::checkpoint::save(&self.trainer.model)
    }

    /// The run's state besides its weights (Adam's moments, the data generator, the step,
    /// the compute time), as safetensors bytes: with [`Session::checkpoint`] taken at the
    /// same moment, [`Session::resume`] continues the run exactly.
    pub fn state(&self) -> Result<Vec<u8>> {
        let st = self.trainer.state();
        let to_bytes = |x: &[f32]| x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
        let mut tensors: Vec<(String, usize, Vec<u8>)> = vec![];
        for (i, (m, v)) in st.m.iter().zip(&st.v).enumerate() {
            tensors.push((format!("m.{i:05}"), m.len(), to_bytes(m)));
            tensors.push((format!("v.{i:05}"), v.len(), to_bytes(v)));
        }
        let views = tensors
            .iter()
            .map(|(n, len, b)| {
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![*len], b)
                    .map(|v| (n.clone(), v))
                    .map_err(|e| Error::Other(format!("cannot store the optimiser state: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let metadata = std::collections::HashMap::from([
            ("step".to_string(), st.step.to_string()),
            ("adam_step".to_string(), st.adam_step.to_string()),
            ("rng_word_pos".to_string(), st.rng_word_pos.to_string()),
            ("elapsed_ms".to_string(), self.elapsed_ms.to_string()),
            ("tensors".to_string(), st.m.len().to_string()),
        ]);
        safetensors::serialize(views, Some(metadata))
            .map_err(|e| Error::Other(format!("cannot store the optimiser state: {e}")))
    }

    /// Continue a run from its weights and state, saved together at one step.
    pub fn resume(settings: RunSettings, checkpoint: &[u8], state: &[u8]) -> Result<Session> {
        let mut session = Session::new(settings)?;
        let model = crate::checkpoint::load(checkpoint)?;
        let bad = |why: String| Error::Input(format!("the saved run cannot continue: {why}"));
        crate::limits::check_checkpoint_bytes(state).map_err(|e| bad(e.to_string()))?;
        let st = safetensors::SafeTensors::deserialize(state)
            .map_err(|e| bad(format!("its optimiser state is not readable ({e})")))?;
        let (_, meta) = safetensors::SafeTensors::read_metadata(state)
            .map_err(|e| bad(format!("its optimiser state is not readable ({e})")))?;
        let meta = meta.metadata().clone().unwrap_or_default();
        let num = |k: &str| -> Result<u128> {
            meta.get(k)
                .and_then(|v| v.parse::<u128>().ok())
                .ok_or_else(|| bad(format!("its optimiser state has no `{k}`")))
        };
        let n = num("tensors")? as usize;
        let read = |name: String| -> Result<Vec<f32>> {
            let t = st
                .tensor(&name)
                .map_err(|_| bad(format!("its optimiser state lacks `{name}`")))?;
            if t.dtype() != safetensors::Dtype::F32 {
                return Err(bad(format!("`{name}` is not f32")));
            }
            Ok(t.data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        };
        let (mut m, mut v) = (vec![], vec![]);
        for i in 0..n.min(crate::limits::MAX_TENSORS) {
            m.push(read(format!("m.{i:05}"))?);
            v.push(read(format!("v.{i:05}"))?);
        }
        let step = num("step")? as u64;
        if step > session.settings.steps {
            return Err(bad(format!(
                "it stands at step {step}, past its {} steps",
                session.settings.steps
            )));
        }
        session.trainer.restore(
            model,
            TrainerState {
                step,
                adam_step: num("adam_step")? as u64,
                m,
                v,
                rng_word_pos: num("rng_word_pos")?,
            },
        )?;
        session.elapsed_ms = meta
            .get("elapsed_ms")
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x >= 0.0)
            .unwrap_or(0.0);
        Ok(session)
    }

    /// One step, watched: its point (without evaluation), or, when the step gives a NaN
    /// or an infinity, the alarm naming the first operation that gave it — the step is
    /// not taken (the weights stay those of the step before).
    fn one_step(&mut self) -> Result<Stepped> {
        if let Some(layer) = self.nan_at_layer.take() {
            poison_layer(&mut self.trainer.model, layer);
        }
        let next = self.trainer.step + 1;
        let check = next == 1 || next.is_multiple_of(HEALTH_EVERY);
        let data = self.trainer.data_position();
        let (tb, mut fwd, lr) = self.trainer.next_step_inputs(true);
        fwd.trace_attention = check;
        let before = check.then(|| self.trainer.model.clone());
        let cfg = self.trainer.model.config.clone();
        let mut residual_norms = vec![];
        let mut grad_norms = vec![];
        let mut attn_entropy = vec![];
        let mut finite = true;
        let taken = self
            .trainer
            .take_step(&tb, &fwd, lr, &mut |lg: &LossGrads| {
                residual_norms = health::residual_norms(&lg.trace.hidden);
                grad_norms = health::layer_grad_norms(&cfg, &lg.grads);
                if check {
                    attn_entropy = health::attention_entropy(&cfg, &lg.trace.attention);
                }
                finite = lg.loss.is_finite() && grad_norm(&lg.grads).is_finite();
            });
        if !finite {
            // Nothing was updated: the run stands where it stood before this step.
            self.trainer.rewind(next - 1, data);
            let fault = health::diagnose(
                &self.trainer.model,
                &tb,
                &fwd,
                self.trainer.opts.label_smoothing,
            );
            return Ok(Stepped::Stopped(health::stop_alarm(next, lr, fault)));
        }
        let stats = taken?;
        let update_ratios = before
            .map(|b| health::update_ratios(&b, &self.trainer.model))
            .unwrap_or_default();
        Ok(Stepped::Point(TrainPoint {
            step: self.trainer.step,
            loss: stats.loss,
            lr: stats.lr,
            grad_norm: stats.grad_norm,
            elapsed_ms: 0.0,
            eval: None,
            residual_norms,
            grad_norms,
            update_ratios,
            attn_entropy,
        }))
    }

    /// The held-out loss and the task's metric now, on `n` examples.
    pub fn evaluate(&self, n: usize) -> Result<EvalPoint> {
        let r = evaluate(&self.trainer.model, &*self.trainer.task, n, EVAL_SEED)?;
        Ok(EvalPoint {
            loss: r.held_out_loss,
            metric: r.accuracy,
            metric_name: r.metric.to_string(),
            samples: r.text_samples(),
        })
    }

    /// Train up to `max_steps` steps (at least one, unless the run is done), stopping
    /// early once `budget_ms` of compute have passed. A point per step; evaluations every
    /// `eval_every` steps and after the last step. On the GPU the weights are copied back
    /// before each evaluation and at the end of the chunk, and only steps whose weights are
    /// on the CPU are reported; a GPU failure gives up the steps taken since the last copy
    /// back and the CPU takes them again (the same batches, the same dropout masks).
    pub async fn step_chunk(&mut self, req: &TrainChunkRequest) -> Result<TrainChunk> {
        if !(req.budget_ms >= 0.0 && req.budget_ms.is_finite()) || req.max_steps == 0 {
            return Err(Error::Input(format!(
                "train chunk: needs at least one step and a time budget of 0 ms or more, got {} steps, {} ms",
                req.max_steps, req.budget_ms
            )));
        }
        if let Some(a) = &self.halted {
            return Err(Error::Input(format!(
                "the run stopped at step {}: a NaN or an infinity; start it again with other settings",
                a.step
            )));
        }
        let clock = Stopwatch::start(None);
        let mut alarms: Vec<HealthAlarm> = vec![];
        // Steps whose weights the CPU copy holds, and steps taken on the GPU since.
        let mut points: Vec<TrainPoint> = vec![];
        let mut pending: Vec<TrainPoint> = vec![];
        let every = self.settings.eval_every;
        let max = req.max_steps as usize;
        let mut out_of_time = false;
        loop {
            if self.is_done() || points.len() + pending.len() >= max || out_of_time {
                if pending.is_empty() {
                    break;
                }
                let step = self.trainer.step;
                match self.copy_back().await {
                    Ok(()) => {
                        points.append(&mut pending);
                        break;
                    }
                    Err(e) => {
                        self.fall_back(step, &e);
                        pending.clear();
                        // The CPU takes at least one step of those given up.
                        out_of_time = false;
                        continue;
                    }
                }
            }
            let mut p = if self.gpu.is_some() {
                let next = self.trainer.step + 1;
                let (stats, layers, watched) = match self.gpu_step().await {
                    Ok(s) => s,
                    Err(e) => {
                        self.fall_back(next, &e);
                        pending.clear();
                        continue;
                    }
                };
                if !(stats.loss.is_finite() && stats.grad_norm.is_finite()) {
                    // The CPU takes the steps again from the last copy back and, meeting
                    // the NaN too, names the operation that gave it.
                    self.trainer.step += 1;
                    self.fall_back(
                        next,
                        &Error::Gpu(format!(
                            "step {next} gave a NaN or an infinity on the GPU; the CPU takes the steps again to find where"
                        )),
                    );
                    pending.clear();
                    continue;
                }
                self.trainer.count_step(stats)?;
                let (update_ratios, attn_entropy) = match watched {
                    None => (vec![], vec![]),
                    Some(w) => match self.copy_back().await {
                        // The steps before this one are on the CPU now too: reported first.
                        Ok(()) => {
                            points.append(&mut pending);
                            let m = &self.trainer.model;
                            health::copied_step_health(&w.before, m, &w.tb, &w.fwd)?
                        }
                        Err(e) => {
                            self.fall_back(next, &e);
                            pending.clear();
                            continue;
                        }
                    },
                };
                TrainPoint {
                    step: next,
                    loss: stats.loss,
                    lr: stats.lr,
                    grad_norm: stats.grad_norm,
                    elapsed_ms: 0.0,
                    eval: None,
                    residual_norms: layers.residual_norms,
                    grad_norms: layers.grad_norms,
                    update_ratios,
                    attn_entropy,
                }
            } else {
                match self.one_step()? {
                    Stepped::Point(p) => p,
                    Stepped::Stopped(alarm) => {
                        // The run ends here: the steps before are all reported.
                        points.append(&mut pending);
                        self.halted = Some(alarm.clone());
                        alarms.push(alarm);
                        break;
                    }
                }
            };
            let early = p.step <= self.trainer.opts.warmup.max(100);
            alarms.extend(health::warnings(&p, early, &mut self.warned));
            let step = self.trainer.step;
            let last = self.is_done();
            if last || (every > 0 && step.is_multiple_of(every)) {
                // Evaluation reads the CPU copy: bring it up to this step first.
                if let Err(e) = self.copy_back().await {
                    self.fall_back(step, &e);
                    pending.clear();
                    continue;
                }
                points.append(&mut pending);
                let n = if last {
                    FINAL_EVAL_EXAMPLES
                } else {
                    EVAL_EXAMPLES
                };
                p.eval = Some(self.evaluate(n)?);
            }
            p.elapsed_ms = self.elapsed_ms + clock.elapsed_ms();
            match &self.gpu {
                Some(g) if g.synced_step != step => pending.push(p),
                _ => points.push(p),
            }
            if clock.elapsed_ms() >= req.budget_ms {
                out_of_time = true;
            }
        }
        self.elapsed_ms += clock.elapsed_ms();
        let step = self.trainer.step;
        Ok(TrainChunk {
            points,
            step,
            done: self.is_done(),
            steps_per_s: if self.elapsed_ms > 0.0 {
                step as f64 / (self.elapsed_ms / 1e3)
            } else {
                0.0
            },
            elapsed_ms: self.elapsed_ms,
            backend: self.backend.clone(),
            alarms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::LrSettings;
    use pollster::block_on;

    fn small(task: &str) -> RunSettings {
        let mut s = RunSettings::defaults(task).unwrap().settings;
        s.steps = 6;
        s.batch = 4;
        s.eval_every = 3;
        s
    }

    #[test]
    fn a_session_takes_the_trainers_own_steps() {
        let s = small("reverse");
        let spec = s.to_spec().unwrap();
        let task = spec.task().unwrap();
        let mut tr = Trainer::new(
            task.as_ref(),
            spec.model_config(task.as_ref()).unwrap(),
            spec.train_options().unwrap(),
        )
        .unwrap();
        let want: Vec<f32> = (0..6).map(|_| tr.train_step().unwrap().loss).collect();
        let mut session = Session::new(s).unwrap();
        let mut got = vec![];
        while !session.is_done() {
            let c = block_on(session.step_chunk(&TrainChunkRequest {
                max_steps: 4,
                budget_ms: 1e9,
            }))
            .unwrap();
            got.extend(c.points);
        }
        assert_eq!(got.iter().map(|p| p.loss).collect::<Vec<_>>(), want);
        assert_eq!(session.model().embed.data, tr.model.embed.data);
        assert_eq!(
            got.iter().map(|p| p.step).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6]
        );
        assert!(got[2].eval.is_some() && got[5].eval.is_some() && got[3].eval.is_none());
        let layers = session.model().config.n_layers;
        assert!(got
            .iter()
            .all(|p| p.residual_norms.len() == layers && p.grad_norms.len() == layers));
        // The layers' gradients are part of the global norm.
        let p = &got[0];
        let part: f32 = p.grad_norms.iter().map(|g| g * g).sum::<f32>().sqrt();
        assert!(
            part > 0.0 && part <= p.grad_norm * 1.0001,
            "{part} vs {}",
            p.grad_norm
        );
    }

    #[test]
    fn a_run_resumed_from_its_saved_weights_and_state_takes_the_same_steps() {
        let mut s = small("reverse");
        s.dropout = 0.1;
        s.steps = 8;
        let chunk = |n| TrainChunkRequest {
            max_steps: n,
            budget_ms: 1e9,
        };
        let mut straight = Session::new(s.clone()).unwrap();
        let want: Vec<f32> = block_on(straight.step_chunk(&chunk(8)))
            .unwrap()
            .points
            .iter()
            .map(|p| p.loss)
            .collect();
        let mut first = Session::new(s.clone()).unwrap();
        block_on(first.step_chunk(&chunk(3))).unwrap();
        let (ckpt, state) = (first.checkpoint().unwrap(), first.state().unwrap());
        drop(first);
        let mut resumed = Session::resume(s.clone(), &ckpt, &state).unwrap();
        assert_eq!(resumed.step(), 3);
        let got: Vec<f32> = block_on(resumed.step_chunk(&chunk(8)))
            .unwrap()
            .points
            .iter()
            .map(|p| p.loss)
            .collect();
        assert_eq!(got, want[3..]);
        assert_eq!(resumed.model().embed.data, straight.model().embed.data);
        // A state that does not fit is refused with the reason.
        let mut other = s.clone();
        other.d_model = 64;
        let e = Session::resume(other, &ckpt, &state)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another model"), "{e}");
        let e = Session::resume(s, &ckpt, &state[..state.len() / 2])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot continue"), "{e}");
    }

    #[test]
    fn a_constant_rate_and_adams_constants_reach_the_step() {
        let mut s = small("copy");
        s.lr = LrSettings::Constant { value: 0.003 };
        s.adam_beta1 = 0.5;
        let mut session = Session::new(s).unwrap();
        let c = block_on(session.step_chunk(&TrainChunkRequest {
            max_steps: 3,
            budget_ms: 1e9,
        }))
        .unwrap();
        assert!(c.points.iter().all(|p| p.lr == 0.003));
        assert_eq!(session.trainer.opts.adam.beta1, 0.5);
        let args = session.spec().args().join(" ");
        assert!(
            args.contains("--lr 0.003") && args.contains("--adam-beta1 0.5"),
            "{args}"
        );
    }

    #[test]
    fn without_the_residual_the_stream_norm_changes_and_the_model_says_so() {
        let mut s = small("reverse");
        s.residual = false;
        let session = Session::new(s).unwrap();
        assert!(!session.model().config.residual);
        assert!(session.checkpoint().unwrap().len() > 1000);
    }
}

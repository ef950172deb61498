//! A training run in chunks, for the lab: the page asks for a chunk of steps (sized by
//! time), plots what comes back, and pausing is simply not asking for the next chunk.
//!
//! A session's steps are the [`Trainer`]'s own (`Trainer::train_step_with`, the step
//! `train_pytorch.rs` holds to PyTorch), watched: per step it reports the loss, the
//! learning rate, the gradient norm, and per layer the residual stream's norm and the
//! gradient's norm; every `eval_every` steps (and at the end) the held-out loss and the
//! task's metric, as `tplay train` evaluates them.
//!
//! [`RunSettings`] (the page's form of a run) converts to a [`RunSpec`] (the command
//! line's) and back; the conversion says, by field, why a setting does not fit the task.

use std::collections::BTreeMap;

use crate::backend::gpu::{GpuContext, GpuTrainer};
use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};
use crate::generate::clock::Stopwatch;
use crate::model::{Model, ModelParams, ParamKind};
use crate::protocol::{
    EvalPoint, LrSettings, RunBackend, RunDefaults, RunSettings, TrainBackendChoice, TrainChunk,
    TrainChunkRequest, TrainPoint,
};
use crate::tasks::{build, TaskOptions, TASKS};
use crate::tensor::Tensor;

use super::eval::evaluate;
use super::recipes::recipes;
use super::run::{arch_name, RunSpec};
use super::step::{LossGrads, StepStats};
use super::trainer::{Trainer, TrainerState};

/// Held-out examples of a periodic evaluation and of the final one, and their seed: the
/// numbers `tplay train --eval-every` uses (its default `--eval-examples` is 500).
pub const EVAL_EXAMPLES: usize = 200;
pub const FINAL_EVAL_EXAMPLES: usize = 500;
pub const EVAL_SEED: u64 = 1;

/// The most steps a run may ask for, and the largest batch.
pub const MAX_STEPS: u64 = 1_000_000;
pub const MAX_BATCH: usize = 1024;

/// Tasks whose examples have a length to choose (`len`).
const TASKS_WITH_LEN: &[&str] = &["copy", "reverse", "sort", "grammar", "zh-grammar"];

fn field_err(field: &str, why: String) -> Error {
    Error::Input(format!("{field}: {why}"))
}

/// A config enum's JSON name.
fn json_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl RunSettings {
    /// Check every field on its own and against the task, naming the field and saying why.
    pub fn validate(&self) -> Result<()> {
        if !TASKS.contains(&self.task.as_str()) {
            return Err(field_err(
                "task",
                format!("unknown task '{}' (known: {})", self.task, TASKS.join(", ")),
            ));
        }
        let task = build(&self.task, &TaskOptions::default())?;
        if let Some(a) = self.arch {
            if a != task.arch() {
                let spec = RunSpec {
                    task: self.task.clone(),
                    arch: Some(arch_name(a).into()),
                    ..RunSpec::default()
                };
                let why = match spec.model_config(task.as_ref()) {
                    Err(Error::Input(m)) => m,
                    _ => format!("task '{}' is made for another architecture", self.task),
                };
                return Err(field_err(
                    "arch",
                    why.trim_start_matches("--arch: ").to_string(),
                ));
            }
        }
        if self.len.is_some() && !TASKS_WITH_LEN.contains(&self.task.as_str()) {
            return Err(field_err(
                "len",
                format!(
                    "task '{}' has no length to choose (its examples come with their own); leave it null",
                    self.task
                ),
            ));
        }
        if self.steps == 0 || self.steps > MAX_STEPS {
            return Err(field_err(
                "steps",
                format!("must be from 1 to {MAX_STEPS}, got {}", self.steps),
            ));
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(field_err(
                "batch",
                format!(
                    "must be from 1 to {MAX_BATCH} examples per step, got {}",
                    self.batch
                ),
            ));
        }
        if self.n_layers == 0 {
            return Err(field_err("n_layers", "needs at least one layer".into()));
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return Err(field_err(
                "label_smoothing",
                format!("must be in [0, 1), got {}", self.label_smoothing),
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(field_err(
                "dropout",
                format!("must be in [0, 1), got {}", self.dropout),
            ));
        }
        for (f, v) in [
            ("adam_beta1", self.adam_beta1),
            ("adam_beta2", self.adam_beta2),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(field_err(
                    f,
                    format!("a moment's decay must be in [0, 1), got {v}"),
                ));
            }
        }
        if !(self.adam_eps > 0.0 && self.adam_eps <= 1.0) {
            return Err(field_err(
                "adam_eps",
                format!(
                    "must be in (0, 1] (it keeps Adam from dividing by zero), got {}",
                    self.adam_eps
                ),
            ));
        }
        match self.lr {
            LrSettings::Noam { factor, warmup } => {
                if !(factor > 0.0 && factor.is_finite() && factor <= 1000.0) {
                    return Err(field_err(
                        "lr.factor",
                        format!("the Noam factor must be in (0, 1000], got {factor}"),
                    ));
                }
                if warmup == 0 || warmup > MAX_STEPS {
                    return Err(field_err(
                        "lr.warmup",
                        format!("must be from 1 to {MAX_STEPS} steps, got {warmup}"),
                    ));
                }
            }
            LrSettings::Constant { value } => {
                if !(value > 0.0 && value <= 1.0) {
                    return Err(field_err(
                        "lr.value",
                        format!("a constant learning rate must be in (0, 1], got {value}"),
                    ));
                }
            }
        }
        if !(self.clip >= 0.0 && self.clip.is_finite()) {
            return Err(field_err(
                "clip",
                format!("must be 0 (no clipping) or positive, got {}", self.clip),
            ));
        }
        if self.eval_every > MAX_STEPS {
            return Err(field_err(
                "eval_every",
                format!("must be from 0 (only at the end) to {MAX_STEPS}"),
            ));
        }
        Ok(())
    }

    /// The command line's form of the run (every model field explicit), validated.
    pub fn to_spec(&self) -> Result<RunSpec> {
        self.validate()?;
        let (lr_factor, warmup, lr_constant) = match self.lr {
            LrSettings::Noam { factor, warmup } => (factor, warmup, None),
            LrSettings::Constant { value } => {
                let d = RunSpec::default();
                (d.lr_factor, d.warmup, Some(value))
            }
        };
        let spec = RunSpec {
            task: self.task.clone(),
            preset: None,
            seed: self.seed,
            steps: self.steps,
            batch: self.batch,
            lr_factor,
            warmup,
            len: self.len,
            pos_encoding: Some(json_name(&self.pos_encoding)),
            d_model: Some(self.d_model),
            heads: Some(self.n_heads),
            d_ff: Some(self.d_ff),
            layers: Some(self.n_layers),
            max_len: None,
            norm: Some(json_name(&self.norm)),
            activation: Some(json_name(&self.activation)),
            score: Some(json_name(&self.score)),
            share_qk: self.share_qk,
            dropout: Some(self.dropout),
            label_smoothing: self.label_smoothing,
            clip: self.clip,
            arch: self.arch.map(|a| arch_name(a).to_string()),
            final_norm: Some(self.final_norm),
            residual: Some(self.residual),
            scale_embeddings: Some(self.scale_embeddings),
            adam_beta1: self.adam_beta1,
            adam_beta2: self.adam_beta2,
            adam_eps: self.adam_eps,
            lr_constant,
        };
        // The model and optimiser must build: sizes, divisibility, limits.
        let task = spec.task()?;
        spec.model_config(task.as_ref()).map_err(flag_to_field)?;
        spec.train_options().map_err(flag_to_field)?;
        Ok(spec)
    }

    /// The settings of a command-line run, every value resolved (the preset's, the task's).
    pub fn from_spec(spec: &RunSpec, eval_every: u64) -> Result<RunSettings> {
        let task = spec.task()?;
        let cfg = spec.model_config(task.as_ref())?;
        spec.train_options()?;
        Ok(RunSettings {
            task: spec.task.clone(),
            arch: None,
            d_model: cfg.d_model,
            n_heads: cfg.n_heads,
            n_layers: layers_of(&cfg),
            d_ff: cfg.d_ff,
            activation: cfg.activation,
            pos_encoding: cfg.pos_encoding,
            norm: cfg.norm,
            final_norm: cfg.final_norm,
            residual: cfg.residual,
            scale_embeddings: cfg.scale_embeddings,
            score: cfg.score,
            share_qk: cfg.share_qk,
            dropout: cfg.dropout,
            label_smoothing: spec.label_smoothing,
            batch: spec.batch,
            steps: spec.steps,
            seed: spec.seed,
            len: spec.len,
            adam_beta1: spec.adam_beta1,
            adam_beta2: spec.adam_beta2,
            adam_eps: spec.adam_eps,
            lr: match spec.lr_constant {
                Some(value) => LrSettings::Constant { value },
                None => LrSettings::Noam {
                    factor: spec.lr_factor,
                    warmup: spec.warmup,
                },
            },
            clip: spec.clip,
            eval_every,
            backend: TrainBackendChoice::Auto,
        })
    }

    /// A task's starting point: its shipped recipe when it has one (the first), else the
    /// nano preset of its architecture with the command line's defaults.
    pub fn defaults(task: &str) -> Result<RunDefaults> {
        if !TASKS.contains(&task) {
            return Err(field_err(
                "task",
                format!("unknown task '{task}' (known: {})", TASKS.join(", ")),
            ));
        }
        let recipe = recipes().into_iter().find(|r| r.run.task == task);
        let spec = match &recipe {
            Some(r) => RunSpec {
                // The page's runs keep the task's own max_len (`RunSettings` has none).
                max_len: None,
                ..r.run.clone()
            },
            None => RunSpec {
                task: task.to_string(),
                ..RunSpec::default()
            },
        };
        let eval_every = (spec.steps / 6).max(1);
        let settings = RunSettings::from_spec(&spec, eval_every)?;
        let t = spec.task()?;
        let mut notes = BTreeMap::new();
        for (field, note) in FIELD_NOTES {
            notes.insert(field.to_string(), note.to_string());
        }
        let mut not_for_task = BTreeMap::new();
        if !TASKS_WITH_LEN.contains(&task) {
            not_for_task.insert(
                "len".to_string(),
                format!("task '{task}' has no length to choose: its examples come with their own"),
            );
        }
        not_for_task.insert(
            "arch".to_string(),
            format!(
                "task '{task}' fits one architecture, {}: null means that one, and another is refused with the reason",
                arch_name(t.arch())
            ),
        );
        if t.arch() == Arch::EncoderDecoder {
            notes.insert(
                "n_layers".into(),
                "Layers of each stack: the encoder and the decoder get this many each.".into(),
            );
        }
        Ok(RunDefaults {
            settings,
            recipe: recipe.as_ref().map(|r| r.file.to_string()),
            threshold: recipe.as_ref().map(|r| r.threshold),
            description: t.description().to_string(),
            metric_name: t.metric().name().to_string(),
            notes,
            not_for_task,
        })
    }
}

/// A command-line message ("--d-model: …") in the page's field names ("d_model: …").
fn flag_to_field(e: Error) -> Error {
    let Error::Input(s) = &e else {
        return e;
    };
    let Some(rest) = s.strip_prefix("--") else {
        return e;
    };
    let (flag, why) = match rest.split_once(": ") {
        Some(x) => x,
        None => return e,
    };
    let field = match flag {
        "heads" => "n_heads".to_string(),
        "layers" => "n_layers".to_string(),
        "lr" => "lr.value".to_string(),
        "lr-factor" => "lr.factor".to_string(),
        "warmup" => "lr.warmup".to_string(),
        f => f.replace('-', "_"),
    };
    Error::Input(format!("{field}: {why}"))
}

/// Layers of one stack.
fn layers_of(cfg: &ModelConfig) -> usize {
    match cfg.arch {
        Arch::EncoderDecoder => cfg.n_encoder_layers.max(cfg.n_decoder_layers),
        _ => cfg.n_layers,
    }
}

/// What each field of [`RunSettings`] does, in one line.
pub const FIELD_NOTES: &[(&str, &str)] = &[
    ("task", "What the model learns: the examples it trains on and how it is scored."),
    ("arch", "Which stacks the model has: encoder, decoder, or both (null: the task's own)."),
    ("d_model", "Width of the residual stream: every token is a vector this long."),
    ("n_heads", "Attention heads per layer; each looks at d_model / n_heads dimensions."),
    ("n_layers", "Layers in the stack, each an attention sublayer and a feed-forward one."),
    ("d_ff", "Hidden width of each feed-forward sublayer."),
    ("activation", "The feed-forward non-linearity: ReLU or GELU."),
    ("pos_encoding", "How the model knows where a token is: none, sine/cosine, learned, relative, RoPE or ALiBi."),
    ("norm", "Normalisation and where it sits: after the residual add (post-LN), before the sublayer (pre-LN), BatchNorm, or none."),
    ("final_norm", "One more LayerNorm at the end of each stack (what pre-LN models usually need)."),
    ("residual", "Add each sublayer's input to its output; without it deep models barely train."),
    ("scale_embeddings", "Multiply token embeddings by √d_model before adding positions."),
    ("score", "How a query meets a key: scaled dot product, plain dot product, or additive (tanh)."),
    ("share_qk", "One matrix for queries and keys (W_K = W_Q): every head's scores become symmetric."),
    ("dropout", "Share of activations zeroed at random while training (0: none)."),
    ("label_smoothing", "Share of the target probability spread over the other tokens."),
    ("batch", "Examples per training step."),
    ("steps", "Training steps (one Adam update each)."),
    ("seed", "Seeds the initial weights, the order of the examples and the dropout masks."),
    ("len", "Longest string (copy, reverse, sort) or sequence length (grammar); null: the task's own."),
    ("adam_beta1", "Adam's decay of the running mean of gradients."),
    ("adam_beta2", "Adam's decay of the running mean of squared gradients."),
    ("adam_eps", "Added to Adam's denominator so it never divides by zero."),
    ("lr", "The learning rate: the Noam schedule (warm up linearly, then fall as 1/√step) or a constant."),
    ("clip", "Gradients whose global norm exceeds this are scaled down to it (0: never)."),
    ("eval_every", "Score the model on held-out examples every this many steps (0: only at the end)."),
];

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
        })
    }

    /// Where the run's steps go, as its settings choose: `gpu` is a device (or why there is
    /// none), asked for only when the settings may use one. `auto` takes the device when
    /// the GPU trainer takes the model, else stays on the CPU saying why; `webgpu` refuses
    /// the run with the reason instead; `cpu` stays on the CPU.
    pub fn place(&mut self, gpu: Result<GpuContext>) -> Result<()> {
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
        if !insist && ctx.is_software() {
            // A software adapter trains correctly but far slower than the CPU path (the
            // bench measures both): `auto` keeps to the CPU; `webgpu` still uses it.
            self.backend = RunBackend::CpuRefused {
                detail: format!(
                    "the WebGPU adapter ({}) is a software one, slower than the CPU; choose webgpu to train on it anyway",
                    ctx.adapter_name()
                ),
            };
            return Ok(());
        }
        match GpuTrainer::new(&ctx, &self.trainer.model, self.trainer.adam()) {
            Ok(trainer) => {
                self.backend = RunBackend::Webgpu {
                    adapter: ctx.adapter_name().to_string(),
                };
                self.gpu = Some(OnGpu {
                    ctx,
                    trainer,
                    synced_step: self.trainer.step,
                    synced_data: self.trainer.data_position(),
                });
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

    /// Where the steps run now, and why.
    pub fn backend(&self) -> &RunBackend {
        &self.backend
    }

    /// Test-only: the GPU fails (as a lost device would) when it is about to take `step`.
    #[doc(hidden)]
    pub fn test_only_fail_gpu_at(&mut self, step: u64) {
        self.fail_gpu_at = Some(step);
    }

    /// Test-only: destroy the run's GPU device now, as a driver reset would (true when the
    /// run had one); its next GPU call fails and the run goes on on the CPU.
    pub fn test_only_lose_gpu(&self) -> bool {
        match &self.gpu {
            Some(g) => {
                g.ctx.device().destroy();
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

    /// One step on the GPU: its statistics (`Err`: the GPU failed), not yet counted.
    async fn gpu_step(&mut self) -> Result<StepStats> {
        let (tb, fwd, lr) = self.trainer.next_step_inputs(false);
        let next = self.trainer.step + 1;
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
        g.trainer.step(&tb, &fwd, smoothing, lr, clip).await
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

    /// One step, watched: its point (without evaluation).
    fn one_step(&mut self) -> Result<TrainPoint> {
        let mut residual_norms = vec![];
        let mut grad_norms = vec![];
        let stats = self.trainer.train_step_with(true, &mut |lg: &LossGrads| {
            residual_norms = residual_norms_of(lg);
            grad_norms = layer_grad_norms(&lg.grads);
        })?;
        Ok(TrainPoint {
            step: self.trainer.step,
            loss: stats.loss,
            lr: stats.lr,
            grad_norm: stats.grad_norm,
            elapsed_ms: 0.0,
            eval: None,
            residual_norms,
            grad_norms,
        })
    }

    /// The held-out loss and the task's metric now, on `n` examples.
    pub fn evaluate(&self, n: usize) -> Result<EvalPoint> {
        let r = evaluate(&self.trainer.model, &*self.trainer.task, n, EVAL_SEED)?;
        Ok(EvalPoint {
            loss: r.held_out_loss,
            metric: r.accuracy,
            metric_name: r.metric.to_string(),
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
        let clock = Stopwatch::start(None);
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
                let stats = match self.gpu_step().await {
                    Ok(s) => s,
                    Err(e) => {
                        self.fall_back(next, &e);
                        pending.clear();
                        continue;
                    }
                };
                if let Err(e) = self.trainer.count_step(stats) {
                    // A diverged run stops where its weights were last copied back.
                    if let Some(g) = &self.gpu {
                        self.trainer.rewind(g.synced_step, g.synced_data);
                    }
                    return Err(e);
                }
                TrainPoint {
                    step: next,
                    loss: stats.loss,
                    lr: stats.lr,
                    grad_norm: stats.grad_norm,
                    elapsed_ms: 0.0,
                    eval: None,
                    // The GPU step reports the loss and the global norm only.
                    residual_norms: vec![],
                    grad_norms: vec![],
                }
            } else {
                self.one_step()?
            };
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
        })
    }
}

/// Per layer (stacks in the order they ran): mean over positions of ‖x‖ after the layer.
fn residual_norms_of(lg: &LossGrads) -> Vec<f32> {
    let mut out = vec![];
    for h in &lg.trace.hidden {
        for state in h.states.iter().skip(1) {
            let c = *state.shape.last().unwrap_or(&1);
            let rows = state.data.len() / c.max(1);
            let sum: f64 = state
                .data
                .chunks_exact(c.max(1))
                .map(|r| {
                    r.iter()
                        .map(|&x| (x as f64) * (x as f64))
                        .sum::<f64>()
                        .sqrt()
                })
                .sum();
            out.push((sum / rows.max(1) as f64) as f32);
        }
    }
    out
}

/// Per layer (encoder layers first): the L2 norm of the gradient of the layer's parameters.
fn layer_grad_norms(grads: &ModelParams<Tensor>) -> Vec<f32> {
    let mut keys: Vec<String> = vec![];
    let mut sums: Vec<f64> = vec![];
    grads.visit(&mut |name, t, kind| {
        if kind != ParamKind::Trained {
            return;
        }
        // "encoder.layers.3.linear1.weight" → "encoder.layers.3"
        let mut parts = name.splitn(4, '.');
        let (Some(stack), Some("layers"), Some(i)) = (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        let key = format!("{stack}.{i}");
        let s: f64 = t.data.iter().map(|&x| (x as f64) * (x as f64)).sum();
        match keys.iter().position(|k| *k == key) {
            Some(j) => sums[j] += s,
            None => {
                keys.push(key);
                sums.push(s);
            }
        }
    });
    sums.into_iter().map(|s| s.sqrt() as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn settings_round_trip_through_the_command_line_form() {
        for task in TASKS {
            let d = RunSettings::defaults(task).unwrap();
            let spec = d.settings.to_spec().unwrap();
            let back = RunSettings::from_spec(&spec, d.settings.eval_every).unwrap();
            assert_eq!(back, d.settings, "{task}");
            assert!(d.notes.len() >= 26, "{task}");
        }
    }

    #[test]
    fn reverse_defaults_are_the_shipped_recipe() {
        let d = RunSettings::defaults("reverse").unwrap();
        assert_eq!(d.recipe.as_deref(), Some("reverse.safetensors"));
        let recipe = recipes()
            .into_iter()
            .find(|r| r.file == "reverse.safetensors")
            .unwrap();
        let task = recipe.run.task().unwrap();
        let spec = d.settings.to_spec().unwrap();
        assert_eq!(
            spec.model_config(task.as_ref()).unwrap(),
            recipe.run.model_config(task.as_ref()).unwrap()
        );
        assert_eq!(
            spec.train_options().unwrap(),
            recipe.run.train_options().unwrap()
        );
    }

    #[test]
    fn a_setting_that_does_not_fit_the_task_is_refused_by_field_with_the_reason() {
        let mut s = small("sentiment");
        s.arch = Some(Arch::DecoderOnly);
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": arch: task") && e.contains("class"), "{e}");
        let mut s = small("translate");
        s.len = Some(5);
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": len: task") && e.contains("translate"), "{e}");
        let mut s = small("copy");
        s.n_heads = 5;
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains("n_heads") && e.contains("divisible"), "{e}");
        let mut s = small("copy");
        s.lr = LrSettings::Constant { value: 2.0 };
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": lr.value: "), "{e}");
        let mut s = small("copy");
        s.adam_beta2 = 1.0;
        let e = s.to_spec().unwrap_err().to_string();
        assert!(e.contains(": adam_beta2: "), "{e}");
        let e = RunSettings::defaults("parity").unwrap_err().to_string();
        assert!(e.contains(": task: unknown"), "{e}");
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

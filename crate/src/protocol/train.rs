//! Training in the lab: a run's settings, where its steps run, and what each chunk of
//! steps reports.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::forward::ModelInfo;
use super::status::RunBackend;
use crate::config::{Activation, Arch, Norm, PosEncoding, Score};

/// How the learning rate moves: the Noam schedule (warmup, then 1/√step) or a constant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LrSettings {
    /// `factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)`.
    Noam {
        factor: f32,
        warmup: u64,
    },
    Constant {
        value: f32,
    },
}

/// Every switch of a training run in the lab (`train::session`). The enum fields use the
/// checkpoint config's JSON names; `arch` and `len` null mean the task's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    pub task: String,
    pub arch: Option<Arch>,
    pub d_model: usize,
    pub n_heads: usize,
    /// Layers (each stack of an encoder-decoder).
    pub n_layers: usize,
    pub d_ff: usize,
    pub activation: Activation,
    pub pos_encoding: PosEncoding,
    pub norm: Norm,
    pub final_norm: bool,
    pub residual: bool,
    pub scale_embeddings: bool,
    pub score: Score,
    pub share_qk: bool,
    pub dropout: f32,
    pub label_smoothing: f32,
    pub batch: usize,
    pub steps: u64,
    pub seed: u64,
    pub len: Option<usize>,
    pub adam_beta1: f32,
    pub adam_beta2: f32,
    pub adam_eps: f32,
    pub lr: LrSettings,
    /// The share (0 to 1) of the steps, at the end of the run, over which the rate falls in
    /// a straight line towards zero; 0 (and absent, in older links and saved runs): none.
    #[serde(default)]
    pub cooldown: f32,
    /// Global-norm clipping threshold; 0: no clipping.
    pub clip: f32,
    /// Held-out loss and the task's metric every this many steps (0: only at the end).
    pub eval_every: u64,
    /// Where the steps run (absent in older links and saved runs: `auto`).
    #[serde(default)]
    pub backend: TrainBackendChoice,
    /// Task `text` only: the text to learn (up to 1 MiB of UTF-8). It travels with the run
    /// (saved, exported), never in a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
}

/// Where a run's steps run: `auto` takes WebGPU when the browser has a device, the GPU
/// trainer takes the model and, timed on the run's first steps, it agrees with the CPU and
/// is faster per step, else the CPU; `webgpu` insists (a run that cannot start there
/// is refused with the reason); `cpu` never asks for a GPU. Not part of the run's numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TrainBackendChoice {
    #[default]
    Auto,
    Webgpu,
    Cpu,
}

/// `runDefaults`: the settings a task starts from, with a line about every field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct RunDefaultsRequest {
    pub task: String,
}

/// The shipped recipe of a task (or its nano preset), what each field does, and why a
/// field does not apply to this task.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct RunDefaults {
    pub settings: RunSettings,
    /// The shipped model this recipe trains (its file under models/), if there is one.
    pub recipe: Option<String>,
    /// The held-out metric the shipped model reaches (its threshold), with the recipe.
    pub threshold: Option<f64>,
    /// What the task is, in one line.
    pub description: String,
    /// The task's metric (`exact_match`, `token_accuracy`, `class_accuracy`, `grammatical`).
    pub metric_name: String,
    /// Field name → what it does, in one line.
    pub notes: std::collections::BTreeMap<String, String>,
    /// Field name → why it does not apply to this task (the field must keep its default).
    pub not_for_task: std::collections::BTreeMap<String, String>,
}

/// The held-out evaluation of a training point.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct EvalPoint {
    /// Mean cross-entropy (no smoothing) on held-out examples.
    pub loss: f64,
    /// The task's metric, in [0, 1].
    pub metric: f64,
    pub metric_name: String,
    /// Task `text`: continuations the model sampled from prompts taken from the held-out
    /// text (the prompt, then what the model wrote); empty for other tasks.
    pub samples: Vec<String>,
}

/// One training step as the lab plots it.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct TrainPoint {
    pub step: u64,
    pub loss: f32,
    /// The learning rate this step used.
    pub lr: f32,
    /// Global gradient norm before clipping.
    pub grad_norm: f32,
    /// Training time so far (the run's own compute, pauses excluded).
    pub elapsed_ms: f64,
    pub eval: Option<EvalPoint>,
    /// Per layer (encoder layers first): mean ‖x‖ over positions of the residual stream
    /// after the layer.
    pub residual_norms: Vec<f32>,
    /// Per layer (encoder layers first): ‖gradient‖ of that layer's parameters, before clipping.
    pub grad_norms: Vec<f32>,
    /// Per layer, on the steps the run's health is measured (the first and every
    /// `train::health::HEALTH_EVERY`-th, on the CPU): ‖Δw‖ / ‖w‖ of the layer's
    /// parameters over this step's update; empty on other steps and on GPU steps.
    pub update_ratios: Vec<f32>,
    /// Per layer, on the same steps: the mean entropy (nats) of its self-attention rows
    /// (over batch, heads and query positions); empty on other steps.
    pub attn_entropy: Vec<f32>,
}

/// The operation of a forward or backward pass that first gave a NaN or an infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FaultOp {
    /// A parameter was already not finite before the step.
    Weights,
    /// Embeddings plus positions.
    Embedding,
    /// A LayerNorm or BatchNorm.
    Norm,
    /// The query/key/value projections.
    QkvProjection,
    /// The scaled attention scores.
    AttentionScores,
    /// The softmax over the scores.
    Softmax,
    /// The probabilities times the values, heads merged.
    AttentionValues,
    /// The FFN's first linear layer.
    FfnLinear1,
    /// The FFN's activation.
    FfnActivation,
    /// The sublayer's output projection and the residual sum.
    SublayerOutput,
    /// The output head's logits.
    Head,
    /// The cross-entropy.
    Loss,
    /// The backward pass (a parameter's gradient).
    Gradient,
}

/// What a health alarm is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AlarmKind {
    /// A NaN or an infinity: the run stops.
    NonFinite,
    /// An update moved a layer's weights by more than `train::health::UPDATE_RATIO_ALARM`
    /// of their norm in one step.
    UpdateTooLarge,
    /// A layer's attention rows have collapsed onto single keys (entropy below
    /// `train::health::ENTROPY_ALARM` nats).
    AttentionCollapsed,
    /// A layer's gradient norm passed `train::health::GRAD_ALARM`.
    GradientExploding,
}

/// Something the run's health watch saw: a NaN or an infinity (the run stops at it), or a
/// warning the run goes on through.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct HealthAlarm {
    pub kind: AlarmKind,
    /// The step it happened at.
    pub step: u64,
    /// The layer, 1-based in the plots' order (encoder layers first); null when it is not
    /// in a layer (the embedding, the head, the loss).
    pub layer: Option<u32>,
    /// The operation that first gave a NaN or an infinity (non-finite alarms only).
    pub op: Option<FaultOp>,
    /// The parameter involved, when one is (a NaN weight, a NaN gradient).
    pub param: Option<String>,
    /// The value watched: the non-finite value, the update ratio, the entropy, the norm.
    pub value: f32,
    /// The threshold it crossed (0 for a non-finite value).
    pub limit: f32,
    /// The learning rate of that step.
    pub lr: f32,
    /// The run stopped here (its last step is the one before).
    pub stopped: bool,
}

/// `trainChunk`: train up to `max_steps` more steps, stopping once `budget_ms` have passed
/// (at least one step is taken).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TrainChunkRequest {
    pub max_steps: u32,
    pub budget_ms: f64,
}

/// What a chunk of training did.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct TrainChunk {
    pub points: Vec<TrainPoint>,
    /// Steps taken so far.
    pub step: u64,
    /// The run has taken all its steps (its final evaluation is on the last point).
    pub done: bool,
    /// Steps per second of compute so far.
    pub steps_per_s: f64,
    pub elapsed_ms: f64,
    /// Where the run's steps run after this chunk (the CPU after a GPU failure).
    pub backend: RunBackend,
    /// What the health watch saw in this chunk, in step order; a `stopped` one ends the
    /// run (every later chunk is refused).
    pub alarms: Vec<HealthAlarm>,
}

/// A training run started: the model it trains.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct TrainStarted {
    pub info: ModelInfo,
    /// The settings in full (nulls resolved to the task's own values stay null).
    pub settings: RunSettings,
    /// The `tplay train` flags of the same run.
    pub command: Vec<String>,
    /// Where the run's steps run, and why.
    pub backend: RunBackend,
}

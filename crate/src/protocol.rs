//! The page's worker protocol: every request the page sends the engine and every result
//! it gets back, as serde types. The TypeScript types of the protocol are generated from
//! these (and from the core types they hold) by ts-rs — `www/src/engine/generated.ts`,
//! kept fresh by `crate/tests/protocol_types.rs` — so the two sides cannot drift apart.
//!
//! Float arrays cross as `Float32Array`s ([`F32Array`]), copied once; everything else as
//! plain objects. `crate::engine` builds the results; `wasm.rs` only converts.

use serde::{Deserialize, Serialize, Serializer};
use ts_rs::TS;

use crate::config::{Activation, Arch, Norm, PosEncoding, Score};
use crate::model::forward::{AttnSite, HeadRef};
use crate::model::mask::{CellEdit, MaskRule};
use crate::tokenizer::TokenizerKind;

/// f32 values that reach the page as one `Float32Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct F32Array(pub Vec<f32>);

impl Serialize for F32Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            // serde-wasm-bindgen passes a JS value through untouched: one copy, no boxing.
            serde_wasm_bindgen::preserve::serialize(&js_sys::Float32Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for F32Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Float32Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// u32 values that reach the page as one `Uint32Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct U32Array(pub Vec<u32>);

impl Serialize for U32Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            serde_wasm_bindgen::preserve::serialize(&js_sys::Uint32Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for U32Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Uint32Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// f64 values that reach the page as one `Float64Array` (natively, a list of numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct F64Array(pub Vec<f64>);

impl Serialize for F64Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[cfg(target_arch = "wasm32")]
        {
            serde_wasm_bindgen::preserve::serialize(&js_sys::Float64Array::from(&self.0[..]), s)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.serialize(s)
        }
    }
}

impl TS for F64Array {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "Float64Array".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// A dense f32 tensor for the page: its shape and its row-major values.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct Dense {
    pub shape: Vec<usize>,
    pub data: F32Array,
}

impl Dense {
    pub fn new(shape: &[usize], data: &[f32]) -> Dense {
        Dense {
            shape: shape.to_vec(),
            data: F32Array(data.to_vec()),
        }
    }
}

/// Which backend ran: the page's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BackendName {
    Webgpu,
    Cpu,
}

/// Run-time switches of a forward pass (no retraining needed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Switches {
    pub causal: bool,
    pub padding_mask: bool,
    pub scale: bool,
    pub ablate: Vec<HeadRef>,
    /// An explicit mask of the main stack's self-attention (the decoder's, or an
    /// encoder-only model's encoder); when given it replaces `causal` there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mask: Option<MaskEdit>,
}

/// The mask editor's mask: a rule and the cells painted on top of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MaskEdit {
    pub rule: MaskRule,
    #[serde(default)]
    pub cells: Vec<CellEdit>,
}

/// The page's name for a decoding strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StrategyName {
    Greedy,
    Sample,
    Beam,
}

/// How the next token is chosen, as the page's controls say it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "Sampling")]
pub struct SamplingRequest {
    pub strategy: StrategyName,
    pub temperature: f32,
    /// 0: off.
    pub top_k: usize,
    /// 1: off.
    pub top_p: f32,
    pub beam_width: usize,
    pub seed: u64,
}

/// One forward pass with every trace the page draws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ForwardRequest {
    /// Target-side ids per sequence (unequal lengths are right-padded by the engine).
    pub batch: Vec<Vec<u32>>,
    /// Source ids per sequence, encoder-decoder only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub src: Option<Vec<Vec<u32>>>,
    pub switches: Switches,
    pub sampling: SamplingRequest,
    /// Also send every attention sublayer's q, k and v per head (for the q·k inspector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub qkv: Option<bool>,
    /// Run in train mode (dropout with a seed, BatchNorm with batch statistics), on the
    /// CPU; absent: eval mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub train: Option<crate::explain::blocks::TrainMode>,
}

/// Start a generation; its steps come one `generateStep` at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct GenerateStartRequest {
    /// Decoder ids, `<bos>` first.
    pub prompt: Vec<u32>,
    /// The source, encoder-decoder only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub src: Option<Vec<u32>>,
    pub switches: Switches,
    pub sampling: SamplingRequest,
    pub max_new_tokens: usize,
    /// Report each step's attention over the cache (default true; off for speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trace: Option<bool>,
    /// Keep keys and values between steps (default true); off, every step recomputes
    /// the whole prefix. The tokens are the same either way, the cost is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub use_cache: Option<bool>,
}

/// `parallel`: one sequence run as one teacher-forced pass, and token by token with and
/// without the KV cache (`explain::parallel`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ParallelRequest {
    /// Decoder ids to start from, `<bos>` first; the model's greedy continuation fills
    /// the rest.
    pub prompt: Vec<u32>,
    /// N: tokens in the whole sequence.
    pub length: usize,
    /// Each measurement is the median of this many runs.
    pub repeats: usize,
}

/// `scoring`: dot, scaled-dot and additive scoring on the loaded model's shape
/// (`explain::scoring`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ScoringRequest {
    /// Tokens per forward pass.
    pub tokens: usize,
    pub repeats: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TokenizeRequest {
    pub text: String,
}

/// The cost of the loaded model rebuilt with `n_heads` heads, `context` keys per query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct CostRequest {
    pub n_heads: usize,
    pub context: usize,
}

/// The Noam curve for the loaded model's d_model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct NoamRequest {
    pub warmup: u32,
    pub last_step: u32,
    pub points: u32,
}

/// What the engine says about a loaded checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ModelInfo {
    pub arch: Arch,
    pub pos_encoding: PosEncoding,
    pub norm: Norm,
    pub score: Score,
    pub activation: Activation,
    pub d_model: usize,
    pub n_heads: usize,
    pub d_head: usize,
    pub d_ff: usize,
    pub max_len: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub vocab: Vec<String>,
    pub tokenizer_kind: TokenizerKind,
    pub pad: u32,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    pub num_classes: usize,
    pub params: usize,
    /// K of Shaw's relative positions: offsets j − i are clipped to ±K.
    pub relative_max_distance: usize,
    /// The dropout probability the model was trained with (train mode uses it unless told
    /// otherwise).
    pub dropout: f32,
}

/// Text after the tokenizer: ids, their tokens, and what had to become `<unk>`.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct Tokenized {
    pub ids: Vec<u32>,
    pub tokens: Vec<String>,
    /// [token position, the text it stood for]
    pub unknown: Vec<(usize, String)>,
}

/// One attention sublayer of one layer, as the page draws it.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
#[ts(rename = "AttnTrace")]
pub struct AttnView {
    pub site: AttnSite,
    pub layer: usize,
    /// (B, H, T, S): masked entries are −∞.
    pub scores: Dense,
    /// (B, H, T, S)
    pub probs: Dense,
    /// (B, H): entropy (nats) of each query's attention row, averaged over the real queries.
    pub entropy: Dense,
    /// (B, H): largest probability of each query's row, averaged the same way.
    pub max_prob: Dense,
    /// (B, H, T, D) queries of each head, after RoPE where it applies (asked with `qkv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub q: Option<Dense>,
    /// (B, H, S, D) keys, after RoPE where it applies (asked with `qkv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub k: Option<Dense>,
    /// (B, H, S, D) values (asked with `qkv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub v: Option<Dense>,
    /// (B, H): max over tokens and dimensions of |q − k| (self-attention, asked with `qkv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub qk_gap: Option<Dense>,
}

/// The residual stream of one stack.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
#[ts(rename = "HiddenTrace")]
pub struct HiddenView {
    pub stack: AttnSite,
    /// (L + 1, B, T): the L2 norm of the residual stream at each position.
    pub norms: Dense,
}

/// The mask of one attention site in a forward pass, and why each cell is hidden.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct MaskView {
    pub site: AttnSite,
    pub rule: MaskRule,
    /// The painted cells (sorted, one per cell).
    pub cells: Vec<CellEdit>,
    /// Whether padding keys are hidden.
    pub padding: bool,
    /// (B, T, S): 0 visible, +1 hidden by the rule or a painted cell, +2 hidden as padding
    /// (`model::mask::MaskSpec::reasons`). The additive mask is 0 where 0, −∞ elsewhere.
    pub reasons: Dense,
}

/// One forward pass with its traces.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ForwardResult {
    pub backend: BackendName,
    pub ms: f64,
    /// Token ids fed to the model after padding: (B, T).
    pub tokens: Vec<Vec<u32>>,
    /// Source ids after padding (encoder-decoder): (B, S).
    pub src_tokens: Vec<Vec<u32>>,
    /// (B, T, V), or (B, num_classes) for a classifier.
    pub logits: Dense,
    pub attention: Vec<AttnView>,
    /// Per attention site of the model (in the order the stacks run), its mask.
    pub masks: Vec<MaskView>,
    pub hidden: Vec<HiddenView>,
    /// The model's next-token distribution after the last real token of sequence 0 (V).
    pub model_probs: F32Array,
    /// What sampling draws from, after temperature, top-k and top-p: (V), zeros where filtered.
    pub next_probs: F32Array,
    /// The most probable token at every position of sequence 0 (what a tagger outputs).
    pub predicted: Vec<u32>,
    /// Classifier only: softmax of the class logits of sequence 0.
    pub class_probs: Option<F32Array>,
    /// FLOPs of the whole pass (2 × its multiply-adds), for the batch.
    pub flops: f64,
    /// Set when the GPU failed and the CPU ran this pass (and runs from now on).
    pub fallback: Option<String>,
    /// Train mode: that it ran, with which dropout p, and (on a GPU backend) why this
    /// pass ran on the CPU.
    pub train_note: Option<String>,
}

/// A generation started.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct GenerateStarted {
    pub backend: BackendName,
    pub fallback: Option<String>,
    /// Set when the mask cannot be cached: every step recomputes the whole prefix, and why.
    pub recompute: Option<String>,
}

/// One generation step and where the generation stands.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct GenerateStep {
    pub step: crate::generate::Step,
    /// Generated ids so far (beam search: the best hypothesis).
    pub generated: Vec<u32>,
    pub done: bool,
    pub backend: BackendName,
    /// Set when this step had to fall back to the CPU.
    pub fallback: Option<String>,
}

/// `generateStep` of a generation started with `trace: false`: the same step as a
/// [`GenerateStep`], its arrays as typed arrays and its candidates as three of them, so
/// that one step per call costs a few values across the wasm boundary rather than an
/// object per number (the step record of a small model takes longer to convert to JS
/// objects than to compute). Read `step.token`, `step.wall_ms`, `done` as on a
/// `GenerateStep`; the traced form (with the attention the views draw) stays that.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct GenerateStepCompact {
    pub step: CompactStep,
    /// Generated ids so far (beam search: the best hypothesis).
    pub generated: U32Array,
    pub done: bool,
    pub backend: BackendName,
    /// Set when this step had to fall back to the CPU.
    pub fallback: Option<String>,
}

/// A generation step (`crate::generate::Step`) without its attention, in typed arrays.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct CompactStep {
    /// 0 for the first step.
    pub index: usize,
    /// Tokens run through the model in this step.
    pub fed: usize,
    /// The chosen token (`null` for beam search, whose choice is the `beam` state).
    pub token: Option<u32>,
    /// `token` as text.
    pub text: Option<String>,
    /// (V) the logits the choice was made from.
    pub logits: F32Array,
    /// (K) the most probable next tokens, most probable first (`Candidate.id`).
    pub candidate_ids: U32Array,
    /// (K) their probabilities, softmax over the whole vocabulary (`Candidate.prob`).
    pub candidate_probs: F32Array,
    /// (K) the probabilities the strategy drew from (`Candidate.sample_prob`).
    pub candidate_sample_probs: F32Array,
    /// S: positions in the KV cache after this step.
    pub cache_len: usize,
    /// Wall-clock time of the step, milliseconds.
    pub wall_ms: f64,
    /// Multiply-adds of the step's matrix products.
    pub multiply_adds: u64,
    /// 2 × `multiply_adds`.
    pub flops: u64,
    /// Set on the last step.
    pub stop: Option<crate::generate::StopReason>,
    /// Beam search only.
    pub beam: Option<crate::generate::BeamStep>,
}

impl From<GenerateStep> for GenerateStepCompact {
    fn from(g: GenerateStep) -> GenerateStepCompact {
        let s = g.step;
        GenerateStepCompact {
            step: CompactStep {
                index: s.index,
                fed: s.fed,
                token: s.token,
                text: s.text,
                logits: F32Array(s.logits),
                candidate_ids: U32Array(s.candidates.iter().map(|c| c.id).collect()),
                candidate_probs: F32Array(s.candidates.iter().map(|c| c.prob).collect()),
                candidate_sample_probs: F32Array(
                    s.candidates.iter().map(|c| c.sample_prob).collect(),
                ),
                cache_len: s.cache_len,
                wall_ms: s.wall_ms,
                multiply_adds: s.multiply_adds,
                flops: s.flops,
                stop: s.stop,
                beam: s.beam,
            },
            generated: U32Array(g.generated),
            done: g.done,
            backend: g.backend,
            fallback: g.fallback,
        }
    }
}

/// `generateSteps`: up to `n` steps of the running generation in one message, for a
/// reader that wants the tokens fast rather than every step's numbers (a generation
/// started with `trace: false`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct GenerateStepsRequest {
    /// At most this many steps (≥ 1); fewer when the generation stops first.
    pub n: usize,
}

/// The steps one `generateSteps` ran, as flat typed arrays (no object per step), and the
/// last step in full (its logits and candidates, what the page shows of the newest token).
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct GenerateSteps {
    /// N: steps run.
    pub steps: usize,
    /// (N) the step indices (0 for the first step of the generation).
    pub index: U32Array,
    /// (N) the token each step chose (empty for beam search, whose choice is the beams).
    pub tokens: U32Array,
    /// (N) tokens each step ran through the model.
    pub fed: U32Array,
    /// (N) the engine's wall-clock time of each step, milliseconds.
    pub wall_ms: F64Array,
    /// Multiply-adds of all N steps' matrix products.
    pub multiply_adds: u64,
    /// The last step in full.
    pub last: crate::generate::Step,
    /// Generated ids so far (beam search: the best hypothesis).
    pub generated: U32Array,
    pub done: bool,
    pub backend: BackendName,
    /// Set when a step had to fall back to the CPU.
    pub fallback: Option<String>,
    /// The GPU work of the N steps (absent when they did not all run on the GPU).
    pub gpu: Option<GpuWork>,
}

/// Round trips and kernels a piece of GPU work cost (counted by the GPU context).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, TS)]
pub struct GpuWork {
    /// `queue.submit` calls.
    pub submissions: u64,
    /// GPU → CPU readbacks waited for.
    pub readbacks: u64,
    /// Compute dispatches.
    pub dispatches: u64,
}

/// `scoreScaling`: Var(q·k) and the softmax's spread against d_k, sampled with a seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ScoreScalingRequest {
    pub samples: usize,
    pub keys: usize,
    pub rows: usize,
    pub seed: u64,
}

/// `positions`: the loaded model's position encoding for positions 0..t.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct PositionsRequest {
    pub t: usize,
}

/// Shaw's relative tables of one self-attention layer.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct RelativeTable {
    pub stack: AttnSite,
    pub layer: usize,
    /// (2K+1, D)
    pub rel_k: Dense,
    /// (2K+1, D)
    pub rel_v: Dense,
}

/// The loaded model's position encoding for positions 0..t (`explain::positions`).
#[derive(Clone, Debug, Serialize, TS)]
pub struct Positions {
    pub scheme: PosEncoding,
    pub t: usize,
    /// (T, C): the vector added to the embedding at each position (sinusoidal, learned).
    pub table: Option<Dense>,
    /// (T, T): PEᵢ·PEⱼ.
    pub similarity: Option<Dense>,
    /// (H) ALiBi slopes.
    pub slopes: Option<F32Array>,
    /// (H, T, T): −m_h·|i − j|.
    pub alibi: Option<Dense>,
    /// Shaw tables per self-attention layer.
    pub relative: Vec<RelativeTable>,
    /// K: distances are clipped to ±K.
    pub max_distance: usize,
    /// Token embeddings (as the model scales them) and position vectors on two principal
    /// axes.
    #[ts(
        type = "{ tokens: [number, number][]; positions: [number, number][]; explained: [number, number] }"
    )]
    pub map: crate::explain::positions::EmbeddingMap,
}

/// `ropeDemo`: RoPE on the model's own q (at `i`) and k (at `j`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct RopeDemoRequest {
    pub tokens: Vec<u32>,
    pub layer: usize,
    pub head: usize,
    pub i: usize,
    pub j: usize,
    pub pair: usize,
    pub shift: usize,
}

/// `embeddingScale`: token and position norms of `tokens`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct EmbeddingScaleRequest {
    pub tokens: Vec<u32>,
}

/// `extrapolation`: the grammar checkpoint at `url` (fetched by the worker) scored on
/// held-out text up to 4× its trained length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ExtrapolationRequest {
    pub url: String,
    pub sequences: usize,
}

/// `permutation`: the checkpoint at `url` (fetched by the worker) run on `text` and on
/// `text` reordered by `perm`, with or without the causal mask.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct PermutationRequest {
    pub url: String,
    pub text: String,
    pub perm: Vec<u32>,
    pub causal: bool,
}

/// The same input in two orders (`explain::order`).
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct PermutationResult {
    pub tokens: Vec<String>,
    pub permuted: Vec<String>,
    pub perm: Vec<usize>,
    pub causal: bool,
    pub pos_encoding: PosEncoding,
    /// (T, V)
    pub logits: Dense,
    /// (T, V)
    pub permuted_logits: Dense,
    /// (T): max |difference| of permuted row t and original row perm[t].
    pub row_diff: F32Array,
    pub row_identical: Vec<bool>,
}

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
    /// Global-norm clipping threshold; 0: no clipping.
    pub clip: f32,
    /// Held-out loss and the task's metric every this many steps (0: only at the end).
    pub eval_every: u64,
    /// Where the steps run (absent in older links and saved runs: `auto`).
    #[serde(default)]
    pub backend: TrainBackendChoice,
}

/// Where a run's steps run: `auto` takes WebGPU when the browser has a device and the GPU
/// trainer takes the model, else the CPU; `webgpu` insists (a run that cannot start there
/// is refused with the reason); `cpu` never asks for a GPU. Not part of the run's numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TrainBackendChoice {
    #[default]
    Auto,
    Webgpu,
    Cpu,
}

/// Where a run's steps run now, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunBackend {
    /// On the GPU (`adapter`: the device's description).
    Webgpu { adapter: String },
    /// On the CPU because the settings ask for it.
    CpuChosen,
    /// On the CPU: no GPU device could be had (`detail`: why).
    CpuNoGpu { detail: String },
    /// On the CPU: the GPU trainer does not take this model (`detail`: what it cannot train).
    CpuRefused { detail: String },
    /// On the CPU since the GPU failed taking step `step` (`detail`: how); the CPU went on
    /// from step `from`, the last one whose weights had been copied back.
    CpuLost {
        step: u64,
        from: u64,
        detail: String,
    },
}

impl RunBackend {
    pub fn name(&self) -> BackendName {
        match self {
            RunBackend::Webgpu { .. } => BackendName::Webgpu,
            _ => BackendName::Cpu,
        }
    }
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

/// `blockProbe`: every block's live tensors (FFN, norms, residual stream, dropout masks)
/// for a batch, in eval or train mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct BlockProbeRequest {
    pub batch: Vec<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub src: Option<Vec<Vec<u32>>>,
    pub switches: Switches,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub train: Option<crate::explain::blocks::TrainMode>,
}

/// `blockDiff`: two single-sequence inputs compared position by position, bit-exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct BlockDiffRequest {
    pub before: crate::explain::blocks::SequenceInput,
    pub after: crate::explain::blocks::SequenceInput,
    pub switches: Switches,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub train: Option<crate::explain::blocks::TrainMode>,
}

/// The TypeScript of every protocol type, as `www/src/engine/generated.ts` holds it.
#[cfg(not(target_arch = "wasm32"))]
pub fn typescript() -> String {
    use crate::backend::parity::Parity;
    use crate::explain::blocks::{
        BlockDiff, BlockProbe, CouplingModel, CouplingRequest, DropPlace, DropSite, DropoutDemo,
        DropoutRequest, FfnProbe, NormCoupling, NormProbe, Probed, RowDiff, SequenceInput,
        StackProbe, TrainMode,
    };
    use crate::explain::parallel::{Exponents, ParallelTiming};
    use crate::explain::scoring::{ScoreCost, ScoringComparison};
    use crate::generate::beam::{Ending, Hypothesis};
    use crate::generate::step::{BeamStep, Candidate, StopReason};
    use crate::generate::Step;
    use crate::model::cost::{CostReport, CostRow};
    use crate::model::plan::{
        HeadKind, LayerPlan, NormKind, NormStep, Placement, StackInput, StackPlan, SublayerKind,
        SublayerPlan,
    };
    use crate::train::schedule::Schedule;

    // u64 counts (FLOPs, steps, seeds) cross as plain numbers, as serde-wasm-bindgen sends them.
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        Arch::decl(&cfg),
        PosEncoding::decl(&cfg),
        Norm::decl(&cfg),
        Score::decl(&cfg),
        Activation::decl(&cfg),
        TokenizerKind::decl(&cfg),
        AttnSite::decl(&cfg),
        HeadRef::decl(&cfg),
        BackendName::decl(&cfg),
        MaskRule::decl(&cfg),
        CellEdit::decl(&cfg),
        MaskEdit::decl(&cfg),
        MaskView::decl(&cfg),
        Switches::decl(&cfg),
        StrategyName::decl(&cfg),
        SamplingRequest::decl(&cfg),
        TrainMode::decl(&cfg),
        ForwardRequest::decl(&cfg),
        GenerateStartRequest::decl(&cfg),
        TokenizeRequest::decl(&cfg),
        CostRequest::decl(&cfg),
        NoamRequest::decl(&cfg),
        ModelInfo::decl(&cfg),
        Tokenized::decl(&cfg),
        SublayerKind::decl(&cfg),
        NormKind::decl(&cfg),
        Placement::decl(&cfg),
        NormStep::decl(&cfg),
        SublayerPlan::decl(&cfg),
        StackInput::decl(&cfg),
        StackPlan::decl(&cfg),
        HeadKind::decl(&cfg),
        LayerPlan::decl(&cfg),
        Dense::decl(&cfg),
        AttnView::decl(&cfg),
        HiddenView::decl(&cfg),
        ForwardResult::decl(&cfg),
        GenerateStarted::decl(&cfg),
        Candidate::decl(&cfg),
        Ending::decl(&cfg),
        Hypothesis::decl(&cfg),
        BeamStep::decl(&cfg),
        StopReason::decl(&cfg),
        Step::decl(&cfg),
        GenerateStep::decl(&cfg),
        CompactStep::decl(&cfg),
        GenerateStepCompact::decl(&cfg),
        GenerateStepsRequest::decl(&cfg),
        GpuWork::decl(&cfg),
        GenerateSteps::decl(&cfg),
        CostRow::decl(&cfg),
        CostReport::decl(&cfg),
        Schedule::decl(&cfg),
        Parity::decl(&cfg),
        ScoreScalingRequest::decl(&cfg),
        PositionsRequest::decl(&cfg),
        RelativeTable::decl(&cfg),
        Positions::decl(&cfg),
        RopeDemoRequest::decl(&cfg),
        EmbeddingScaleRequest::decl(&cfg),
        ExtrapolationRequest::decl(&cfg),
        PermutationRequest::decl(&cfg),
        PermutationResult::decl(&cfg),
        LrSettings::decl(&cfg),
        TrainBackendChoice::decl(&cfg),
        RunSettings::decl(&cfg),
        RunBackend::decl(&cfg),
        RunDefaultsRequest::decl(&cfg),
        RunDefaults::decl(&cfg),
        EvalPoint::decl(&cfg),
        TrainPoint::decl(&cfg),
        TrainChunkRequest::decl(&cfg),
        TrainChunk::decl(&cfg),
        TrainStarted::decl(&cfg),
        FfnProbe::decl(&cfg),
        NormProbe::decl(&cfg),
        DropPlace::decl(&cfg),
        DropSite::decl(&cfg),
        StackProbe::decl(&cfg),
        BlockProbe::decl(&cfg),
        SequenceInput::decl(&cfg),
        BlockProbeRequest::decl(&cfg),
        BlockDiffRequest::decl(&cfg),
        Probed::decl(&cfg),
        RowDiff::decl(&cfg),
        BlockDiff::decl(&cfg),
        CouplingRequest::decl(&cfg),
        CouplingModel::decl(&cfg),
        NormCoupling::decl(&cfg),
        DropoutRequest::decl(&cfg),
        DropoutDemo::decl(&cfg),
        ParallelRequest::decl(&cfg),
        Exponents::decl(&cfg),
        ParallelTiming::decl(&cfg),
        ScoringRequest::decl(&cfg),
        ScoreCost::decl(&cfg),
        ScoringComparison::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the Rust types of crate/src/protocol.rs (and the core types they\n\
         // hold) by ts-rs. Do not edit: change the Rust types and run\n\
         //   TPLAY_UPDATE_TYPES=1 cargo test -p tplay --test protocol_types\n\
         // (the same test fails while this file is stale).\n",
    );
    for d in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(d.trim());
        out.push('\n');
    }
    out
}

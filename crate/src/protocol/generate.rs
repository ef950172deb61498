//! Generation as the page drives it: start, one step or several at a time, and what each
//! step cost on the GPU.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::forward::{BackendName, SamplingRequest, Switches};
use crate::wire::{F32Array, F64Array, U32Array};

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
    /// A sampled token only: how the sampler's draw fell (`crate::generate::Step::draw`).
    pub draw: Option<crate::generate::sampling::SampleDraw>,
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
                draw: s.draw,
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

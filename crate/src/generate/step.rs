//! What generation says about itself: the strategy it was given and, after every step,
//! a record the page draws (serde, so it crosses the wasm boundary as a plain object).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::generate::beam::{Hypothesis, LengthPenalty};
use crate::generate::sampling::{SampleDraw, Sampling};

/// How the next token is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Strategy {
    /// Always the most probable token (ties: the lower id).
    Greedy,
    /// Temperature, then top-k, then top-p, then a seeded draw (see `sampling`).
    Sample(Sampling),
    /// Keep `width` hypotheses, compare finished ones by `log_prob / lp(len)`.
    Beam {
        width: usize,
        length_penalty: LengthPenalty,
    },
}

impl Strategy {
    pub fn validate(&self) -> Result<()> {
        match self {
            Strategy::Greedy => Ok(()),
            Strategy::Sample(s) => s.validate(),
            Strategy::Beam {
                width,
                length_penalty,
            } => {
                if *width == 0 {
                    return Err(Error::Input("beam width must be at least 1, got 0".into()));
                }
                length_penalty.validate()
            }
        }
    }
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `<eos>` was chosen (for beam search: the best hypothesis ended with it).
    Eos,
    /// `max_new_tokens` tokens were generated.
    MaxTokens,
    /// The sequence reached the model's `max_len` positions.
    ContextFull,
}

/// One entry of the "what could have come next" list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Candidate {
    pub id: u32,
    /// The token as the tokenizer writes it.
    pub token: String,
    pub logit: f32,
    /// The model's probability, softmax over the whole vocabulary (τ = 1, no filter).
    pub prob: f32,
    /// The probability the strategy drew from, after temperature, top-k and top-p
    /// (0 for a filtered token; one-hot for greedy; equal to `prob` for beam search).
    pub sample_prob: f32,
}

/// The beam's state after a step, enough to draw the beam tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct BeamStep {
    /// Live hypotheses, best first; `parent` indexes the previous step's `live`.
    pub live: Vec<Hypothesis>,
    /// Hypotheses that finished in this step (`parent` as above), best first.
    pub newly_finished: Vec<Hypothesis>,
    /// Every hypothesis finished so far, best score first.
    pub finished: Vec<Hypothesis>,
    /// The best extensions cut off this step (at most the beam width, `parent` as
    /// above): the greyed branches of the tree.
    pub pruned: Vec<Hypothesis>,
}

/// Everything one generation step did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "CoreStep")]
pub struct Step {
    /// 0 for the first step.
    pub index: usize,
    /// Tokens run through the model: the whole prompt in the first cached step, the
    /// previous token in later cached steps, the whole sequence in every uncached step
    /// (per live hypothesis for beam search).
    pub fed: usize,
    /// The chosen token (`None` for beam search, whose choice is the `beam` state).
    pub token: Option<u32>,
    /// `token` as text.
    pub text: Option<String>,
    /// (V) the logits the choice was made from (beam search: the best live hypothesis's
    /// before this step).
    pub logits: Vec<f32>,
    /// The most probable next tokens of the sequence (for beam search: of the best live
    /// hypothesis before this step), most probable first.
    pub candidates: Vec<Candidate>,
    /// (L, H, S): decoder self-attention of the last fed token over the S positions it
    /// sees (the cache, itself included).
    pub attention: Vec<Vec<Vec<f32>>>,
    /// (L, H, S_src): cross-attention of the same token over the source (encoder-decoder
    /// only; empty otherwise).
    pub cross_attention: Vec<Vec<Vec<f32>>>,
    /// S: positions in the KV cache after this step (without the cache: the length of the
    /// recomputed sequence, which is what a cache would hold).
    pub cache_len: usize,
    /// Wall-clock time of the step, milliseconds.
    pub wall_ms: f64,
    /// Multiply-adds of the step's matrix products (see `generate::flops`).
    pub multiply_adds: u64,
    /// 2 × `multiply_adds`.
    pub flops: u64,
    /// Set on the last step.
    pub stop: Option<StopReason>,
    /// Beam search only.
    pub beam: Option<BeamStep>,
    /// A sampled token only (not greedy, not beam search): how the sampler's draw fell.
    pub draw: Option<SampleDraw>,
}

/// The outcome of a whole generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The prompt as the decoder saw it (with `<bos>` when the caller added it).
    pub prompt: Vec<u32>,
    /// Generated tokens (for beam search: the best hypothesis), `<eos>` included.
    pub tokens: Vec<u32>,
    pub text: String,
    pub steps: usize,
    pub stop: Option<StopReason>,
    pub use_cache: bool,
    pub total_ms: f64,
    pub total_multiply_adds: u64,
    pub total_flops: u64,
    /// Sum of the model's log-probabilities of `tokens`.
    pub log_prob: f64,
    /// Beam search: `log_prob / lp(len)`; otherwise equal to `log_prob`.
    pub score: f64,
}

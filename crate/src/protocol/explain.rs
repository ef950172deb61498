//! The side studies' requests and the results built here (`crate::explain` holds the
//! rest): scoring, parallel vs serial, cost, the Noam curve, positions, RoPE, embedding
//! scale, extrapolation, order-blindness, and the block probes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::forward::Switches;
use crate::config::PosEncoding;
use crate::model::forward::AttnSite;
use crate::wire::{Dense, F32Array};

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

/// The cost of the loaded model rebuilt with `n_heads` heads, `context` keys per query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct CostRequest {
    pub n_heads: usize,
    pub context: usize,
}

/// The Noam curve for the loaded model's d_model, over `last_step` steps whose last
/// `cooldown` share (0 to 1; absent: 0) falls in a straight line towards zero.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct NoamRequest {
    pub warmup: u32,
    pub last_step: u32,
    pub points: u32,
    #[serde(default)]
    #[ts(optional)]
    pub cooldown: Option<f32>,
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

//! Every intermediate value of a recorded forward pass ([`Activations`]): what the
//! backward pass (crate/src/train/backward/model.rs) reads.

use super::attention::AttnRecord;
use super::ffn::FfnRecord;
use super::plan::SublayerKind;
use super::AttnSite;

/// A norm's input and statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormRecord {
    /// (R, C) the normalised input.
    pub input: Vec<f32>,
    /// LayerNorm: (R) per-row mean; BatchNorm train: (C) batch mean; BatchNorm eval: empty.
    pub mean: Vec<f32>,
    /// LayerNorm: (R); BatchNorm train: (C) 1/√(σ² + ε); BatchNorm eval: empty (the
    /// running statistics were used).
    pub rstd: Vec<f32>,
}

/// One sublayer `x → x'` with its norm placement applied (docs/model.md step 3).
#[derive(Clone, Debug, PartialEq)]
pub struct SublayerRecord {
    pub kind: SublayerKind,
    /// (B, T, C) x before the sublayer.
    pub input: Vec<f32>,
    /// The sublayer's norm: applied to `input` (pre-LN) or to `input + drop(sub)` /
    /// `drop(sub)` (post-LN, BatchNorm). `None` when `norm = none`.
    pub norm: Option<NormRecord>,
    /// (B, T, C) the sublayer function's input (`input`, or its norm for pre-LN).
    pub sub_input: Vec<f32>,
    /// Attention sublayers: projections, scores, probabilities, z.
    pub attn: Option<AttnRecord>,
    /// (B, H, T, S) attention-probability dropout multipliers (train mode).
    pub attn_dropout: Option<Vec<f32>>,
    /// (B, S, C) the key/value rows (cross-attention: the encoder memory).
    pub kv_input: Option<Vec<f32>>,
    /// FFN sublayers: pre-activation and hidden units.
    pub ffn: Option<FfnRecord>,
    /// (B, T, F) FFN hidden dropout multipliers (train mode).
    pub ffn_dropout: Option<Vec<f32>>,
    /// (B, T, C) dropout multipliers on the sublayer's output (train mode).
    pub out_dropout: Option<Vec<f32>>,
    /// (B, T, C) x after the sublayer (and its post-norm).
    pub output: Vec<f32>,
}

/// One stack (encoder or decoder) of a recorded forward pass.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRecord {
    pub site: AttnSite,
    /// (B, T, C) embedding dropout multipliers (train mode).
    pub embed_dropout: Option<Vec<f32>>,
    /// (B, T, C) embeddings + positions (+ dropout): the first layer's input.
    pub embedded: Vec<f32>,
    /// Per layer its sublayers in order (SA, [CA,] FF).
    pub layers: Vec<Vec<SublayerRecord>>,
    /// The stack's final LayerNorm.
    pub final_norm: Option<NormRecord>,
    /// (B, T, C) the stack's output (after the final norm).
    pub output: Vec<f32>,
    /// (B, T): keys masked as padding in this stack's self-attention (None: mask off).
    pub key_pad: Option<Vec<bool>>,
    /// The mask of this stack's self-attention.
    pub mask: super::mask::MaskSpec,
}

/// Every intermediate value of a forward pass, for a backward pass
/// ([`Model::forward_recorded`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Activations {
    pub encoder: Option<StackRecord>,
    pub decoder: Option<StackRecord>,
    /// (B, T, C) the head's input (a classifier reads row 0 of each sequence).
    pub head_input: Vec<f32>,
}

//! The forward pass as the page asks for it and draws it: the run-time switches, the
//! sampling controls, the loaded model's description and the traced result.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::config::{Activation, Arch, Norm, PosEncoding, Score};
use crate::model::forward::{AttnSite, HeadRef};
use crate::model::mask::{CellEdit, MaskRule};
use crate::tokenizer::TokenizerKind;
use crate::wire::{Dense, F32Array};

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
    /// The causal mask of the main stack's self-attention; absent: the model's rule
    /// (`ModelInfo::causal`: on for a decoder, off for an encoder-only model's encoder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub causal: Option<bool>,
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
    /// Also send every FFN sublayer's hidden units (`ForwardResult::ffn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ffn: Option<bool>,
    /// Run in train mode (dropout with a seed, BatchNorm with batch statistics), on the
    /// CPU; absent: eval mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub train: Option<crate::explain::blocks::TrainMode>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TokenizeRequest {
    pub text: String,
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
    /// Whether the causal mask is on when a request's `Switches::causal` is absent (the
    /// model's rule: on for a decoder, off for an encoder-only model's encoder).
    pub causal_default: bool,
}

/// How the tokenizer read a text (`Tokenizer::trace`): for a byte-level BPE each piece from
/// its bytes through every merge to its tokens; for a character or word tokenizer each
/// token is a piece of one step.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct TokenizeTrace {
    pub kind: TokenizerKind,
    pub pieces: Vec<PieceTrace>,
    /// Every id the steps name (ascending), with its vocabulary string and its bytes.
    pub symbols: Vec<SymbolBytes>,
}

/// One piece of the text and how it became tokens.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct PieceTrace {
    /// The piece as written (a BPE piece keeps its leading space).
    pub text: String,
    /// A special token written in the text, matched whole.
    pub special: bool,
    /// The symbol ids before the first merge (one per byte), then after each merge; the
    /// last step is the piece's tokens.
    pub steps: Vec<Vec<u32>>,
    /// The merge between step i and step i + 1: [its rank, the id it makes].
    pub merges: Vec<(u32, u32)>,
}

/// One vocabulary entry: its id, its string as the vocabulary spells it (`Ġ` for a byte-level
/// space) and the bytes it stands for.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct SymbolBytes {
    pub id: u32,
    pub token: String,
    pub bytes: Vec<u8>,
}

/// What a Hugging Face folder's `config.json` asks for (`hf::check_config`), known before
/// its weights are fetched.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct HfCheck {
    pub model_type: String,
    pub params: usize,
    /// The weights' size in f32, as the engine holds them.
    pub f32_bytes: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub d_model: usize,
    pub vocab_size: usize,
    pub max_len: usize,
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

/// The hidden units of one FFN sublayer: `act(x·W₁ᵀ + b₁)` at every position (after
/// dropout in a train-mode pass), what its second linear layer reads.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
#[ts(rename = "FfnTrace")]
pub struct FfnView {
    /// The stack the FFN belongs to (named by its self-attention site).
    pub stack: AttnSite,
    pub layer: usize,
    /// (B, T, F), F = d_ff (S instead of T in the encoder of an encoder-decoder).
    pub hidden: Dense,
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
    /// Every FFN sublayer's hidden units in the order they ran (asked with `ffn`; empty
    /// otherwise).
    pub ffn: Vec<FfnView>,
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

//! The forward pass's inputs, switches and outputs (the trace the UI draws).

use serde::{Deserialize, Serialize};

use crate::tensor::Tensor;

/// Where an attention sublayer sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttnSite {
    EncoderSelf,
    DecoderSelf,
    /// Decoder queries over encoder keys/values.
    Cross,
}

impl AttnSite {
    pub fn name(self) -> &'static str {
        match self {
            AttnSite::EncoderSelf => "encoder_self",
            AttnSite::DecoderSelf => "decoder_self",
            AttnSite::Cross => "cross",
        }
    }

    pub fn parse(s: &str) -> Option<AttnSite> {
        match s {
            "encoder_self" => Some(AttnSite::EncoderSelf),
            "decoder_self" => Some(AttnSite::DecoderSelf),
            "cross" => Some(AttnSite::Cross),
            _ => None,
        }
    }
}

/// One head of one attention sublayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HeadRef {
    pub site: AttnSite,
    pub layer: usize,
    pub head: usize,
}

/// Train mode turns on dropout and BatchNorm batch statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Eval,
    /// Dropout masks are drawn from a ChaCha8 generator seeded with `seed`.
    Train {
        seed: u64,
    },
}

/// Run-time switches of one forward pass: everything that needs no retraining.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardOptions {
    /// `None`: the architecture's default (decoders causal, encoders not).
    pub causal: Option<bool>,
    /// Mask keys whose token is `pad`.
    pub padding_mask: bool,
    /// Divide `scaled_dot` scores by √D.
    pub scale: bool,
    /// Heads whose output is zeroed.
    pub ablate: Vec<HeadRef>,
    pub mode: Mode,
    /// Record every attention sublayer's scores and probabilities.
    pub trace_attention: bool,
    /// Record the residual stream before the first and after every layer.
    pub trace_hidden: bool,
}

impl Default for ForwardOptions {
    fn default() -> Self {
        ForwardOptions {
            causal: None,
            padding_mask: true,
            scale: true,
            ablate: vec![],
            mode: Mode::Eval,
            trace_attention: false,
            trace_hidden: false,
        }
    }
}

/// Scores and probabilities of one attention sublayer.
#[derive(Clone, Debug, PartialEq)]
pub struct AttnTrace {
    pub site: AttnSite,
    pub layer: usize,
    /// (B, H, T, S): after scaling and position biases; masked entries are −∞.
    pub scores: Tensor,
    /// (B, H, T, S): softmax of `scores` (rows with every key masked are zero).
    pub probs: Tensor,
}

/// The residual stream of one stack: `states[0]` is the layer input (embeddings +
/// positions), `states[l + 1]` the output of layer l (before the final norm).
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenTrace {
    pub stack: AttnSite,
    /// L + 1 tensors of (B, T, C) (S instead of T for the encoder of an encoder-decoder).
    pub states: Vec<Tensor>,
}

/// New BatchNorm running statistics computed by a train-mode pass, by tensor name.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningStatUpdate {
    /// e.g. `decoder.layers.0.norm1.running_mean`
    pub name: String,
    pub value: Tensor,
}

/// Everything a forward pass produces.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// (B, T, V) for a token-level head; empty (shape [0]) for a classifier.
    pub logits: Tensor,
    /// (B, num_classes) for a classifier.
    pub class_logits: Option<Tensor>,
    /// In the order the sublayers ran; empty unless `trace_attention`.
    pub attention: Vec<AttnTrace>,
    /// Empty unless `trace_hidden`.
    pub hidden: Vec<HiddenTrace>,
    /// Train mode with BatchNorm only; apply with `Model::apply_running_stats`.
    pub running_stats: Vec<RunningStatUpdate>,
}

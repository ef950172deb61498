//! The run-time switches of a forward pass (docs/model.md, "Forward pass"): everything that
//! needs no retraining, and the names of the attention sites and heads they refer to.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
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

impl ForwardOptions {
    /// (H) flags: `true` for each head of the attention sublayer (site, layer) this pass
    /// zeroes. The one reading of `ablate` the CPU pass, the KV cache, the GPU pass and the
    /// backward pass share.
    pub fn ablated_heads(&self, site: AttnSite, layer: usize, n_heads: usize) -> Vec<bool> {
        (0..n_heads)
            .map(|head| self.ablate.contains(&HeadRef { site, layer, head }))
            .collect()
    }
}

//! The run-time switches of a forward pass (docs/model.md, "Forward pass"): everything that
//! needs no retraining, and the attention mask they give each site.

use serde::{Deserialize, Serialize};

use super::mask::{MaskRule, MaskSpec, SiteMask};
use super::site::{AttnSite, HeadRef};
use crate::config::{Arch, ModelConfig};

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
    /// Explicit masks of self-attention sites (a rule and painted cells); a site named here
    /// ignores `causal` (`mask::attention_mask`).
    #[serde(default)]
    pub masks: Vec<SiteMask>,
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
    /// Record every FFN's hidden units: `act(x·W₁ᵀ + b₁)` (after dropout in train mode),
    /// the input of its second linear layer ([`super::FfnTrace`]).
    #[serde(default)]
    pub trace_ffn: bool,
}

impl Default for ForwardOptions {
    fn default() -> Self {
        ForwardOptions {
            causal: None,
            masks: vec![],
            padding_mask: true,
            scale: true,
            ablate: vec![],
            mode: Mode::Eval,
            trace_attention: false,
            trace_hidden: false,
            trace_ffn: false,
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

/// The mask of the attention sublayers at `site` in a pass of a model with config `cfg`
/// and switches `opts`.
///
/// An explicit [`SiteMask`] for the site wins. Otherwise the causal switch acts on the main
/// stack's self-attention: decoders default to causal, an encoder-only model's encoder
/// defaults to bidirectional. The encoder of an encoder-decoder model and cross-attention
/// are never causal (the whole source is known). The padding switch acts on every site.
pub fn attention_mask(cfg: &ModelConfig, site: AttnSite, opts: &ForwardOptions) -> MaskSpec {
    if let Some(m) = opts.masks.iter().find(|m| m.site == site) {
        return MaskSpec::new(m.rule, &m.cells, opts.padding_mask);
    }
    let causal = match (cfg.arch, site) {
        (Arch::EncoderOnly, AttnSite::EncoderSelf) => opts.causal.unwrap_or(false),
        (_, AttnSite::DecoderSelf) => opts.causal.unwrap_or(true),
        _ => false,
    };
    MaskSpec {
        rule: if causal {
            MaskRule::Causal
        } else {
            MaskRule::None
        },
        cells: vec![],
        padding: opts.padding_mask,
    }
}

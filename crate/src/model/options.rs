//! The run-time switches of a forward pass (docs/model.md, "Forward pass"): everything that
//! needs no retraining, and the names of the attention sites and heads they refer to.

use serde::{Deserialize, Serialize};

use super::mask::SiteMask;

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

impl HeadRef {
    /// A head written `site.layer.head` (`decoder_self.0.2`, `cross.1.0`): the one spelling
    /// of the CLI and the page's URL. The CLI's older `site:layer:head` is read too.
    pub fn parse(s: &str) -> Option<HeadRef> {
        let sep = if s.contains(':') { ':' } else { '.' };
        let mut parts = s.split(sep);
        let (site, layer, head) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        Some(HeadRef {
            site: AttnSite::parse(site)?,
            layer: layer.parse().ok()?,
            head: head.parse().ok()?,
        })
    }
}

/// `site.layer.head`, as [`HeadRef::parse`] reads it.
impl std::fmt::Display for HeadRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.site.name(), self.layer, self.head)
    }
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

#[cfg(test)]
mod head_ref_tests {
    use super::{AttnSite, HeadRef};

    #[test]
    fn a_head_is_spelled_site_dot_layer_dot_head_and_the_colon_form_still_reads() {
        let h = HeadRef {
            site: AttnSite::Cross,
            layer: 1,
            head: 0,
        };
        assert_eq!(h.to_string(), "cross.1.0");
        assert_eq!(HeadRef::parse("cross.1.0"), Some(h));
        assert_eq!(HeadRef::parse("cross:1:0"), Some(h));
        let d = HeadRef::parse("decoder_self.0.2").unwrap();
        assert_eq!((d.site, d.layer, d.head), (AttnSite::DecoderSelf, 0, 2));
        for bad in [
            "",
            "cross",
            "cross.1",
            "cross.1.0.2",
            "cross.1:0",
            "self.0.2",
            "cross.-1.0",
            "cross.a.0",
            "cross..0",
        ] {
            assert_eq!(HeadRef::parse(bad), None, "{bad}");
        }
    }
}

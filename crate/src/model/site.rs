//! The names of the attention sites and of one head in them: what ablation, masks, traces
//! and the page's URL refer to.

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

#[cfg(test)]
mod tests {
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

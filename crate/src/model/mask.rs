//! Masks (docs/model.md, "Masks"): which keys a query may not see.
//!
//! ```text
//! s_ij = −∞  where  (causal and j > i)  or  (padding and key j is the pad token)
//! ```
//!
//! Query i sits at absolute position i (`q_offset + row` in a cached step), key j at
//! position j. A masked score is −∞ before the softmax; a row with every key masked gives
//! zero probabilities, never NaN (`attention::softmax_row`).
//!
//! [`attention_mask`] is the one place that decides, per attention site, which masks a pass
//! applies; [`is_masked`] is the one predicate every CPU path applies per (query, key)
//! (`attention::attention_forward`, and through it the KV cache's step and the backward
//! pass, which reuses the recorded scores). The GPU mirrors it in
//! `shaders/attention_scores.wgsl` from the same [`MaskSpec`] (`ScoreArgs::causal`,
//! `ScoreArgs::padding`). A new kind of mask is a field of [`MaskSpec`], a clause of
//! [`is_masked`], the same clause in the shader, and a test of each.

use serde::Serialize;

use super::{AttnSite, ForwardOptions, Model};
use crate::config::{Arch, ModelConfig};

/// The masks one attention sublayer applies in one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MaskSpec {
    /// Hide key j from the query at position i when j > i (the future).
    pub causal: bool,
    /// Hide keys whose token is the tokenizer's `pad` (in cross-attention: the padding of
    /// the source).
    pub padding: bool,
}

/// The mask of the attention sublayers at `site` in a pass of a model with config `cfg`
/// and switches `opts`.
///
/// The causal switch acts on the main stack's self-attention: decoders default to causal,
/// an encoder-only model's encoder defaults to bidirectional. The encoder of an
/// encoder-decoder model and cross-attention are never causal (the whole source is known).
/// The padding switch acts on every site.
pub fn attention_mask(cfg: &ModelConfig, site: AttnSite, opts: &ForwardOptions) -> MaskSpec {
    let causal = match (cfg.arch, site) {
        (Arch::EncoderOnly, AttnSite::EncoderSelf) => opts.causal.unwrap_or(false),
        (_, AttnSite::DecoderSelf) => opts.causal.unwrap_or(true),
        _ => false,
    };
    MaskSpec {
        causal,
        padding: opts.padding_mask,
    }
}

impl MaskSpec {
    /// The key-padding flags of key rows `tokens` (any layout: one flag per token, `true`
    /// where the token is `pad`), or `None` when the padding mask is off.
    pub fn key_padding(&self, tokens: &[u32], pad: u32) -> Option<Vec<bool>> {
        self.padding
            .then(|| tokens.iter().map(|&x| x == pad).collect())
    }
}

/// Whether key j is hidden from the query at absolute position `q_pos`: the future under the
/// causal mask, or a padding key (`key_is_pad` is only true when the padding mask is on).
#[inline]
pub fn is_masked(causal: bool, q_pos: usize, j: usize, key_is_pad: bool) -> bool {
    (causal && j > q_pos) || key_is_pad
}

impl Model {
    /// Whether the self-attention of `site` uses the causal mask in this pass
    /// (`attention_mask(..).causal`).
    pub fn is_causal(&self, site: AttnSite, opts: &ForwardOptions) -> bool {
        attention_mask(&self.config, site, opts).causal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::tokenizer::Tokenizer;

    fn model(preset: &str) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        let cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        Model::zeros(cfg, tok)
    }

    #[test]
    fn decoders_are_causal_by_default_encoders_and_cross_attention_are_not() {
        let opts = ForwardOptions::default();
        let gpt = model("gpt-pico");
        assert!(attention_mask(&gpt.config, AttnSite::DecoderSelf, &opts).causal);
        let enc = model("encoder-nano");
        assert!(!attention_mask(&enc.config, AttnSite::EncoderSelf, &opts).causal);
        let s2s = model("seq2seq-nano");
        assert!(attention_mask(&s2s.config, AttnSite::DecoderSelf, &opts).causal);
        assert!(!attention_mask(&s2s.config, AttnSite::EncoderSelf, &opts).causal);
        assert!(!attention_mask(&s2s.config, AttnSite::Cross, &opts).causal);
    }

    #[test]
    fn the_causal_switch_moves_the_main_stack_only() {
        let on = ForwardOptions {
            causal: Some(true),
            ..ForwardOptions::default()
        };
        let off = ForwardOptions {
            causal: Some(false),
            padding_mask: false,
            ..ForwardOptions::default()
        };
        let enc = model("encoder-nano");
        assert!(attention_mask(&enc.config, AttnSite::EncoderSelf, &on).causal);
        let s2s = model("seq2seq-nano");
        assert!(!attention_mask(&s2s.config, AttnSite::EncoderSelf, &on).causal);
        assert!(!attention_mask(&s2s.config, AttnSite::Cross, &on).causal);
        let m = attention_mask(&s2s.config, AttnSite::DecoderSelf, &off);
        assert_eq!(
            m,
            MaskSpec {
                causal: false,
                padding: false
            }
        );
        assert_eq!(m.key_padding(&[0, 4, 0], 0), None);
    }

    #[test]
    fn masked_keys_are_the_future_and_padding() {
        // Query at position 1 of four keys, key 3 is padding.
        let pad = [false, false, false, true];
        let row =
            |causal| -> Vec<bool> { (0..4).map(|j| is_masked(causal, 1, j, pad[j])).collect() };
        assert_eq!(row(true), vec![false, false, true, true]);
        assert_eq!(row(false), vec![false, false, false, true]);
        let spec = MaskSpec {
            causal: true,
            padding: true,
        };
        assert_eq!(
            spec.key_padding(&[5, 0, 6], 0),
            Some(vec![false, true, false])
        );
    }
}

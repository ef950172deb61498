//! Masks (docs/model.md, "Masks"): which keys a query may not see.
//!
//! ```text
//! s_ij = −∞  where  hidden(i, j)  or  (padding and key j is the pad token)
//!
//! hidden(i, j) = the cell edit at (i, j) if there is one, else the rule's:
//!   none            never
//!   causal          j > i
//!   prefix_lm P     j > i and j ≥ P      (bidirectional over positions < P, causal after)
//!   sliding_window w  j > i or i − j ≥ w  (the query and the w − 1 keys before it)
//! ```
//!
//! Query i sits at absolute position i (`q_offset + row` in a cached step), key j at
//! position j. A masked score is −∞ before the softmax; a row with every key masked gives
//! zero probabilities, never NaN (`attention::softmax_row`).
//!
//! [`attention_mask`] (beside the switches it reads, in `options.rs`) is the one place that
//! decides, per attention site, which mask a pass applies: an explicit [`SiteMask`] from `ForwardOptions::masks`, or the architecture's
//! default (the causal switch). [`is_masked`] is the one predicate every CPU path applies
//! per (query, key) (`attention::attention_forward`, and through it the KV cache's step and
//! the backward pass, which reuses the recorded scores). The GPU mirrors it in
//! `shaders/attention_scores.wgsl` from the same [`MaskSpec`] (`MaskSpec::gpu_rule` and the
//! cell table of `MaskSpec::cell_table`). A new kind of mask is a [`MaskRule`] variant, a
//! clause of [`MaskRule::hides`], the same clause in the shader, and a test of each.

use serde::{Deserialize, Serialize};

use super::site::AttnSite;
use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};

/// Defined beside the switches it reads (`options.rs`), and named here with the masks.
pub use super::options::attention_mask;

/// The structural part of a self-attention mask: which keys query i may see, by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MaskRule {
    /// Every key is visible (an encoder's bidirectional attention).
    None,
    /// Key j is hidden from query i when j > i (the future).
    Causal,
    /// Bidirectional over the first `prefix` positions (the prompt), causal after them.
    PrefixLm { prefix: usize },
    /// Causal, and only the `window` most recent keys (the query's own included).
    SlidingWindow { window: usize },
}

impl MaskRule {
    /// Whether the rule hides key j from the query at absolute position i.
    #[inline]
    pub fn hides(self, i: usize, j: usize) -> bool {
        match self {
            MaskRule::None => false,
            MaskRule::Causal => j > i,
            MaskRule::PrefixLm { prefix } => j > i && j >= prefix,
            MaskRule::SlidingWindow { window } => j > i || i - j >= window,
        }
    }

    /// The page's and the CLI's name of the rule.
    pub fn name(self) -> &'static str {
        match self {
            MaskRule::None => "none",
            MaskRule::Causal => "causal",
            MaskRule::PrefixLm { .. } => "prefix_lm",
            MaskRule::SlidingWindow { .. } => "sliding_window",
        }
    }
}

/// One painted cell: the key at position `key` is hidden from (or shown to) the query at
/// position `query`, whatever the rule says. Padding still hides a pad key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub struct CellEdit {
    pub query: usize,
    pub key: usize,
    pub hidden: bool,
}

/// An explicit mask for one self-attention site: a rule and the cells painted on top.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct SiteMask {
    /// `encoder_self` or `decoder_self` (cross-attention sees the whole source).
    pub site: AttnSite,
    pub rule: MaskRule,
    /// Later edits of the same cell win.
    #[serde(default)]
    pub cells: Vec<CellEdit>,
}

/// The mask one attention sublayer applies in one pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MaskSpec {
    pub rule: MaskRule,
    /// Painted cells, sorted by (query, key), one per cell.
    pub cells: Vec<CellEdit>,
    /// Hide keys whose token is the tokenizer's `pad` (in cross-attention: the padding of
    /// the source).
    pub padding: bool,
}

/// Why a key is hidden from a query, as the masks view draws it (bits of one byte).
pub const HIDDEN_BY_RULE: u8 = 1;
/// The key is padding and the padding mask is on.
pub const HIDDEN_BY_PADDING: u8 = 2;

impl MaskSpec {
    /// A mask from its rule and painted cells (in any order; a later edit of a cell wins).
    pub fn new(rule: MaskRule, cells: &[CellEdit], padding: bool) -> MaskSpec {
        let mut sorted: Vec<CellEdit> = Vec::with_capacity(cells.len());
        // Keep the last edit of each cell: a stable sort, then dedup keeping the later one.
        let mut all = cells.to_vec();
        crate::sorting::sort_by_key(&mut all, |c| (c.query, c.key));
        for c in all {
            match sorted.last_mut() {
                Some(last) if (last.query, last.key) == (c.query, c.key) => *last = c,
                _ => sorted.push(c),
            }
        }
        MaskSpec {
            rule,
            cells: sorted,
            padding,
        }
    }

    /// Whether this is the plain causal mask (no painted cells).
    pub fn is_causal(&self) -> bool {
        self.rule == MaskRule::Causal && self.cells.is_empty()
    }

    /// Whether the rule or a painted cell hides key j from the query at position i
    /// (padding aside).
    #[inline]
    pub fn hides(&self, i: usize, j: usize) -> bool {
        if !self.cells.is_empty() {
            if let Ok(k) = self
                .cells
                .binary_search_by_key(&(i, j), |c| (c.query, c.key))
            {
                return self.cells[k].hidden;
            }
        }
        self.rule.hides(i, j)
    }

    /// The key-padding flags of key rows `tokens` (any layout: one flag per token, `true`
    /// where the token is `pad`), or `None` when the padding mask is off.
    pub fn key_padding(&self, tokens: &[u32], pad: u32) -> Option<Vec<bool>> {
        self.padding
            .then(|| tokens.iter().map(|&x| x == pad).collect())
    }

    /// (T, S) why each key of `key_tokens` (S) is hidden from queries at positions
    /// `q_offset ..q_offset + T`: [`HIDDEN_BY_RULE`] | [`HIDDEN_BY_PADDING`], 0 where visible.
    pub fn reasons(&self, key_tokens: &[u32], pad: u32, q_offset: usize, t: usize) -> Vec<u8> {
        let s = key_tokens.len();
        let mut out = vec![0u8; t * s]; // (T, S)
        for r in 0..t {
            for (j, &tok) in key_tokens.iter().enumerate() {
                let mut why = 0;
                if self.hides(q_offset + r, j) {
                    why |= HIDDEN_BY_RULE;
                }
                if self.padding && tok == pad {
                    why |= HIDDEN_BY_PADDING;
                }
                out[r * s + j] = why;
            }
        }
        out
    }

    /// The rule as the GPU kernel reads it: `(kind, argument)` with kind 0 none, 1 causal,
    /// 2 prefix-LM (argument: the prefix), 3 sliding window (argument: the window).
    pub fn gpu_rule(&self) -> (u32, u32) {
        let arg = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        match self.rule {
            MaskRule::None => (0, 0),
            MaskRule::Causal => (1, 0),
            MaskRule::PrefixLm { prefix } => (2, arg(prefix)),
            MaskRule::SlidingWindow { window } => (3, arg(window)),
        }
    }

    /// The painted cells as a dense (N, N) u32 table over absolute positions, N = one past
    /// the largest painted position: 0 where the rule decides, 1 hidden, 2 shown. `None`
    /// without painted cells. What `shaders/attention_scores.wgsl` reads as `cells`.
    pub fn cell_table(&self) -> Option<(Vec<u32>, usize)> {
        let n = self.cells.iter().map(|c| c.query.max(c.key) + 1).max()?;
        let mut table = vec![0u32; n * n]; // (N, N)
        for c in &self.cells {
            table[c.query * n + c.key] = if c.hidden { 1 } else { 2 };
        }
        Some((table, n))
    }

    /// Whether a KV cache filled by a prefill of `prefill_len` positions and then one
    /// position per step gives the same rows as recomputing the whole sequence: no query
    /// may see a key that did not exist yet when it was computed (a key after it and past
    /// the prefill). `Err` says why not.
    pub fn cacheable(&self, prefill_len: usize) -> std::result::Result<(), String> {
        match self.rule {
            MaskRule::None => {
                return Err(
                    "the mask is bidirectional (none): every new token would change \
                            the earlier positions"
                        .into(),
                )
            }
            MaskRule::PrefixLm { prefix } if prefix > prefill_len => {
                return Err(format!(
                    "the prefix-LM mask's prefix ({prefix}) is longer than the prompt \
                     ({prefill_len}): prompt positions would see tokens generated later"
                ))
            }
            _ => {}
        }
        if let Some(c) = self
            .cells
            .iter()
            .find(|c| !c.hidden && c.key > c.query && c.key >= prefill_len)
        {
            return Err(format!(
                "the edited mask shows key {} to query {}: a position would see a token \
                 generated after it",
                c.key, c.query
            ));
        }
        Ok(())
    }
}

/// Whether key j is hidden from the query at absolute position `q_pos`: by the mask's rule
/// or a painted cell, or because it is a padding key (`key_is_pad` is only true when the
/// padding mask is on).
#[inline]
pub fn is_masked(mask: &MaskSpec, q_pos: usize, j: usize, key_is_pad: bool) -> bool {
    key_is_pad || mask.hides(q_pos, j)
}

/// The explicit masks of `opts` must name a self-attention site the model has, a window of
/// at least one key, and positions inside the model's context.
pub fn check_masks(cfg: &ModelConfig, masks: &[SiteMask]) -> Result<()> {
    let mut seen = vec![];
    for m in masks {
        let has = matches!(
            (m.site, cfg.arch),
            (
                AttnSite::EncoderSelf,
                Arch::EncoderOnly | Arch::EncoderDecoder
            ) | (
                AttnSite::DecoderSelf,
                Arch::DecoderOnly | Arch::EncoderDecoder
            )
        );
        if m.site == AttnSite::Cross {
            return Err(Error::Input(
                "mask: cross-attention sees the whole source; only self-attention takes an \
                 explicit mask"
                    .into(),
            ));
        }
        if !has {
            return Err(Error::Input(format!(
                "mask: this model has no {} attention",
                m.site.name()
            )));
        }
        if seen.contains(&m.site) {
            return Err(Error::Input(format!(
                "mask: two masks for {}",
                m.site.name()
            )));
        }
        seen.push(m.site);
        match m.rule {
            MaskRule::SlidingWindow { window: 0 } => {
                return Err(Error::Input(
                    "mask: a sliding window must hold at least one key (window ≥ 1)".into(),
                ))
            }
            MaskRule::SlidingWindow { window } | MaskRule::PrefixLm { prefix: window }
                if window > cfg.max_len =>
            {
                return Err(Error::Input(format!(
                    "mask: {} of {window} is longer than the model's context (max_len = {})",
                    m.rule.name(),
                    cfg.max_len
                )))
            }
            _ => {}
        }
        if let Some(c) = m
            .cells
            .iter()
            .find(|c| c.query >= cfg.max_len || c.key >= cfg.max_len)
        {
            return Err(Error::Input(format!(
                "mask: cell ({}, {}) is outside the model's context (positions 0..{})",
                c.query,
                c.key,
                cfg.max_len - 1
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::model::{ForwardOptions, Model};
    use crate::tokenizer::Tokenizer;

    fn model(preset: &str) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        let cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        Model::zeros(cfg, tok)
    }

    /// (N, N) the cells `rule` hides, as a picture: `x` hidden, `.` visible.
    fn picture(m: &MaskSpec, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| if m.hides(i, j) { 'x' } else { '.' })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn decoders_are_causal_by_default_encoders_and_cross_attention_are_not() {
        let opts = ForwardOptions::default();
        let gpt = model("gpt-pico");
        assert!(attention_mask(&gpt.config, AttnSite::DecoderSelf, &opts).is_causal());
        let enc = model("encoder-nano");
        let m = attention_mask(&enc.config, AttnSite::EncoderSelf, &opts);
        assert_eq!(m.rule, MaskRule::None);
        let s2s = model("seq2seq-nano");
        assert!(attention_mask(&s2s.config, AttnSite::DecoderSelf, &opts).is_causal());
        assert!(!attention_mask(&s2s.config, AttnSite::EncoderSelf, &opts).is_causal());
        assert!(!attention_mask(&s2s.config, AttnSite::Cross, &opts).is_causal());
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
        assert!(attention_mask(&enc.config, AttnSite::EncoderSelf, &on).is_causal());
        let s2s = model("seq2seq-nano");
        assert!(!attention_mask(&s2s.config, AttnSite::EncoderSelf, &on).is_causal());
        assert!(!attention_mask(&s2s.config, AttnSite::Cross, &on).is_causal());
        let m = attention_mask(&s2s.config, AttnSite::DecoderSelf, &off);
        assert_eq!(m, MaskSpec::new(MaskRule::None, &[], false));
        assert_eq!(m.key_padding(&[0, 4, 0], 0), None);
    }

    #[test]
    fn each_rule_hides_the_cells_its_definition_names() {
        let at = |rule| picture(&MaskSpec::new(rule, &[], false), 5);
        assert_eq!(at(MaskRule::None), vec![".....".to_string(); 5]);
        assert_eq!(
            at(MaskRule::Causal),
            vec![".xxxx", "..xxx", "...xx", "....x", "....."]
        );
        // Bidirectional over positions 0..3, causal after.
        assert_eq!(
            at(MaskRule::PrefixLm { prefix: 3 }),
            vec!["...xx", "...xx", "...xx", "....x", "....."]
        );
        // The query and the one key before it.
        assert_eq!(
            at(MaskRule::SlidingWindow { window: 2 }),
            vec![".xxxx", "..xxx", "x..xx", "xx..x", "xxx.."]
        );
        // Prefix 0 or 1 is plain causal; a window as long as the sequence is too.
        assert_eq!(at(MaskRule::PrefixLm { prefix: 1 }), at(MaskRule::Causal));
        assert_eq!(
            at(MaskRule::SlidingWindow { window: 5 }),
            at(MaskRule::Causal)
        );
    }

    #[test]
    fn painted_cells_override_the_rule_and_the_last_edit_of_a_cell_wins() {
        let cells = [
            CellEdit {
                query: 2,
                key: 0,
                hidden: true,
            },
            CellEdit {
                query: 0,
                key: 3,
                hidden: false,
            },
            CellEdit {
                query: 1,
                key: 1,
                hidden: true,
            },
            CellEdit {
                query: 1,
                key: 1,
                hidden: false,
            },
        ];
        let m = MaskSpec::new(MaskRule::Causal, &cells, true);
        assert_eq!(picture(&m, 4), vec![".xx.", "..xx", "x..x", "...."]);
        assert_eq!(m.cells.len(), 3);
        let (table, n) = m.cell_table().unwrap();
        assert_eq!(n, 4);
        assert_eq!(table[3], 2); // (0, 3) shown
        assert_eq!(table[4 + 1], 2); // (1, 1): the later edit
        assert_eq!(table[2 * 4], 1); // (2, 0) hidden
        assert_eq!(
            MaskSpec::new(MaskRule::Causal, &[], true).cell_table(),
            None
        );
    }

    #[test]
    fn masked_keys_are_the_rule_and_padding_and_the_reasons_say_which() {
        // Query at position 1 of four keys, key 3 is padding.
        let pad = [false, false, false, true];
        let row = |rule| -> Vec<bool> {
            let m = MaskSpec::new(rule, &[], true);
            (0..4).map(|j| is_masked(&m, 1, j, pad[j])).collect()
        };
        assert_eq!(row(MaskRule::Causal), vec![false, false, true, true]);
        assert_eq!(row(MaskRule::None), vec![false, false, false, true]);
        let spec = MaskSpec::new(MaskRule::Causal, &[], true);
        assert_eq!(
            spec.key_padding(&[5, 0, 6], 0),
            Some(vec![false, true, false])
        );
        // Keys 5, 0(pad), 6: rows 0..3.
        let why = spec.reasons(&[5, 0, 6], 0, 0, 3);
        let (r, p) = (HIDDEN_BY_RULE, HIDDEN_BY_PADDING);
        assert_eq!(why, vec![0, p | r, r, 0, p, r, 0, p, 0]);
        let off = MaskSpec::new(MaskRule::Causal, &[], false);
        assert_eq!(off.reasons(&[5, 0], 0, 1, 1), vec![0, 0]);
    }

    #[test]
    fn a_mask_is_cacheable_when_no_query_sees_a_key_generated_after_it() {
        let ok = |rule, cells: &[CellEdit]| MaskSpec::new(rule, cells, true).cacheable(3);
        assert!(ok(MaskRule::Causal, &[]).is_ok());
        assert!(ok(MaskRule::SlidingWindow { window: 2 }, &[]).is_ok());
        assert!(ok(MaskRule::PrefixLm { prefix: 3 }, &[]).is_ok());
        assert!(ok(MaskRule::PrefixLm { prefix: 4 }, &[])
            .unwrap_err()
            .contains("longer than the prompt"));
        assert!(ok(MaskRule::None, &[])
            .unwrap_err()
            .contains("bidirectional"));
        let hide = CellEdit {
            query: 5,
            key: 2,
            hidden: true,
        };
        assert!(ok(MaskRule::Causal, &[hide]).is_ok());
        // Showing a prompt key to an earlier prompt query is known at prefill.
        let inside = CellEdit {
            query: 0,
            key: 2,
            hidden: false,
        };
        assert!(ok(MaskRule::Causal, &[inside]).is_ok());
        let future = CellEdit {
            query: 4,
            key: 6,
            hidden: false,
        };
        assert!(ok(MaskRule::Causal, &[future])
            .unwrap_err()
            .contains("shows key 6 to query 4"));
    }

    #[test]
    fn explicit_masks_name_a_self_attention_site_of_the_model_and_stay_in_context() {
        let gpt = model("gpt-pico");
        let m = |site, rule, cells: Vec<CellEdit>| SiteMask { site, rule, cells };
        let err = |masks: &[SiteMask]| check_masks(&gpt.config, masks).unwrap_err().to_string();
        assert!(check_masks(
            &gpt.config,
            &[m(
                AttnSite::DecoderSelf,
                MaskRule::SlidingWindow { window: 3 },
                vec![]
            )]
        )
        .is_ok());
        assert!(err(&[m(AttnSite::EncoderSelf, MaskRule::None, vec![])])
            .contains("no encoder_self attention"));
        assert!(err(&[m(AttnSite::Cross, MaskRule::None, vec![])]).contains("cross-attention"));
        assert!(err(&[m(
            AttnSite::DecoderSelf,
            MaskRule::SlidingWindow { window: 0 },
            vec![]
        )])
        .contains("window ≥ 1"));
        let far = CellEdit {
            query: 0,
            key: gpt.config.max_len,
            hidden: true,
        };
        assert!(
            err(&[m(AttnSite::DecoderSelf, MaskRule::Causal, vec![far])])
                .contains("outside the model's context")
        );
        let opts = ForwardOptions {
            masks: vec![m(
                AttnSite::DecoderSelf,
                MaskRule::PrefixLm { prefix: 2 },
                vec![],
            )],
            ..ForwardOptions::default()
        };
        assert_eq!(
            attention_mask(&gpt.config, AttnSite::DecoderSelf, &opts).rule,
            MaskRule::PrefixLm { prefix: 2 }
        );
    }
}

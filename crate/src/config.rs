//! `ModelConfig`: every design choice of a model that needs retraining to change.
//!
//! Run-time switches (causal mask, padding mask, √d_k scaling, head ablation,
//! train/eval mode) are *not* here: they are arguments of a forward pass
//! (see `model::ForwardOptions`).
//!
//! The JSON form is the `config` entry of a checkpoint's metadata (docs/model.md).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::limits::{
    at_most, MAX_CLASSES, MAX_D_FF, MAX_D_MODEL, MAX_HEADS, MAX_LAYERS, MAX_LEN, MAX_PARAMS,
    MAX_RELATIVE_DISTANCE, MAX_VOCAB,
};

/// Which stacks the model has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// Bidirectional encoder stack; a token-level head (`lm_head`) or a classifier.
    EncoderOnly,
    /// Causal decoder stack without cross-attention (GPT-style).
    DecoderOnly,
    /// Encoder over the source, decoder with self- and cross-attention (the 2017 paper).
    EncoderDecoder,
}

/// How positions enter the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PosEncoding {
    /// Nothing: self-attention is then permutation-equivariant.
    None,
    /// Fixed sin/cos table added to the embeddings (Vaswani et al. 2017).
    Sinusoidal,
    /// A trained table `pos_embed.weight` [max_len, C] added to the embeddings.
    Learned,
    /// Shaw et al. 2018: trained vectors per clipped distance added to keys and values.
    Relative,
    /// Su et al. 2021: q and k rotated by an angle proportional to the position.
    Rope,
    /// Press et al. 2022: a per-head linear penalty on distance added to the scores.
    Alibi,
}

impl PosEncoding {
    /// Every scheme, in the order the docs introduce them.
    pub const ALL: [PosEncoding; 6] = [
        PosEncoding::None,
        PosEncoding::Sinusoidal,
        PosEncoding::Learned,
        PosEncoding::Relative,
        PosEncoding::Rope,
        PosEncoding::Alibi,
    ];
}

/// Normalisation and where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Norm {
    /// `x = LN(x + sublayer(x))` — the original paper, PyTorch's default.
    PostLn,
    /// `x = x + sublayer(LN(x))` — GPT-2 and most modern models.
    PreLn,
    /// Post-norm placement, BatchNorm over features with statistics across the batch.
    BatchNorm,
    /// No normalisation at all.
    None,
}

/// The FFN's non-linearity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    Relu,
    /// The exact erf form: `x · Φ(x)`.
    Gelu,
    /// The tanh approximation GPT-2 uses (`gelu_new` in Hugging Face):
    /// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh,
}

/// How a query and a key become a score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    /// `q·k / √D` (the scaling can be switched off at run time).
    ScaledDot,
    /// `q·k`, never scaled.
    Dot,
    /// Bahdanau-style `wᵀ tanh(q + k)` with a trained `w` per head.
    Additive,
}

/// The whole shape and design of a model. Field names are the checkpoint contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub arch: Arch,
    /// V: number of tokens in the vocabulary.
    pub vocab_size: usize,
    /// C: width of the residual stream.
    pub d_model: usize,
    /// H: attention heads per layer; each has D = C / H dimensions.
    pub n_heads: usize,
    /// F: hidden width of the position-wise FFN.
    pub d_ff: usize,
    /// Longest sequence the model accepts (learned positions stop here).
    pub max_len: usize,
    /// Layers of an encoder-only or decoder-only model.
    #[serde(default)]
    pub n_layers: usize,
    /// Encoder layers of an encoder-decoder model.
    #[serde(default)]
    pub n_encoder_layers: usize,
    /// Decoder layers of an encoder-decoder model.
    #[serde(default)]
    pub n_decoder_layers: usize,
    pub pos_encoding: PosEncoding,
    /// Shaw relative positions clip distances to ±this value.
    #[serde(default = "default_relative_max_distance")]
    pub relative_max_distance: usize,
    pub norm: Norm,
    /// One LayerNorm at the end of each stack (`encoder.norm`, `decoder.norm`).
    #[serde(default)]
    pub final_norm: bool,
    pub activation: Activation,
    pub score: Score,
    /// W_K = W_Q: the score matrix of a head becomes symmetric (before masking and biases).
    #[serde(default)]
    pub share_qk: bool,
    /// Multiply token embeddings by √C before adding positions.
    #[serde(default = "yes")]
    pub scale_embeddings: bool,
    /// Residual connections around every sublayer.
    #[serde(default = "yes")]
    pub residual: bool,
    /// Dropout probability used in train mode.
    #[serde(default)]
    pub dropout: f32,
    /// The LM head reuses `embed.weight`.
    #[serde(default)]
    pub tie_embeddings: bool,
    /// > 0: an encoder-only classifier with this many classes (reads position 0).
    #[serde(default)]
    pub num_classes: usize,
}

fn yes() -> bool {
    true
}

fn default_relative_max_distance() -> usize {
    8
}

impl ModelConfig {
    /// D: dimensions per head.
    pub fn d_head(&self) -> usize {
        self.d_model / self.n_heads
    }

    /// Layers in the encoder stack (0 for decoder-only).
    pub fn encoder_layers(&self) -> usize {
        match self.arch {
            Arch::EncoderOnly => self.n_layers,
            Arch::DecoderOnly => 0,
            Arch::EncoderDecoder => self.n_encoder_layers,
        }
    }

    /// Layers in the decoder stack (0 for encoder-only).
    pub fn decoder_layers(&self) -> usize {
        match self.arch {
            Arch::EncoderOnly => 0,
            Arch::DecoderOnly => self.n_layers,
            Arch::EncoderDecoder => self.n_decoder_layers,
        }
    }

    /// True when the model ends in a classifier rather than a token-level head.
    pub fn is_classifier(&self) -> bool {
        self.num_classes > 0
    }

    /// Parse and validate the JSON form.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: ModelConfig = serde_json::from_str(text)
            .map_err(|e| Error::Config(format!("config is not valid: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a config always serialises")
    }

    /// Reject impossible combinations, naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, why: String| Err(Error::Config(format!("{field}: {why}")));
        // Sizes first: every field that decides an allocation, and the parameters they add up to.
        self.check_sizes()?;
        if self.vocab_size < 4 {
            return bad(
                "vocab_size",
                format!(
                    "must be at least 4 (pad, bos, eos, unk), got {}",
                    self.vocab_size
                ),
            );
        }
        if self.d_model == 0 {
            return bad("d_model", "must be positive".into());
        }
        if self.n_heads == 0 {
            return bad("n_heads", "must be positive".into());
        }
        if !self.d_model.is_multiple_of(self.n_heads) {
            return bad(
                "n_heads",
                format!(
                    "d_model ({}) is not divisible by n_heads ({})",
                    self.d_model, self.n_heads
                ),
            );
        }
        if self.d_ff == 0 {
            return bad("d_ff", "must be positive".into());
        }
        if self.max_len == 0 {
            return bad("max_len", "must be positive".into());
        }
        if self.pos_encoding == PosEncoding::Sinusoidal && !self.d_model.is_multiple_of(2) {
            return bad(
                "d_model",
                format!(
                    "sinusoidal positions need an even d_model, got {}",
                    self.d_model
                ),
            );
        }
        if self.pos_encoding == PosEncoding::Rope && !self.d_head().is_multiple_of(2) {
            return bad(
                "pos_encoding",
                format!(
                    "rope rotates pairs of dimensions and needs an even d_head, got {}",
                    self.d_head()
                ),
            );
        }
        if self.pos_encoding == PosEncoding::Relative && self.relative_max_distance == 0 {
            return bad(
                "relative_max_distance",
                "must be positive for relative positions".into(),
            );
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return bad(
                "dropout",
                format!("must be in [0, 1), got {}", self.dropout),
            );
        }
        match self.arch {
            Arch::EncoderOnly | Arch::DecoderOnly => {
                if self.n_layers == 0 {
                    return bad("n_layers", "must be positive for this architecture".into());
                }
                if self.n_encoder_layers != 0 || self.n_decoder_layers != 0 {
                    return bad(
                        "n_encoder_layers",
                        "only encoder_decoder models use n_encoder_layers / n_decoder_layers; use n_layers".into(),
                    );
                }
            }
            Arch::EncoderDecoder => {
                if self.n_encoder_layers == 0 {
                    return bad(
                        "n_encoder_layers",
                        "must be positive for encoder_decoder".into(),
                    );
                }
                if self.n_decoder_layers == 0 {
                    return bad(
                        "n_decoder_layers",
                        "must be positive for encoder_decoder".into(),
                    );
                }
                if self.n_layers != 0 {
                    return bad(
                        "n_layers",
                        "encoder_decoder models use n_encoder_layers and n_decoder_layers".into(),
                    );
                }
            }
        }
        if self.num_classes > 0 {
            if self.arch != Arch::EncoderOnly {
                return bad(
                    "num_classes",
                    "only encoder_only models can be classifiers".into(),
                );
            }
            if self.tie_embeddings {
                return bad(
                    "tie_embeddings",
                    "a classifier has no LM head to tie".into(),
                );
            }
        }
        Ok(())
    }

    /// Total number of trained parameters (running stats excluded) of a model built with
    /// `Model::init`, whose untied LM head has a bias (a checkpoint may omit it). Counted in u64
    /// arithmetic that saturates instead of overflowing, so it can be asked of any config, valid
    /// or not: the size check asks it before anything else is checked.
    pub fn param_count_u64(&self) -> u64 {
        let u = |x: usize| x as u64;
        let (c, f, v, h) = (
            u(self.d_model),
            u(self.d_ff),
            u(self.vocab_size),
            u(self.n_heads),
        );
        let d = c.checked_div(h).unwrap_or(0);
        let add = |xs: &[u64]| xs.iter().fold(0u64, |a, &x| a.saturating_add(x));
        let mul = |xs: &[u64]| xs.iter().fold(1u64, |a, &x| a.saturating_mul(x));
        let additive = if self.score == Score::Additive {
            mul(&[h, d])
        } else {
            0
        };
        let projections = add(&[mul(&[4, c, c]), mul(&[4, c]), additive]);
        let relative = if self.pos_encoding == PosEncoding::Relative {
            mul(&[2, add(&[mul(&[2, u(self.relative_max_distance)]), 1]), d])
        } else {
            0
        };
        let attn = add(&[projections, relative]);
        let ffn = add(&[mul(&[2, c, f]), f, c]);
        let norm = if self.norm == Norm::None {
            0
        } else {
            mul(&[2, c])
        };
        let enc = mul(&[u(self.encoder_layers()), add(&[attn, ffn, mul(&[2, norm])])]);
        let cross = if self.arch == Arch::EncoderDecoder {
            add(&[projections, norm])
        } else {
            0
        };
        let dec = mul(&[
            u(self.decoder_layers()),
            add(&[attn, ffn, mul(&[2, norm]), cross]),
        ]);
        let stacks =
            u(usize::from(self.encoder_layers() > 0) + usize::from(self.decoder_layers() > 0));
        let final_norm = if self.final_norm {
            mul(&[stacks, 2, c])
        } else {
            0
        };
        let embed = mul(&[v, c]);
        let pos = if self.pos_encoding == PosEncoding::Learned {
            mul(&[u(self.max_len), c])
        } else {
            0
        };
        let nc = u(self.num_classes);
        let head = if self.num_classes > 0 {
            add(&[mul(&[nc, c]), nc])
        } else if self.tie_embeddings {
            v
        } else {
            add(&[mul(&[v, c]), v])
        };
        add(&[enc, dec, final_norm, embed, pos, head])
    }

    /// [`Self::param_count_u64`] as a `usize`: a valid config stays under `MAX_PARAMS`, far
    /// below `usize::MAX` on any target.
    pub fn param_count(&self) -> usize {
        usize::try_from(self.param_count_u64()).unwrap_or(usize::MAX)
    }

    /// Every size field against the budget (`crate::limits`), then the parameter count they
    /// add up to, before anything is allocated for them.
    fn check_sizes(&self) -> Result<()> {
        let kind = Error::Config;
        at_most(kind, "vocab_size", self.vocab_size, MAX_VOCAB)?;
        at_most(kind, "d_model", self.d_model, MAX_D_MODEL)?;
        at_most(kind, "n_heads", self.n_heads, MAX_HEADS)?;
        at_most(kind, "d_ff", self.d_ff, MAX_D_FF)?;
        at_most(kind, "max_len", self.max_len, MAX_LEN)?;
        at_most(kind, "n_layers", self.n_layers, MAX_LAYERS)?;
        at_most(kind, "n_encoder_layers", self.n_encoder_layers, MAX_LAYERS)?;
        at_most(kind, "n_decoder_layers", self.n_decoder_layers, MAX_LAYERS)?;
        at_most(kind, "num_classes", self.num_classes, MAX_CLASSES)?;
        at_most(
            kind,
            "relative_max_distance",
            self.relative_max_distance,
            MAX_RELATIVE_DISTANCE,
        )?;
        let params = self.param_count_u64();
        if params > MAX_PARAMS {
            return Err(Error::Config(format!(
                "parameter count: this config needs {params} parameters, above the limit of \
                 {MAX_PARAMS} (d_model {}, d_ff {}, vocab_size {}, {} + {} layers)",
                self.d_model,
                self.d_ff,
                self.vocab_size,
                self.encoder_layers(),
                self.decoder_layers()
            )));
        }
        Ok(())
    }

    /// Named tiny presets: a starting point for `tplay train --preset` and the tests.
    pub fn preset(name: &str, vocab_size: usize) -> Result<Self> {
        let base = ModelConfig {
            arch: Arch::DecoderOnly,
            vocab_size,
            d_model: 32,
            n_heads: 4,
            d_ff: 64,
            max_len: 64,
            n_layers: 2,
            n_encoder_layers: 0,
            n_decoder_layers: 0,
            pos_encoding: PosEncoding::Sinusoidal,
            relative_max_distance: 8,
            norm: Norm::PreLn,
            final_norm: true,
            activation: Activation::Gelu,
            score: Score::ScaledDot,
            share_qk: false,
            scale_embeddings: true,
            residual: true,
            dropout: 0.0,
            tie_embeddings: false,
            num_classes: 0,
        };
        let cfg = match name {
            // A decoder-only language model: the default of the playground.
            "gpt-nano" => base,
            // Even smaller: one layer, two heads; fast enough for gradient checks.
            "gpt-pico" => ModelConfig {
                d_model: 16,
                n_heads: 2,
                d_ff: 32,
                n_layers: 1,
                ..base
            },
            // A bidirectional encoder for tagging / classification.
            "encoder-nano" => ModelConfig {
                arch: Arch::EncoderOnly,
                ..base
            },
            // The 2017 paper's layout at toy size: post-LN, ReLU.
            "seq2seq-nano" => ModelConfig {
                arch: Arch::EncoderDecoder,
                n_layers: 0,
                n_encoder_layers: 2,
                n_decoder_layers: 2,
                norm: Norm::PostLn,
                activation: Activation::Relu,
                final_norm: false,
                ..base
            },
            other => {
                return Err(Error::Config(format!(
                    "preset: unknown preset '{other}' (known: {})",
                    PRESETS.join(", ")
                )))
            }
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// Names accepted by [`ModelConfig::preset`].
pub const PRESETS: &[&str] = &["gpt-nano", "gpt-pico", "encoder-nano", "seq2seq-nano"];

#[cfg(test)]
mod tests {
    use super::*;

    fn nano() -> ModelConfig {
        ModelConfig::preset("gpt-nano", 40).unwrap()
    }

    /// The validation message without the "invalid config: " prefix.
    fn why(c: &ModelConfig) -> String {
        match c.validate() {
            Err(Error::Config(m)) => m,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn every_position_encoding_is_listed_once() {
        // The match has no wildcard: a new scheme does not compile until it is placed here.
        let index = |p: PosEncoding| match p {
            PosEncoding::None => 0,
            PosEncoding::Sinusoidal => 1,
            PosEncoding::Learned => 2,
            PosEncoding::Relative => 3,
            PosEncoding::Rope => 4,
            PosEncoding::Alibi => 5,
        };
        for (i, p) in PosEncoding::ALL.into_iter().enumerate() {
            assert_eq!(index(p), i, "{p:?}");
        }
    }

    #[test]
    fn every_preset_validates() {
        for p in PRESETS {
            ModelConfig::preset(p, 40).unwrap();
        }
    }

    #[test]
    fn unknown_preset_is_named() {
        let e = ModelConfig::preset("gpt-huge", 40).unwrap_err().to_string();
        assert!(e.contains("gpt-huge") && e.contains("gpt-nano"), "{e}");
    }

    #[test]
    fn json_round_trips() {
        let c = nano();
        assert_eq!(ModelConfig::from_json(&c.to_json()).unwrap(), c);
    }

    #[test]
    fn unknown_key_is_rejected_by_name() {
        let mut v: serde_json::Value = serde_json::from_str(&nano().to_json()).unwrap();
        v["n_hedas"] = 4.into();
        let e = ModelConfig::from_json(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(e.contains("n_hedas"), "{e}");
    }

    #[test]
    fn unknown_enum_value_is_rejected_by_name() {
        let mut v: serde_json::Value = serde_json::from_str(&nano().to_json()).unwrap();
        v["pos_encoding"] = "xpos".into();
        let e = ModelConfig::from_json(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(e.contains("xpos"), "{e}");
    }

    #[test]
    fn heads_must_divide_width() {
        let c = ModelConfig {
            n_heads: 5,
            ..nano()
        };
        let e = why(&c);
        assert!(
            e.starts_with("n_heads") && e.contains("not divisible"),
            "{e}"
        );
    }

    #[test]
    fn rope_needs_even_head_dim() {
        let c = ModelConfig {
            d_model: 12,
            n_heads: 4,
            pos_encoding: PosEncoding::Rope,
            ..nano()
        };
        let e = why(&c);
        assert!(
            e.starts_with("pos_encoding") && e.contains("even d_head"),
            "{e}"
        );
    }

    #[test]
    fn layer_counts_match_the_architecture() {
        let c = ModelConfig {
            n_layers: 0,
            ..nano()
        };
        assert!(why(&c).starts_with("n_layers"));
        let c = ModelConfig {
            n_encoder_layers: 2,
            ..nano()
        };
        assert!(why(&c).starts_with("n_encoder_layers"));
        let s = ModelConfig::preset("seq2seq-nano", 40).unwrap();
        let c = ModelConfig {
            n_decoder_layers: 0,
            ..s
        };
        assert!(why(&c).starts_with("n_decoder_layers"));
    }

    #[test]
    fn classifier_only_for_encoders() {
        let c = ModelConfig {
            num_classes: 2,
            ..nano()
        };
        assert!(why(&c).starts_with("num_classes"));
    }

    #[test]
    fn dropout_range_is_checked() {
        let c = ModelConfig {
            dropout: 1.0,
            ..nano()
        };
        assert!(why(&c).starts_with("dropout"));
    }

    #[test]
    fn vocabulary_must_hold_specials() {
        let c = ModelConfig {
            vocab_size: 3,
            ..nano()
        };
        assert!(why(&c).starts_with("vocab_size"));
    }

    #[test]
    fn a_huge_d_model_is_refused_naming_the_field_and_the_limit() {
        let mut c = nano();
        c.d_model = 1 << 30;
        let e = c.validate().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid config: d_model: 1073741824 is above the limit of 4096"
        );
    }

    #[test]
    fn fields_under_their_limits_can_still_add_up_to_too_many_parameters() {
        let mut c = nano();
        (c.d_model, c.d_ff, c.n_layers) = (4096, 16384, 64);
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("invalid config: parameter count: this config needs"),
            "{e}"
        );
        assert!(
            e.contains(&format!("above the limit of {MAX_PARAMS}")),
            "{e}"
        );
    }

    #[test]
    fn param_count_saturates_instead_of_overflowing() {
        let mut c = nano();
        (c.d_model, c.d_ff, c.vocab_size, c.n_layers) =
            (usize::MAX, usize::MAX, usize::MAX, usize::MAX);
        assert_eq!(c.param_count_u64(), u64::MAX);
    }
}

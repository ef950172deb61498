//! The layer plan (docs/model.md, "Forward pass", steps 3–5): which stacks a model runs, in
//! which order, which sublayers each layer holds, where each sublayer's norm sits and
//! whether its residual is on, and which head reads the last stack.
//!
//! ```text
//! encoder_only     encoder(tokens)                                   → head
//! decoder_only     decoder(tokens)                                   → head
//! encoder_decoder  encoder(source) → memory;  decoder(tokens, memory) → head
//! layer            SA, [CA,] FF     each  post: x = N(x + f(x))   pre: x = x + f(N(x))
//! ```
//!
//! [`layer_plan`] is the only place that turns a config into this structure. The CPU forward
//! pass (`forward.rs`, `Run::stack`), the CPU KV-cache step (`cache.rs`), the GPU pass
//! (`backend/gpu/pass.rs`, for inference, the KV cache and training alike), the backward
//! passes (`train/backward/model.rs`, `backend/gpu/train/backward.rs`) and the page's
//! architecture diagram (`www/src/components/tp-architecture.ts`, through
//! `Engine::layer_plan`) all walk it. A new sublayer kind is a [`SublayerKind`] variant
//! placed by [`layer_plan`], plus its function on each backend; a new norm placement is a
//! [`Placement`] chosen here, plus what it means in each sublayer wrapper.

use serde::Serialize;

use super::AttnSite;
use crate::config::{Arch, ModelConfig, Norm};

/// What a sublayer computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SublayerKind {
    /// Attention of the stack's positions over themselves.
    SelfAttention,
    /// Decoder queries over the encoder output (the memory).
    CrossAttention,
    /// The position-wise feed-forward network.
    Ffn,
}

/// Which normalisation a norm applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum NormKind {
    LayerNorm,
    /// Eval mode: running statistics; train mode: batch statistics.
    BatchNorm,
}

/// Where a sublayer's norm sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// pre-LN: `x = x + f(N(x))` (without the residual `x = f(N(x))`).
    Before,
    /// post-LN, BatchNorm: `x = N(x + f(x))` (without the residual `x = N(f(x))`).
    After,
}

/// The norm of one sublayer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct NormStep {
    /// Index into `LayerParams::norms` (`norm1` is 0).
    pub slot: usize,
    /// The checkpoint name inside the layer: `norm1`, `norm2`, `norm3`.
    pub name: String,
    pub kind: NormKind,
    pub placement: Placement,
}

/// One sublayer of every layer of a stack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SublayerPlan {
    pub kind: SublayerKind,
    /// The attention site of an attention sublayer (whose masks and ablated heads apply);
    /// `None` for the FFN.
    pub site: Option<AttnSite>,
    /// `None` when `norm = none`.
    pub norm: Option<NormStep>,
    /// Add the sublayer's input to its output.
    pub residual: bool,
}

/// Which tokens a stack embeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum StackInput {
    /// The batch's tokens (T).
    Tokens,
    /// The source tokens of an encoder-decoder model (S).
    Source,
}

/// One stack of layers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct StackPlan {
    /// `encoder` or `decoder`: the checkpoint prefix.
    pub name: String,
    /// The site of its self-attention (`encoder_self` or `decoder_self`).
    pub site: AttnSite,
    pub input: StackInput,
    /// Its cross-attention reads the output of the stack before it.
    pub reads_memory: bool,
    /// L
    pub layers: usize,
    /// The sublayers of every layer, in order.
    pub sublayers: Vec<SublayerPlan>,
    /// A LayerNorm after the last layer (`encoder.norm` / `decoder.norm`).
    pub final_norm: bool,
}

/// What reads the last stack's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum HeadKind {
    /// Logits over the vocabulary at every position.
    Lm,
    /// Class logits from position 0.
    Classifier,
}

/// The whole structure of a model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct LayerPlan {
    pub arch: Arch,
    /// The stacks in the order they run (the encoder first).
    pub stacks: Vec<StackPlan>,
    pub head: HeadKind,
}

/// The layer plan of a model with config `cfg`.
pub fn layer_plan(cfg: &ModelConfig) -> LayerPlan {
    let norm = |slot: usize| -> Option<NormStep> {
        let (kind, placement) = match cfg.norm {
            Norm::None => return None,
            Norm::PreLn => (NormKind::LayerNorm, Placement::Before),
            Norm::PostLn => (NormKind::LayerNorm, Placement::After),
            Norm::BatchNorm => (NormKind::BatchNorm, Placement::After),
        };
        Some(NormStep {
            slot,
            name: format!("norm{}", slot + 1),
            kind,
            placement,
        })
    };
    let stack = |site: AttnSite, input: StackInput, cross: bool, layers: usize| {
        let mut kinds = vec![(SublayerKind::SelfAttention, Some(site))];
        if cross {
            kinds.push((SublayerKind::CrossAttention, Some(AttnSite::Cross)));
        }
        kinds.push((SublayerKind::Ffn, None));
        StackPlan {
            name: match site {
                AttnSite::EncoderSelf => "encoder",
                _ => "decoder",
            }
            .to_string(),
            site,
            input,
            reads_memory: cross,
            layers,
            sublayers: kinds
                .into_iter()
                .enumerate()
                .map(|(slot, (kind, site))| SublayerPlan {
                    kind,
                    site,
                    norm: norm(slot),
                    residual: cfg.residual,
                })
                .collect(),
            final_norm: cfg.final_norm,
        }
    };
    let stacks = match cfg.arch {
        Arch::EncoderOnly => vec![stack(
            AttnSite::EncoderSelf,
            StackInput::Tokens,
            false,
            cfg.encoder_layers(),
        )],
        Arch::DecoderOnly => vec![stack(
            AttnSite::DecoderSelf,
            StackInput::Tokens,
            false,
            cfg.decoder_layers(),
        )],
        Arch::EncoderDecoder => vec![
            stack(
                AttnSite::EncoderSelf,
                StackInput::Source,
                false,
                cfg.encoder_layers(),
            ),
            stack(
                AttnSite::DecoderSelf,
                StackInput::Tokens,
                true,
                cfg.decoder_layers(),
            ),
        ],
    };
    LayerPlan {
        arch: cfg.arch,
        stacks,
        head: if cfg.is_classifier() {
            HeadKind::Classifier
        } else {
            HeadKind::Lm
        },
    }
}

impl LayerPlan {
    /// The stack whose self-attention is `site`.
    pub fn stack(&self, site: AttnSite) -> Option<&StackPlan> {
        self.stacks.iter().find(|s| s.site == site)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::tokenizer::Tokenizer;

    fn cfg(preset: &str, edit: impl FnOnce(&mut ModelConfig)) -> ModelConfig {
        let tok = Tokenizer::char_level("abcdefgh");
        let mut c = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        edit(&mut c);
        c.validate().unwrap();
        c
    }

    #[test]
    fn encoder_decoder_runs_the_encoder_first_and_its_decoder_reads_the_memory() {
        let p = layer_plan(&cfg("seq2seq-nano", |_| {}));
        let names: Vec<(&str, StackInput, bool)> = p
            .stacks
            .iter()
            .map(|s| (s.name.as_str(), s.input, s.reads_memory))
            .collect();
        assert_eq!(
            names,
            vec![
                ("encoder", StackInput::Source, false),
                ("decoder", StackInput::Tokens, true)
            ]
        );
        let kinds: Vec<SublayerKind> = p.stacks[1].sublayers.iter().map(|s| s.kind).collect();
        use SublayerKind::*;
        assert_eq!(kinds, vec![SelfAttention, CrossAttention, Ffn]);
        assert_eq!(p.stacks[1].sublayers[1].site, Some(AttnSite::Cross));
        let norms: Vec<&str> = p.stacks[1]
            .sublayers
            .iter()
            .map(|s| s.norm.as_ref().unwrap().name.as_str())
            .collect();
        assert_eq!(norms, vec!["norm1", "norm2", "norm3"]);
    }

    #[test]
    fn norm_placement_and_residual_come_from_the_config() {
        let pre = layer_plan(&cfg("gpt-pico", |c| c.norm = Norm::PreLn));
        let n = pre.stacks[0].sublayers[0].norm.as_ref().unwrap();
        assert_eq!(
            (n.kind, n.placement),
            (NormKind::LayerNorm, Placement::Before)
        );
        let bn = layer_plan(&cfg("gpt-pico", |c| c.norm = Norm::BatchNorm));
        let n = bn.stacks[0].sublayers[1].norm.as_ref().unwrap();
        assert_eq!(
            (n.kind, n.placement),
            (NormKind::BatchNorm, Placement::After)
        );
        let none = layer_plan(&cfg("gpt-pico", |c| {
            c.norm = Norm::None;
            c.residual = false;
        }));
        assert!(none.stacks[0]
            .sublayers
            .iter()
            .all(|s| s.norm.is_none() && !s.residual));
    }

    #[test]
    fn every_norm_of_the_plan_is_a_parameter_of_the_model_and_back() {
        for preset in crate::config::PRESETS {
            for norm in [Norm::PreLn, Norm::PostLn, Norm::BatchNorm, Norm::None] {
                let c = cfg(preset, |c| c.norm = norm);
                let plan = layer_plan(&c);
                let model = Model::zeros(c, Tokenizer::char_level("abcdefgh"));
                for sp in &plan.stacks {
                    let params = match sp.site {
                        AttnSite::EncoderSelf => model.encoder.as_ref(),
                        _ => model.decoder.as_ref(),
                    }
                    .unwrap();
                    assert_eq!(params.layers.len(), sp.layers, "{preset}");
                    assert_eq!(params.final_norm.is_some(), sp.final_norm);
                    for layer in &params.layers {
                        let slots: Vec<usize> = sp
                            .sublayers
                            .iter()
                            .filter_map(|s| s.norm.as_ref().map(|n| n.slot))
                            .collect();
                        assert_eq!(slots, (0..layer.norms.len()).collect::<Vec<_>>());
                        assert_eq!(
                            layer.cross_attn.is_some(),
                            sp.sublayers
                                .iter()
                                .any(|s| s.kind == SublayerKind::CrossAttention)
                        );
                    }
                }
                assert_eq!(
                    plan.stacks.len(),
                    model.encoder.is_some() as usize + model.decoder.is_some() as usize
                );
            }
        }
    }
}

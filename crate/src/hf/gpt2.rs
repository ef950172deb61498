//! The GPT-2 family as Hugging Face ships it (`GPT2LMHeadModel`, `model_type: "gpt2"`).
//!
//! GPT-2's conventions, each one a setting of the core:
//! - decoder-only, pre-LN (`ln_1` before attention, `ln_2` before the MLP) with a final
//!   LayerNorm `ln_f`: `norm: pre_ln`, `final_norm: true`; ε = `layer_norm_epsilon` (the
//!   core's LayerNorm uses 1e-5, GPT-2's value; another ε is refused by name);
//! - learned positions `wpe` (`pos_encoding: learned`, `max_len` = `n_positions`), token
//!   embeddings not scaled by √C (`scale_embeddings: false`);
//! - attention scores scaled by 1/√D (`score: scaled_dot`);
//! - GELU's tanh approximation (`activation_function: gelu_new`) → `activation: gelu_tanh`;
//! - `Conv1D` layers store their weight (in, out): the core's (out, in) is read transposed.
//!   `c_attn` packs W_Q, W_K, W_V side by side, (C, 3C): transposed it is exactly the core's
//!   `in_proj_weight` (3C, C), rows q, then k, then v;
//! - the LM head has no bias and is tied to `wte` unless `tie_word_embeddings` is false.
//!
//! Names: `transformer.` prefix or none (as `GPT2Model` saves it); `lm_head.weight` present
//! or not when tied (tied, it is not read: the head is `wte`, as `transformers` ties it);
//! the `attn.bias` / `attn.masked_bias` buffers of older files are masks, not weights.

use serde_json::Value;

use super::mapping::{bad, Mapping, Rule};
use crate::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use crate::error::Result;

/// A non-negative integer field of `config.json`.
fn uint(cfg: &Value, field: &str) -> Result<Option<usize>> {
    match cfg.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(|x| Some(usize::try_from(x).unwrap_or(usize::MAX)))
            .ok_or_else(|| {
                bad(format!(
                    "config.json: `{field}` must be a non-negative integer, got {v}"
                ))
            }),
    }
}

fn required(cfg: &Value, field: &str, default: Option<usize>) -> Result<usize> {
    uint(cfg, field)?
        .or(default)
        .ok_or_else(|| bad(format!("config.json: `{field}` is missing")))
}

fn flag(cfg: &Value, field: &str, default: bool) -> Result<bool> {
    match cfg.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(bad(format!(
            "config.json: `{field}` must be true or false, got {v}"
        ))),
    }
}

/// GPT-2's `config.json` as a core config and the names of its tensors.
pub fn mapping(cfg: &Value) -> Result<Mapping> {
    let c = required(cfg, "n_embd", Some(768))?;
    let n_layers = required(cfg, "n_layer", Some(12))?;
    let n_heads = required(cfg, "n_head", Some(12))?;
    let vocab_size = required(cfg, "vocab_size", Some(50257))?;
    let max_len = match uint(cfg, "n_positions")? {
        Some(n) => n,
        None => required(cfg, "n_ctx", Some(1024))?,
    };
    let d_ff = match uint(cfg, "n_inner")? {
        Some(f) => f,
        None => c.saturating_mul(4),
    };
    let activation = match cfg.get("activation_function").and_then(|v| v.as_str()) {
        None | Some("gelu_new" | "gelu_pytorch_tanh") => Activation::GeluTanh,
        Some("gelu") => Activation::Gelu,
        Some("relu") => Activation::Relu,
        Some(other) => {
            return Err(bad(format!(
                "config.json: activation_function `{other}` is not supported \
                 (gelu_new, gelu_pytorch_tanh, gelu or relu)"
            )))
        }
    };
    if let Some(v) = cfg.get("layer_norm_epsilon") {
        let eps = v.as_f64().ok_or_else(|| {
            bad(format!(
                "config.json: `layer_norm_epsilon` must be a number, got {v}"
            ))
        })?;
        if (eps - 1e-5).abs() > 1e-12 {
            return Err(bad(format!(
                "config.json: layer_norm_epsilon {eps} is not supported (the core's LayerNorm \
                 uses 1e-5, GPT-2's value)"
            )));
        }
    }
    for (field, default, wanted) in [
        ("scale_attn_weights", true, true),
        ("scale_attn_by_inverse_layer_idx", false, false),
        ("add_cross_attention", false, false),
    ] {
        if flag(cfg, field, default)? != wanted {
            return Err(bad(format!(
                "config.json: `{field}: {}` is not supported",
                !wanted
            )));
        }
    }
    let tied = flag(cfg, "tie_word_embeddings", true)?;
    let config = ModelConfig {
        arch: Arch::DecoderOnly,
        vocab_size,
        d_model: c,
        n_heads,
        d_ff,
        max_len,
        n_layers,
        n_encoder_layers: 0,
        n_decoder_layers: 0,
        pos_encoding: PosEncoding::Learned,
        relative_max_distance: 8,
        norm: Norm::PreLn,
        final_norm: true,
        activation,
        score: Score::ScaledDot,
        share_qk: false,
        scale_embeddings: false,
        residual: true,
        dropout: 0.0,
        tie_embeddings: tied,
        num_classes: 0,
    };
    // Sizes and combinations before any name is listed for them.
    config.validate()?;
    let mut rules = vec![
        rule("embed.weight", "wte.weight", false),
        rule("pos_embed.weight", "wpe.weight", false),
        rule("decoder.norm.weight", "ln_f.weight", false),
        rule("decoder.norm.bias", "ln_f.bias", false),
    ];
    if !tied {
        rules.push(rule("lm_head.weight", "lm_head.weight", false));
    }
    for i in 0..n_layers {
        let core = |s: &str| format!("decoder.layers.{i}.{s}");
        let hf = |s: &str| format!("h.{i}.{s}");
        for (ours, theirs, transposed) in [
            ("norm1.weight", "ln_1.weight", false),
            ("norm1.bias", "ln_1.bias", false),
            ("self_attn.in_proj_weight", "attn.c_attn.weight", true),
            ("self_attn.in_proj_bias", "attn.c_attn.bias", false),
            ("self_attn.out_proj.weight", "attn.c_proj.weight", true),
            ("self_attn.out_proj.bias", "attn.c_proj.bias", false),
            ("norm2.weight", "ln_2.weight", false),
            ("norm2.bias", "ln_2.bias", false),
            ("linear1.weight", "mlp.c_fc.weight", true),
            ("linear1.bias", "mlp.c_fc.bias", false),
            ("linear2.weight", "mlp.c_proj.weight", true),
            ("linear2.bias", "mlp.c_proj.bias", false),
        ] {
            rules.push(Rule {
                core: core(ours),
                hf: hf(theirs),
                transposed,
            });
        }
    }
    let token = |field: &str| -> Result<Option<u32>> {
        Ok(uint(cfg, field)?.map(|x| u32::try_from(x).unwrap_or(u32::MAX)))
    };
    Ok(Mapping {
        config,
        prefix: "transformer.",
        rules,
        ignored_suffixes: &[".attn.bias", ".attn.masked_bias"],
        ignored: if tied {
            vec!["lm_head.weight".into()]
        } else {
            vec![]
        },
        bos: token("bos_token_id")?,
        eos: token("eos_token_id")?,
    })
}

fn rule(core: &str, hf: &str, transposed: bool) -> Rule {
    Rule {
        core: core.into(),
        hf: hf.into(),
        transposed,
    }
}

//! What each part of a model costs: parameters, and the FLOPs one token spends in it
//! (2 × the multiply-adds of its matrix products), for any head count that divides
//! d_model. The page's cost panel draws this; the shapes come from `Model::zeros` with what
//! the loaded model holds beyond the config (separate source and target tables, an LM head
//! without a bias), so they are the checkpoint's own.

use serde::Serialize;

use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};
use crate::generate::flops::{decoder_macs, encoder_macs};
use crate::model::{AttentionParams, HeadParams, Model};
use crate::tensor::Tensor;

/// One line of the cost panel: a component, its parameters, and the FLOPs one token
/// spends in it (2 × the multiply-adds of its matrix products), per layer.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct CostRow {
    /// "embeddings", "encoder layer", "decoder layer" or "head".
    pub group: &'static str,
    pub part: &'static str,
    pub params: usize,
    pub flops: u64,
    /// How many layers repeat this row (1 outside the stacks).
    pub layers: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
pub struct CostReport {
    pub n_heads: usize,
    pub d_head: usize,
    pub d_model: usize,
    /// Keys each query attends to (the context length the attention rows assume).
    pub context: usize,
    pub rows: Vec<CostRow>,
    /// Trained values of the whole model with this head count.
    pub params: usize,
    /// The FLOP counter's total for one token through the layers (no embeddings, no
    /// head): the last token of a decoder, one row of an encoder. `None` for an
    /// encoder-decoder, whose token crosses two stacks of different lengths.
    pub core_layer_flops: Option<u64>,
}

/// The rows of one attention sublayer: Q, K, V and O projections, then the scores and
/// the weighted sum over `context` keys.
fn attention_rows(
    rows: &mut Vec<CostRow>,
    group: &'static str,
    a: &AttentionParams,
    names: [&'static str; 5],
    cfg: &ModelConfig,
    context: usize,
    layers: usize,
) {
    // in_proj_weight (3C, C) holds W_Q, W_K, W_V one under another.
    let w = a.in_proj_weight.numel() / 3;
    let b = a.in_proj_bias.numel() / 3;
    for name in &names[..3] {
        rows.push(CostRow {
            group,
            part: name,
            params: w + b,
            flops: 2 * w as u64,
            layers,
        });
    }
    rows.push(CostRow {
        group,
        part: names[3],
        params: a.out_proj_weight.numel() + a.out_proj_bias.numel(),
        flops: 2 * a.out_proj_weight.numel() as u64,
        layers,
    });
    let extra = [&a.additive_v, &a.rel_k, &a.rel_v]
        .into_iter()
        .flatten()
        .map(Tensor::numel)
        .sum();
    // H heads, each: D multiply-adds per score q·k and D per weighted value, per key.
    let per_head = 2 * 2 * cfg.d_head() as u64 * context as u64;
    rows.push(CostRow {
        group,
        part: names[4],
        params: extra,
        flops: cfg.n_heads as u64 * per_head,
        layers,
    });
}

/// The cost rows of `model` rebuilt with `n_heads` heads, each query attending to
/// `context` keys. The projections' shapes do not depend on the head count.
pub fn cost_report(model: &Model, n_heads: usize, context: usize) -> Result<CostReport> {
    let mut cfg = model.config.clone();
    cfg.n_heads = n_heads;
    cfg.validate()
        .map_err(|e| Error::Input(format!("heads: {e}")))?;
    if context == 0 || context > cfg.max_len {
        return Err(Error::Input(format!(
            "context must be from 1 to {} tokens, got {context}",
            cfg.max_len
        )));
    }
    let mut shaped = Model::zeros(cfg.clone(), model.tokenizer.clone());
    // What a checkpoint may leave out or add is the model's own: separate source and
    // target tables (`src_embed`, `tgt_embed`), an LM head without its bias.
    if model.src_embed.is_some() {
        shaped.separate_embeddings()?;
    }
    if let (HeadParams::Lm { bias: to, .. }, HeadParams::Lm { bias: from, .. }) =
        (&mut shaped.head, &model.head)
    {
        *to = from.as_ref().map(|b| Tensor::zeros(&b.shape));
    }
    let mut rows = match &shaped.src_embed {
        None => vec![CostRow {
            group: "embeddings",
            part: "token embedding (a lookup)",
            params: shaped.embed.numel(),
            flops: 0,
            layers: 1,
        }],
        Some(src) => vec![
            CostRow {
                group: "embeddings",
                part: "source embedding (a lookup)",
                params: src.numel(),
                flops: 0,
                layers: 1,
            },
            CostRow {
                group: "embeddings",
                part: "target embedding (a lookup)",
                params: shaped.embed.numel(),
                flops: 0,
                layers: 1,
            },
        ],
    };
    if let Some(p) = &shaped.pos_embed {
        rows.push(CostRow {
            group: "embeddings",
            part: "learned positions (a lookup)",
            params: p.numel(),
            flops: 0,
            layers: 1,
        });
    }
    let stacks = [
        ("encoder layer", &shaped.encoder),
        ("decoder layer", &shaped.decoder),
    ];
    for (group, stack) in stacks {
        let Some(stack) = stack else { continue };
        let Some(layer) = stack.layers.first() else {
            continue;
        };
        let n = stack.layers.len();
        attention_rows(
            &mut rows,
            group,
            &layer.self_attn,
            [
                "Q projection",
                "K projection",
                "V projection",
                "O projection",
                "scores + mix",
            ],
            &cfg,
            context,
            n,
        );
        if let Some(x) = &layer.cross_attn {
            attention_rows(
                &mut rows,
                group,
                x,
                [
                    "cross Q projection",
                    "cross K projection",
                    "cross V projection",
                    "cross O projection",
                    "cross scores + mix",
                ],
                &cfg,
                context,
                n,
            );
        }
        let (w1, w2) = (layer.linear1_weight.numel(), layer.linear2_weight.numel());
        rows.push(CostRow {
            group,
            part: "FFN",
            params: w1 + layer.linear1_bias.numel() + w2 + layer.linear2_bias.numel(),
            flops: 2 * (w1 + w2) as u64,
            layers: n,
        });
        let norms: usize = layer
            .norms
            .iter()
            .map(|p| p.weight.numel() + p.bias.numel())
            .sum();
        if norms > 0 {
            rows.push(CostRow {
                group,
                part: "norms (not counted: O(C))",
                params: norms,
                flops: 0,
                layers: n,
            });
        }
        if let Some(p) = &stack.final_norm {
            rows.push(CostRow {
                group: "head",
                part: if group == "encoder layer" {
                    "encoder's final norm"
                } else {
                    "decoder's final norm"
                },
                params: p.weight.numel() + p.bias.numel(),
                flops: 0,
                layers: 1,
            });
        }
    }
    let (part, params, weight) = match &shaped.head {
        HeadParams::Lm { weight, bias } => {
            let b = bias.as_ref().map_or(0, Tensor::numel);
            match weight {
                Some(w) => ("LM head", w.numel() + b, w.numel()),
                None => ("LM head (tied to the embedding)", b, shaped.embed.numel()),
            }
        }
        HeadParams::Classifier { weight, bias } => {
            ("classifier", weight.numel() + bias.numel(), weight.numel())
        }
    };
    rows.push(CostRow {
        group: "head",
        part,
        params,
        flops: 2 * weight as u64,
        layers: 1,
    });
    let core_layer_flops = match cfg.arch {
        Arch::DecoderOnly => Some(2 * decoder_macs(&cfg, context - 1, 1, 0, false, 0)),
        Arch::EncoderOnly => Some(2 * encoder_macs(&cfg, context) / context as u64),
        Arch::EncoderDecoder => None,
    };
    Ok(CostReport {
        n_heads,
        d_head: cfg.d_head(),
        d_model: cfg.d_model,
        context,
        rows,
        params: shaped.param_count(),
        core_layer_flops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Tokenizer;

    fn model(preset: &str) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        Model::zeros(ModelConfig::preset(preset, tok.vocab_size()).unwrap(), tok)
    }

    #[test]
    fn rows_add_up_to_the_config_parameter_count() {
        for preset in crate::config::PRESETS {
            let m = model(preset);
            for h in [1, 2, 4, 8] {
                let r = cost_report(&m, h, 8).unwrap();
                let cfg = ModelConfig {
                    n_heads: h,
                    ..m.config.clone()
                };
                let sum: usize = r.rows.iter().map(|row| row.params * row.layers).sum();
                assert_eq!(sum, cfg.param_count(), "{preset} with {h} heads");
            }
        }
    }

    #[test]
    fn separate_tables_and_a_head_without_bias_are_counted_as_the_model_holds_them() {
        let mut m = model("seq2seq-nano");
        let one_table = cost_report(&m, 4, 8).unwrap();
        m.separate_embeddings().unwrap();
        if let HeadParams::Lm { bias, .. } = &mut m.head {
            *bias = None;
        }
        let r = cost_report(&m, 4, 8).unwrap();
        let (v, c) = (m.config.vocab_size, m.config.d_model);
        // The model's own count: every trained tensor it holds, src_embed included.
        assert_eq!(r.params, m.param_count());
        assert_eq!(r.params, one_table.params + v * c - v);
        let sum: usize = r.rows.iter().map(|row| row.params * row.layers).sum();
        assert_eq!(sum, r.params, "the rows add up to the total");
        let part = |p: &str| {
            r.rows
                .iter()
                .find(|row| row.part == p)
                .map(|row| row.params)
        };
        assert_eq!(part("source embedding (a lookup)"), Some(v * c));
        assert_eq!(part("target embedding (a lookup)"), Some(v * c));
        assert_eq!(part("token embedding (a lookup)"), None);
        assert_eq!(part("LM head"), Some(v * c), "no bias");
        // Other head counts: the same tables.
        let r2 = cost_report(&m, 2, 8).unwrap();
        assert_eq!(r2.params, m.param_count());
    }

    #[test]
    fn projection_cost_does_not_depend_on_the_head_count() {
        let m = model("gpt-nano");
        let one = cost_report(&m, 1, 8).unwrap();
        let eight = cost_report(&m, 8, 8).unwrap();
        assert_eq!(one.rows, eight.rows, "h heads of C/h cost one full head");
        assert_eq!((one.d_head, eight.d_head), (32, 4));
    }

    #[test]
    fn bad_head_counts_and_contexts_are_refused() {
        let m = model("gpt-nano");
        assert!(cost_report(&m, 3, 8)
            .unwrap_err()
            .to_string()
            .contains("heads"));
        assert!(cost_report(&m, 4, 0)
            .unwrap_err()
            .to_string()
            .contains("context"));
    }
}

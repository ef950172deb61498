//! Coupling: this sequence beside another, then beside a changed other, in train and eval
//! mode — BatchNorm in train mode couples the sequences of a batch, LayerNorm never does.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::config::{Arch, Norm};
use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::protocol::F32Array;

use super::max_diff;
use super::probe::{block_probe, NormProbe};

/// LayerNorm vs BatchNorm on a batch: this sequence beside another, then beside a
/// changed other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct CouplingRequest {
    /// The sequence whose output is watched (main-stack ids; the source of an
    /// encoder-decoder model).
    pub tokens: Vec<u32>,
    /// Another sequence of the batch.
    pub other: Vec<u32>,
    /// The other sequence, changed.
    pub other_changed: Vec<u32>,
    pub seed: u64,
}

/// One model's answer to the coupling question.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct CouplingModel {
    pub norm: Norm,
    /// false: built in memory with random weights (seed 0), never trained.
    pub trained: bool,
    /// What the model is, in words.
    pub label: String,
    /// max |Δ| of this sequence's outputs when only the other sequence changes: train mode.
    pub train_max_diff: f32,
    /// ... bit-identical in train mode.
    pub train_identical: bool,
    pub eval_max_diff: f32,
    pub eval_identical: bool,
    /// Layer 0's first norm in train mode on the batch [this, other] (None: no norm).
    pub stats: Option<NormProbe>,
    /// Positions the batch normalises over together (B·T, pads included).
    pub batch_rows: usize,
    /// (L + 1): mean ‖x‖ over this sequence's positions of the residual stream before
    /// the first layer and after each (eval mode, the last stack).
    pub residual_norms: F32Array,
    /// A model with its own vocabulary: the three sequences as it read them (its ids).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub other: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub other_changed: Option<Vec<u32>>,
    /// Its vocabulary, when it differs from the loaded model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub vocab: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct NormCoupling {
    /// The loaded model first, then its sibling with the other kind of norm.
    pub models: Vec<CouplingModel>,
}

/// The batch [a, b] for `m`: an encoder-decoder reads them as sources (targets `<bos>`).
fn pair_batch(m: &Model, a: &[u32], b: &[u32]) -> Result<Batch> {
    let pad = m.tokenizer.spec.pad;
    if m.config.arch == Arch::EncoderDecoder {
        let bos = m.tokenizer.spec.bos;
        Batch::padded(vec![vec![bos], vec![bos]], pad)?
            .with_padded_source(vec![a.to_vec(), b.to_vec()], pad)
    } else {
        Batch::padded(vec![a.to_vec(), b.to_vec()], pad)
    }
}

/// Row 0's outputs over its own `n` real positions (or its class logits).
fn row0_outputs(tr: &Trace, n: usize) -> Vec<f32> {
    match &tr.class_logits {
        Some(cl) => cl.data[..cl.shape[1]].to_vec(),
        None => {
            let (t, v) = (tr.logits.shape[1], tr.logits.shape[2]);
            tr.logits.data[..n.min(t) * v].to_vec()
        }
    }
}

/// The loaded model's shape and tokenizer with `norm`, random weights from seed 0.
pub fn sibling_with_norm(m: &Model, norm: Norm) -> Result<Model> {
    let mut cfg = m.config.clone();
    cfg.norm = norm;
    cfg.validate()?;
    Ok(Model::init(cfg, m.tokenizer.clone(), 0))
}

/// `ids` of `from`'s vocabulary spelled in `to`'s: the same token strings, `<unk>` for
/// what `to` lacks (special tokens map to `to`'s own specials).
pub fn respell(
    from: &crate::tokenizer::Tokenizer,
    to: &crate::tokenizer::Tokenizer,
    ids: &[u32],
) -> Vec<u32> {
    let (fs, ts) = (&from.spec, &to.spec);
    ids.iter()
        .map(|&id| match id {
            _ if id == fs.pad => ts.pad,
            _ if id == fs.bos => ts.bos,
            _ if id == fs.eos => ts.eos,
            _ => from.token(id).and_then(|tok| to.id(tok)).unwrap_or(ts.unk),
        })
        .collect()
}

fn coupling_of(
    m: &Model,
    req: &CouplingRequest,
    trained: bool,
    label: String,
) -> Result<CouplingModel> {
    let n = if m.config.arch == Arch::EncoderDecoder {
        1
    } else {
        req.tokens.len()
    };
    let one = pair_batch(m, &req.tokens, &req.other)?;
    let two = pair_batch(m, &req.tokens, &req.other_changed)?;
    let run = |batch: &Batch, mode: Mode| -> Result<Vec<f32>> {
        let opts = ForwardOptions {
            mode,
            ..ForwardOptions::default()
        };
        Ok(row0_outputs(&m.forward(batch, &opts)?, n))
    };
    let train = Mode::Train { seed: req.seed };
    let (train_max_diff, train_identical) = max_diff(&run(&one, train)?, &run(&two, train)?);
    let (eval_max_diff, eval_identical) =
        max_diff(&run(&one, Mode::Eval)?, &run(&two, Mode::Eval)?);
    let probe = block_probe(
        m,
        &one,
        &ForwardOptions {
            mode: train,
            ..ForwardOptions::default()
        },
    )?;
    let stats = probe
        .stacks
        .first()
        .and_then(|s| s.norms.iter().find(|n| n.layer == Some(0)).cloned());
    let rows = probe
        .stacks
        .first()
        .map_or(0, |s| s.hidden.shape[1] * s.hidden.shape[2]);
    let eval = block_probe(m, &one, &ForwardOptions::default())?;
    let last = eval
        .stacks
        .last()
        .ok_or_else(|| Error::Input("this model has no layer stack".into()))?;
    let (l1, t, c) = (
        last.hidden.shape[0],
        last.hidden.shape[2],
        last.hidden.shape[3],
    );
    let real = n.min(t).max(1);
    let residual_norms = (0..l1)
        .map(|l| {
            // Sequence 0 of (L+1, B, T, C).
            let base = l * last.hidden.shape[1] * t * c;
            let sum: f32 = (0..real)
                .map(|i| {
                    let row = &last.hidden.data.0[base + i * c..base + (i + 1) * c];
                    row.iter().map(|x| x * x).sum::<f32>().sqrt()
                })
                .sum();
            sum / real as f32
        })
        .collect();
    Ok(CouplingModel {
        norm: m.config.norm,
        trained,
        label,
        train_max_diff,
        train_identical,
        eval_max_diff,
        eval_identical,
        stats,
        batch_rows: rows,
        residual_norms: F32Array(residual_norms),
        tokens: None,
        other: None,
        other_changed: None,
        vocab: None,
    })
}

/// The coupling question for the loaded model and for a model with the other kind of
/// norm (BatchNorm beside a LayerNorm model, LayerNorm beside a BatchNorm one).
///
/// `trained` is a really trained checkpoint of that other kind (the page passes the
/// shipped reverse siblings); it reads the same sequences, spelled in its own vocabulary
/// ([`respell`]). Without one, the other model is built in memory with random weights:
/// coupling is a property of the norm, not of training, and its label says so.
pub fn norm_coupling(
    m: &Model,
    req: &CouplingRequest,
    trained: Option<(&Model, &str)>,
) -> Result<NormCoupling> {
    for (what, s) in [
        ("this sequence", &req.tokens),
        ("the other sequence", &req.other),
        ("the changed other sequence", &req.other_changed),
    ] {
        if s.is_empty() {
            return Err(Error::Input(format!("norms: {what} is empty")));
        }
        if s.len() > crate::limits::MAX_SEQUENCE_TOKENS {
            return Err(Error::Input(format!(
                "norms: {what} has {} tokens, at most {} are allowed",
                s.len(),
                crate::limits::MAX_SEQUENCE_TOKENS
            )));
        }
    }
    let own = coupling_of(m, req, true, "the loaded model".into())?;
    let is_bn = m.config.norm == Norm::BatchNorm;
    let sibling = match trained {
        Some((sib, name)) => {
            if (sib.config.norm == Norm::BatchNorm) == is_bn {
                return Err(Error::Input(format!(
                    "norms: {name} has the same kind of norm as the loaded model; it needs {}",
                    if is_bn {
                        "a LayerNorm model"
                    } else {
                        "a BatchNorm model"
                    }
                )));
            }
            let sreq = CouplingRequest {
                tokens: respell(&m.tokenizer, &sib.tokenizer, &req.tokens),
                other: respell(&m.tokenizer, &sib.tokenizer, &req.other),
                other_changed: respell(&m.tokenizer, &sib.tokenizer, &req.other_changed),
                seed: req.seed,
            };
            let mut c = coupling_of(sib, &sreq, true, format!("{name}, trained"))?;
            c.tokens = Some(sreq.tokens);
            c.other = Some(sreq.other);
            c.other_changed = Some(sreq.other_changed);
            c.vocab = Some(sib.tokenizer.spec.tokens.clone());
            c
        }
        None => {
            let other = if is_bn { Norm::PreLn } else { Norm::BatchNorm };
            let sib = sibling_with_norm(m, other)?;
            let name = match other {
                Norm::BatchNorm => "BatchNorm",
                _ => "pre-LN LayerNorm",
            };
            coupling_of(
                &sib,
                req,
                false,
                format!("an untrained {name} model of the same shape (random weights, seed 0)"),
            )?
        }
    };
    Ok(NormCoupling {
        models: vec![own, sibling],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Norm;
    use crate::model::test_support::model;

    #[test]
    fn batchnorm_couples_the_batch_in_train_mode_only_and_layernorm_never() {
        let ln = model("gpt-pico", |c| c.norm = Norm::PreLn);
        let req = CouplingRequest {
            tokens: vec![1, 4, 5, 6],
            other: vec![1, 7, 7, 7],
            other_changed: vec![1, 2, 3, 4],
            seed: 3,
        };
        let r = norm_coupling(&ln, &req, None).unwrap();
        assert_eq!(r.models.len(), 2);
        let (own, bn) = (&r.models[0], &r.models[1]);
        assert_eq!((own.norm, bn.norm), (Norm::PreLn, Norm::BatchNorm));
        assert!(own.train_identical && own.eval_identical, "{own:?}");
        assert!(!bn.train_identical && bn.train_max_diff > 1e-4, "{bn:?}");
        assert!(
            bn.eval_identical,
            "running statistics: no coupling in eval mode"
        );
        assert!(!bn.trained && own.trained);
        assert_eq!(bn.batch_rows, 8);
        assert_eq!(own.residual_norms.0.len(), ln.config.decoder_layers() + 1);
    }

    fn shipped(file: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../models")
            .join(file);
        crate::checkpoint::load_file(&path).unwrap()
    }

    #[test]
    fn the_trained_batchnorm_sibling_couples_the_batch_in_train_mode_and_reads_the_same_letters() {
        // The grammar model (LayerNorm, its own vocabulary) beside the shipped reverse model
        // trained with BatchNorm: the sibling reads the same characters in its vocabulary.
        let lm = shipped("grammar-sinusoidal.safetensors");
        let bn = shipped("reverse-batch-norm.safetensors");
        let ids = |text: &str| {
            let mut v = vec![lm.tokenizer.spec.bos];
            v.extend(lm.tokenizer.encode(text).ids);
            v
        };
        let req = CouplingRequest {
            tokens: ids("the cat"),
            other: ids("tac eht"),
            other_changed: ids("ubd fiu"),
            seed: 1,
        };
        let r = norm_coupling(&lm, &req, Some((&bn, "the reverse model with BatchNorm"))).unwrap();
        let (own, sib) = (&r.models[0], &r.models[1]);
        assert_eq!((own.norm, sib.norm), (Norm::PreLn, Norm::BatchNorm));
        assert!(own.trained && sib.trained);
        assert!(own.train_identical && own.eval_identical);
        assert!(!sib.train_identical && sib.train_max_diff > 1e-4, "{sib:?}");
        assert!(
            sib.eval_identical,
            "running statistics: no coupling in eval mode"
        );
        // Characters both vocabularies hold keep their spelling (the reverse task knows a
        // to j); the others, the space among them, become <unk>.
        let st = &bn.tokenizer;
        let want: Vec<u32> = std::iter::once(st.spec.bos)
            .chain(
                "the cat"
                    .chars()
                    .map(|ch| st.id(&ch.to_string()).unwrap_or(st.spec.unk)),
            )
            .collect();
        assert_eq!(sib.tokens.as_deref(), Some(&want[..]));
        assert_eq!(want[2], st.id("h").unwrap());
        assert_eq!(sib.vocab.as_deref(), Some(&st.spec.tokens[..]));
        // A sibling with the same kind of norm is refused with a reason.
        let same = shipped("reverse.safetensors");
        assert!(matches!(
            norm_coupling(&lm, &req, Some((&same, "x"))),
            Err(Error::Input(_))
        ));
        // Beside a BatchNorm model, the trained LayerNorm reverse model: no coupling ever.
        let r = norm_coupling(
            &bn,
            &CouplingRequest {
                tokens: vec![1, 5, 6],
                other: vec![1, 7, 8],
                other_changed: vec![1, 9, 10],
                seed: 2,
            },
            Some((&same, "the reverse model")),
        )
        .unwrap();
        assert!(
            !r.models[0].train_identical
                && r.models[1].train_identical
                && r.models[1].eval_identical
        );
    }
}

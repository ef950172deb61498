//! Checkpoints: one `.safetensors` file whose `__metadata__` holds the model config
//! (`config`) and the vocabulary (`tokenizer`) as JSON, and whose tensors carry
//! PyTorch's state-dict names (docs/model.md). Loading checks every name and shape.

use std::collections::{BTreeSet, HashMap};

use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;

use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};
use crate::model::{HeadParams, Model};
use crate::tensor::Tensor;
use crate::tokenizer::Tokenizer;

fn bad(msg: impl Into<String>) -> Error {
    Error::Checkpoint(msg.into())
}

/// Parse a checkpoint from its bytes.
pub fn load(bytes: &[u8]) -> Result<Model> {
    // Sizes first: nothing below allocates for a number the file states until it passed.
    crate::limits::check_checkpoint(bytes)?;
    let (_, meta) = SafeTensors::read_metadata(bytes)
        .map_err(|e| bad(format!("not a safetensors file ({e})")))?;
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| bad(format!("not a safetensors file ({e})")))?;
    let info = meta
        .metadata()
        .as_ref()
        .ok_or_else(|| bad("no metadata: expected `config` and `tokenizer` entries"))?;
    let config_json = info
        .get("config")
        .ok_or_else(|| bad("metadata has no `config` entry"))?;
    let tokenizer_json = info
        .get("tokenizer")
        .ok_or_else(|| bad("metadata has no `tokenizer` entry"))?;
    let config = ModelConfig::from_json(config_json)?;
    let tokenizer = Tokenizer::from_json(tokenizer_json)?;
    if tokenizer.vocab_size() != config.vocab_size {
        return Err(bad(format!(
            "the tokenizer has {} tokens but config.vocab_size is {}",
            tokenizer.vocab_size(),
            config.vocab_size
        )));
    }
    let mut model = Model::zeros(config, tokenizer);
    // An encoder-decoder may keep separate source and target tables (`src_embed.weight`,
    // `tgt_embed.weight`) instead of one `embed.weight`: follow the file.
    let names = st.names();
    if model.config.arch == Arch::EncoderDecoder
        && (names.contains(&"src_embed.weight") || names.contains(&"tgt_embed.weight"))
    {
        model.separate_embeddings()?;
    }
    // `lm_head.bias` is optional (docs/model.md): follow the file.
    if let HeadParams::Lm { bias, .. } = &mut model.head {
        if !st.names().contains(&"lm_head.bias") {
            *bias = None;
        } else if bias.is_none() {
            *bias = Some(Tensor::zeros(&[model.config.vocab_size]));
        }
    }
    let mut expected = BTreeSet::new();
    let mut first_err: Option<Error> = None;
    model.visit_params_mut(&mut |name, t, _| {
        expected.insert(name.to_string());
        if first_err.is_some() {
            return;
        }
        if let Err(e) = fill(&st, name, t) {
            first_err = Some(e);
        }
    });
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut extra: Vec<String> = st
        .names()
        .into_iter()
        .filter(|n| !expected.contains(*n))
        .map(|n| n.to_string())
        .collect();
    if !extra.is_empty() {
        crate::sorting::sort_by(&mut extra, Ord::cmp);
        return Err(bad(format!(
            "unexpected tensor `{}` for this config",
            extra.join("`, `")
        )));
    }
    model.sync_shared_qk();
    Ok(model)
}

fn fill(st: &SafeTensors, name: &str, t: &mut Tensor) -> Result<()> {
    let view = st
        .tensor(name)
        .map_err(|_| bad(format!("missing tensor `{name}` (shape {:?})", t.shape)))?;
    if view.dtype() != Dtype::F32 {
        return Err(bad(format!(
            "tensor `{name}` is {:?}, expected F32",
            view.dtype()
        )));
    }
    if view.shape() != t.shape.as_slice() {
        return Err(bad(format!(
            "tensor `{name}` has shape {:?}, expected {:?}",
            view.shape(),
            t.shape
        )));
    }
    for (dst, chunk) in t.data.iter_mut().zip(view.data().chunks_exact(4)) {
        *dst = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    if let Some(i) = t.data.iter().position(|x| !x.is_finite()) {
        return Err(bad(format!(
            "tensor `{name}` holds a non-finite value at index {i}"
        )));
    }
    Ok(())
}

/// Serialise a model to checkpoint bytes.
pub fn save(model: &Model) -> Result<Vec<u8>> {
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = vec![];
    model.visit_params(&mut |name, t, _| {
        let bytes = t.data.iter().flat_map(|x| x.to_le_bytes()).collect();
        tensors.push((name.to_string(), t.shape.clone(), bytes));
    });
    let views = tensors
        .iter()
        .map(|(n, s, b)| {
            TensorView::new(Dtype::F32, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| bad(format!("cannot store `{n}`: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let metadata = HashMap::from([
        ("config".to_string(), model.config.to_json()),
        ("tokenizer".to_string(), model.tokenizer.to_json()),
    ]);
    let mut bytes = safetensors::serialize(views, Some(metadata))
        .map_err(|e| bad(format!("cannot serialise: {e}")))?;
    sort_header(&mut bytes)?;
    Ok(bytes)
}

/// Rewrite the JSON header with every object's keys in sorted order. safetensors writes the
/// `__metadata__` entries in the order of a `HashMap`, which changes from run to run; sorted,
/// the same model always gives the same bytes. The header keeps its length (the same JSON,
/// reordered), so the tensor data does not move.
fn sort_header(bytes: &mut [u8]) -> Result<()> {
    use std::collections::BTreeMap;
    fn sorted(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                // Inserted one by one: collecting would compile one more stable sort
                // into the page's engine (crate::sorting).
                let mut b = BTreeMap::new();
                for (k, v) in m {
                    b.insert(k, sorted(v));
                }
                serde_json::to_value(b).expect("a map of JSON values serialises")
            }
            serde_json::Value::Array(a) => {
                serde_json::Value::Array(a.into_iter().map(sorted).collect())
            }
            other => other,
        }
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header = std::str::from_utf8(&bytes[8..8 + n])
        .map_err(|e| bad(format!("header is not UTF-8: {e}")))?;
    let text = header.trim_end_matches(' ');
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("header is not JSON: {e}")))?;
    // BTreeMap keys serialise in order, whatever serde_json's own map keeps.
    let canonical = serde_json::to_string(&sorted(value))
        .map_err(|e| bad(format!("cannot write the header: {e}")))?;
    if canonical.len() != text.len() {
        return Err(bad("sorting the header changed its length".to_string()));
    }
    bytes[8..8 + canonical.len()].copy_from_slice(canonical.as_bytes());
    Ok(())
}

/// Read a checkpoint file, or a Hugging Face model folder (`crate::hf`).
pub fn load_file(path: &std::path::Path) -> Result<Model> {
    #[cfg(not(target_arch = "wasm32"))]
    if path.is_dir() {
        return crate::hf::load_dir(path);
    }
    let bytes =
        std::fs::read(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    load(&bytes).map_err(|e| match e {
        Error::Checkpoint(m) => bad(format!("{}: {m}", path.display())),
        other => other,
    })
}

/// Write a checkpoint file.
pub fn save_file(model: &Model, path: &std::path::Path) -> Result<()> {
    std::fs::write(path, save(model)?)
        .map_err(|e| bad(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PRESETS;

    fn model(preset: &str) -> Model {
        let tok = Tokenizer::char_level("abcdefgh");
        Model::init(
            ModelConfig::preset(preset, tok.vocab_size()).unwrap(),
            tok,
            1,
        )
    }

    /// Rebuild a checkpoint with one tensor dropped, renamed or reshaped.
    fn tamper(m: &Model, edit: impl Fn(&str, &[usize]) -> Option<(String, Vec<usize>)>) -> Vec<u8> {
        let mut tensors = vec![];
        m.visit_params(&mut |n, t, _| {
            if let Some((name, shape)) = edit(n, &t.shape) {
                let len: usize = shape.iter().product();
                let bytes: Vec<u8> = t
                    .data
                    .iter()
                    .cycle()
                    .take(len)
                    .flat_map(|x| x.to_le_bytes())
                    .collect();
                tensors.push((name, shape, bytes));
            }
        });
        let views: Vec<_> = tensors
            .iter()
            .map(|(n, s, b)| {
                (
                    n.clone(),
                    TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
                )
            })
            .collect();
        let meta = HashMap::from([
            ("config".to_string(), m.config.to_json()),
            ("tokenizer".to_string(), m.tokenizer.to_json()),
        ]);
        safetensors::serialize(views, Some(meta)).unwrap()
    }

    fn err(bytes: &[u8]) -> String {
        load(bytes).unwrap_err().to_string()
    }

    #[test]
    fn save_then_load_gives_the_same_tensors() {
        for p in PRESETS {
            let m = model(p);
            let back = load(&save(&m).unwrap()).unwrap();
            let mut a = vec![];
            m.visit_params(&mut |n, t, _| a.push((n.to_string(), t.clone())));
            let mut b = vec![];
            back.visit_params(&mut |n, t, _| b.push((n.to_string(), t.clone())));
            assert_eq!(a, b, "preset {p}");
            assert_eq!(back.config, m.config);
        }
    }

    #[test]
    fn missing_tensor_is_named() {
        let m = model("gpt-nano");
        let bytes = tamper(&m, |n, s| {
            (n != "decoder.layers.1.linear1.bias").then(|| (n.to_string(), s.to_vec()))
        });
        let e = err(&bytes);
        assert!(
            e.contains("missing tensor `decoder.layers.1.linear1.bias`"),
            "{e}"
        );
    }

    #[test]
    fn extra_tensor_is_named() {
        let m = model("gpt-nano");
        let renamed = |from: &'static str, to: &'static str| {
            tamper(&m, move |n, s| {
                Some((
                    if n == from {
                        to.to_string()
                    } else {
                        n.to_string()
                    },
                    s.to_vec(),
                ))
            })
        };
        let e = err(&renamed(
            "decoder.layers.0.linear1.bias",
            "decoder.layers.0.linear1.bias_extra",
        ));
        assert!(
            e.contains("missing tensor `decoder.layers.0.linear1.bias`"),
            "{e}"
        );
        // lm_head.bias is optional, so renaming it leaves one unexpected tensor.
        let e = err(&renamed("lm_head.bias", "lm_head.bias_extra"));
        assert!(e.contains("unexpected tensor `lm_head.bias_extra`"), "{e}");
        let mut m2 = m.clone();
        m2.pos_embed = Some(Tensor::zeros(&[64, 32]));
        let e = err(&save(&m2).unwrap());
        assert!(e.contains("unexpected tensor `pos_embed.weight`"), "{e}");
    }

    #[test]
    fn separate_source_and_target_embeddings_load_save_and_are_checked_by_name() {
        let tok = Tokenizer::char_level("abcdefgh");
        let cfg = ModelConfig::preset("seq2seq-nano", tok.vocab_size()).unwrap();
        let mut m = Model::zeros(cfg, tok);
        m.separate_embeddings().unwrap();
        m.randomize(4);
        assert_ne!(m.src_embed.as_ref().unwrap().data, m.embed.data);
        let bytes = save(&m).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let names = st.names();
        assert!(names.contains(&"src_embed.weight") && names.contains(&"tgt_embed.weight"));
        assert!(!names.contains(&"embed.weight"), "{names:?}");
        let back = load(&bytes).unwrap();
        assert_eq!(back.src_embed, m.src_embed);
        assert_eq!(back.embed, m.embed);
        assert_eq!(
            save(&back).unwrap(),
            bytes,
            "saving again gives the same bytes"
        );
        // Half of the pair is a clear error naming the other half.
        let e = err(&tamper(&m, |n, s| {
            (n != "tgt_embed.weight").then(|| (n.into(), s.to_vec()))
        }));
        assert!(e.contains("missing tensor `tgt_embed.weight`"), "{e}");
        // A decoder-only model has one input and one table.
        let e = err(&tamper(&model("gpt-pico"), |n, s| {
            let name = if n == "embed.weight" {
                "src_embed.weight"
            } else {
                n
            };
            Some((name.into(), s.to_vec()))
        }));
        assert!(e.contains("missing tensor `embed.weight`"), "{e}");
        let mut dec = model("gpt-pico");
        assert!(dec.separate_embeddings().is_err());
    }

    #[test]
    fn lm_head_bias_is_optional() {
        let mut m = model("gpt-pico");
        if let HeadParams::Lm { bias, .. } = &mut m.head {
            *bias = None;
        }
        let back = load(&save(&m).unwrap()).unwrap();
        assert!(matches!(
            back.head,
            HeadParams::Lm {
                bias: None,
                weight: Some(_)
            }
        ));
    }

    #[test]
    fn misshaped_tensor_is_named() {
        let m = model("gpt-nano");
        let bytes = tamper(&m, |n, s| {
            Some((
                n.to_string(),
                if n == "decoder.layers.0.self_attn.in_proj_weight" {
                    vec![96, 31]
                } else {
                    s.to_vec()
                },
            ))
        });
        let e = err(&bytes);
        assert!(
            e.contains(
                "`decoder.layers.0.self_attn.in_proj_weight` has shape [96, 31], expected [96, 32]"
            ),
            "{e}"
        );
    }

    #[test]
    fn corrupt_bytes_are_rejected() {
        let m = model("gpt-pico");
        let mut bytes = save(&m).unwrap();
        assert!(err(&bytes[..bytes.len() / 2]).contains("not a safetensors file"));
        assert!(err(b"hello").contains("not a safetensors file"));
        bytes[9] ^= 0x55; // inside the header's JSON
        assert!(load(&bytes).is_err());
    }

    #[test]
    fn config_in_metadata_is_validated() {
        let m = model("gpt-pico");
        let mut bad_cfg = m.clone();
        bad_cfg.config.n_heads = 3;
        let e = err(&save(&bad_cfg).unwrap());
        assert!(e.contains("n_heads"), "{e}");
    }
}

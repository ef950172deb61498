//! Hugging Face model folders: `config.json`, `model.safetensors` and the tokenizer files
//! (`tokenizer.json`, or `vocab.json` + `merges.txt`), loaded into the core's [`Model`].
//!
//! A family is a [`Mapping`]: the core config its `config.json` describes, and for every core
//! tensor the Hugging Face tensor it comes from (and whether it is stored transposed). The
//! GPT-2 family is [`gpt2`]; another family is one more function that returns a `Mapping`.
//!
//! Sizes are checked before anything is allocated for them: each file's length against its
//! budget, the config against `crate::limits` (the parameter count included), every tensor's
//! shape and type against the config before it is read.

pub mod gpt2;
pub mod mapping;
pub mod tokenizer_files;

use std::collections::{BTreeSet, HashMap};

use safetensors::tensor::Dtype;
use safetensors::SafeTensors;

use crate::error::{Error, Result};
use crate::limits::at_most;
use crate::model::{HeadParams, Model};
use crate::protocol::HfCheck;
use crate::tensor::Tensor;
use mapping::bad;
pub use mapping::{HfFiles, Mapping, Rule};

/// Largest `config.json` read (GPT-2's is under 1 KiB).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// A folder's `config.json`: its family's mapping, checked against the limits.
fn mapping_of(config_json: &[u8]) -> Result<(String, Mapping)> {
    at_most(
        Error::Checkpoint,
        "config.json (bytes)",
        config_json.len(),
        MAX_CONFIG_BYTES,
    )?;
    let config: serde_json::Value = serde_json::from_slice(config_json)
        .map_err(|e| bad(format!("config.json is not JSON: {e}")))?;
    let model_type = config
        .get("model_type")
        .and_then(|v| v.as_str())
        .ok_or_else(|| bad("config.json has no `model_type`"))?;
    let mapping = match model_type {
        "gpt2" => gpt2::mapping(&config)?,
        other => {
            return Err(bad(format!(
                "config.json: model_type `{other}` is not supported (supported: gpt2)"
            )))
        }
    };
    mapping.config.validate()?;
    Ok((model_type.to_string(), mapping))
}

/// What a folder's `config.json` asks for, checked against the limits: the page asks this
/// before it fetches the weights, so a model too large is refused before its download.
pub fn check_config(config_json: &[u8]) -> Result<HfCheck> {
    let (model_type, mapping) = mapping_of(config_json)?;
    let c = &mapping.config;
    // The config's count includes the LM head's bias of `Model::init`; a family whose rules
    // do not fill it (GPT-2's head has none) loads without it. Within MAX_PARAMS after
    // `validate`, so both fit a usize on wasm32.
    let head_bias = mapping.rules.iter().any(|r| r.core == "lm_head.bias");
    let unfilled = if head_bias || c.num_classes > 0 {
        0
    } else {
        c.vocab_size as u64
    };
    let params = c.param_count_u64() - unfilled;
    Ok(HfCheck {
        model_type,
        params: usize::try_from(params).unwrap_or(usize::MAX),
        f32_bytes: usize::try_from(params * 4).unwrap_or(usize::MAX),
        n_layers: c.decoder_layers(),
        n_heads: c.n_heads,
        d_model: c.d_model,
        vocab_size: c.vocab_size,
        max_len: c.max_len,
    })
}

/// Load a Hugging Face folder's files into a model.
pub fn load(files: &HfFiles) -> Result<Model> {
    crate::limits::check_checkpoint_bytes(files.model_safetensors)?;
    let (_, mapping) = mapping_of(files.config_json)?;
    let tokenizer = tokenizer_files::load(files, mapping.bos, mapping.eos)?;
    if tokenizer.vocab_size() != mapping.config.vocab_size {
        return Err(bad(format!(
            "the tokenizer has {} tokens but config.json's vocab_size is {}",
            tokenizer.vocab_size(),
            mapping.config.vocab_size
        )));
    }
    crate::limits::check_checkpoint(files.model_safetensors)?;
    let st = SafeTensors::deserialize(files.model_safetensors)
        .map_err(|e| bad(format!("model.safetensors is not a safetensors file ({e})")))?;
    fill(&st, &mapping, tokenizer)
}

/// Every core tensor from its Hugging Face source; every file tensor accounted for.
fn fill(st: &SafeTensors, mapping: &Mapping, tokenizer: crate::Tokenizer) -> Result<Model> {
    let names: BTreeSet<&str> = st.names().into_iter().collect();
    // Which spelling the file uses: with the prefix or without, never a mix.
    let prefixed = names.iter().any(|n| n.starts_with(mapping.prefix));
    let full = |hf: &str| {
        if prefixed && !hf.starts_with("lm_head.") {
            format!("{}{hf}", mapping.prefix)
        } else {
            hf.to_string()
        }
    };
    let rules: HashMap<&str, &Rule> = mapping.rules.iter().map(|r| (r.core.as_str(), r)).collect();
    let mut model = Model::zeros(mapping.config.clone(), tokenizer);
    if let HeadParams::Lm { bias, .. } = &mut model.head {
        *bias = None; // GPT-2's head has no bias.
    }
    let mut used = BTreeSet::new();
    let mut first_err: Option<Error> = None;
    model.visit_params_mut(&mut |core, t, _| {
        if first_err.is_some() {
            return;
        }
        let Some(rule) = rules.get(core) else {
            first_err = Some(bad(format!("no source for the core tensor `{core}`")));
            return;
        };
        let name = full(&rule.hf);
        match read(st, &name, t, rule.transposed) {
            Ok(()) => {
                used.insert(name);
            }
            Err(e) => first_err = Some(e),
        }
    });
    if let Some(e) = first_err {
        return Err(e);
    }
    let ignored: BTreeSet<String> = mapping.ignored.iter().map(|n| full(n)).collect();
    let mut extra: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !used.contains(*n) && !ignored.contains(*n))
        .filter(|n| !mapping.ignored_suffixes.iter().any(|s| n.ends_with(s)))
        .collect();
    if !extra.is_empty() {
        extra.truncate(8);
        return Err(bad(format!(
            "model.safetensors: unexpected tensor `{}` for this config",
            extra.join("`, `")
        )));
    }
    Ok(model)
}

/// One tensor into `t` (already of the core's shape), after its type and shape are checked.
fn read(st: &SafeTensors, name: &str, t: &mut Tensor, transposed: bool) -> Result<()> {
    let view = st.tensor(name).map_err(|_| {
        bad(format!(
            "model.safetensors: missing tensor `{name}` (shape {:?})",
            stored_shape(&t.shape, transposed)
        ))
    })?;
    let want = stored_shape(&t.shape, transposed);
    if view.shape() != want.as_slice() {
        return Err(bad(format!(
            "model.safetensors: tensor `{name}` has shape {:?}, expected {want:?}",
            view.shape()
        )));
    }
    let value: fn(&[u8]) -> f32 = match view.dtype() {
        Dtype::F32 => |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        Dtype::F16 => |b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])),
        Dtype::BF16 => |b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16),
        other => {
            return Err(bad(format!(
                "model.safetensors: tensor `{name}` is {other:?}; F32, F16 or BF16 expected"
            )))
        }
    };
    let width = view.dtype().bitsize() / 8;
    let data = view.data();
    if transposed {
        // Stored (in, out) = (cols, rows) of the core's (out, in).
        let (rows, cols) = (t.shape[0], t.shape[1]);
        for (k, chunk) in data.chunks_exact(width).enumerate() {
            let (i, o) = (k / rows, k % rows);
            t.data[o * cols + i] = value(chunk);
        }
    } else {
        for (dst, chunk) in t.data.iter_mut().zip(data.chunks_exact(width)) {
            *dst = value(chunk);
        }
    }
    if let Some(i) = t.data.iter().position(|x| !x.is_finite()) {
        return Err(bad(format!(
            "model.safetensors: tensor `{name}` holds a non-finite value at index {i}"
        )));
    }
    Ok(())
}

fn stored_shape(core: &[usize], transposed: bool) -> Vec<usize> {
    if transposed {
        core.iter().rev().copied().collect()
    } else {
        core.to_vec()
    }
}

/// IEEE half precision to f32 (subnormals, infinities and NaN included).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: f · 2^-24.
            let magnitude = (f as f32) * (-24f32).exp2();
            return if sign != 0 { -magnitude } else { magnitude };
        }
        (31, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 112) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

/// Read a folder from disk: each file's size is checked before it is read.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_dir(dir: &std::path::Path) -> Result<Model> {
    use crate::limits::MAX_CHECKPOINT_BYTES;
    let read = |name: &str, limit: usize, required: bool| -> Result<Option<Vec<u8>>> {
        let path = dir.join(name);
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(_) if !required => return Ok(None),
            Err(e) => return Err(bad(format!("{}: cannot read {name}: {e}", dir.display()))),
        };
        let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        at_most(Error::Checkpoint, &format!("{name} (bytes)"), len, limit)?;
        std::fs::read(&path)
            .map(Some)
            .map_err(|e| bad(format!("{}: cannot read {name}: {e}", dir.display())))
    };
    let tok = tokenizer_files::MAX_TOKENIZER_FILE_BYTES;
    let config = read("config.json", MAX_CONFIG_BYTES, true)?.unwrap_or_default();
    let weights = read("model.safetensors", MAX_CHECKPOINT_BYTES, true)?.unwrap_or_default();
    let tokenizer_json = read("tokenizer.json", tok, false)?;
    let (vocab, merges) = if tokenizer_json.is_none() {
        (
            read("vocab.json", tok, false)?,
            read("merges.txt", tok, false)?,
        )
    } else {
        (None, None)
    };
    let files = HfFiles {
        config_json: &config,
        model_safetensors: &weights,
        tokenizer_json: tokenizer_json.as_deref(),
        vocab_json: vocab.as_deref(),
        merges_txt: merges.as_deref(),
    };
    load(&files).map_err(|e| match e {
        Error::Checkpoint(m) => bad(format!("{}: {m}", dir.display())),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_values_convert() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert_eq!(f16_to_f32(0x8000), -0.0);
    }
}

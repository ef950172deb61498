//! A GPT-2-shaped Hugging Face folder with random weights, of any size the limits allow:
//! what the benches and the browser tests load at real scale (12 layers × 12 heads, 768
//! dimensions, 1,024 positions, 50,257 tokens) without downloading GPT-2.
//!
//! The folder is what `transformers` saves: `config.json` (`model_type: gpt2`),
//! `model.safetensors` with the `transformer.` prefix, Conv1D weights stored (in, out) and a
//! tied head, and a `tokenizer.json` holding a byte-level BPE: GPT-2's 256 byte symbols,
//! merges that build a space-led letter, then letter pairs, then longer runs of letters (each
//! from two tokens made before it), and `<|endoftext|>` last, as GPT-2 numbers it.
//! Weights are uniform with GPT-2's initial standard deviation (0.02), LayerNorms at 1 and 0.

use std::collections::HashSet;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use safetensors::tensor::{Dtype, TensorView};
use serde_json::json;

use super::tokenizer_files::END_OF_TEXT;
use crate::error::{Error, Result};
use crate::tokenizer::bpe::byte_to_char;

/// A merge: the two tokens it joins, left and right.
pub type Merge = (String, String);

/// The shape of a random GPT-2 (GPT-2 small's by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub n_layer: usize,
    pub n_head: usize,
    pub n_embd: usize,
    pub n_positions: usize,
    pub vocab_size: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            n_layer: 12,
            n_head: 12,
            n_embd: 768,
            n_positions: 1024,
            vocab_size: 50257,
        }
    }
}

/// The three files of a folder, as bytes.
pub struct Folder {
    pub config_json: Vec<u8>,
    pub model_safetensors: Vec<u8>,
    pub tokenizer_json: Vec<u8>,
}

/// A byte-level vocabulary of `size` tokens (256 bytes, merges, `<|endoftext|>` last) and
/// its merges in rank order, each merge joining two tokens already in the vocabulary.
pub fn vocabulary(size: usize) -> Result<(Vec<String>, Vec<Merge>)> {
    if size < 257 {
        return Err(Error::Config(format!(
            "a byte-level vocabulary needs at least 257 tokens (256 bytes and {END_OF_TEXT}), got {size}"
        )));
    }
    let bytes = byte_to_char();
    let mut tokens: Vec<String> = bytes.iter().map(|c| c.to_string()).collect();
    let mut seen: HashSet<String> = tokens.iter().cloned().collect();
    let mut merges = vec![];
    let want = size - 1;
    let letters: Vec<String> = ('a'..='z').map(|c| c.to_string()).collect();
    let space = bytes[b' ' as usize].to_string();
    let mut add = |l: &str, r: &str, tokens: &mut Vec<String>| -> bool {
        if tokens.len() >= want {
            return false;
        }
        let joined = format!("{l}{r}");
        if seen.insert(joined.clone()) {
            merges.push((l.to_string(), r.to_string()));
            tokens.push(joined);
        }
        true
    };
    for l in &letters {
        add(&space, l, &mut tokens);
    }
    for a in &letters {
        for b in &letters {
            add(a, b, &mut tokens);
        }
    }
    // Longer runs: every token made so far, extended by a letter, in the order they came.
    let mut i = 256;
    while tokens.len() < want {
        let base = tokens[i].clone();
        for l in &letters {
            if !add(&base, l, &mut tokens) {
                break;
            }
        }
        i += 1;
    }
    tokens.push(END_OF_TEXT.to_string());
    Ok((tokens, merges))
}

/// The folder of a random GPT-2 of `shape`, drawn from `seed` (the same seed, the same bytes).
pub fn folder(shape: Shape, seed: u64) -> Result<Folder> {
    let Shape {
        n_layer,
        n_head,
        n_embd: c,
        n_positions,
        vocab_size,
    } = shape;
    let config = json!({
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_layer": n_layer,
        "n_head": n_head,
        "n_embd": c,
        "n_inner": null,
        "n_positions": n_positions,
        "n_ctx": n_positions,
        "vocab_size": vocab_size,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "tie_word_embeddings": true,
        "bos_token_id": vocab_size - 1,
        "eos_token_id": vocab_size - 1,
    });
    let config_json = serde_json::to_vec_pretty(&config).expect("JSON serialises");
    // The config's own check first: a shape beyond the limits is refused before allocating.
    let check = super::check_config(&config_json)?;
    let (tokens, merges) = vocabulary(vocab_size)?;

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let bound = 0.02 * 3f32.sqrt();
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(4 + 12 * n_layer);
    let mut push = |name: String, shape: Vec<usize>, fill: Option<f32>| {
        let n: usize = shape.iter().product();
        let mut data = Vec::with_capacity(n * 4);
        for _ in 0..n {
            let x = fill.unwrap_or_else(|| (rng.random::<f32>() * 2.0 - 1.0) * bound);
            data.extend_from_slice(&x.to_le_bytes());
        }
        tensors.push((format!("transformer.{name}"), shape, data));
    };
    push("wte.weight".into(), vec![vocab_size, c], None);
    push("wpe.weight".into(), vec![n_positions, c], None);
    for l in 0..n_layer {
        let p = |s: &str| format!("h.{l}.{s}");
        push(p("ln_1.weight"), vec![c], Some(1.0));
        push(p("ln_1.bias"), vec![c], Some(0.0));
        push(p("attn.c_attn.weight"), vec![c, 3 * c], None);
        push(p("attn.c_attn.bias"), vec![3 * c], Some(0.0));
        push(p("attn.c_proj.weight"), vec![c, c], None);
        push(p("attn.c_proj.bias"), vec![c], Some(0.0));
        push(p("ln_2.weight"), vec![c], Some(1.0));
        push(p("ln_2.bias"), vec![c], Some(0.0));
        push(p("mlp.c_fc.weight"), vec![c, 4 * c], None);
        push(p("mlp.c_fc.bias"), vec![4 * c], Some(0.0));
        push(p("mlp.c_proj.weight"), vec![4 * c, c], None);
        push(p("mlp.c_proj.bias"), vec![c], Some(0.0));
    }
    push("ln_f.weight".into(), vec![c], Some(1.0));
    push("ln_f.bias".into(), vec![c], Some(0.0));
    let written: usize = tensors.iter().map(|t| t.2.len() / 4).sum();
    debug_assert_eq!(written, check.params);
    let views: Vec<(String, TensorView)> = tensors
        .iter()
        .map(|(n, s, d)| {
            let v = TensorView::new(Dtype::F32, s.clone(), d)
                .map_err(|e| Error::Other(format!("tensor {n}: {e}")))?;
            Ok((n.clone(), v))
        })
        .collect::<Result<_>>()?;
    let model_safetensors = safetensors::serialize(views, None)
        .map_err(|e| Error::Other(format!("cannot write the weights: {e}")))?;

    let vocab: serde_json::Map<String, serde_json::Value> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), json!(i)))
        .collect();
    let merges: Vec<[String; 2]> = merges.into_iter().map(|(l, r)| [l, r]).collect();
    let tokenizer = json!({
        "version": "1.0",
        "added_tokens": [{"id": vocab_size - 1, "content": END_OF_TEXT, "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
    });
    Ok(Folder {
        config_json,
        model_safetensors,
        tokenizer_json: serde_json::to_vec(&tokenizer).expect("JSON serialises"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hf::HfFiles;

    #[test]
    fn a_small_random_folder_loads_and_its_merges_build_words() {
        let shape = Shape {
            n_layer: 2,
            n_head: 4,
            n_embd: 16,
            n_positions: 32,
            vocab_size: 1000,
        };
        let f = folder(shape, 3).unwrap();
        let files = HfFiles {
            config_json: &f.config_json,
            model_safetensors: &f.model_safetensors,
            tokenizer_json: Some(&f.tokenizer_json),
            vocab_json: None,
            merges_txt: None,
        };
        let model = crate::hf::load(&files).unwrap();
        assert_eq!(model.config.vocab_size, 1000);
        assert_eq!(model.config.n_heads, 4);
        assert_eq!(model.tokenizer.token(999), Some(END_OF_TEXT));
        // " cat": the space-led letter and a letter pair are merges; every text spells back.
        let ids = model.tokenizer.encode(" cat, 猫!").ids;
        assert!(ids.len() < " cat, 猫!".len(), "{ids:?}");
        assert_eq!(model.tokenizer.decode(&ids), " cat, 猫!");
        assert_eq!(
            folder(shape, 3).unwrap().model_safetensors,
            f.model_safetensors
        );
        assert_ne!(
            folder(shape, 4).unwrap().model_safetensors,
            f.model_safetensors
        );
    }

    #[test]
    fn a_shape_beyond_the_limits_is_refused_before_anything_is_drawn() {
        let shape = Shape {
            n_layer: 48,
            n_embd: 1600,
            n_head: 25,
            ..Shape::default()
        };
        let e = folder(shape, 0).err().unwrap().to_string();
        assert!(e.contains("parameter count"), "{e}");
    }
}

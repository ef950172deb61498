//! A byte-level BPE from Hugging Face's files: `tokenizer.json` (the `tokenizers` library's
//! form: `model.vocab`, `model.merges`, `added_tokens`) or GPT-2's `vocab.json` +
//! `merges.txt`. Counts are checked against the budget before the vocabulary is built.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::mapping::{bad, HfFiles};
use crate::error::{Error, Result};
use crate::limits::{at_most, MAX_VOCAB};
use crate::tokenizer::{Tokenizer, TokenizerKind, TokenizerSpec, NO_TOKEN};

/// Largest tokenizer file read (GPT-2's `tokenizer.json` is 1.4 MB).
pub const MAX_TOKENIZER_FILE_BYTES: usize = 16 << 20;

/// GPT-2's one special token.
pub const END_OF_TEXT: &str = "<|endoftext|>";

#[derive(Deserialize)]
struct TokenizerJson {
    model: BpeModel,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    #[serde(default)]
    normalizer: Value,
    #[serde(default)]
    pre_tokenizer: Value,
}

#[derive(Deserialize)]
struct BpeModel {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    vocab: HashMap<String, u64>,
    merges: Vec<Merge>,
    #[serde(default)]
    byte_fallback: bool,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
}

/// `"left right"` (older files) or `["left", "right"]` (newer ones).
#[derive(Deserialize)]
#[serde(untagged)]
enum Merge {
    Line(String),
    Pair([String; 2]),
}

#[derive(Deserialize)]
struct AddedToken {
    id: u64,
    content: String,
}

/// A vocabulary as (token, id) pairs, and the merges in rank order.
type Parts = (Vec<(String, u64)>, Vec<String>);

/// The tokenizer of a folder; `bos` / `eos` from `config.json` when it names them, else
/// `<|endoftext|>`.
pub fn load(files: &HfFiles, bos: Option<u32>, eos: Option<u32>) -> Result<Tokenizer> {
    let (vocab, merges) = match (files.tokenizer_json, files.vocab_json, files.merges_txt) {
        (Some(json), _, _) => from_tokenizer_json(json)?,
        (None, Some(vocab), Some(merges)) => from_vocab_and_merges(vocab, merges)?,
        _ => {
            return Err(bad(
                "no tokenizer: expected tokenizer.json, or vocab.json and merges.txt",
            ))
        }
    };
    let tokens = dense(vocab)?;
    let find = |id: Option<u32>, field: &str| -> Result<u32> {
        match id {
            Some(id) if (id as usize) < tokens.len() => Ok(id),
            Some(id) => Err(bad(format!(
                "config.json: {field} {id} is outside the vocabulary of {} tokens",
                tokens.len()
            ))),
            None => tokens
                .iter()
                .position(|t| t == END_OF_TEXT)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    bad(format!(
                        "config.json names no {field} and the vocabulary has no {END_OF_TEXT}"
                    ))
                }),
        }
    };
    let spec = TokenizerSpec {
        kind: TokenizerKind::Bpe,
        bos: find(bos, "bos_token_id")?,
        eos: find(eos, "eos_token_id")?,
        pad: NO_TOKEN,
        unk: NO_TOKEN,
        tokens,
        merges,
    };
    Tokenizer::new(spec)
}

fn from_tokenizer_json(bytes: &[u8]) -> Result<Parts> {
    at_most(
        Error::Checkpoint,
        "tokenizer.json (bytes)",
        bytes.len(),
        MAX_TOKENIZER_FILE_BYTES,
    )?;
    let t: TokenizerJson = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("tokenizer.json is not a BPE tokenizer: {e}")))?;
    let m = &t.model;
    if m.kind.as_deref().is_some_and(|k| k != "BPE") {
        return Err(bad(format!(
            "tokenizer.json: model type {:?} is not supported (BPE)",
            m.kind.as_deref().unwrap_or_default()
        )));
    }
    if m.byte_fallback
        || m.continuing_subword_prefix
            .as_deref()
            .is_some_and(|s| !s.is_empty())
        || m.end_of_word_suffix
            .as_deref()
            .is_some_and(|s| !s.is_empty())
    {
        return Err(bad(
            "tokenizer.json: only GPT-2's byte-level BPE is supported (no byte_fallback, \
             subword prefix or word suffix)",
        ));
    }
    if !t.normalizer.is_null() {
        return Err(bad("tokenizer.json: normalizers are not supported"));
    }
    check_byte_level(&t.pre_tokenizer)?;
    at_most(
        Error::Checkpoint,
        "tokenizer merges",
        m.merges.len(),
        MAX_VOCAB,
    )?;
    at_most(
        Error::Checkpoint,
        "tokenizer tokens",
        m.vocab.len().saturating_add(t.added_tokens.len()),
        MAX_VOCAB,
    )?;
    let merges = t
        .model
        .merges
        .into_iter()
        .map(|m| match m {
            Merge::Line(s) => s,
            Merge::Pair([l, r]) => format!("{l} {r}"),
        })
        .collect();
    let mut vocab: Vec<(String, u64)> = t.model.vocab.into_iter().collect();
    for a in t.added_tokens {
        if !vocab.iter().any(|(s, id)| *s == a.content && *id == a.id) {
            vocab.push((a.content, a.id));
        }
    }
    Ok((vocab, merges))
}

/// The pre-tokenizer must be GPT-2's: `ByteLevel` with the pattern and no prefix space,
/// alone or as the only step of a `Sequence`.
fn check_byte_level(p: &Value) -> Result<()> {
    let steps: Vec<&Value> = match p.get("type").and_then(|t| t.as_str()) {
        Some("Sequence") => p
            .get("pretokenizers")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        _ => vec![p],
    };
    let ok = steps.len() == 1
        && steps[0].get("type").and_then(|t| t.as_str()) == Some("ByteLevel")
        && steps[0].get("add_prefix_space").and_then(|v| v.as_bool()) != Some(true)
        && steps[0].get("use_regex").and_then(|v| v.as_bool()) != Some(false);
    if ok {
        Ok(())
    } else {
        Err(bad(
            "tokenizer.json: the pre-tokenizer must be GPT-2's ByteLevel (with its pattern, \
             without add_prefix_space)",
        ))
    }
}

fn from_vocab_and_merges(vocab: &[u8], merges: &[u8]) -> Result<Parts> {
    for (name, b) in [("vocab.json", vocab), ("merges.txt", merges)] {
        at_most(
            Error::Checkpoint,
            &format!("{name} (bytes)"),
            b.len(),
            MAX_TOKENIZER_FILE_BYTES,
        )?;
    }
    let text =
        std::str::from_utf8(merges).map_err(|e| bad(format!("merges.txt is not UTF-8: {e}")))?;
    let lines = text
        .lines()
        .enumerate()
        .filter(|(i, l)| !(l.is_empty() || (*i == 0 && l.starts_with("#version"))));
    // Count before collecting: a file of a billion one-byte lines cannot pass the size
    // check, but a clear count is the better message for any file that is merely too long.
    at_most(
        Error::Checkpoint,
        "tokenizer merges",
        lines.clone().count(),
        MAX_VOCAB,
    )?;
    let merges = lines.map(|(_, l)| l.to_string()).collect();
    let map: HashMap<String, u64> = serde_json::from_slice(vocab)
        .map_err(|e| bad(format!("vocab.json is not a map of tokens to ids: {e}")))?;
    at_most(Error::Checkpoint, "tokenizer tokens", map.len(), MAX_VOCAB)?;
    Ok((map.into_iter().collect(), merges))
}

/// Token strings by id: the ids must be exactly 0..n, each once.
fn dense(vocab: Vec<(String, u64)>) -> Result<Vec<String>> {
    let n = vocab.len();
    at_most(Error::Checkpoint, "tokenizer tokens", n, MAX_VOCAB)?;
    let mut tokens: Vec<Option<String>> = vec![None; n];
    for (s, id) in vocab {
        let slot = usize::try_from(id)
            .ok()
            .and_then(|i| tokens.get_mut(i))
            .ok_or_else(|| {
                bad(format!(
                    "tokenizer: token {s:?} has id {id}, outside 0..{n} (ids must be dense)"
                ))
            })?;
        if let Some(other) = slot {
            return Err(bad(format!(
                "tokenizer: tokens {other:?} and {s:?} share the id {id}"
            )));
        }
        *slot = Some(s);
    }
    Ok(tokens
        .into_iter()
        .map(|t| t.expect("n distinct ids below n fill every slot"))
        .collect())
}

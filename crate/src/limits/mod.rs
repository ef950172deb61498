//! The size budget: what a checkpoint, a config, a tokenizer or a request from the page may
//! ask for, checked before anything is allocated for it.
//!
//! A checkpoint comes from a stranger as often as from us (a classroom file, a link), so
//! every number in it that decides an allocation is held against a limit here first, and
//! an error names the field, its value and the limit. The limits sit far above the
//! playground's models (d_model 32, a few layers, vocabularies under a hundred tokens) and
//! far below what would exhaust a browser tab (a wasm32 engine has at most 4 GiB).
//!
//! Arithmetic on untrusted numbers is done in `u64` with checked operations, so a budget
//! check can never overflow itself (usize is 32 bits on wasm32).

use crate::error::{Error, Result};
use safetensors::SafeTensors;

mod request;

pub use request::{check_forward_request, check_generate_request, check_text};

/// Largest checkpoint file accepted (bytes): [`MAX_PARAMS`] in f32 with room for the
/// buffers a Hugging Face file may carry beside its weights (GPT-2 small's file is 548 MB).
/// Loading holds the file and the model at once, so this and the model stay well inside a
/// wasm32 engine's 4 GiB.
pub const MAX_CHECKPOINT_BYTES: usize = 720 << 20;
/// Largest safetensors header, the JSON that lists the tensors and holds the metadata.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// Most tensors one checkpoint may list.
pub const MAX_TENSORS: usize = 4096;
/// Largest `config` or `tokenizer` metadata entry (bytes of JSON).
pub const MAX_METADATA_JSON_BYTES: usize = 4 << 20;
/// Largest vocabulary (`vocab_size`, and tokens in a tokenizer).
pub const MAX_VOCAB: usize = 65_536;
/// Longest single token of a vocabulary (bytes of UTF-8).
pub const MAX_TOKEN_BYTES: usize = 256;
/// C: widest residual stream.
pub const MAX_D_MODEL: usize = 4096;
/// H: most attention heads per layer.
pub const MAX_HEADS: usize = 64;
/// F: widest feed-forward layer.
pub const MAX_D_FF: usize = 16_384;
/// Largest `max_len` (positions a model is built for).
pub const MAX_LEN: usize = 4096;
/// Most layers in one stack (`n_layers`, `n_encoder_layers`, `n_decoder_layers`).
pub const MAX_LAYERS: usize = 64;
/// Most classes of a classifier head.
pub const MAX_CLASSES: usize = 4096;
/// Largest clipping distance of Shaw relative positions.
pub const MAX_RELATIVE_DISTANCE: usize = MAX_LEN;
/// Most trained parameters of one model (160 Mi f32 values = 640 MiB): GPT-2 small
/// (124 M) loads, GPT-2 medium (355 M) is refused by name. Whether a device has the
/// memory for a model this size is the page's pre-flight, checked before the file is fetched.
pub const MAX_PARAMS: u64 = 160 << 20;

/// Most sequences in one forward request (the padding demo uses a few).
pub const MAX_BATCH: usize = 8;
/// Longest sequence in one request (prompt, batch row or source), in tokens.
pub const MAX_SEQUENCE_TOKENS: usize = MAX_LEN;
/// Most attention cells (B · layers · H · T · S over every attention sublayer) one traced
/// forward pass may produce; the trace keeps scores and probabilities of each.
pub const MAX_ATTENTION_CELLS: u64 = 1 << 24;
/// Most tokens one generation may ask for.
pub const MAX_NEW_TOKENS: usize = 1024;
/// Most hypotheses beam search may keep.
pub const MAX_BEAM_WIDTH: usize = 16;
/// Longest text one tokenize request may carry (bytes of UTF-8).
pub const MAX_TEXT_BYTES: usize = 64 << 10;
/// Most heads one request may switch off.
pub const MAX_ABLATED_HEADS: usize = MAX_LAYERS * MAX_HEADS * 3;

fn over(
    kind: fn(String) -> Error,
    field: &str,
    got: impl std::fmt::Display,
    limit: impl std::fmt::Display,
) -> Error {
    kind(format!("{field}: {got} is above the limit of {limit}"))
}

/// Fine while `got` is at most `limit`; otherwise an error of `kind` naming the field and both.
pub(crate) fn at_most(
    kind: fn(String) -> Error,
    field: &str,
    got: usize,
    limit: usize,
) -> Result<()> {
    if got > limit {
        return Err(over(kind, field, got, limit));
    }
    Ok(())
}

/// The raw bytes of a checkpoint: total size and the safetensors header's declared length,
/// read from the first 8 bytes, before the header is parsed.
pub fn check_checkpoint_bytes(bytes: &[u8]) -> Result<()> {
    let kind = Error::Checkpoint;
    at_most(kind, "file size (bytes)", bytes.len(), MAX_CHECKPOINT_BYTES)?;
    if let Some(head) = bytes.get(..8) {
        let n = u64::from_le_bytes(head.try_into().expect("8 bytes"));
        // A length beyond the file is no safetensors file at all; the loader says so.
        if n > MAX_HEADER_BYTES && n <= bytes.len() as u64 - 8 {
            return Err(over(
                kind,
                "safetensors header size (bytes)",
                n,
                MAX_HEADER_BYTES,
            ));
        }
    }
    Ok(())
}

/// A whole checkpoint before the model is built: its bytes and header length, then (when
/// the header parses; the loader reports it when not) the number of tensors it lists and
/// the size of the `config` and `tokenizer` entries.
pub fn check_checkpoint(bytes: &[u8]) -> Result<()> {
    check_checkpoint_bytes(bytes)?;
    let Ok((_, meta)) = SafeTensors::read_metadata(bytes) else {
        return Ok(());
    };
    let kind = Error::Checkpoint;
    at_most(
        kind,
        "tensors in the file",
        meta.offset_keys().len(),
        MAX_TENSORS,
    )?;
    for (entry, json) in meta.metadata().iter().flatten() {
        at_most(
            kind,
            &format!("metadata `{entry}` (bytes of JSON)"),
            json.len(),
            MAX_METADATA_JSON_BYTES,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_longer_than_the_budget_is_refused_before_parsing() {
        let n = MAX_HEADER_BYTES + 1;
        let mut bytes = n.to_le_bytes().to_vec();
        bytes.resize(8 + n as usize, b' ');
        let e = check_checkpoint_bytes(&bytes).unwrap_err().to_string();
        assert_eq!(
            e,
            "bad checkpoint: safetensors header size (bytes): 16777217 is above the limit of 16777216"
        );
        // A length field that points past the end of the file is not a checkpoint at all:
        // that is the loader's message, not the budget's.
        let mut short = u64::MAX.to_le_bytes().to_vec();
        short.extend_from_slice(b"{}");
        check_checkpoint_bytes(&short).unwrap();
    }
}

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

use crate::config::{Arch, ModelConfig, Norm, PosEncoding, Score};
use crate::error::{Error, Result};
use crate::tokenizer::TokenizerSpec;
use safetensors::SafeTensors;

/// Largest checkpoint file accepted (bytes).
pub const MAX_CHECKPOINT_BYTES: usize = 256 << 20;
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
/// Most trained parameters of one model (64 Mi f32 values = 256 MiB).
pub const MAX_PARAMS: u64 = 64 << 20;

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

fn at_most(kind: fn(String) -> Error, field: &str, got: usize, limit: usize) -> Result<()> {
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

/// Every size field of a config, then the parameter count they add up to.
pub fn check_config(cfg: &ModelConfig) -> Result<()> {
    let kind = Error::Config;
    at_most(kind, "vocab_size", cfg.vocab_size, MAX_VOCAB)?;
    at_most(kind, "d_model", cfg.d_model, MAX_D_MODEL)?;
    at_most(kind, "n_heads", cfg.n_heads, MAX_HEADS)?;
    at_most(kind, "d_ff", cfg.d_ff, MAX_D_FF)?;
    at_most(kind, "max_len", cfg.max_len, MAX_LEN)?;
    at_most(kind, "n_layers", cfg.n_layers, MAX_LAYERS)?;
    at_most(kind, "n_encoder_layers", cfg.n_encoder_layers, MAX_LAYERS)?;
    at_most(kind, "n_decoder_layers", cfg.n_decoder_layers, MAX_LAYERS)?;
    at_most(kind, "num_classes", cfg.num_classes, MAX_CLASSES)?;
    at_most(
        kind,
        "relative_max_distance",
        cfg.relative_max_distance,
        MAX_RELATIVE_DISTANCE,
    )?;
    let params = param_count(cfg);
    if params > MAX_PARAMS {
        return Err(Error::Config(format!(
            "parameter count: this config needs {params} parameters, above the limit of \
             {MAX_PARAMS} (d_model {}, d_ff {}, vocab_size {}, {} + {} layers)",
            cfg.d_model,
            cfg.d_ff,
            cfg.vocab_size,
            cfg.encoder_layers(),
            cfg.decoder_layers()
        )));
    }
    Ok(())
}

/// Trained parameters of `cfg` (as [`ModelConfig::param_count`]), in u64 arithmetic that
/// saturates instead of overflowing, so it can be asked of any config, valid or not.
pub fn param_count(cfg: &ModelConfig) -> u64 {
    let u = |x: usize| x as u64;
    let (c, f, v, h) = (
        u(cfg.d_model),
        u(cfg.d_ff),
        u(cfg.vocab_size),
        u(cfg.n_heads),
    );
    let d = c.checked_div(h).unwrap_or(0);
    let add = |xs: &[u64]| xs.iter().fold(0u64, |a, &x| a.saturating_add(x));
    let mul = |xs: &[u64]| xs.iter().fold(1u64, |a, &x| a.saturating_mul(x));
    let additive = if cfg.score == Score::Additive {
        mul(&[h, d])
    } else {
        0
    };
    let projections = add(&[mul(&[4, c, c]), mul(&[4, c]), additive]);
    let relative = if cfg.pos_encoding == PosEncoding::Relative {
        mul(&[2, add(&[mul(&[2, u(cfg.relative_max_distance)]), 1]), d])
    } else {
        0
    };
    let attn = add(&[projections, relative]);
    let ffn = add(&[mul(&[2, c, f]), f, c]);
    let norm = if cfg.norm == Norm::None {
        0
    } else {
        mul(&[2, c])
    };
    let enc = mul(&[u(cfg.encoder_layers()), add(&[attn, ffn, mul(&[2, norm])])]);
    let cross = if cfg.arch == Arch::EncoderDecoder {
        add(&[projections, norm])
    } else {
        0
    };
    let dec = mul(&[
        u(cfg.decoder_layers()),
        add(&[attn, ffn, mul(&[2, norm]), cross]),
    ]);
    let stacks = u(usize::from(cfg.encoder_layers() > 0) + usize::from(cfg.decoder_layers() > 0));
    let final_norm = if cfg.final_norm {
        mul(&[stacks, 2, c])
    } else {
        0
    };
    let embed = mul(&[v, c]);
    let pos = if cfg.pos_encoding == PosEncoding::Learned {
        mul(&[u(cfg.max_len), c])
    } else {
        0
    };
    let nc = u(cfg.num_classes);
    let head = if cfg.num_classes > 0 {
        add(&[mul(&[nc, c]), nc])
    } else if cfg.tie_embeddings {
        v
    } else {
        add(&[mul(&[v, c]), v])
    };
    add(&[enc, dec, final_norm, embed, pos, head])
}

/// A tokenizer's vocabulary, before its index is built.
pub fn check_tokenizer(spec: &TokenizerSpec) -> Result<()> {
    at_most(
        Error::Checkpoint,
        "tokenizer tokens",
        spec.tokens.len(),
        MAX_VOCAB,
    )?;
    if let Some((i, t)) = spec
        .tokens
        .iter()
        .enumerate()
        .find(|(_, t)| t.len() > MAX_TOKEN_BYTES)
    {
        return Err(Error::Checkpoint(format!(
            "tokenizer token {i}: {} bytes is above the limit of {MAX_TOKEN_BYTES}",
            t.len()
        )));
    }
    Ok(())
}

/// Text sent to the tokenizer from the page.
pub fn check_text(text: &str) -> Result<()> {
    at_most(Error::Input, "text (bytes)", text.len(), MAX_TEXT_BYTES)
}

/// A forward request: sequences, their lengths, the heads switched off, and the attention
/// cells the traced pass would keep, for the model `cfg`.
pub fn check_forward_request(
    cfg: &ModelConfig,
    rows: &[Vec<u32>],
    src: Option<&[Vec<u32>]>,
    ablated: usize,
) -> Result<()> {
    let kind = Error::Input;
    at_most(kind, "batch (sequences)", rows.len(), MAX_BATCH)?;
    let t = rows.iter().map(Vec::len).max().unwrap_or(0);
    at_most(kind, "sequence length (tokens)", t, MAX_SEQUENCE_TOKENS)?;
    let s_src = match src {
        Some(src) => {
            at_most(kind, "source batch (sequences)", src.len(), MAX_BATCH)?;
            let s = src.iter().map(Vec::len).max().unwrap_or(0);
            at_most(kind, "source length (tokens)", s, MAX_SEQUENCE_TOKENS)?;
            s
        }
        None => 0,
    };
    at_most(kind, "ablated heads", ablated, MAX_ABLATED_HEADS)?;
    let (b, h) = (rows.len() as u64, cfg.n_heads as u64);
    let (t, s) = (t as u64, s_src as u64);
    let enc_len = if cfg.arch == Arch::EncoderDecoder {
        s
    } else {
        t
    };
    let cells = b.saturating_mul(h).saturating_mul(
        (cfg.encoder_layers() as u64)
            .saturating_mul(enc_len.saturating_mul(enc_len))
            .saturating_add((cfg.decoder_layers() as u64).saturating_mul(t.saturating_mul(t)))
            .saturating_add(if cfg.arch == Arch::EncoderDecoder {
                (cfg.decoder_layers() as u64).saturating_mul(t.saturating_mul(s))
            } else {
                0
            }),
    );
    if cells > MAX_ATTENTION_CELLS {
        return Err(Error::Input(format!(
            "attention cells: {b} sequences of {t} tokens would trace {cells} attention \
             weights, above the limit of {MAX_ATTENTION_CELLS}"
        )));
    }
    Ok(())
}

/// A generation request: the prompt, the source, how many tokens, and the beam width
/// (`None` for greedy and sampling).
pub fn check_generate_request(
    prompt: usize,
    src: Option<usize>,
    max_new_tokens: usize,
    beam_width: Option<usize>,
    ablated: usize,
) -> Result<()> {
    let kind = Error::Input;
    at_most(kind, "prompt length (tokens)", prompt, MAX_SEQUENCE_TOKENS)?;
    if let Some(s) = src {
        at_most(kind, "source length (tokens)", s, MAX_SEQUENCE_TOKENS)?;
    }
    at_most(kind, "max_new_tokens", max_new_tokens, MAX_NEW_TOKENS)?;
    if let Some(w) = beam_width {
        at_most(kind, "beam width", w, MAX_BEAM_WIDTH)?;
    }
    at_most(kind, "ablated heads", ablated, MAX_ABLATED_HEADS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PRESETS;

    fn cfg() -> ModelConfig {
        ModelConfig::preset("gpt-nano", 40).unwrap()
    }

    #[test]
    fn budget_param_count_equals_the_configs_own_count_for_every_preset() {
        for p in PRESETS {
            let c = ModelConfig::preset(p, 50).unwrap();
            assert_eq!(param_count(&c), c.param_count() as u64, "preset {p}");
        }
    }

    #[test]
    fn a_huge_d_model_is_refused_naming_the_field_and_the_limit() {
        let mut c = cfg();
        c.d_model = 1 << 30;
        let e = check_config(&c).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid config: d_model: 1073741824 is above the limit of 4096"
        );
    }

    #[test]
    fn fields_under_their_limits_can_still_add_up_to_too_many_parameters() {
        let mut c = cfg();
        (c.d_model, c.d_ff, c.n_layers) = (4096, 16384, 64);
        let e = check_config(&c).unwrap_err().to_string();
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
        let mut c = cfg();
        (c.d_model, c.d_ff, c.vocab_size, c.n_layers) =
            (usize::MAX, usize::MAX, usize::MAX, usize::MAX);
        assert_eq!(param_count(&c), u64::MAX);
    }

    #[test]
    fn forward_requests_over_the_budget_name_what_is_too_big() {
        let c = cfg();
        let rows = vec![vec![1u32; 4]; MAX_BATCH + 1];
        let e = check_forward_request(&c, &rows, None, 0)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "bad input: batch (sequences): 9 is above the limit of 8");
        let rows = vec![vec![1u32; MAX_SEQUENCE_TOKENS + 1]];
        let e = check_forward_request(&c, &rows, None, 0)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "bad input: sequence length (tokens): 4097 is above the limit of 4096"
        );
        // 8 × 4 heads × 2 layers × 1024² cells = 2^26 > 2^24.
        let rows = vec![vec![1u32; 1024]; 8];
        let e = check_forward_request(&c, &rows, None, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("attention cells") && e.contains("above the limit of 16777216"),
            "{e}"
        );
        check_forward_request(&c, &vec![vec![1u32; 64]; 4], None, 0).unwrap();
    }

    #[test]
    fn generate_requests_over_the_budget_name_what_is_too_big() {
        let e = check_generate_request(3, None, MAX_NEW_TOKENS + 1, None, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad input: max_new_tokens: 1025 is above the limit of 1024"
        );
        let e = check_generate_request(3, None, 10, Some(17), 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad input: beam width: 17 is above the limit of 16"
        );
        check_generate_request(3, Some(5), 10, Some(4), 0).unwrap();
    }

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

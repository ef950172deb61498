//! What the page may ask of a model in one request: text to tokenize, sequences to run,
//! tokens to generate.

use super::{
    at_most, MAX_ABLATED_HEADS, MAX_ATTENTION_CELLS, MAX_BATCH, MAX_BEAM_WIDTH, MAX_NEW_TOKENS,
    MAX_SEQUENCE_TOKENS, MAX_TEXT_BYTES,
};
use crate::config::{Arch, ModelConfig};
use crate::error::{Error, Result};

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

    fn cfg() -> ModelConfig {
        ModelConfig::preset("gpt-nano", 40).unwrap()
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
}

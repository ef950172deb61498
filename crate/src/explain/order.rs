//! Order-blindness: without a position encoding and without a causal mask, attention
//! treats its input as a set. Permuting the tokens then permutes every output row and
//! changes nothing else — "the cat chases the dog" and "the dog chases the cat" are
//! the same bag of tokens to the model. With a position encoding (or a causal mask, which
//! tells a position how many come before it) the rows change.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};

/// The same input in two orders, and how the outputs relate.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Permutation {
    /// (T) the input ids.
    pub tokens: Vec<u32>,
    /// (T) `permuted[t] = tokens[perm[t]]`.
    pub permuted: Vec<u32>,
    pub perm: Vec<usize>,
    pub causal: bool,
    /// (T, V) logits of the input.
    pub logits: Vec<f32>,
    /// (T, V) logits of the permuted input.
    pub permuted_logits: Vec<f32>,
    /// (T): for each row t of the permuted run, max_v |permuted_logits[t] − logits[perm[t]]|.
    pub row_diff: Vec<f32>,
    /// (T): whether row t equals row perm[t] of the original bit for bit.
    pub row_identical: Vec<bool>,
}

/// Run `tokens` and `tokens` permuted by `perm` (with or without the causal mask) and
/// compare each permuted row with the original row it came from.
pub fn permutation(
    model: &Model,
    tokens: &[u32],
    perm: &[usize],
    causal: bool,
) -> Result<Permutation> {
    let t = tokens.len();
    let mut seen = vec![false; t];
    if perm.len() != t
        || perm
            .iter()
            .any(|&p| p >= t || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::Input(format!(
            "the order must list each of the positions 0 to {} once, got {perm:?}",
            t.saturating_sub(1)
        )));
    }
    if model.config.is_classifier() {
        return Err(Error::Input(
            "the permutation view compares token outputs; a classifier has one".into(),
        ));
    }
    let permuted: Vec<u32> = perm.iter().map(|&p| tokens[p]).collect();
    let opts = ForwardOptions {
        causal: Some(causal),
        trace_attention: false,
        trace_hidden: false,
        ..ForwardOptions::default()
    };
    let a = model.forward(&Batch::single(tokens)?, &opts)?;
    let b = model.forward(&Batch::single(&permuted)?, &opts)?;
    let v = model.config.vocab_size;
    let (la, lb) = (a.logits.data, b.logits.data); // (T, V), (T, V)
    let mut row_diff = Vec::with_capacity(t);
    let mut row_identical = Vec::with_capacity(t);
    for (r, &p) in perm.iter().enumerate() {
        let x = &lb[r * v..(r + 1) * v];
        let y = &la[p * v..(p + 1) * v];
        // A NaN on either side is an infinite difference, never none.
        row_diff.push(crate::tensor::max_abs_diff(x, y));
        row_identical.push(x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
    Ok(Permutation {
        tokens: tokens.to_vec(),
        permuted,
        perm: perm.to_vec(),
        causal,
        logits: la,
        permuted_logits: lb,
        row_diff,
        row_identical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ModelConfig, PosEncoding};
    use crate::tokenizer::Tokenizer;

    fn model(pos: PosEncoding) -> Model {
        let tok = Tokenizer::char_level("abcdefgh ");
        let mut cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        cfg.pos_encoding = pos;
        Model::init(cfg, tok, 9)
    }

    #[test]
    fn without_positions_or_causal_mask_every_row_is_permuted_bit_for_bit() {
        let m = model(PosEncoding::None);
        let tokens = [4, 5, 6, 7, 8, 9, 4];
        let perm = [6, 2, 0, 5, 1, 3, 4];
        let r = permutation(&m, &tokens, &perm, false).unwrap();
        assert!(r.row_identical.iter().all(|&x| x), "{:?}", r.row_diff);
    }

    #[test]
    fn a_position_encoding_or_the_causal_mask_makes_order_matter() {
        let tokens = [4, 5, 6, 7, 8, 9];
        // Not a reversal: reversing keeps every distance |i − j|, so ALiBi could not tell.
        let perm = [2, 0, 5, 1, 4, 3];
        for pos in [
            PosEncoding::Sinusoidal,
            PosEncoding::Rope,
            PosEncoding::Alibi,
        ] {
            let r = permutation(&model(pos), &tokens, &perm, false).unwrap();
            assert!(
                r.row_diff.iter().any(|&d| d > 1e-3),
                "{pos:?}: {:?}",
                r.row_diff
            );
        }
        let r = permutation(&model(PosEncoding::None), &tokens, &perm, true).unwrap();
        assert!(
            r.row_diff.iter().any(|&d| d > 1e-3),
            "causal: {:?}",
            r.row_diff
        );
    }

    #[test]
    fn an_order_that_is_not_a_permutation_is_refused() {
        let m = model(PosEncoding::None);
        for bad in [&[0usize, 0, 1][..], &[0, 1], &[0, 1, 3]] {
            assert!(permutation(&m, &[4, 5, 6], bad, false).is_err(), "{bad:?}");
        }
    }
}

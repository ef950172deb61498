//! The input of a forward pass ([`Batch`]: B sequences of one length, and the source
//! sequences of an encoder-decoder model) and the checks a batch and the run-time
//! switches pass before anything is computed.

use super::mask::check_masks;
use super::{AttnSite, ForwardOptions, HeadRef, Mode, Model};
use crate::config::{Arch, Norm, PosEncoding};
use crate::error::{Error, Result};

/// B sequences of equal length T, right-padded with the tokenizer's pad id, and for an
/// encoder-decoder model the B source sequences of length S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// (B, T) row-major token ids.
    pub tokens: Vec<u32>,
    /// B
    pub batch: usize,
    /// T
    pub len: usize,
    /// (B, S) row-major source ids (encoder-decoder only).
    pub src_tokens: Option<Vec<u32>>,
    /// S (0 without a source).
    pub src_len: usize,
}

/// Rows of equal length flattened to (B, T), or a message naming the first ragged row.
fn flatten_rows(rows: Vec<Vec<u32>>, what: &str) -> Result<(Vec<u32>, usize, usize)> {
    let b = rows.len();
    if b == 0 {
        return Err(Error::Input(format!("the {what} batch holds no sequences")));
    }
    let t = rows[0].len();
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != t) {
        return Err(Error::Input(format!(
            "ragged {what} batch: sequence {i} has {} tokens but sequence 0 has {t}; \
             pad them to one length (Batch::padded)",
            r.len()
        )));
    }
    if t == 0 {
        return Err(Error::Input(format!(
            "every {what} sequence is empty: give at least one token"
        )));
    }
    Ok((rows.into_iter().flatten().collect(), b, t))
}

/// Right-pad every row with `pad` to the longest row's length.
fn pad_rows(mut rows: Vec<Vec<u32>>, pad: u32) -> Vec<Vec<u32>> {
    let t = rows.iter().map(Vec::len).max().unwrap_or(0);
    for r in &mut rows {
        r.resize(t, pad);
    }
    rows
}

impl Batch {
    /// A batch from sequences that already have one length (e.g. padded by the caller).
    pub fn new(rows: Vec<Vec<u32>>) -> Result<Batch> {
        let (tokens, batch, len) = flatten_rows(rows, "token")?;
        Ok(Batch {
            tokens,
            batch,
            len,
            src_tokens: None,
            src_len: 0,
        })
    }

    /// A batch from sequences of any lengths, right-padded with `pad` to the longest.
    pub fn padded(rows: Vec<Vec<u32>>, pad: u32) -> Result<Batch> {
        Batch::new(pad_rows(rows, pad))
    }

    /// One sequence.
    pub fn single(tokens: &[u32]) -> Result<Batch> {
        Batch::new(vec![tokens.to_vec()])
    }

    /// Add the source sequences of an encoder-decoder model (already of one length).
    pub fn with_source(self, rows: Vec<Vec<u32>>) -> Result<Batch> {
        let (src, b, s) = flatten_rows(rows, "source")?;
        if b != self.batch {
            return Err(Error::Input(format!(
                "the batch has {} target sequences but {b} source sequences",
                self.batch
            )));
        }
        Ok(Batch {
            src_tokens: Some(src),
            src_len: s,
            ..self
        })
    }

    /// Add source sequences of any lengths, right-padded with `pad` to the longest.
    pub fn with_padded_source(self, rows: Vec<Vec<u32>>, pad: u32) -> Result<Batch> {
        self.with_source(pad_rows(rows, pad))
    }

    /// Row `i` of the target tokens (T).
    pub fn row(&self, i: usize) -> &[u32] {
        &self.tokens[i * self.len..(i + 1) * self.len]
    }
}

impl Model {
    /// Every rule a forward pass's input obeys, written once: the batch
    /// ([`Model::check_batch`]), the ablated heads, the masks, and BatchNorm in train
    /// mode (a variance needs two rows). The CPU pass, the GPU pass and the GPU trainer
    /// ask it before computing anything.
    pub fn check_pass(&self, batch: &Batch, opts: &ForwardOptions) -> Result<()> {
        self.check_batch(batch)?;
        self.check_ablation(&opts.ablate)?;
        check_masks(&self.config, &opts.masks)?;
        let train = matches!(opts.mode, Mode::Train { .. });
        if train && self.config.norm == Norm::BatchNorm {
            let rows = batch.batch * batch.len; // B·T
            let src_rows = batch.batch * batch.src_len; // B·S
            if rows < 2 || (batch.src_tokens.is_some() && src_rows < 2) {
                return Err(Error::Input(
                    "BatchNorm in train mode needs at least two positions in the batch \
                     to compute a variance"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Check a batch against this model: shapes, token ids, source presence, length.
    pub fn check_batch(&self, batch: &Batch) -> Result<()> {
        let cfg = &self.config;
        if batch.batch == 0 {
            return Err(Error::Input("the batch holds no sequences".into()));
        }
        if batch.len == 0 {
            return Err(Error::Input(
                "every sequence is empty: give at least one token".into(),
            ));
        }
        if batch.tokens.len() != batch.batch * batch.len {
            return Err(Error::Input(format!(
                "the batch says {} sequences of {} tokens but holds {} tokens",
                batch.batch,
                batch.len,
                batch.tokens.len()
            )));
        }
        check_ids(&batch.tokens, batch.len, cfg.vocab_size, "")?;
        self.check_length(batch.len, "tokens")?;
        match (cfg.arch, &batch.src_tokens) {
            (Arch::EncoderDecoder, None) => {
                return Err(Error::Input(
                    "an encoder_decoder model needs source sequences (Batch::with_source)".into(),
                ))
            }
            (Arch::EncoderDecoder, Some(src)) => {
                if batch.src_len == 0 {
                    return Err(Error::Input(
                        "every source sequence is empty: give at least one token".into(),
                    ));
                }
                if src.len() != batch.batch * batch.src_len {
                    return Err(Error::Input(format!(
                        "the batch says {} source sequences of {} tokens but holds {} tokens",
                        batch.batch,
                        batch.src_len,
                        src.len()
                    )));
                }
                check_ids(src, batch.src_len, cfg.vocab_size, "source ")?;
                self.check_length(batch.src_len, "source tokens")?;
            }
            (arch, Some(_)) => {
                return Err(Error::Input(format!(
                    "a {} model takes no source sequences",
                    arch_name(arch)
                )))
            }
            (_, None) => {}
        }
        Ok(())
    }

    /// Learned positions have a row per position up to max_len and no further.
    pub(crate) fn check_length(&self, len: usize, what: &str) -> Result<()> {
        let cfg = &self.config;
        if cfg.pos_encoding == PosEncoding::Learned && len > cfg.max_len {
            return Err(Error::Input(format!(
                "learned positions stop at max_len = {}; got {len} {what}",
                cfg.max_len
            )));
        }
        Ok(())
    }

    /// Check every ablated head exists in this model.
    pub(crate) fn check_ablation(&self, ablate: &[HeadRef]) -> Result<()> {
        let cfg = &self.config;
        for a in ablate {
            let layers = match (a.site, cfg.arch) {
                (AttnSite::EncoderSelf, Arch::EncoderOnly | Arch::EncoderDecoder) => {
                    cfg.encoder_layers()
                }
                (AttnSite::DecoderSelf, Arch::DecoderOnly | Arch::EncoderDecoder) => {
                    cfg.decoder_layers()
                }
                (AttnSite::Cross, Arch::EncoderDecoder) => cfg.decoder_layers(),
                (site, arch) => {
                    return Err(Error::Input(format!(
                        "ablate: a {} model has no {} attention",
                        arch_name(arch),
                        site.name()
                    )))
                }
            };
            if a.layer >= layers {
                return Err(Error::Input(format!(
                    "ablate: {} layer {} does not exist ({layers} layers)",
                    a.site.name(),
                    a.layer
                )));
            }
            if a.head >= cfg.n_heads {
                return Err(Error::Input(format!(
                    "ablate: head {} does not exist ({} heads per layer)",
                    a.head, cfg.n_heads
                )));
            }
        }
        Ok(())
    }
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::EncoderOnly => "encoder_only",
        Arch::DecoderOnly => "decoder_only",
        Arch::EncoderDecoder => "encoder_decoder",
    }
}

/// Every id of a (rows, len) token buffer must be below the vocabulary size.
fn check_ids(tokens: &[u32], len: usize, vocab: usize, what: &str) -> Result<()> {
    if let Some(i) = tokens.iter().position(|&x| x as usize >= vocab) {
        return Err(Error::Input(format!(
            "{what}token id {} at sequence {}, position {} is outside the vocabulary of \
             {vocab} tokens (ids 0..{})",
            tokens[i],
            i / len,
            i % len,
            vocab - 1
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_support::{input_error, model};
    use crate::model::ForwardOptions;

    #[test]
    fn padded_batch_right_pads_to_the_longest_row() {
        let b = Batch::padded(vec![vec![5, 6, 7], vec![8]], 0).unwrap();
        assert_eq!((b.batch, b.len), (2, 3));
        assert_eq!(b.tokens, vec![5, 6, 7, 8, 0, 0]);
        assert_eq!(b.row(1), &[8, 0, 0]);
    }

    #[test]
    fn ragged_empty_and_mismatched_batches_are_refused_by_name() {
        let e = Batch::new(vec![vec![5, 6], vec![7]])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ragged") && e.contains("sequence 1 has 1 tokens"),
            "{e}"
        );
        let e = Batch::new(vec![]).unwrap_err().to_string();
        assert!(e.contains("no sequences"), "{e}");
        let e = Batch::new(vec![vec![], vec![]]).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = Batch::single(&[5])
            .unwrap()
            .with_source(vec![vec![5], vec![6]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 target sequences but 2 source"), "{e}");
    }

    #[test]
    fn token_outside_the_vocabulary_is_named_with_its_position() {
        let m = model("gpt-pico", |_| {});
        let b = Batch::new(vec![vec![1, 4, 5], vec![1, 99, 4]]).unwrap();
        let e = input_error(m.forward(&b, &ForwardOptions::default()));
        assert!(
            e.contains("token id 99 at sequence 1, position 1") && e.contains("12 tokens"),
            "{e}"
        );
    }

    #[test]
    fn learned_positions_refuse_sequences_longer_than_max_len() {
        let m = model("gpt-pico", |c| c.pos_encoding = PosEncoding::Learned);
        let b = Batch::single(&[4; 70]).unwrap();
        let e = input_error(m.forward(&b, &ForwardOptions::default()));
        assert_eq!(e, "learned positions stop at max_len = 64; got 70 tokens");
        // Sinusoidal positions run past max_len.
        let m = model("gpt-pico", |_| {});
        assert!(m.forward(&b, &ForwardOptions::default()).is_ok());
    }

    #[test]
    fn source_must_be_given_exactly_to_encoder_decoder_models() {
        let s2s = model("seq2seq-nano", |_| {});
        let b = Batch::single(&[1, 4]).unwrap();
        let e = input_error(s2s.forward(&b, &ForwardOptions::default()));
        assert!(e.contains("needs source sequences"), "{e}");
        let with_src = b.clone().with_source(vec![vec![5, 6, 7]]).unwrap();
        assert!(s2s.forward(&with_src, &ForwardOptions::default()).is_ok());
        let gpt = model("gpt-pico", |_| {});
        let e = input_error(gpt.forward(&with_src, &ForwardOptions::default()));
        assert!(e.contains("decoder_only model takes no source"), "{e}");
    }

    #[test]
    fn ablating_a_missing_head_or_site_is_an_input_error() {
        let m = model("gpt-pico", |_| {});
        let b = Batch::single(&[1, 4]).unwrap();
        let opts = |site, layer, head| ForwardOptions {
            ablate: vec![HeadRef { site, layer, head }],
            ..ForwardOptions::default()
        };
        let e = input_error(m.forward(&b, &opts(AttnSite::DecoderSelf, 0, 2)));
        assert!(e.contains("head 2 does not exist (2 heads"), "{e}");
        let e = input_error(m.forward(&b, &opts(AttnSite::DecoderSelf, 1, 0)));
        assert!(e.contains("layer 1 does not exist (1 layers)"), "{e}");
        let e = input_error(m.forward(&b, &opts(AttnSite::Cross, 0, 0)));
        assert!(e.contains("no cross attention"), "{e}");
        assert!(m.forward(&b, &opts(AttnSite::DecoderSelf, 0, 1)).is_ok());
    }
}

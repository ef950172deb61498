//! Train short, test long: a grammar model trained on sequences of `GRAMMAR_TRAIN_LEN`
//! characters, scored on held-out text of up to 4× that length. The English grammar
//! models are scored on the `grammar` task's text, the Chinese ones (trained by the same
//! recipe on `zh-grammar`) on that task's; the model's vocabulary says which.
//!
//! [`extrapolation`] is what `models/README.md`'s table and the page's plot both come
//! from: next-character accuracy and cross-entropy at the positions each length adds
//! (1× = positions 0..L of L-long sequences, 2× = L..2L of 2L-long ones, 4× = 2L..4L of
//! 4L-long ones), and per position over the 4L-long sequences.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::config::Arch;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::tasks::grammar::GrammarTask;
use crate::tasks::zh_grammar::ZhGrammarTask;
use crate::tasks::{Example, Split, Task};
use crate::train::eval::lm_stats_by_position;
use crate::train::recipes::GRAMMAR_TRAIN_LEN;

/// The held-out sequences per length of the published table.
pub const SEQUENCES: usize = 48;
/// The seed of the held-out draw of the published table.
pub const SEED: u64 = 11;
/// The lengths scored, as multiples of the trained length.
pub const MULTIPLES: [usize; 3] = [1, 2, 4];

/// One cell of the table: the positions a length adds, and the model's scores there.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Band {
    /// The length as a multiple of the trained one.
    pub multiple: usize,
    /// Positions [from, to) of `to`-long sequences.
    pub from: usize,
    pub to: usize,
    /// Share of next characters predicted right (argmax).
    pub accuracy: f64,
    /// Mean cross-entropy (nats).
    pub loss: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Extrapolation {
    pub train_len: usize,
    pub sequences: usize,
    pub seed: u64,
    /// One per entry of [`MULTIPLES`].
    pub bands: Vec<Band>,
    /// (4L): accuracy at each position of the 4L-long sequences.
    pub accuracy: Vec<f64>,
    /// (4L): mean cross-entropy at each position of the 4L-long sequences.
    pub loss: Vec<f64>,
}

/// The held-out text a grammar model is scored on: the task whose vocabulary it has.
enum GrammarText {
    English(GrammarTask),
    Chinese(ZhGrammarTask),
}

impl GrammarText {
    fn for_model(model: &Model, len: usize) -> Result<Self> {
        let tokens = &model.tokenizer.spec.tokens;
        let en = GrammarTask::new(len)?;
        if &en.tokenizer().spec.tokens == tokens {
            return Ok(GrammarText::English(en));
        }
        let zh = ZhGrammarTask::new(len)?;
        if &zh.tokenizer().spec.tokens == tokens {
            return Ok(GrammarText::Chinese(zh));
        }
        Err(Error::Input(
            "this model's vocabulary is neither the English nor the Chinese grammar task's".into(),
        ))
    }

    fn sequence(&self, split: Split, rng: &mut ChaCha8Rng, len: usize) -> Example {
        match self {
            GrammarText::English(t) => t.sequence(split, rng, len),
            GrammarText::Chinese(t) => t.sequence(split, rng, len),
        }
    }
}

/// Score a decoder-only grammar model on `sequences` held-out sequences per length,
/// drawn from a generator seeded with `seed` (a fresh one per length, as the table does).
pub fn extrapolation(model: &Model, sequences: usize, seed: u64) -> Result<Extrapolation> {
    let l = GRAMMAR_TRAIN_LEN;
    if model.config.arch != Arch::DecoderOnly {
        return Err(Error::Input(
            "train short, test long needs a decoder-only language model".into(),
        ));
    }
    if model.config.max_len < 4 * l {
        return Err(Error::Input(format!(
            "this model runs at most {} positions; the 4× length is {}",
            model.config.max_len,
            4 * l
        )));
    }
    if sequences == 0 || sequences > 256 {
        return Err(Error::Input(format!(
            "sequences must be from 1 to 256, got {sequences}"
        )));
    }
    let task = GrammarText::for_model(model, l)?;
    let mut bands = vec![];
    let (mut accuracy, mut loss) = (vec![], vec![]);
    for mult in MULTIPLES {
        let len = mult * l;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let examples: Vec<_> = (0..sequences)
            .map(|_| task.sequence(Split::HeldOut, &mut rng, len))
            .collect();
        let from = if mult == 1 { 0 } else { len / 2 };
        let mut ranges = vec![(from, len)];
        if mult == 4 {
            ranges.extend((0..len).map(|p| (p, p + 1)));
        }
        let stats = lm_stats_by_position(model, &examples, &ranges)?; // (loss, accuracy)
        bands.push(Band {
            multiple: mult,
            from,
            to: len,
            accuracy: stats[0].1,
            loss: stats[0].0,
        });
        if mult == 4 {
            loss = stats[1..].iter().map(|s| s.0).collect();
            accuracy = stats[1..].iter().map(|s| s.1).collect();
        }
    }
    Ok(Extrapolation {
        train_len: l,
        sequences,
        seed,
        bands,
        accuracy,
        loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ModelConfig, PosEncoding};

    fn grammar_model(pos: PosEncoding, max_len: usize) -> Model {
        let task = GrammarTask::new(GRAMMAR_TRAIN_LEN).unwrap();
        let tok = task.tokenizer().clone();
        let mut cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        cfg.pos_encoding = pos;
        cfg.max_len = max_len;
        Model::init(cfg, tok, 1)
    }

    #[test]
    fn bands_and_per_position_curve_agree_on_the_long_sequences() {
        let m = grammar_model(PosEncoding::Alibi, 4 * GRAMMAR_TRAIN_LEN);
        let r = extrapolation(&m, 2, 5).unwrap();
        let l = GRAMMAR_TRAIN_LEN;
        assert_eq!(r.accuracy.len(), 4 * l);
        assert_eq!(
            r.bands.iter().map(|b| (b.from, b.to)).collect::<Vec<_>>(),
            vec![(0, l), (l, 2 * l), (2 * l, 4 * l)]
        );
        // The 4× band is the mean of the per-position numbers over its positions (every
        // position of a grammar sequence is scored, so the means weigh alike).
        let band = &r.bands[2];
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean(&r.accuracy[2 * l..]) - band.accuracy).abs() < 1e-9);
        assert!((mean(&r.loss[2 * l..]) - band.loss).abs() < 1e-6);
        assert!(r.loss.iter().all(|x| x.is_finite() && *x > 0.0));
    }

    #[test]
    fn short_models_and_other_tasks_are_refused() {
        let short = grammar_model(PosEncoding::Sinusoidal, GRAMMAR_TRAIN_LEN);
        assert!(extrapolation(&short, 2, 0)
            .unwrap_err()
            .to_string()
            .contains("4×"));
        let long = grammar_model(PosEncoding::Sinusoidal, 4 * GRAMMAR_TRAIN_LEN);
        assert!(extrapolation(&long, 0, 0).is_err());
        // A decoder-only model of another vocabulary (the addition task's) is refused.
        let add = crate::tasks::build("add", &Default::default()).unwrap();
        let tok = add.tokenizer().clone();
        let mut cfg = ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap();
        cfg.max_len = 4 * GRAMMAR_TRAIN_LEN;
        let other = Model::init(cfg, tok, 1);
        assert!(extrapolation(&other, 2, 0)
            .unwrap_err()
            .to_string()
            .contains("vocabulary"));
    }

    fn shipped(file: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../models")
            .join(file);
        crate::checkpoint::load_file(&path).unwrap()
    }

    #[test]
    fn the_chinese_grammar_models_are_scored_on_chinese_text() {
        // The shipped Chinese models have the zh-grammar task's vocabulary, not the English
        // task's, and are measured on it.
        let zh = ZhGrammarTask::new(GRAMMAR_TRAIN_LEN).unwrap();
        let alibi = shipped("zh-grammar-alibi.safetensors");
        assert_eq!(alibi.tokenizer.spec.tokens, zh.tokenizer().spec.tokens);
        let learned = shipped("zh-grammar-learned.safetensors");
        let (a, l) = (
            extrapolation(&alibi, 8, SEED).unwrap(),
            extrapolation(&learned, 8, SEED).unwrap(),
        );
        for r in [&a, &l] {
            assert_eq!(r.train_len, GRAMMAR_TRAIN_LEN);
            assert_eq!(r.accuracy.len(), 4 * GRAMMAR_TRAIN_LEN);
            for b in &r.bands {
                assert!((0.0..=1.0).contains(&b.accuracy), "{b:?}");
                assert!(b.loss.is_finite() && b.loss > 0.0, "{b:?}");
            }
        }
        // Both learned the text at the trained length (far above a uniform guess over the
        // vocabulary); ALiBi's distance penalty carries to 4×, while the learned position
        // rows past 64 were never trained and the learned model falls behind there.
        let uniform = 1.0 / zh.tokenizer().vocab_size() as f64;
        assert!(a.bands[0].accuracy > 10.0 * uniform && l.bands[0].accuracy > 10.0 * uniform);
        assert!(a.bands[2].accuracy > l.bands[2].accuracy, "{a:?} {l:?}");
        assert!(l.bands[2].accuracy < l.bands[0].accuracy);
        assert!(l.bands[2].loss > a.bands[2].loss);
    }
}

//! Your own text: a character-level language model (decoder-only) trained on any text a
//! learner pastes or uploads, in any script.
//!
//! - **Vocabulary**: the four specials, then the text's distinct characters (Unicode scalar
//!   values, so Chinese, emoji and accents are each one token) in order of first
//!   appearance. At most [`MAX_TEXT_VOCAB`] tokens in all.
//! - **Split**: by position, once and for all: the last tenth of the text (in characters) is
//!   held out, the first nine tenths are trained on. No window crosses the boundary, so the
//!   held-out loss is measured on characters the model never saw in training.
//! - **Examples**: windows of `len` characters (the model's context, default 64; shorter when
//!   a part of the text is shorter) at a start drawn with the run's generator:
//!   `<bos> c₀ … c_{n−2}` with targets `c₀ … c_{n−1}`, every position scored, so each
//!   window teaches the model to predict every next character.
//! - **Metric**: next-character accuracy (the arg-max character equals the real next one)
//!   on held-out windows; the held-out loss is the mean cross-entropy per character in
//!   nats (bits per character = loss / ln 2, perplexity = e^loss).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{Example, Metric, Split, Task};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::tokenizer::{Tokenizer, SPECIALS};

/// The largest text, in bytes of UTF-8 (1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// The largest vocabulary of a text model, the four specials included: every step's output
/// layer and loss cost grow with it.
pub const MAX_TEXT_VOCAB: usize = 8192;
/// The shortest text, in characters: a tenth of it is held out.
pub const MIN_TEXT_CHARS: usize = 20;
/// Held out: the last `1 / HELD_OUT_DIVISOR` of the text's characters.
pub const HELD_OUT_DIVISOR: usize = 10;
/// Characters of held-out text given as the prompt of each sample the evaluation writes.
pub const SAMPLE_PROMPT_CHARS: usize = 8;

pub struct TextTask {
    /// Characters of a window, `<bos>` included (the model's context).
    seq_len: usize,
    tok: Tokenizer,
    /// (N) the text's token ids, one per character.
    ids: Vec<u32>,
    /// `ids[..split]` is trained on, `ids[split..]` held out.
    split: usize,
}

impl TextTask {
    /// The task on `text`; a clear message when the text cannot be trained on.
    pub fn new(text: &str, seq_len: usize) -> Result<Self> {
        if seq_len < 2 {
            return Err(Error::Input(format!(
                "len: a text window needs at least 2 characters, got {seq_len}"
            )));
        }
        if text.len() > MAX_TEXT_BYTES {
            return Err(Error::Input(format!(
                "text: {} bytes is more than the {MAX_TEXT_BYTES} bytes (1 MiB) a text may have; use a shorter excerpt",
                text.len()
            )));
        }
        if text.trim().is_empty() {
            return Err(Error::Input(
                "text: the text is empty; paste or upload some text to train on".into(),
            ));
        }
        let n = text.chars().count();
        if n < MIN_TEXT_CHARS {
            return Err(Error::Input(format!(
                "text: {n} characters is too short; a text needs at least {MIN_TEXT_CHARS} so that a tenth can be held out"
            )));
        }
        // The distinct characters in order of first appearance, counted before any
        // tokenizer is built (a text may name more than the limit).
        let mut seen = std::collections::HashSet::new();
        let alphabet: String = text.chars().filter(|c| seen.insert(*c)).collect();
        let distinct = seen.len();
        if distinct < 2 {
            return Err(Error::Input(
                "text: the text repeats one character; there is nothing to predict (it needs at least 2 different characters)".into(),
            ));
        }
        let max_chars = MAX_TEXT_VOCAB - SPECIALS.len();
        if distinct > max_chars {
            return Err(Error::Input(format!(
                "text: {distinct} different characters is more than the {max_chars} a text model may have; use a text with fewer different characters"
            )));
        }
        let tok = Tokenizer::char_level(&alphabet);
        let ids = tok.encode(text).ids; // (N)
        debug_assert_eq!(ids.len(), n);
        let split = n - n / HELD_OUT_DIVISOR;
        Ok(TextTask {
            seq_len,
            tok,
            ids,
            split,
        })
    }

    /// The characters of a split, as ids.
    pub fn part(&self, split: Split) -> &[u32] {
        match split {
            Split::Train => &self.ids[..self.split],
            Split::HeldOut => &self.ids[self.split..],
        }
    }

    /// Characters in the text, in each split: (train, held out).
    pub fn sizes(&self) -> (usize, usize) {
        (self.split, self.ids.len() - self.split)
    }

    /// The window of `part` starting at `start`: `<bos>` and the characters before the last
    /// as input, every character as target.
    fn window(&self, part: &[u32], start: usize) -> Example {
        let n = self.seq_len.min(part.len());
        let chars = &part[start..start + n]; // (n)
        let mut tokens = Vec::with_capacity(n);
        tokens.push(self.tok.spec.bos);
        tokens.extend_from_slice(&chars[..n - 1]); // (n)
        Example {
            src: vec![],
            tokens,
            targets: chars.to_vec(),
            label: None,
            prompt_len: 1,
        }
    }
}

impl Task for TextTask {
    fn name(&self) -> &'static str {
        "text"
    }

    fn description(&self) -> &'static str {
        "continue your own text, one character at a time"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::DecoderOnly
    }

    fn metric(&self) -> Metric {
        Metric::NextCharAccuracy
    }

    fn max_tokens(&self) -> usize {
        self.seq_len
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let part = self.part(split);
        let n = self.seq_len.min(part.len());
        let start = rng.random_range(0..=part.len() - n);
        self.window(part, start)
    }

    fn default_prompt(&self) -> &'static str {
        ""
    }

    /// `n` prompts spread evenly over the held-out text (its opening first), each `len`
    /// characters or as many as leave one to predict.
    fn prompts(&self, n: usize, len: usize) -> Vec<Vec<u32>> {
        let part = self.part(Split::HeldOut);
        let len = len.min(part.len() - 1).min(self.seq_len - 1).max(1);
        let room = part.len() - len;
        (0..n)
            .map(|i| {
                let start = room * i / n.max(1);
                part[start..start + len].to_vec()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn vocabulary_is_the_distinct_characters_in_order_of_appearance() {
        let t = TextTask::new("猫が好き。犬も好き。猫と犬と鳥。猫が好き。", 8).unwrap();
        let toks = &t.tokenizer().spec.tokens;
        assert_eq!(&toks[..4], ["<pad>", "<bos>", "<eos>", "<unk>"]);
        let chars: String = toks[4..].concat();
        assert_eq!(chars, "猫が好き。犬もと鳥");
        assert_eq!(t.sizes(), (19, 2));
    }

    #[test]
    fn windows_never_cross_the_split_and_predict_the_next_character() {
        let text: String = (0..500)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let t = TextTask::new(&text, 16).unwrap();
        assert_eq!(t.sizes(), (450, 50));
        let tok = t.tokenizer();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for split in [Split::Train, Split::HeldOut] {
            let part: String = tok.decode(t.part(split));
            for _ in 0..200 {
                let ex = t.sample(split, &mut rng);
                assert_eq!(ex.tokens.len(), 16);
                assert_eq!(ex.tokens[0], tok.spec.bos);
                assert_eq!(&ex.tokens[1..], &ex.targets[..15]);
                assert!(part.contains(&tok.decode(&ex.targets)));
            }
        }
        assert_eq!(&text[450..], tok.decode(t.part(Split::HeldOut)));
        // Sample prompts: spread over the held-out text, from its opening on.
        let p = t.prompts(3, 8);
        let held = tok.decode(t.part(Split::HeldOut));
        assert_eq!(p.len(), 3);
        assert_eq!(tok.decode(&p[0]), held[..8]);
        assert_eq!(tok.decode(&p[1]), held[14..22]);
        assert_ne!(p[1], p[2]);
    }
}

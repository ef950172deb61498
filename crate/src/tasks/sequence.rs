//! Copy, reverse and sort: the first things a transformer learns (character level,
//! decoder-only). `<bos>cab>bac<eos>`: the prompt is `<bos>`, the symbols and `>`; the
//! answer is the transformed symbols and `<eos>`.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{draw_in_split, encode_known, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;

/// The symbols a sequence is made of.
pub const SYMBOLS: &str = "abcdefghij";
/// Between the input and the answer.
pub const SEPARATOR: char = '>';

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceKind {
    Copy,
    Reverse,
    Sort,
}

impl SequenceKind {
    /// The answer for an input string.
    pub fn apply(self, input: &str) -> String {
        match self {
            SequenceKind::Copy => input.to_string(),
            SequenceKind::Reverse => input.chars().rev().collect(),
            SequenceKind::Sort => {
                let mut c: Vec<char> = input.chars().collect();
                crate::sorting::sort_by(&mut c, Ord::cmp);
                c.into_iter().collect()
            }
        }
    }
}

pub struct SequenceTask {
    kind: SequenceKind,
    /// Longest input, in symbols; inputs have 1..=max_len symbols.
    max_len: usize,
    tok: Tokenizer,
}

impl SequenceTask {
    pub fn new(kind: SequenceKind, max_len: usize) -> Result<Self> {
        if max_len == 0 {
            return Err(Error::Input(
                "len: a sequence task needs at least one symbol".into(),
            ));
        }
        let alphabet = format!("{SYMBOLS}{SEPARATOR}");
        Ok(SequenceTask {
            kind,
            max_len,
            tok: Tokenizer::char_level(&alphabet),
        })
    }

    /// The example for one input string.
    pub fn example(&self, input: &str) -> Example {
        let text = format!("{input}{SEPARATOR}{}", self.kind.apply(input));
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend(encode_known(&self.tok, &text)); // (T)
        answer_example(tokens, input.chars().count() + 2, self.tok.spec.eos)
    }
}

/// A decoder-only example whose first `prompt_len` tokens are given: the targets are the
/// next tokens (then `<eos>`) from the last prompt token on, and `<pad>` before it.
pub(crate) fn answer_example(tokens: Vec<u32>, prompt_len: usize, eos: u32) -> Example {
    let n = tokens.len();
    let targets = (0..n)
        .map(|p| {
            if p + 1 < prompt_len {
                0
            } else if p + 1 < n {
                tokens[p + 1]
            } else {
                eos
            }
        })
        .collect(); // (T)
    Example {
        src: vec![],
        tokens,
        targets,
        label: None,
        prompt_len,
    }
}

impl Task for SequenceTask {
    fn name(&self) -> &'static str {
        match self.kind {
            SequenceKind::Copy => "copy",
            SequenceKind::Reverse => "reverse",
            SequenceKind::Sort => "sort",
        }
    }

    fn description(&self) -> &'static str {
        match self.kind {
            SequenceKind::Copy => "copy a string of letters: cab>cab",
            SequenceKind::Reverse => "reverse a string of letters: cab>bac",
            SequenceKind::Sort => "sort a string of letters: cab>abc",
        }
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::DecoderOnly
    }

    fn metric(&self) -> Metric {
        Metric::ExactMatch
    }

    fn max_tokens(&self) -> usize {
        2 * self.max_len + 2
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let symbols: Vec<char> = SYMBOLS.chars().collect();
        let input = draw_in_split(self.name(), split, rng, |rng| {
            let n = rng.random_range(1..=self.max_len);
            let s: String = (0..n)
                .map(|_| symbols[rng.random_range(0..symbols.len())])
                .collect();
            (s.clone(), s)
        });
        self.example(&input)
    }

    fn default_prompt(&self) -> &'static str {
        "hgfedcba>"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn answers_follow_the_task() {
        assert_eq!(SequenceKind::Copy.apply("cab"), "cab");
        assert_eq!(SequenceKind::Reverse.apply("cab"), "bac");
        assert_eq!(SequenceKind::Sort.apply("cabca"), "aabcc");
    }

    #[test]
    fn reverse_example_scores_only_the_answer() {
        let t = SequenceTask::new(SequenceKind::Reverse, 8).unwrap();
        let ex = t.example("ab");
        let tok = t.tokenizer();
        assert_eq!(tok.decode(&ex.tokens), "<bos>ab>ba");
        assert_eq!(ex.prompt_len, 4);
        // Positions <bos>, a, b: not scored; '>' predicts b, b predicts a, a predicts <eos>.
        assert_eq!(tok.decode(&ex.targets), "<pad><pad><pad>ba<eos>");
    }

    #[test]
    fn train_and_held_out_inputs_never_overlap() {
        let t = SequenceTask::new(SequenceKind::Copy, 4).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let train: std::collections::HashSet<_> = (0..2000)
            .map(|_| t.sample(Split::Train, &mut rng).tokens)
            .collect();
        let held: std::collections::HashSet<_> = (0..300)
            .map(|_| t.sample(Split::HeldOut, &mut rng).tokens)
            .collect();
        assert!(held.len() > 50);
        assert!(train.is_disjoint(&held));
    }
}

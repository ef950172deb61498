//! A toy translation for an encoder-decoder: English number words to digits, word level.
//! `three hundred twelve thousand five` → `3 1 2 0 0 5`. The encoder reads the words; the
//! decoder starts from `<bos>` and writes one digit per step, then `<eos>`. Cross-attention
//! shows which word each digit comes from.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{encode_known, split_of, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

/// Numbers have 1..=MAX_DIGITS digits.
pub const MAX_DIGITS: u32 = 6;

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const DIGIT_WORDS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// English words for `n` (0 ≤ n < 10^6), without "and" or hyphens.
pub fn number_words(n: u32) -> Vec<&'static str> {
    fn below_hundred(r: u32, out: &mut Vec<&'static str>) {
        if r < 20 {
            out.push(ONES[r as usize]);
        } else {
            out.push(TENS[(r / 10) as usize]);
            if !r.is_multiple_of(10) {
                out.push(ONES[(r % 10) as usize]);
            }
        }
    }
    fn below_thousand(x: u32, out: &mut Vec<&'static str>) {
        if x >= 100 {
            out.push(ONES[(x / 100) as usize]);
            out.push("hundred");
        }
        if !x.is_multiple_of(100) {
            below_hundred(x % 100, out);
        }
    }
    let mut out = vec![];
    if n == 0 {
        out.push("zero");
        return out;
    }
    if n >= 1000 {
        below_thousand(n / 1000, &mut out);
        out.push("thousand");
    }
    if !n.is_multiple_of(1000) {
        below_thousand(n % 1000, &mut out);
    }
    out
}

/// The split of a number. The words for 0–99 are the vocabulary every translation is
/// built from (many occur in no other way: "zero", a lone "seventeen"), so those numbers
/// are always trained on; from 100 up, one number in ten (by the seeded hash) is held out,
/// and the held-out split tests composition: known words in unseen combinations.
pub fn number_split(n: u32) -> Split {
    if n < 100 {
        Split::Train
    } else {
        split_of("translate", &n.to_string())
    }
}

pub struct TranslateTask {
    tok: Tokenizer,
}

impl Default for TranslateTask {
    fn default() -> Self {
        Self::new()
    }
}

impl TranslateTask {
    pub fn new() -> Self {
        let words = ONES
            .iter()
            .chain(TENS.iter().filter(|w| !w.is_empty()))
            .chain(["hundred", "thousand"].iter())
            .chain(DIGIT_WORDS.iter())
            .copied();
        TranslateTask {
            tok: Tokenizer::word_level(words),
        }
    }

    /// The example for one number.
    pub fn example(&self, n: u32) -> Example {
        let src = encode_known(&self.tok, &number_words(n).join(" ")); // (S)
        let digits: Vec<String> = n.to_string().chars().map(String::from).collect();
        let out = encode_known(&self.tok, &digits.join(" "));
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend_from_slice(&out); // (T)
        let mut targets = out;
        targets.push(self.tok.spec.eos); // (T)
        Example {
            src,
            tokens,
            targets,
            label: None,
            prompt_len: 1,
        }
    }
}

impl Task for TranslateTask {
    fn name(&self) -> &'static str {
        "translate"
    }

    fn description(&self) -> &'static str {
        "translate English number words to digits: three hundred twelve → 3 1 2"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::EncoderDecoder
    }

    fn metric(&self) -> Metric {
        Metric::ExactMatch
    }

    fn max_tokens(&self) -> usize {
        // "seven hundred seventy seven thousand seven hundred seventy seven": 9 words.
        9
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let n = loop {
            let digits = rng.random_range(1..=MAX_DIGITS);
            let lo = if digits == 1 {
                0
            } else {
                10u32.pow(digits - 1)
            };
            let n = rng.random_range(lo..10u32.pow(digits));
            if number_split(n) == split {
                break n;
            }
        };
        self.example(n)
    }

    fn default_prompt(&self) -> &'static str {
        "three hundred twelve thousand five"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_words_follow_english() {
        let w = |n| number_words(n).join(" ");
        assert_eq!(w(0), "zero");
        assert_eq!(w(7), "seven");
        assert_eq!(w(15), "fifteen");
        assert_eq!(w(40), "forty");
        assert_eq!(w(312), "three hundred twelve");
        assert_eq!(w(1000), "one thousand");
        assert_eq!(w(312_005), "three hundred twelve thousand five");
        assert_eq!(w(90_210), "ninety thousand two hundred ten");
        assert_eq!(
            w(777_777),
            "seven hundred seventy seven thousand seven hundred seventy seven"
        );
    }

    #[test]
    fn small_numbers_are_always_trained_on_and_large_ones_split() {
        assert!((0..100).all(|n| number_split(n) == Split::Train));
        let held = (100..10_000)
            .filter(|&n| number_split(n) == Split::HeldOut)
            .count();
        assert!((800..1200).contains(&held), "{held}");
    }

    #[test]
    fn translate_example_reads_words_and_writes_digits() {
        let t = TranslateTask::new();
        let ex = t.example(312);
        let tok = t.tokenizer();
        assert_eq!(tok.decode(&ex.src), "three hundred twelve");
        assert_eq!(tok.decode(&ex.tokens), "<bos> 3 1 2");
        assert_eq!(tok.decode(&ex.targets), "3 1 2 <eos>");
        assert_eq!(ex.src.len(), 3);
        assert_eq!(t.example(777_777).src.len(), t.max_tokens());
    }
}

//! Multi-digit addition, character level, decoder-only: `<bos>12+345=357<eos>`.
//! The prompt runs up to `=`; the answer is the sum's digits and `<eos>`.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::sequence::answer_example;
use super::{draw_in_split, encode_known, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

/// Operands have 1..=DIGITS digits.
pub const DIGITS: u32 = 3;

pub struct AdditionTask {
    tok: Tokenizer,
}

impl Default for AdditionTask {
    fn default() -> Self {
        Self::new()
    }
}

impl AdditionTask {
    pub fn new() -> Self {
        AdditionTask {
            tok: Tokenizer::char_level("0123456789+="),
        }
    }

    /// The example for `a + b`.
    pub fn example(&self, a: u32, b: u32) -> Example {
        let prompt = format!("{a}+{b}=");
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend(encode_known(&self.tok, &format!("{prompt}{}", a + b))); // (T)
        answer_example(tokens, prompt.len() + 1, self.tok.spec.eos)
    }
}

impl Task for AdditionTask {
    fn name(&self) -> &'static str {
        "add"
    }

    fn description(&self) -> &'static str {
        "add two numbers of up to three digits: 12+345=357"
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
        // <bos> ddd + ddd = dddd
        1 + 2 * DIGITS as usize + 2 + DIGITS as usize + 1
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let (a, b) = draw_in_split(self.name(), split, rng, |rng| {
            // Digit counts first, so short operands are as common as long ones.
            let operand = |rng: &mut ChaCha8Rng| {
                let digits = rng.random_range(1..=DIGITS);
                let lo = if digits == 1 {
                    0
                } else {
                    10u32.pow(digits - 1)
                };
                rng.random_range(lo..10u32.pow(digits))
            };
            let (a, b) = (operand(rng), operand(rng));
            (format!("{a}+{b}"), (a, b))
        });
        self.example(a, b)
    }

    fn default_prompt(&self) -> &'static str {
        "358+67="
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addition_example_has_the_sum_as_answer() {
        let t = AdditionTask::new();
        let ex = t.example(12, 345);
        assert_eq!(t.tokenizer().decode(&ex.tokens), "<bos>12+345=357");
        assert_eq!(ex.prompt_len, 8);
        assert_eq!(t.tokenizer().decode(&ex.targets[7..]), "357<eos>");
        assert!(ex.targets[..7].iter().all(|&x| x == 0));
        assert_eq!(ex.tokens.len(), 11);
        assert!(t.example(999, 999).tokens.len() <= t.max_tokens());
    }
}

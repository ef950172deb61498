//! Sentiment with negation, for an encoder-only classifier (word level).
//! `<bos> the movie was not very good` → negative. `<bos>` is the first token of every
//! input: the classifier reads position 0, and bidirectional attention lets that position
//! gather the whole sentence. Negation ("not", "did not", "never") flips a clause; with
//! "but" the second clause decides, with "and" both clauses agree.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{draw_in_split, encode_known, pick, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

const NOUNS: &[&str] = &[
    "movie", "film", "plot", "acting", "music", "ending", "story", "cast",
];
const COPULA: &[&str] = &["was", "is"];
const ADVERBS: &[&str] = &["very", "really", "quite", "so"];
const GOOD: &[&str] = &["good", "great", "fun", "wonderful", "brilliant", "funny"];
const BAD: &[&str] = &["bad", "awful", "boring", "dull", "terrible", "weak"];
const LIKED: &[&str] = &["liked", "loved", "enjoyed"];
const HATED: &[&str] = &["hated", "disliked"];
const LIKE: &[&str] = &["like", "love", "enjoy"];
const HATE: &[&str] = &["hate", "dislike"];
const OTHER: &[&str] = &["the", "not", "i", "did", "never", "but", "and"];

/// Class names in label order.
pub const CLASSES: &[&str] = &["negative", "positive"];

/// One clause and whether it is positive.
fn clause(rng: &mut ChaCha8Rng) -> (Vec<&'static str>, bool) {
    let mut w = vec![];
    let negated = rng.random_bool(0.5);
    let positive_word = rng.random_bool(0.5);
    if rng.random_bool(0.5) {
        // the movie was (not) (very) good
        w.extend(["the", pick(rng, NOUNS), pick(rng, COPULA)]);
        if negated {
            w.push("not");
        }
        if rng.random_bool(0.4) {
            w.push(pick(rng, ADVERBS));
        }
        w.push(pick(rng, if positive_word { GOOD } else { BAD }));
    } else {
        // i liked the movie | i did not like the movie | i never liked the movie
        w.push("i");
        let past = if positive_word { LIKED } else { HATED };
        let base = if positive_word { LIKE } else { HATE };
        match (negated, rng.random_bool(0.5)) {
            (false, _) => w.push(pick(rng, past)),
            (true, true) => w.extend(["did", "not", pick(rng, base)]),
            (true, false) => w.extend(["never", pick(rng, past)]),
        }
        w.extend(["the", pick(rng, NOUNS)]);
    }
    (w, positive_word != negated)
}

/// A sentence and its label (1 positive, 0 negative).
pub fn sentence(rng: &mut ChaCha8Rng) -> (String, u32) {
    let (mut words, mut positive) = clause(rng);
    let r: f64 = rng.random();
    if r < 0.25 {
        // "but": the second clause decides.
        let (second, p2) = clause(rng);
        words.push("but");
        words.extend(second);
        positive = p2;
    } else if r < 0.4 {
        // "and": draw a second clause of the same polarity.
        let second = loop {
            let (c, p2) = clause(rng);
            if p2 == positive {
                break c;
            }
        };
        words.push("and");
        words.extend(second);
    }
    (words.join(" "), u32::from(positive))
}

pub struct SentimentTask {
    tok: Tokenizer,
}

impl Default for SentimentTask {
    fn default() -> Self {
        Self::new()
    }
}

impl SentimentTask {
    pub fn new() -> Self {
        let words = [
            NOUNS, COPULA, ADVERBS, GOOD, BAD, LIKED, HATED, LIKE, HATE, OTHER,
        ]
        .concat();
        SentimentTask {
            tok: Tokenizer::word_level(words),
        }
    }

    /// The example for one sentence and its label.
    pub fn example(&self, text: &str, label: u32) -> Example {
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend(encode_known(&self.tok, text)); // (T)
        Example {
            src: vec![],
            tokens,
            targets: vec![],
            label: Some(label),
            prompt_len: 0,
        }
    }
}

impl Task for SentimentTask {
    fn name(&self) -> &'static str {
        "sentiment"
    }

    fn description(&self) -> &'static str {
        "classify a movie review as positive or negative, negation included"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::EncoderOnly
    }

    fn num_classes(&self) -> usize {
        CLASSES.len()
    }

    fn class_names(&self) -> &[&'static str] {
        CLASSES
    }

    fn metric(&self) -> Metric {
        Metric::ClassAccuracy
    }

    fn max_tokens(&self) -> usize {
        // <bos> + 6 words + "but" + 6 words
        14
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let (text, label) = draw_in_split(self.name(), split, rng, |rng| {
            let (s, l) = sentence(rng);
            (s.clone(), (s, l))
        });
        self.example(&text, label)
    }

    fn default_prompt(&self) -> &'static str {
        "the movie was not good"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn negation_and_but_decide_the_label() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut seen = [0usize; 2];
        for _ in 0..3000 {
            let (s, label) = sentence(&mut rng);
            seen[label as usize] += 1;
            // Recompute the label from the words, independently of the generator.
            let last = s.rsplit(" but ").next().unwrap();
            let clause = last.split(" and ").next().unwrap();
            let words: Vec<&str> = clause.split(' ').collect();
            let good = words
                .iter()
                .any(|w| GOOD.contains(w) || LIKED.contains(w) || LIKE.contains(w));
            let negated = words.iter().any(|w| *w == "not" || *w == "never");
            assert_eq!(label == 1, good != negated, "{s}");
        }
        assert!(seen[0] > 1200 && seen[1] > 1200, "{seen:?}");
    }

    #[test]
    fn sentiment_example_starts_with_bos_and_has_a_label() {
        let t = SentimentTask::new();
        let ex = t.example("the movie was not good", 0);
        assert_eq!(
            t.tokenizer().decode(&ex.tokens),
            "<bos> the movie was not good"
        );
        assert_eq!(ex.label, Some(0));
        let longest = "i did not like the movie but i did not like the movie";
        assert_eq!(t.example(longest, 0).tokens.len(), t.max_tokens());
    }
}

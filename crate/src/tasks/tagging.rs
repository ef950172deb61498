//! Part-of-speech tagging for an encoder-only model with a token-level head (word level).
//! `the ducks watch the watches .` → `DET NOUN VERB DET NOUN PUNCT`.
//!
//! The tags are tokens of the same vocabulary (`DET`, `ADJ`, `NOUN`, `VERB`, `ADV`,
//! `PUNCT`), so the LM head answers them like any other token: the target of each input
//! position is its tag, and accuracy is the share of positions whose arg-max over the whole
//! vocabulary is the right tag. Many words are both nouns and verbs (duck, watch, fish,
//! ring, park, train, fly): only the context tells them apart, which the model must learn
//! to read with attention.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{draw_in_split, encode_known, pick, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

/// The tag tokens.
pub const TAGS: &[&str] = &["DET", "ADJ", "NOUN", "VERB", "ADV", "PUNCT"];

const DET_SG: &[&str] = &["the", "a"];
const DET_PL: &[&str] = &["the", "some", "two"];
const ADJ: &[&str] = &["big", "red", "small", "noisy", "little"];
/// (singular, plural)
const NOUNS: &[(&str, &str)] = &[
    ("dog", "dogs"),
    ("cat", "cats"),
    ("man", "men"),
    ("duck", "ducks"),
    ("watch", "watches"),
    ("fish", "fish"),
    ("ring", "rings"),
    ("park", "parks"),
    ("train", "trains"),
    ("fly", "flies"),
];
/// (third person singular, plural) transitive verbs.
const VT: &[(&str, &str)] = &[
    ("sees", "see"),
    ("watches", "watch"),
    ("likes", "like"),
    ("trains", "train"),
    ("parks", "park"),
    ("rings", "ring"),
];
/// (third person singular, plural) intransitive verbs.
const VI: &[(&str, &str)] = &[
    ("ducks", "duck"),
    ("flies", "fly"),
    ("fishes", "fish"),
    ("swims", "swim"),
    ("sleeps", "sleep"),
];
const ADV: &[&str] = &["quickly", "loudly", "today", "again"];

/// A tagged sentence: (word, tag) pairs.
pub fn tagged_sentence(rng: &mut ChaCha8Rng) -> Vec<(&'static str, &'static str)> {
    let mut out = vec![];
    let noun_phrase = |rng: &mut ChaCha8Rng, out: &mut Vec<_>| {
        let plural = rng.random_bool(0.5);
        out.push((pick(rng, if plural { DET_PL } else { DET_SG }), "DET"));
        if rng.random_bool(0.3) {
            out.push((pick(rng, ADJ), "ADJ"));
        }
        let (sg, pl) = pick(rng, NOUNS);
        out.push((if plural { pl } else { sg }, "NOUN"));
        plural
    };
    let plural = noun_phrase(rng, &mut out);
    if rng.random_bool(0.6) {
        let (sg, pl) = pick(rng, VT);
        out.push((if plural { pl } else { sg }, "VERB"));
        noun_phrase(rng, &mut out);
    } else {
        let (sg, pl) = pick(rng, VI);
        out.push((if plural { pl } else { sg }, "VERB"));
    }
    if rng.random_bool(0.3) {
        out.push((pick(rng, ADV), "ADV"));
    }
    out.push((".", "PUNCT"));
    out
}

pub struct TaggingTask {
    tok: Tokenizer,
}

impl Default for TaggingTask {
    fn default() -> Self {
        Self::new()
    }
}

impl TaggingTask {
    pub fn new() -> Self {
        let mut words: Vec<&str> = vec![];
        words.extend(DET_SG.iter().chain(DET_PL).chain(ADJ).chain(ADV));
        for &(a, b) in NOUNS.iter().chain(VT).chain(VI) {
            words.extend([a, b]);
        }
        words.push(".");
        words.extend(TAGS);
        TaggingTask {
            tok: Tokenizer::word_level(words),
        }
    }

    /// The example for one tagged sentence.
    pub fn example(&self, tagged: &[(&str, &str)]) -> Example {
        let words: Vec<&str> = tagged.iter().map(|(w, _)| *w).collect();
        let tags: Vec<&str> = tagged.iter().map(|(_, t)| *t).collect();
        Example {
            src: vec![],
            tokens: encode_known(&self.tok, &words.join(" ")), // (T)
            targets: encode_known(&self.tok, &tags.join(" ")), // (T)
            label: None,
            prompt_len: 0,
        }
    }
}

impl Task for TaggingTask {
    fn name(&self) -> &'static str {
        "tagging"
    }

    fn description(&self) -> &'static str {
        "tag each word with its part of speech; duck, watch, fish … are nouns or verbs by context"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::EncoderOnly
    }

    fn metric(&self) -> Metric {
        Metric::TokenAccuracy
    }

    fn max_tokens(&self) -> usize {
        // DET ADJ NOUN VERB DET ADJ NOUN ADV PUNCT
        9
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let tagged = draw_in_split(self.name(), split, rng, |rng| {
            let t = tagged_sentence(rng);
            let key: Vec<&str> = t.iter().map(|(w, _)| *w).collect();
            (key.join(" "), t)
        });
        self.example(&tagged)
    }

    fn default_prompt(&self) -> &'static str {
        "the ducks watch the watches quickly ."
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn tagging_example_pairs_each_word_with_its_tag() {
        let t = TaggingTask::new();
        let ex = t.example(&[
            ("the", "DET"),
            ("ducks", "NOUN"),
            ("watch", "VERB"),
            ("the", "DET"),
            ("watches", "NOUN"),
            (".", "PUNCT"),
        ]);
        let tok = t.tokenizer();
        assert_eq!(tok.decode(&ex.tokens), "the ducks watch the watches .");
        assert_eq!(tok.decode(&ex.targets), "DET NOUN VERB DET NOUN PUNCT");
    }

    #[test]
    fn ambiguous_words_appear_with_both_tags() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut tags_of_watch = std::collections::HashSet::new();
        for _ in 0..2000 {
            for (w, tag) in tagged_sentence(&mut rng) {
                if w == "watch" || w == "watches" {
                    tags_of_watch.insert(tag);
                }
            }
        }
        assert_eq!(tags_of_watch.len(), 2, "{tags_of_watch:?}");
    }
}

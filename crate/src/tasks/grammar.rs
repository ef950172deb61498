//! A small probabilistic English grammar for character-level language modelling
//! (decoder-only), with a recogniser that checks what a model writes.
//!
//! ```text
//! S          → NP[n, rel] VP[n] "."
//! NP[n, rel] → Det[n] (Adj) N[n] ("that" VP[n])      relative clause on subjects only
//! VP[n]      → Vt[n] NP[any, no rel] | Vi[n] (Adv)
//! ```
//!
//! `n` is singular or plural and the verb agrees with its subject, also across a relative
//! clause ("the dog that chases the cats runs."). Word order carries the meaning:
//! "the cat chases the dog." and "the dog chases the cat." are both sentences, about
//! different chases. A training sequence is `<bos>` followed by sentences separated by one
//! space, cut to the sequence length; every position is scored.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{encode_known, pick, split_of, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;

const DET_SG: &[&str] = &["the", "a"];
const DET_PL: &[&str] = &["the", "some"];
const ADJ: &[&str] = &["big", "small", "lazy", "happy", "quick", "sleepy"];
const NOUN_SG: &[&str] = &["cat", "dog", "bird", "fox", "mouse", "girl", "boy", "horse"];
const NOUN_PL: &[&str] = &[
    "cats", "dogs", "birds", "foxes", "mice", "girls", "boys", "horses",
];
const VT_SG: &[&str] = &["chases", "sees", "likes", "follows", "bites", "watches"];
const VT_PL: &[&str] = &["chase", "see", "like", "follow", "bite", "watch"];
const VI_SG: &[&str] = &["sleeps", "runs", "sings", "jumps"];
const VI_PL: &[&str] = &["sleep", "run", "sing", "jump"];
const ADV: &[&str] = &["quickly", "slowly", "loudly", "today"];
const THAT: &str = "that";

/// Probability that a noun phrase has an adjective.
const P_ADJ: f64 = 0.3;
/// Probability that a subject has a relative clause.
const P_REL: f64 = 0.15;
/// Probability that a verb phrase is transitive.
const P_VT: f64 = 0.65;
/// Probability that an intransitive verb takes an adverb.
const P_ADV: f64 = 0.4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Number {
    Sg,
    Pl,
}

pub struct GrammarTask {
    /// Characters per training sequence, `<bos>` included.
    seq_len: usize,
    tok: Tokenizer,
}

impl GrammarTask {
    pub fn new(seq_len: usize) -> Result<Self> {
        if seq_len < 2 {
            return Err(Error::Input(format!(
                "len: a grammar sequence needs at least 2 characters, got {seq_len}"
            )));
        }
        let mut chars: Vec<char> = [
            DET_SG,
            DET_PL,
            ADJ,
            NOUN_SG,
            NOUN_PL,
            VT_SG,
            VT_PL,
            VI_SG,
            VI_PL,
            ADV,
            &[THAT],
        ]
        .iter()
        .flat_map(|ws| ws.iter().flat_map(|w| w.chars()))
        .collect();
        crate::sorting::sort_by(&mut chars, Ord::cmp);
        chars.dedup();
        let alphabet: String = [' ', '.'].into_iter().chain(chars).collect();
        Ok(GrammarTask {
            seq_len,
            tok: Tokenizer::char_level(&alphabet),
        })
    }

    /// Characters per training sequence, `<bos>` included.
    pub fn seq_len(&self) -> usize {
        self.seq_len
    }

    /// One sentence drawn from the grammar, ending in ".".
    pub fn sentence(rng: &mut ChaCha8Rng) -> String {
        let mut words: Vec<&str> = vec![];
        let n = number(rng);
        noun_phrase(rng, n, true, &mut words);
        verb_phrase(rng, n, &mut words);
        format!("{}.", words.join(" "))
    }

    /// One sentence of the split.
    pub fn sentence_in(&self, split: Split, rng: &mut ChaCha8Rng) -> String {
        super::draw_in_split(self.name(), split, rng, |rng| {
            let s = Self::sentence(rng);
            (s.clone(), s)
        })
    }

    /// `<bos>` and sentences of the split, `len` tokens in all, with next-character targets.
    pub fn sequence(&self, split: Split, rng: &mut ChaCha8Rng, len: usize) -> Example {
        let mut text = String::new();
        while text.len() < len {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&self.sentence_in(split, rng));
        }
        let ids = encode_known(&self.tok, &text[..len]); // (len)
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend_from_slice(&ids[..len - 1]); // (T)
        Example {
            src: vec![],
            tokens,
            targets: ids,
            label: None,
            prompt_len: 1,
        }
    }
}

fn number(rng: &mut ChaCha8Rng) -> Number {
    if rng.random_bool(0.5) {
        Number::Sg
    } else {
        Number::Pl
    }
}

fn noun_phrase(rng: &mut ChaCha8Rng, n: Number, relative: bool, out: &mut Vec<&'static str>) {
    let (dets, nouns) = match n {
        Number::Sg => (DET_SG, NOUN_SG),
        Number::Pl => (DET_PL, NOUN_PL),
    };
    out.push(pick(rng, dets));
    if rng.random_bool(P_ADJ) {
        out.push(pick(rng, ADJ));
    }
    out.push(pick(rng, nouns));
    if relative && rng.random_bool(P_REL) {
        out.push(THAT);
        verb_phrase(rng, n, out);
    }
}

fn verb_phrase(rng: &mut ChaCha8Rng, n: Number, out: &mut Vec<&'static str>) {
    let (vt, vi) = match n {
        Number::Sg => (VT_SG, VI_SG),
        Number::Pl => (VT_PL, VI_PL),
    };
    if rng.random_bool(P_VT) {
        out.push(pick(rng, vt));
        let object = number(rng);
        noun_phrase(rng, object, false, out);
    } else {
        out.push(pick(rng, vi));
        if rng.random_bool(P_ADV) {
            out.push(pick(rng, ADV));
        }
    }
}

/// Does the grammar generate this sentence? It must be words separated by single spaces,
/// ending in "." with no space before it.
pub fn accepts(sentence: &str) -> bool {
    let Some(body) = sentence.strip_suffix('.') else {
        return false;
    };
    let words: Vec<&str> = body.split(' ').collect();
    if words.iter().any(|w| w.is_empty()) {
        return false;
    }
    let Some((i, n)) = parse_noun_phrase(&words, 0, true) else {
        return false;
    };
    parse_verb_phrase(&words, i, n) == Some(words.len())
}

/// Parse a noun phrase at `i`; the next index and its number.
fn parse_noun_phrase(w: &[&str], mut i: usize, relative: bool) -> Option<(usize, Number)> {
    let det = *w.get(i)?;
    let det_ok = |n: Number| match n {
        Number::Sg => DET_SG.contains(&det),
        Number::Pl => DET_PL.contains(&det),
    };
    if !det_ok(Number::Sg) && !det_ok(Number::Pl) {
        return None;
    }
    i += 1;
    if ADJ.contains(w.get(i)?) {
        i += 1;
    }
    let noun = *w.get(i)?;
    let n = if NOUN_SG.contains(&noun) {
        Number::Sg
    } else if NOUN_PL.contains(&noun) {
        Number::Pl
    } else {
        return None;
    };
    if !det_ok(n) {
        return None;
    }
    i += 1;
    if relative && w.get(i) == Some(&THAT) {
        i = parse_verb_phrase(w, i + 1, n)?;
    }
    Some((i, n))
}

/// Parse a verb phrase agreeing with `n` at `i`; the next index.
fn parse_verb_phrase(w: &[&str], i: usize, n: Number) -> Option<usize> {
    let verb = *w.get(i)?;
    let (vt, vi) = match n {
        Number::Sg => (VT_SG, VI_SG),
        Number::Pl => (VT_PL, VI_PL),
    };
    if vt.contains(&verb) {
        parse_noun_phrase(w, i + 1, false).map(|(j, _)| j)
    } else if vi.contains(&verb) {
        Some(if w.get(i + 1).is_some_and(|a| ADV.contains(a)) {
            i + 2
        } else {
            i + 1
        })
    } else {
        None
    }
}

impl Task for GrammarTask {
    fn name(&self) -> &'static str {
        "grammar"
    }

    fn description(&self) -> &'static str {
        "write English sentences of a small grammar, one character at a time"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::DecoderOnly
    }

    fn metric(&self) -> Metric {
        Metric::Grammatical
    }

    fn max_tokens(&self) -> usize {
        self.seq_len
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        self.sequence(split, rng, self.seq_len)
    }

    fn accepts(&self, sentence: &str) -> Option<bool> {
        Some(accepts(sentence))
    }

    fn default_prompt(&self) -> &'static str {
        "the cat"
    }
}

/// Is this sentence held out? (Its split as a grammar sentence.)
pub fn is_held_out(sentence: &str) -> bool {
    split_of("grammar", sentence) == Split::HeldOut
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn recogniser_accepts_every_generated_sentence() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..2000 {
            let s = GrammarTask::sentence(&mut rng);
            assert!(accepts(&s), "{s}");
        }
    }

    #[test]
    fn word_order_changes_meaning_but_both_orders_parse() {
        assert!(accepts("the cat chases the dog."));
        assert!(accepts("the dog chases the cat."));
        assert!(accepts("the dog that chases the cats runs quickly."));
        assert!(accepts("some happy mice sleep."));
    }

    #[test]
    fn recogniser_rejects_broken_sentences() {
        for bad in [
            "the cat chase the dog.",            // agreement
            "the dogs that chases the cat run.", // agreement inside the clause
            "cat the chases the dog.",           // order
            "the cat chases.",                   // missing object
            "a mice sleep.",                     // determiner number
            "the cat sleeps",                    // no full stop
            "the cat  sleeps.",                  // double space
            "the cat sleeps .",                  // space before the stop
            "the cat sleeps quickly slowly.",    // two adverbs
            "the cat chases the dog that runs.", // relative clause on an object
            "the cat runs the dog.",             // intransitive with an object
            "",
        ] {
            assert!(!accepts(bad), "accepted {bad:?}");
        }
    }

    #[test]
    fn sequence_starts_with_bos_and_targets_are_the_next_characters() {
        let t = GrammarTask::new(40).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let ex = t.sample(Split::Train, &mut rng);
        assert_eq!(ex.tokens.len(), 40);
        assert_eq!(ex.tokens[0], t.tokenizer().spec.bos);
        assert_eq!(ex.tokens[1..], ex.targets[..39]);
        let text = t.tokenizer().decode(&ex.targets);
        let first = text.split('.').next().unwrap();
        assert!(accepts(&format!("{first}.")), "{text}");
    }

    #[test]
    fn held_out_sequences_use_held_out_sentences_only() {
        let t = GrammarTask::new(120).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..20 {
            let ex = t.sample(Split::HeldOut, &mut rng);
            let text = t.tokenizer().decode(&ex.targets);
            // Every complete sentence of the sequence is held out.
            let mut complete: Vec<&str> = text.split_inclusive('.').collect();
            complete.pop_if(|s| !s.ends_with('.'));
            for s in complete {
                assert!(is_held_out(s.trim_start()), "{s:?} in {text:?}");
            }
        }
    }
}

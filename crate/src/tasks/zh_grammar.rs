//! A small Chinese grammar for character-level language modelling (decoder-only), with a
//! recogniser that checks what a model writes. Every Chinese character is one token.
//!
//! ```text
//! S      → Clause ("，" Clause) "。"
//! Clause → NP VP
//! NP     → (Poss 的) (Quant) (Adj 的) (Small) N        Quant → Dem (Num) M(N) | Num M(N)
//! VP     → (也) (都) ((很) (Neg) | 在) V
//! V      → Vt (了) NP | Vi (了)
//! ```
//!
//! The rules a sample must keep:
//! - the measure word agrees with its noun across any 的-phrase: 一只可爱的猫, 两条狗,
//!   三匹马 (never 一条猫); counting uses 两, not 二;
//! - 都 ("all") needs a subject counted with 两 or 三 (两只猫都睡觉);
//! - 很 goes only with the stative verbs 喜欢 and 怕;
//! - negation: 不 with any verb, 没 only with action verbs; the aspect particle 了 (after
//!   an action verb) never appears in a negated clause (猫没追狗, never 猫没追了狗);
//! - 在 before an action verb says it is going on (猫在睡觉, 两条狗都在追那只猫); it takes
//!   neither 了 nor 很, and this grammar does not negate it;
//! - 吃 ("eat") takes 鱼 as its object, and 马 and 牛 (grass eaters) are not its subject:
//!   猫吃鱼, 孩子在吃一条鱼, never 猫吃狗 or 牛吃鱼;
//! - two clauses may be joined by "，" into one sentence: 狗追猫，猫跑了。
//!
//! Word order carries the meaning: 猫追狗 and 狗追猫 are both sentences, about different
//! chases. A training sequence is `<bos>` followed by sentences written one after another
//! (Chinese puts no space between them), cut to the sequence length; every position is
//! scored.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{encode_known, pick, split_of, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;

/// Nouns, each with the measure word that counts it.
const NOUNS: &[(&str, &str)] = &[
    ("猫", "只"),
    ("狗", "条"),
    ("鸟", "只"),
    ("马", "匹"),
    ("鱼", "条"),
    ("牛", "头"),
    ("孩子", "个"),
    ("老师", "位"),
];
/// Demonstratives: this, that.
const DEM: &[&str] = &["这", "那"];
/// Numbers that count (两, not 二, before a measure word).
const NUM: &[&str] = &["一", "两", "三"];
/// Numbers of more than one: a subject counted with one of these may take 都.
const PLURAL: &[&str] = &["两", "三"];
/// Possessors, written before 的.
const POSS: &[&str] = &["我", "他", "老师"];
/// Adjectives that take 的.
const ADJ_DE: &[&str] = &["可爱", "聪明", "黑色", "白色"];
/// One-character adjectives written straight before the noun.
const SMALL: &[&str] = &["小", "大"];
const DE: &str = "的";
const ALSO: &str = "也";
const ALL: &str = "都";
const VERY: &str = "很";
const NOT: &str = "不";
const NOT_PAST: &str = "没";
const PERFECTIVE: &str = "了";
/// The progressive 在 (going on now), before an action verb.
const PROGRESSIVE: &str = "在";
/// The full stop that ends every sentence.
pub const STOP: char = '。';
/// The comma that joins two clauses of one sentence.
pub const COMMA: char = '，';

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Verb {
    text: &'static str,
    transitive: bool,
    /// Action verbs take 没, 了 and 在; stative ones take 很 instead.
    action: bool,
    /// The nouns its object may be (empty: any noun).
    objects: &'static [&'static str],
    /// Nouns that are never its subject.
    not_subjects: &'static [&'static str],
}

const fn verb(text: &'static str, transitive: bool, action: bool) -> Verb {
    Verb {
        text,
        transitive,
        action,
        objects: &[],
        not_subjects: &[],
    }
}

impl Verb {
    fn takes_subject(&self, noun: &str) -> bool {
        !self.not_subjects.contains(&noun)
    }

    fn takes_object(&self, noun: &str) -> bool {
        self.objects.is_empty() || self.objects.contains(&noun)
    }
}

const VERBS: &[Verb] = &[
    verb("追", true, true),
    verb("看", true, true),
    verb("咬", true, true),
    verb("找", true, true),
    verb("喜欢", true, false),
    verb("怕", true, false),
    Verb {
        objects: &["鱼"],
        not_subjects: &["马", "牛"],
        ..verb("吃", true, true)
    },
    verb("跑", false, true),
    verb("叫", false, true),
    verb("睡觉", false, true),
];

/// Probability that a noun phrase has a possessor (我的 …).
const P_POSS: f64 = 0.12;
/// Probability that a noun phrase is counted or pointed at (一只, 这两条, 那匹).
const P_QUANT: f64 = 0.5;
/// Probability of an adjective with 的.
const P_ADJ_DE: f64 = 0.25;
/// Probability of 小 or 大 before the noun.
const P_SMALL: f64 = 0.2;
/// Probability of 也.
const P_ALSO: f64 = 0.12;
/// Probability of 都 after a subject of more than one.
const P_ALL: f64 = 0.5;
/// Probability of 很 before a stative verb.
const P_VERY: f64 = 0.4;
/// Probability that a clause is negated.
const P_NEG: f64 = 0.35;
/// Probability of 了 after an action verb of a clause that is not negated.
const P_PERFECTIVE: f64 = 0.4;
/// Probability of 在 before an action verb of a clause that is not negated.
const P_PROGRESSIVE: f64 = 0.2;
/// Probability that a sentence has a second clause after "，".
const P_COMMA: f64 = 0.15;

pub struct ZhGrammarTask {
    /// Characters per training sequence, `<bos>` included.
    seq_len: usize,
    tok: Tokenizer,
}

impl ZhGrammarTask {
    pub fn new(seq_len: usize) -> Result<Self> {
        if seq_len < 2 {
            return Err(Error::Input(format!(
                "len: a grammar sequence needs at least 2 characters, got {seq_len}"
            )));
        }
        let mut chars: Vec<char> = NOUNS
            .iter()
            .flat_map(|(n, m)| [*n, *m])
            .chain(DEM.iter().copied())
            .chain(NUM.iter().copied())
            .chain(POSS.iter().copied())
            .chain(ADJ_DE.iter().copied())
            .chain(SMALL.iter().copied())
            .chain(VERBS.iter().map(|v| v.text))
            .chain([DE, ALSO, ALL, VERY, NOT, NOT_PAST, PERFECTIVE, PROGRESSIVE])
            .flat_map(str::chars)
            .collect();
        crate::sorting::sort_by(&mut chars, Ord::cmp);
        chars.dedup();
        let alphabet: String = [STOP, COMMA].into_iter().chain(chars).collect();
        Ok(ZhGrammarTask {
            seq_len,
            tok: Tokenizer::char_level(&alphabet),
        })
    }

    /// One sentence drawn from the grammar, ending in "。".
    pub fn sentence(rng: &mut ChaCha8Rng) -> String {
        let mut out = String::new();
        clause(rng, &mut out);
        if rng.random_bool(P_COMMA) {
            out.push(COMMA);
            clause(rng, &mut out);
        }
        out.push(STOP);
        out
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
        while text.chars().count() < len {
            text.push_str(&self.sentence_in(split, rng));
        }
        let cut: String = text.chars().take(len).collect();
        let ids = encode_known(&self.tok, &cut); // (len)
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

/// A subject and what it does.
fn clause(rng: &mut ChaCha8Rng, out: &mut String) {
    let (noun, _) = pick(rng, NOUNS);
    let counted = noun_phrase(rng, noun, out);
    verb_phrase(rng, noun, counted, out);
}

/// A noun phrase for `noun`; returns whether it counts more than one (两只猫, 这三条鱼).
fn noun_phrase(rng: &mut ChaCha8Rng, noun: &str, out: &mut String) -> bool {
    let measure = NOUNS.iter().find(|(n, _)| *n == noun).unwrap().1;
    if rng.random_bool(P_POSS) {
        out.push_str(pick(rng, POSS));
        out.push_str(DE);
    }
    let mut plural = false;
    if rng.random_bool(P_QUANT) {
        let dem = rng.random_bool(0.5);
        if dem {
            out.push_str(pick(rng, DEM));
        }
        if !dem || rng.random_bool(0.5) {
            let n = pick(rng, NUM);
            plural = PLURAL.contains(&n);
            out.push_str(n);
        }
        out.push_str(measure);
    }
    if rng.random_bool(P_ADJ_DE) {
        out.push_str(pick(rng, ADJ_DE));
        out.push_str(DE);
    }
    if rng.random_bool(P_SMALL) {
        out.push_str(pick(rng, SMALL));
    }
    out.push_str(noun);
    plural
}

fn verb_phrase(rng: &mut ChaCha8Rng, subject: &str, plural_subject: bool, out: &mut String) {
    let verbs: Vec<Verb> = VERBS
        .iter()
        .filter(|v| v.takes_subject(subject))
        .copied()
        .collect();
    let v = pick(rng, &verbs);
    if rng.random_bool(P_ALSO) {
        out.push_str(ALSO);
    }
    if plural_subject && rng.random_bool(P_ALL) {
        out.push_str(ALL);
    }
    if !v.action && rng.random_bool(P_VERY) {
        out.push_str(VERY);
    }
    let negated = rng.random_bool(P_NEG);
    let progressive = v.action && !negated && rng.random_bool(P_PROGRESSIVE);
    if negated {
        out.push_str(if v.action && rng.random_bool(0.5) {
            NOT_PAST
        } else {
            NOT
        });
    }
    if progressive {
        out.push_str(PROGRESSIVE);
    }
    out.push_str(v.text);
    if v.action && !negated && !progressive && rng.random_bool(P_PERFECTIVE) {
        out.push_str(PERFECTIVE);
    }
    if v.transitive {
        let objects: Vec<&str> = NOUNS
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| v.takes_object(n))
            .collect();
        let object = pick(rng, &objects);
        noun_phrase(rng, object, out);
    }
}

/// End offsets (in bytes) of the words of `list` that start at byte `i` of `s`.
fn words_at(s: &str, i: usize, list: &[&'static str]) -> Vec<(usize, &'static str)> {
    list.iter()
        .filter(|w| s[i..].starts_with(**w))
        .map(|w| (i + w.len(), *w))
        .collect()
}

/// `i` itself (the part left out) and the end of every way `part` can be read at `i`.
fn optional(i: usize, ends: Vec<usize>) -> Vec<usize> {
    let mut v = vec![i];
    v.extend(ends);
    v
}

/// Every way a noun phrase can start at byte `i`: (end, counts more than one, noun).
fn parse_noun_phrase(s: &str, i: usize) -> Vec<(usize, bool, &'static str)> {
    let mut out = vec![];
    let de = |j: usize| s[j..].starts_with(DE).then(|| j + DE.len());
    let poss: Vec<usize> = words_at(s, i, POSS)
        .into_iter()
        .filter_map(|(j, _)| de(j))
        .collect();
    for a in optional(i, poss) {
        // (end, measure word, counts more than one); None: not counted.
        let mut quants: Vec<(usize, Option<&str>, bool)> = vec![(a, None, false)];
        let mut starts = vec![(a, false)];
        starts.extend(words_at(s, a, DEM).into_iter().map(|(j, _)| (j, true)));
        for (b, had_dem) in starts {
            let mut nums: Vec<(usize, bool)> = words_at(s, b, NUM)
                .into_iter()
                .map(|(j, n)| (j, PLURAL.contains(&n)))
                .collect();
            if had_dem {
                nums.push((b, false)); // 这只猫: a demonstrative may stand without a number
            }
            for (c, plural) in nums {
                for (_, m) in NOUNS {
                    if s[c..].starts_with(m) {
                        quants.push((c + m.len(), Some(m), plural));
                    }
                }
            }
        }
        for (b, measure, plural) in quants {
            let adj: Vec<usize> = words_at(s, b, ADJ_DE)
                .into_iter()
                .filter_map(|(j, _)| de(j))
                .collect();
            for c in optional(b, adj) {
                let small = words_at(s, c, SMALL).into_iter().map(|(j, _)| j).collect();
                for d in optional(c, small) {
                    for (noun, m) in NOUNS {
                        if s[d..].starts_with(noun) && measure.is_none_or(|x| x == *m) {
                            out.push((d + noun.len(), plural, *noun));
                        }
                    }
                }
            }
        }
    }
    out
}

/// Every end of a verb phrase starting at byte `i` after `subject`, a noun phrase that
/// does (or does not) count more than one.
fn parse_verb_phrase(s: &str, i: usize, subject: &str, plural_subject: bool) -> Vec<usize> {
    let mut out = vec![];
    let also = optional(
        i,
        words_at(s, i, &[ALSO]).into_iter().map(|x| x.0).collect(),
    );
    for a in also {
        let all = if plural_subject {
            words_at(s, a, &[ALL]).into_iter().map(|x| x.0).collect()
        } else {
            vec![]
        };
        for b in optional(a, all) {
            // (end, 很 written)
            let mut very = vec![(b, false)];
            very.extend(words_at(s, b, &[VERY]).into_iter().map(|x| (x.0, true)));
            for (c, has_very) in very {
                // (end, negation word or 在)
                let mut neg = vec![(c, None)];
                neg.extend(
                    words_at(s, c, &[NOT, NOT_PAST])
                        .into_iter()
                        .map(|(j, w)| (j, Some(w))),
                );
                if !has_very {
                    neg.extend(
                        words_at(s, c, &[PROGRESSIVE])
                            .into_iter()
                            .map(|(j, w)| (j, Some(w))),
                    );
                }
                for (d, marker) in neg {
                    for v in VERBS {
                        if !s[d..].starts_with(v.text)
                            || !v.takes_subject(subject)
                            || (has_very && v.action)
                            || (marker == Some(NOT_PAST) && !v.action)
                            || (marker == Some(PROGRESSIVE) && !v.action)
                        {
                            continue;
                        }
                        let e = d + v.text.len();
                        let mut after = vec![e];
                        if v.action && marker.is_none() && s[e..].starts_with(PERFECTIVE) {
                            after.push(e + PERFECTIVE.len());
                        }
                        for f in after {
                            if v.transitive {
                                out.extend(
                                    parse_noun_phrase(s, f)
                                        .into_iter()
                                        .filter(|x| v.takes_object(x.2))
                                        .map(|x| x.0),
                                );
                            } else {
                                out.push(f);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Does the grammar generate this clause (a subject and what it does, no punctuation)?
fn accepts_clause(clause: &str) -> bool {
    parse_noun_phrase(clause, 0)
        .into_iter()
        .any(|(i, plural, noun)| parse_verb_phrase(clause, i, noun, plural).contains(&clause.len()))
}

/// Does the grammar generate this sentence? It must end in "。" and contain nothing else
/// (no spaces): one clause, or two joined by "，".
pub fn accepts(sentence: &str) -> bool {
    let Some(body) = sentence.strip_suffix(STOP) else {
        return false;
    };
    let clauses: Vec<&str> = body.split(COMMA).collect();
    clauses.len() <= 2 && clauses.into_iter().all(accepts_clause)
}

impl Task for ZhGrammarTask {
    fn name(&self) -> &'static str {
        "zh-grammar"
    }

    fn description(&self) -> &'static str {
        "write Chinese sentences of a small grammar, one character at a time"
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

    fn sentence_end(&self) -> char {
        STOP
    }

    fn default_prompt(&self) -> &'static str {
        "这只猫"
    }
}

/// Is this sentence held out? (Its split as a sentence of this grammar.)
pub fn is_held_out(sentence: &str) -> bool {
    split_of("zh-grammar", sentence) == Split::HeldOut
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn recogniser_accepts_every_generated_sentence() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..3000 {
            let s = ZhGrammarTask::sentence(&mut rng);
            assert!(accepts(&s), "{s}");
        }
    }

    #[test]
    fn the_generator_writes_the_new_words_with_their_rules() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let drawn: Vec<String> = (0..5000)
            .map(|_| ZhGrammarTask::sentence(&mut rng))
            .collect();
        let has = |w: &str| drawn.iter().any(|s| s.contains(w));
        for w in ["吃", "在", "，", "都在"] {
            assert!(has(w), "never wrote {w}");
        }
        for s in &drawn {
            for bad in ["在吃了", "在喜欢", "在怕", "不在", "没在", "马吃", "牛吃"]
            {
                assert!(!s.contains(bad), "{s}");
            }
            // The object of 吃 ends its clause.
            for (i, _) in s.match_indices("吃") {
                let rest = s[i..].split([COMMA, STOP]).next().unwrap();
                assert!(rest.ends_with("鱼"), "{s}");
            }
        }
    }

    #[test]
    fn word_order_changes_meaning_but_both_orders_parse() {
        for good in [
            "猫追狗。",
            "狗追猫。",
            "一只猫追两条狗。",
            "两条狗都没追那只猫。",
            "这只可爱的小猫很喜欢老师的狗。",
            "我的三匹马都睡觉了。",
            "孩子也不怕那头大牛。",
            "他的那两位聪明的老师看了一条鱼。",
            "鸟叫。",
            // Hand-checked sentences with 吃, 在 and "，".
            "猫吃鱼。",
            "孩子在吃一条鱼。",
            "两只猫都在吃鱼。",
            "老师的狗在睡觉。",
            "那匹马也在跑。",
            "狗追猫，猫跑了。",
            "这只猫吃了两条小鱼，那条狗也很怕老师。",
        ] {
            assert!(accepts(good), "rejected {good:?}");
        }
    }

    #[test]
    fn recogniser_rejects_broken_sentences() {
        for bad in [
            "一条猫追狗。",     // measure word of another noun
            "一只可爱的狗跑。", // agreement across the 的-phrase
            "二只猫跑。",       // 二 does not count
            "猫狗追。",         // order
            "猫追。",           // missing object
            "猫跑狗。",         // intransitive with an object
            "一只猫都跑。",     // 都 with a subject of one
            "猫都跑。",         // 都 with an uncounted subject
            "猫很追狗。",       // 很 with an action verb
            "猫没喜欢狗。",     // 没 with a stative verb
            "猫没追了狗。",     // 了 in a negated clause
            "猫不跑了。",       // 了 in a negated clause
            "猫喜欢了狗。",     // 了 after a stative verb
            "猫追狗",           // no full stop
            "猫 追狗。",        // a space
            "猫追狗。。",       // two stops
            "只猫跑。",         // a measure word alone
            "这只的猫跑。",     // 的 without an adjective
            "猫吃狗。",         // 吃 takes 鱼
            "牛吃鱼。",         // a grass eater eating fish
            "猫在喜欢狗。",     // 在 with a stative verb
            "猫在吃了鱼。",     // 在 with 了
            "猫很在跑。",       // 很 with 在
            "猫追狗，。",       // an empty clause
            "，猫跑。",         // a comma first
            "猫追狗，",         // no full stop after the comma
            "",
        ] {
            assert!(!accepts(bad), "accepted {bad:?}");
        }
    }

    #[test]
    fn every_character_is_one_token_of_the_vocabulary() {
        let t = ZhGrammarTask::new(64).unwrap();
        let e = t.tokenizer().encode("两条狗都没追那只可爱的猫。");
        assert!(e.unknown.is_empty(), "{:?}", e.unknown);
        assert_eq!(e.ids.len(), 13);
        assert_eq!(t.tokenizer().decode(&e.ids), "两条狗都没追那只可爱的猫。");
        // 4 specials, 。，and 52 characters (吃 and 在 among them).
        assert_eq!(t.tokenizer().vocab_size(), 58);
        for c in ["吃", "在", "，", "。"] {
            assert!(t.tokenizer().encode(c).unknown.is_empty(), "{c}");
        }
    }

    #[test]
    fn sequence_is_cut_by_characters_and_targets_are_the_next_characters() {
        let t = ZhGrammarTask::new(40).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let ex = t.sample(Split::Train, &mut rng);
        assert_eq!(ex.tokens.len(), 40);
        assert_eq!(ex.tokens[0], t.tokenizer().spec.bos);
        assert_eq!(ex.tokens[1..], ex.targets[..39]);
        let text = t.tokenizer().decode(&ex.targets);
        assert_eq!(text.chars().count(), 40);
        let first = text.split(STOP).next().unwrap();
        assert!(accepts(&format!("{first}{STOP}")), "{text}");
    }

    #[test]
    fn held_out_sequences_use_held_out_sentences_only() {
        let t = ZhGrammarTask::new(120).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..20 {
            let ex = t.sample(Split::HeldOut, &mut rng);
            let text = t.tokenizer().decode(&ex.targets);
            let mut complete: Vec<&str> = text.split_inclusive(STOP).collect();
            complete.pop_if(|s| !s.ends_with(STOP));
            assert!(!complete.is_empty());
            for s in complete {
                assert!(is_held_out(s), "{s:?} in {text:?}");
            }
        }
    }
}

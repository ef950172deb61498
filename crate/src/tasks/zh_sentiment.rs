//! Chinese sentiment with negation, for an encoder-only classifier, one character per
//! token: `<bos>这部电影很好` → positive, `<bos>这部电影不好` → negative. The classifier
//! reads position 0, the `<bos>` token, which bidirectional attention lets gather the
//! whole sentence.
//!
//! A clause is one of
//! - subject (很 | 非常 | 真 | 不 | 不太) adjective: 这部电影很精彩, 这本书不太好看,
//!   这首歌很好听 — the adjective suits its subject (songs and music are 好听 or 难听,
//!   films and books 好看 or 难看); 好 and 差 never stand bare (这部电影好 reads as
//!   half a contrast), so they take a degree word or 不;
//! - subject (很) (有 | 没) 意思: 这首歌很有意思, 这个故事没意思;
//! - 我 (很) (不) verb subject: 我很喜欢这部电影, 我不讨厌这首歌, 我很不喜欢这本书 — 很
//!   goes before 不 only with 喜欢 (很不讨厌 and 很不爱 are not said);
//! - subject (没) 让我 feeling: 这部电影让我很感动, 结局没让我失望.
//!
//! 不 and 没 flip the clause (不差 and 没让我失望 are praise) — except in 不错 ("not
//! wrong"), one word that means good, which is never negated. With "，但是" ("but") the
//! second clause decides; with "，而且" ("and moreover") both clauses agree. A review may
//! end in "。" or "！", which do not change its label.
//!
//! 一般 ("so-so") and 还行 ("it's all right") are lukewarm, and the task stays binary: a
//! review that calls something (很)一般 does not recommend it and is labelled 负面; one
//! that says it is 还行 accepts it and is labelled 正面. Neither is negated (不一般 is an
//! idiom for "remarkable"; 不还行 is not said), and 还行 takes no degree word.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{draw_in_split, encode_known, pick, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

/// An adjective a review may end on.
#[derive(Clone, Copy, Debug)]
struct Adj {
    text: &'static str,
    good: bool,
    /// May take 很, 非常 or 真.
    degree: bool,
    /// May take 不 or 不太.
    negatable: bool,
    /// May stand with neither a degree word nor 不.
    bare: bool,
}

const fn adj(text: &'static str, good: bool) -> Adj {
    Adj {
        text,
        good,
        degree: true,
        negatable: true,
        bare: true,
    }
}

/// Adjectives that suit every subject.
const GENERIC: &[Adj] = &[
    Adj {
        bare: false,
        ..adj("好", true)
    },
    Adj {
        bare: false,
        ..adj("差", false)
    },
    adj("糟糕", false),
    Adj {
        negatable: false,
        ..adj("不错", true)
    },
    Adj {
        negatable: false,
        ..adj("一般", false)
    },
    Adj {
        negatable: false,
        degree: false,
        ..adj("还行", true)
    },
];
/// Films and books: watched or read.
const SCREEN: &[Adj] = &[
    adj("好看", true),
    adj("精彩", true),
    adj("有趣", true),
    adj("难看", false),
    adj("无聊", false),
];
/// Songs and music: listened to.
const SONG: &[Adj] = &[adj("好听", true), adj("难听", false)];
/// Stories and endings.
const STORY: &[Adj] = &[adj("精彩", true), adj("有趣", true), adj("无聊", false)];

/// Subjects, each with the adjectives that suit it besides [`GENERIC`].
const SUBJECTS: &[(&str, &[Adj])] = &[
    ("这部电影", SCREEN),
    ("那部电影", SCREEN),
    ("这本书", SCREEN),
    ("这首歌", SONG),
    ("音乐", SONG),
    ("这个故事", STORY),
    ("结局", STORY),
];
const DEGREE: &[&str] = &["很", "非常", "真"];
const LIKE: &[&str] = &["喜欢", "爱"];
const HATE: &[&str] = &["讨厌"];
/// The one verb that 很 may precede when it is negated: 我很不喜欢.
const VERY_NOT: &str = "喜欢";
const GLAD: &[&str] = &["感动", "开心"];
const SAD: &[&str] = &["失望", "难过"];
const BUT: &str = "但是";
const AND: &str = "而且";
const NOT: &str = "不";
const NOT_PAST: &str = "没";
/// Joins two clauses.
pub const COMMA: char = '，';
/// May end a review.
pub const ENDS: [char; 2] = ['。', '！'];

/// Class names in label order.
pub const CLASSES: &[&str] = &["负面", "正面"];

/// One clause and whether it is positive.
fn clause(rng: &mut ChaCha8Rng) -> (String, bool) {
    let mut s = String::new();
    let negated = rng.random_bool(0.5);
    let good = rng.random_bool(0.5);
    match rng.random_range(0..4) {
        0 => {
            // 这部电影(很|不|不太)好, 这首歌很好听, 这本书还行
            let (subject, own) = pick(rng, SUBJECTS);
            s.push_str(subject);
            let adjs: Vec<Adj> = GENERIC.iter().chain(own.iter()).copied().collect();
            let a = pick(rng, &adjs);
            let negated = a.negatable && rng.random_bool(0.45);
            if negated {
                s.push_str(NOT);
                if rng.random_bool(0.4) {
                    s.push('太');
                }
            } else if a.degree && (!a.bare || rng.random_bool(0.7)) {
                s.push_str(pick(rng, DEGREE));
            }
            s.push_str(a.text);
            return (s, a.good != negated);
        }
        1 => {
            // 这部电影(很)有意思 | 这部电影(很)没意思: here 没 is the negation
            s.push_str(pick(rng, SUBJECTS).0);
            if rng.random_bool(0.4) {
                s.push('很');
            }
            s.push_str(if negated { NOT_PAST } else { "有" });
            s.push_str("意思");
            return (s, !negated);
        }
        2 => {
            // 我(很)(不)喜欢这部电影; 很不 only before 喜欢
            s.push('我');
            let verb = pick(rng, if good { LIKE } else { HATE });
            if (!negated || verb == VERY_NOT) && rng.random_bool(0.3) {
                s.push('很');
            }
            if negated {
                s.push_str(NOT);
            }
            s.push_str(verb);
            s.push_str(pick(rng, SUBJECTS).0);
        }
        _ => {
            // 这部电影(没)让我(很)感动
            s.push_str(pick(rng, SUBJECTS).0);
            if negated {
                s.push_str(NOT_PAST);
            }
            s.push_str("让我");
            if !negated && rng.random_bool(0.3) {
                s.push('很');
            }
            s.push_str(pick(rng, if good { GLAD } else { SAD }));
        }
    }
    (s, good != negated)
}

/// A sentence and its label (1 positive, 0 negative).
pub fn sentence(rng: &mut ChaCha8Rng) -> (String, u32) {
    let (mut s, mut positive) = clause(rng);
    let r: f64 = rng.random();
    if r < 0.25 {
        // 但是: the second clause decides.
        let (second, p2) = clause(rng);
        s.push(COMMA);
        s.push_str(BUT);
        s.push_str(&second);
        positive = p2;
    } else if r < 0.4 {
        // 而且: a second clause of the same polarity.
        let second = loop {
            let (c, p2) = clause(rng);
            if p2 == positive {
                break c;
            }
        };
        s.push(COMMA);
        s.push_str(AND);
        s.push_str(&second);
    }
    // Half the reviews end in 。 or ！; the other half in nothing, as typed in a box.
    if rng.random_bool(0.5) {
        s.push(ENDS[usize::from(rng.random_bool(0.35))]);
    }
    (s, u32::from(positive))
}

pub struct ZhSentimentTask {
    tok: Tokenizer,
}

impl Default for ZhSentimentTask {
    fn default() -> Self {
        Self::new()
    }
}

impl ZhSentimentTask {
    pub fn new() -> Self {
        let adjs = [GENERIC, SCREEN, SONG, STORY].concat();
        let words = SUBJECTS
            .iter()
            .map(|(s, _)| *s)
            .chain(adjs.iter().map(|a| a.text))
            .chain([DEGREE, LIKE, HATE, GLAD, SAD].concat())
            .chain([BUT, AND, NOT, NOT_PAST, "太有意思我让"]);
        let mut chars: Vec<char> = words.flat_map(str::chars).collect();
        crate::sorting::sort_by(&mut chars, Ord::cmp);
        chars.dedup();
        // The punctuation first, then the characters in code-point order.
        let alphabet: String = [COMMA].into_iter().chain(ENDS).chain(chars).collect();
        ZhSentimentTask {
            tok: Tokenizer::char_level(&alphabet),
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

impl Task for ZhSentimentTask {
    fn name(&self) -> &'static str {
        "zh-sentiment"
    }

    fn description(&self) -> &'static str {
        "classify a Chinese review as positive or negative; 不 and 没 flip it"
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
        // <bos> + 这个故事没让我失望 (9) + ，但是 + 9 characters + ！
        23
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let (text, label) = draw_in_split(self.name(), split, rng, |rng| {
            let (s, l) = sentence(rng);
            (s.clone(), (s, l))
        });
        self.example(&text, label)
    }

    fn default_prompt(&self) -> &'static str {
        "这部电影不好"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The label of one clause, worked out from its characters alone.
    fn clause_label(c: &str) -> bool {
        let praise = [
            "好",
            "精彩",
            "有趣",
            "喜欢",
            "爱",
            "感动",
            "开心",
            "有意思",
            "还行",
        ];
        let blame = [
            "差", "难看", "难听", "无聊", "糟糕", "讨厌", "失望", "难过", "一般",
        ];
        // 不错 is one word for good, not a negation; 没意思 is 有意思 negated; 好看 and
        // 难看 (好听, 难听) contain 好 and 难 but are their own words.
        let c = c
            .replace("不错", "好")
            .replace("没意思", "没有意思")
            .replace("难看", "糟糕")
            .replace("难听", "糟糕");
        let good = praise.iter().any(|w| c.contains(w));
        let bad = blame.iter().any(|w| c.contains(w));
        assert!(good != bad, "{c}: both or neither");
        let negated = c.contains('不') || c.contains('没');
        good != negated
    }

    fn draws(seed: u64, n: usize) -> Vec<(String, u32)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| sentence(&mut rng)).collect()
    }

    #[test]
    fn negation_and_but_decide_the_label() {
        let mut seen = [0usize; 2];
        let t = ZhSentimentTask::new();
        for (s, label) in draws(5, 3000) {
            seen[label as usize] += 1;
            let body = s.trim_end_matches(ENDS);
            let last = body.rsplit(BUT).next().unwrap();
            let first = last.split(AND).next().unwrap().trim_end_matches(COMMA);
            assert_eq!(label == 1, clause_label(first), "{s}");
            let ex = t.example(&s, label);
            assert!(ex.tokens.len() <= t.max_tokens(), "{s}");
            assert!(
                t.tokenizer().encode(&s).unknown.is_empty(),
                "{s}: a character outside the vocabulary"
            );
        }
        assert!(seen[0] > 1200 && seen[1] > 1200, "{seen:?}");
    }

    #[test]
    fn the_generator_labels_the_issue_examples_as_a_reader_does() {
        let drawn: std::collections::HashMap<String, u32> = draws(8, 80_000).into_iter().collect();
        // Labelled by hand: 不 and 没 flip the clause, 不错 is praise, 一般 lukewarm blame,
        // 还行 lukewarm acceptance; the end mark changes nothing.
        for (s, label) in [
            ("这部电影很好", 1),
            ("这部电影不好", 0),
            ("这部电影不差", 1),
            ("结局没让我失望", 1),
            ("这首歌没意思", 0),
            ("我不讨厌这本书", 1),
            ("我很不喜欢这首歌", 0),
            ("这首歌很好听", 1),
            ("这首歌不好听", 0),
            ("音乐很难听", 0),
            ("这部电影不错", 1),
            ("这本书很不错", 1),
            ("这部电影很一般", 0),
            ("这首歌一般", 0),
            ("这个故事还行", 1),
            ("这部电影很好！", 1),
            ("这部电影不好。", 0),
        ] {
            assert_eq!(drawn.get(s), Some(&label), "{s}");
        }
    }

    #[test]
    fn the_generator_never_writes_what_a_reader_would_not_say() {
        let drawn = draws(13, 60_000);
        for (s, _) in &drawn {
            for bad in [
                "很不讨厌",
                "很不爱",
                "不不错",
                "不太不错",
                "不一般",
                "不太一般",
                "不还行",
                "很还行",
                "非常还行",
                "真还行",
            ] {
                assert!(!s.contains(bad), "{s} contains {bad}");
            }
            for (subject, own) in SUBJECTS {
                for (clause_start, _) in s.match_indices(subject) {
                    let rest = &s[clause_start + subject.len()..];
                    let rest = rest.split(COMMA).next().unwrap();
                    // Songs are listened to, films watched: no 好看 for a song.
                    let wrong = if own.iter().any(|a| a.text == "好听") {
                        ["好看", "难看"]
                    } else {
                        ["好听", "难听"]
                    };
                    for w in wrong {
                        assert!(!rest.ends_with(w), "{s}");
                    }
                }
            }
            // 好 and 差 never stand bare after their subject.
            for (subject, _) in SUBJECTS {
                for (i, _) in s.match_indices(subject) {
                    let rest = s[i + subject.len()..].split(COMMA).next().unwrap();
                    let rest = rest.trim_end_matches(ENDS);
                    assert!(rest != "好" && rest != "差", "{s}");
                }
            }
        }
        let has = |w: &str| drawn.iter().any(|(s, _)| s.contains(w));
        for w in [
            "不错",
            "一般",
            "还行",
            "好听",
            "很不喜欢",
            "，但是",
            "，而且",
            "。",
            "！",
        ] {
            assert!(has(w), "never wrote {w}");
        }
    }

    #[test]
    fn example_is_one_token_per_character_after_bos() {
        let t = ZhSentimentTask::new();
        let ex = t.example("这部电影不好", 0);
        assert_eq!(t.tokenizer().decode(&ex.tokens), "<bos>这部电影不好");
        assert_eq!(ex.tokens.len(), 7);
        assert_eq!(ex.label, Some(0));
        let longest = "这个故事没让我失望，但是这个故事没让我失望！";
        assert_eq!(t.example(longest, 1).tokens.len(), t.max_tokens());
        for c in ["，", "。", "！", "听", "错", "般", "行"] {
            assert!(t.tokenizer().encode(c).unknown.is_empty(), "{c}");
        }
    }
}

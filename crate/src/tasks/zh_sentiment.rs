//! Chinese sentiment with negation, for an encoder-only classifier, one character per
//! token: `<bos>这部电影很好` → positive, `<bos>这部电影不好` → negative. The classifier
//! reads position 0, the `<bos>` token, which bidirectional attention lets gather the
//! whole sentence.
//!
//! A clause is one of
//! - subject (很 | 非常 | 真 | 不 | 不太) adjective: 这部电影很精彩, 这本书不太好看;
//! - subject (很) (有 | 没) 意思: 这首歌很有意思, 这个故事没意思;
//! - 我 (很) (不) verb subject: 我很喜欢这部电影, 我不讨厌这首歌;
//! - subject (没) 让我 feeling: 这部电影让我很感动, 结局没让我失望.
//!
//! 不 and 没 flip the clause (不差 and 没让我失望 are praise). With 但是 ("but") the second
//! clause decides; with 而且 ("and moreover") both clauses agree.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{draw_in_split, encode_known, pick, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

const SUBJECTS: &[&str] = &[
    "这部电影",
    "那部电影",
    "这本书",
    "这首歌",
    "这个故事",
    "结局",
    "音乐",
];
const DEGREE: &[&str] = &["很", "非常", "真"];
const GOOD: &[&str] = &["好", "好看", "精彩", "有趣"];
const BAD: &[&str] = &["差", "难看", "无聊", "糟糕"];
const LIKE: &[&str] = &["喜欢", "爱"];
const HATE: &[&str] = &["讨厌"];
const GLAD: &[&str] = &["感动", "开心"];
const SAD: &[&str] = &["失望", "难过"];
const BUT: &str = "但是";
const AND: &str = "而且";
const NOT: &str = "不";
const NOT_PAST: &str = "没";

/// Class names in label order.
pub const CLASSES: &[&str] = &["负面", "正面"];

/// One clause and whether it is positive.
fn clause(rng: &mut ChaCha8Rng) -> (String, bool) {
    let mut s = String::new();
    let negated = rng.random_bool(0.5);
    let good = rng.random_bool(0.5);
    match rng.random_range(0..4) {
        0 => {
            // 这部电影(很|不|不太)好
            s.push_str(pick(rng, SUBJECTS));
            if negated {
                s.push_str(NOT);
                if rng.random_bool(0.4) {
                    s.push('太');
                }
            } else if rng.random_bool(0.7) {
                s.push_str(pick(rng, DEGREE));
            }
            s.push_str(pick(rng, if good { GOOD } else { BAD }));
        }
        1 => {
            // 这部电影(很)有意思 | 这部电影(很)没意思: here 没 is the negation
            s.push_str(pick(rng, SUBJECTS));
            if rng.random_bool(0.4) {
                s.push('很');
            }
            s.push_str(if negated { NOT_PAST } else { "有" });
            s.push_str("意思");
            return (s, !negated);
        }
        2 => {
            // 我(很)(不)喜欢这部电影
            s.push('我');
            if rng.random_bool(0.3) {
                s.push('很');
            }
            if negated {
                s.push_str(NOT);
            }
            s.push_str(pick(rng, if good { LIKE } else { HATE }));
            s.push_str(pick(rng, SUBJECTS));
        }
        _ => {
            // 这部电影(没)让我(很)感动
            s.push_str(pick(rng, SUBJECTS));
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
        s.push_str(AND);
        s.push_str(&second);
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
        let mut chars: Vec<char> = [
            SUBJECTS,
            DEGREE,
            GOOD,
            BAD,
            LIKE,
            HATE,
            GLAD,
            SAD,
            &[BUT, AND, NOT, NOT_PAST, "太有意思我让"],
        ]
        .concat()
        .iter()
        .flat_map(|w| w.chars())
        .collect();
        chars.sort_unstable();
        chars.dedup();
        let alphabet: String = chars.into_iter().collect();
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
        // <bos> + 这个故事没让我失望 (9) + 但是 + 9 characters
        21
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
        let praise = ["好", "精彩", "有趣", "喜欢", "爱", "感动", "开心", "有意思"];
        let blame = ["差", "难看", "无聊", "糟糕", "讨厌", "失望", "难过"];
        // 没意思 is 有意思 negated; 好看 and 难看 contain 好 and 难 but are their own words.
        let c = c.replace("没意思", "没有意思").replace("难看", "糟糕");
        let good = praise.iter().any(|w| c.contains(w));
        let bad = blame.iter().any(|w| c.contains(w));
        assert!(good != bad, "{c}: both or neither");
        let negated = c.contains('不') || c.contains('没');
        good != negated
    }

    #[test]
    fn negation_and_but_decide_the_label() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut seen = [0usize; 2];
        let t = ZhSentimentTask::new();
        for _ in 0..3000 {
            let (s, label) = sentence(&mut rng);
            seen[label as usize] += 1;
            let last = s.rsplit(BUT).next().unwrap();
            let first = last.split(AND).next().unwrap();
            assert_eq!(label == 1, clause_label(first), "{s}");
            assert!(t.example(&s, label).tokens.len() <= t.max_tokens(), "{s}");
        }
        assert!(seen[0] > 1200 && seen[1] > 1200, "{seen:?}");
    }

    #[test]
    fn the_generator_labels_the_issue_examples_as_a_reader_does() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let drawn: std::collections::HashMap<String, u32> =
            (0..60_000).map(|_| sentence(&mut rng)).collect();
        // Labelled by hand: 不 and 没 flip the clause.
        for (s, label) in [
            ("这部电影很好", 1),
            ("这部电影不好", 0),
            ("这部电影不差", 1),
            ("结局没让我失望", 1),
            ("这首歌没意思", 0),
            ("我不讨厌这本书", 1),
        ] {
            assert_eq!(drawn.get(s), Some(&label), "{s}");
        }
    }

    #[test]
    fn example_is_one_token_per_character_after_bos() {
        let t = ZhSentimentTask::new();
        let ex = t.example("这部电影不好", 0);
        assert_eq!(t.tokenizer().decode(&ex.tokens), "<bos>这部电影不好");
        assert_eq!(ex.tokens.len(), 7);
        assert_eq!(ex.label, Some(0));
        let longest = "这个故事没让我失望但是这个故事没让我失望";
        assert_eq!(t.example(longest, 1).tokens.len(), t.max_tokens());
    }
}

//! Seeded toy tasks with held-out splits and accuracy metrics.
//!
//! Each task owns its tokenizer, draws examples in its input format, and says how it is
//! scored. The train and held-out splits are disjoint by construction: every example has a
//! key (the text it is made from), and a fixed seeded hash of that key decides its split
//! once and for all. Training draws only train examples, evaluation only held-out ones.
//! The split does not depend on the training seed, so a shipped model can be evaluated on
//! exactly the examples it never saw.
//!
//! | task | arch | tokens | input → output | metric |
//! |---|---|---|---|---|
//! | copy, reverse, sort | decoder-only | char | `<bos>cab>bac<eos>` (reverse) | exact match of the greedy answer |
//! | add | decoder-only | char | `<bos>12+345=357<eos>` | exact match of the greedy answer |
//! | grammar | decoder-only | char | `<bos>the cat chases the dog. a bird sings. …` | share of sampled sentences that parse |
//! | translate | encoder-decoder | word | `three hundred twelve` → `3 1 2` | exact match of the greedy answer |
//! | sentiment | encoder-only classifier | word | `<bos> the movie was not good` → negative | class accuracy |
//! | tagging | encoder-only, LM head | word | `the watches tick .` → `DET NOUN VERB PUNCT` | tag accuracy |
//! | zh-grammar | decoder-only | char | `<bos>一只猫追两条狗。孩子睡觉了。…` | share of sampled sentences that parse |
//! | zh-numerals | encoder-decoder | char | `一万零五` → `10005` | exact match of the greedy answer |
//! | zh-sentiment | encoder-only classifier | char | `<bos>这部电影不好` → 负面 (negative) | class accuracy |
//!
//! The `zh-` tasks are in Chinese: one token per character, so a learner can type Chinese.
//!
//! Decoder-only answer tasks score only the answer: the targets of the prompt positions are
//! `<pad>` (0), which the loss ignores, so the model is not asked to predict random input.

pub mod addition;
pub mod batch;
pub mod grammar;
pub mod sentiment;
pub mod sequence;
pub mod tagging;
pub mod translate;
pub mod zh_grammar;
pub mod zh_numerals;
pub mod zh_sentiment;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::Arch;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;

pub use batch::TrainBatch;

/// The seed of every task's split hash. Fixed, so a held-out example stays held out for
/// every model ever trained on the task, whatever its training seed.
pub const SPLIT_SEED: u64 = 20_261_130;

/// Which part of a task's data an example belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    Train,
    HeldOut,
}

/// One example, in the form the trainer batches. Lengths are in tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// (S) source ids of an encoder-decoder example (no `<bos>`); empty otherwise.
    pub src: Vec<u32>,
    /// (T) input ids of the main stack: the decoder input (starting with `<bos>`), or the
    /// encoder input of an encoder-only model.
    pub tokens: Vec<u32>,
    /// (T) the token the LM head must give at each position, or `<pad>` (0) where the
    /// position is not scored. Empty for a classification example.
    pub targets: Vec<u32>,
    /// The class of a classification example.
    pub label: Option<u32>,
    /// Generated tasks: `tokens[..prompt_len]` is the prompt and the rest of `tokens`,
    /// followed by `<eos>`, is the answer the model must produce.
    pub prompt_len: usize,
}

/// How a task is scored on its held-out split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// The greedy continuation of the prompt must equal the answer, `<eos>` included.
    ExactMatch,
    /// The arg-max token of every scored position must equal its target.
    TokenAccuracy,
    /// The arg-max class must equal the label.
    ClassAccuracy,
    /// Sentences sampled from the model must be accepted by the task's recogniser.
    Grammatical,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::ExactMatch => "exact_match",
            Metric::TokenAccuracy => "token_accuracy",
            Metric::ClassAccuracy => "class_accuracy",
            Metric::Grammatical => "grammatical",
        }
    }
}

/// A toy task: its vocabulary, its examples and how it is scored.
pub trait Task: Send + Sync {
    /// The name `tplay train --task` takes.
    fn name(&self) -> &'static str;
    /// One line for people.
    fn description(&self) -> &'static str;
    fn tokenizer(&self) -> &Tokenizer;
    /// The architecture the task is made for.
    fn arch(&self) -> Arch;
    /// Classes of a classification task (0 otherwise).
    fn num_classes(&self) -> usize {
        0
    }
    /// Names of the classes, in label order.
    fn class_names(&self) -> &[&'static str] {
        &[]
    }
    fn metric(&self) -> Metric;
    /// Longest example in tokens (the decoder input, and the source for encoder-decoder);
    /// the model's `max_len` must be at least this.
    fn max_tokens(&self) -> usize;
    /// Draw one example of the split.
    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example;
    /// Grammatical tasks: does the recogniser accept this sentence? `None` for other tasks.
    fn accepts(&self, _sentence: &str) -> Option<bool> {
        None
    }
    /// Grammatical tasks: the character that ends a sentence (samples are scored up to it).
    fn sentence_end(&self) -> char {
        '.'
    }
    /// A prompt that shows the task off in the playground.
    fn default_prompt(&self) -> &'static str;
}

/// Options shared by the tasks; each task reads the ones that concern it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskOptions {
    /// copy / reverse / sort: the longest symbol string (default 8);
    /// grammar, zh-grammar: the length of a training sequence in characters, `<bos>`
    /// included (default 64). Other tasks ignore it.
    pub len: Option<usize>,
}

/// Names accepted by [`build`].
pub const TASKS: &[&str] = &[
    "copy",
    "reverse",
    "sort",
    "add",
    "grammar",
    "translate",
    "sentiment",
    "tagging",
    "zh-grammar",
    "zh-numerals",
    "zh-sentiment",
];

/// Build a task by name.
pub fn build(name: &str, opts: &TaskOptions) -> Result<Box<dyn Task>> {
    use sequence::{SequenceKind, SequenceTask};
    let seq = |kind| -> Result<Box<dyn Task>> {
        Ok(Box::new(SequenceTask::new(kind, opts.len.unwrap_or(8))?))
    };
    match name {
        "copy" => seq(SequenceKind::Copy),
        "reverse" => seq(SequenceKind::Reverse),
        "sort" => seq(SequenceKind::Sort),
        "add" => Ok(Box::new(addition::AdditionTask::new())),
        "grammar" => Ok(Box::new(grammar::GrammarTask::new(opts.len.unwrap_or(64))?)),
        "translate" => Ok(Box::new(translate::TranslateTask::new())),
        "sentiment" => Ok(Box::new(sentiment::SentimentTask::new())),
        "tagging" => Ok(Box::new(tagging::TaggingTask::new())),
        "zh-grammar" => Ok(Box::new(zh_grammar::ZhGrammarTask::new(
            opts.len.unwrap_or(64),
        )?)),
        "zh-numerals" => Ok(Box::new(zh_numerals::ZhNumeralsTask::new())),
        "zh-sentiment" => Ok(Box::new(zh_sentiment::ZhSentimentTask::new())),
        other => Err(Error::Input(format!(
            "task: unknown task '{other}' (known: {})",
            TASKS.join(", ")
        ))),
    }
}

/// The split of an example, from its key: a seeded 64-bit FNV-1a hash of the task name and
/// the key; one key in ten (by hash) is held out.
pub fn split_of(task: &str, key: &str) -> Split {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ SPLIT_SEED;
    for byte in task.bytes().chain([0u8]).chain(key.bytes()) {
        h ^= byte as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // Final avalanche (from splitmix64) so that similar keys spread over both splits.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    if h.is_multiple_of(10) {
        Split::HeldOut
    } else {
        Split::Train
    }
}

/// Draw keys with `draw` until one falls in `split`, then build its example.
/// Every task has both splits well populated, so this ends after a few tries.
pub(crate) fn draw_in_split<K>(
    task: &str,
    split: Split,
    rng: &mut ChaCha8Rng,
    mut draw: impl FnMut(&mut ChaCha8Rng) -> (String, K),
) -> K {
    loop {
        let (key, value) = draw(rng);
        if split_of(task, &key) == split {
            return value;
        }
    }
}

/// A uniform pick from a non-empty slice.
pub(crate) fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    items[rng.random_range(0..items.len())]
}

/// Encode text that the task itself wrote (so every piece is in its vocabulary).
pub(crate) fn encode_known(tok: &Tokenizer, text: &str) -> Vec<u32> {
    let e = tok.encode(text);
    debug_assert!(
        e.unknown.is_empty(),
        "task text {text:?} has pieces outside the vocabulary: {:?}",
        e.unknown
    );
    e.ids
}

/// The held-out examples a model is scored on: `n` draws from a generator seeded with
/// `seed`, so every evaluation of a task with the same `n` and `seed` sees the same ones.
pub fn held_out_examples(task: &dyn Task, n: usize, seed: u64) -> Vec<Example> {
    use rand::SeedableRng;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| task.sample(Split::HeldOut, &mut rng))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn split_hash_holds_out_about_one_key_in_ten() {
        let held = (0..10_000)
            .filter(|i| split_of("copy", &i.to_string()) == Split::HeldOut)
            .count();
        assert!((800..1200).contains(&held), "{held} of 10000 held out");
    }

    #[test]
    fn split_depends_on_the_task_name() {
        let differ = (0..1000)
            .filter(|i| split_of("copy", &i.to_string()) != split_of("sort", &i.to_string()))
            .count();
        assert!(differ > 50, "only {differ} keys change split with the task");
    }

    #[test]
    fn every_task_builds_and_draws_examples_that_fit_its_limits() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for name in TASKS {
            let task = build(name, &TaskOptions::default()).unwrap();
            assert_eq!(task.name(), *name);
            let v = task.tokenizer().vocab_size() as u32;
            for split in [Split::Train, Split::HeldOut] {
                for _ in 0..50 {
                    let ex = task.sample(split, &mut rng);
                    assert!(ex.tokens.len() <= task.max_tokens(), "{name}: {ex:?}");
                    assert!(ex.src.len() <= task.max_tokens(), "{name}: {ex:?}");
                    assert!(
                        ex.tokens
                            .iter()
                            .chain(&ex.src)
                            .chain(&ex.targets)
                            .all(|&t| t < v),
                        "{name}: id out of vocabulary in {ex:?}"
                    );
                    assert!(
                        !ex.tokens.contains(&task.tokenizer().spec.unk),
                        "{name}: <unk> in {ex:?}"
                    );
                    match task.metric() {
                        Metric::ClassAccuracy => {
                            assert!(ex.targets.is_empty());
                            assert!((ex.label.unwrap() as usize) < task.num_classes());
                        }
                        _ => assert_eq!(ex.targets.len(), ex.tokens.len(), "{name}"),
                    }
                }
            }
        }
    }

    #[test]
    fn unknown_task_is_named_with_the_known_ones() {
        let e = build("parity", &TaskOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("parity") && e.contains("reverse"), "{e}");
    }

    #[test]
    fn held_out_examples_are_reproducible_from_the_seed() {
        let task = build("reverse", &TaskOptions::default()).unwrap();
        let a = held_out_examples(task.as_ref(), 20, 5);
        assert_eq!(a, held_out_examples(task.as_ref(), 20, 5));
        assert_ne!(a, held_out_examples(task.as_ref(), 20, 6));
    }
}

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
//! | text | decoder-only | char | windows of a learner's own text (any script) | next-character accuracy |
//!
//! `text` is the exception to the hashed split: its examples are windows of one given text,
//! so its split is by position (the last tenth held out; see [`text`]).
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
pub mod task;
pub mod text;
pub mod translate;
pub mod zh_grammar;
pub mod zh_numerals;
pub mod zh_sentiment;

use std::sync::Arc;

use crate::error::{Error, Result};

pub use batch::TrainBatch;
pub(crate) use task::{draw_in_split, encode_known, pick};
pub use task::{held_out_examples, split_of, Example, Metric, Split, Task, SPLIT_SEED};

/// Options shared by the tasks; each task reads the ones that concern it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskOptions {
    /// copy / reverse / sort: the longest symbol string (default 8);
    /// grammar, zh-grammar: the length of a training sequence in characters, `<bos>`
    /// included (default 64). Other tasks ignore it.
    pub len: Option<usize>,
    /// text: the text to learn (required there; every other task refuses it).
    pub text: Option<Arc<str>>,
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
    "text",
];

/// The task whose examples come from a text the learner gives ([`text::TextTask`]).
pub const TEXT_TASK: &str = "text";

/// Build a task by name.
pub fn build(name: &str, opts: &TaskOptions) -> Result<Box<dyn Task>> {
    use sequence::{SequenceKind, SequenceTask};
    if opts.text.is_some() && name != TEXT_TASK {
        return Err(Error::Input(format!(
            "text: task '{name}' makes its own examples; a text of your own is for task '{TEXT_TASK}'"
        )));
    }
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
        TEXT_TASK => match &opts.text {
            Some(t) => Ok(Box::new(text::TextTask::new(t, opts.len.unwrap_or(64))?)),
            None => Err(Error::Input(
                "text: task 'text' trains on a text of your own; give it (the page: paste or upload; the command line: --text-file)".into(),
            )),
        },
        other => Err(Error::Input(format!(
            "task: unknown task '{other}' (known: {})",
            TASKS.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn every_task_builds_and_draws_examples_that_fit_its_limits() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for name in TASKS {
            let task = build(name, &test_options(name)).unwrap();
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

    /// Default options, and a text for the text task.
    pub(crate) fn test_options(name: &str) -> TaskOptions {
        TaskOptions {
            text: (name == TEXT_TASK).then(|| {
                Arc::from("The cat sat on the mat. 猫坐在垫子上。 The dog ran after the cat.")
            }),
            ..TaskOptions::default()
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

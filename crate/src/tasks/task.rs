//! What a task is: the examples it draws, the split each example belongs to, and how the
//! task is scored.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::Arch;
use crate::tokenizer::Tokenizer;

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
    /// Language modelling of a given text: the arg-max next character must be the text's
    /// next character, at every position of held-out windows.
    NextCharAccuracy,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::ExactMatch => "exact_match",
            Metric::TokenAccuracy => "token_accuracy",
            Metric::ClassAccuracy => "class_accuracy",
            Metric::Grammatical => "grammatical",
            Metric::NextCharAccuracy => "next_char_accuracy",
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
    /// Up to `n` prompts of up to `len` tokens taken from held-out data, for samples the
    /// evaluation writes (the text task; none for the others).
    fn prompts(&self, _n: usize, _len: usize) -> Vec<Vec<u32>> {
        vec![]
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
}

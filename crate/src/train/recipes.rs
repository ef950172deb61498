//! The shipped models (`models/`): how each one is trained, what it is for, and the
//! held-out accuracy it must reach. `models/train_all.sh` runs exactly these commands
//! (a test checks that), `models/manifest.json` lists them in this order (the first is the
//! playground's default), and `crate/tests/train_models.rs` holds each checkpoint to its
//! threshold.

use super::run::RunSpec;

/// Sequence length (characters, `<bos>` included) the grammar models are trained on; the
/// extrapolation study evaluates them at 1×, 2× and 4× this length.
pub const GRAMMAR_TRAIN_LEN: usize = 64;
/// max_len of the grammar models: room for 4× the trained length.
pub const GRAMMAR_MAX_LEN: usize = 4 * GRAMMAR_TRAIN_LEN;

/// One shipped model.
#[derive(Clone, Debug, PartialEq)]
pub struct Recipe {
    /// File name under `models/`.
    pub file: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// A prompt the playground starts with.
    pub default_prompt: &'static str,
    pub run: RunSpec,
    /// The held-out accuracy (the task's metric) the checkpoint must reach.
    pub threshold: f64,
}

impl Recipe {
    /// The one command that reproduces the checkpoint, run from the repository root.
    pub fn command(&self) -> String {
        format!(
            "cargo run --release -p tplay -- train {} --out models/{}",
            self.run.args().join(" "),
            self.file
        )
    }
}

fn grammar(pos: &'static str, title: &'static str, description: &'static str) -> Recipe {
    Recipe {
        file: match pos {
            "none" => "grammar-none.safetensors",
            "sinusoidal" => "grammar-sinusoidal.safetensors",
            "learned" => "grammar-learned.safetensors",
            "relative" => "grammar-relative.safetensors",
            "rope" => "grammar-rope.safetensors",
            _ => "grammar-alibi.safetensors",
        },
        title,
        description,
        default_prompt: "the cat",
        run: RunSpec {
            task: "grammar".into(),
            seed: 1,
            steps: 4000,
            warmup: 300,
            len: Some(GRAMMAR_TRAIN_LEN),
            max_len: Some(GRAMMAR_MAX_LEN),
            pos_encoding: Some(pos.into()),
            ..RunSpec::default()
        },
        // Without any position information the model is a little weaker at agreement
        // across a relative clause; it is held to a lower bar.
        threshold: if pos == "none" { 0.85 } else { 0.9 },
    }
}

/// Every shipped model, the playground's default first.
pub fn recipes() -> Vec<Recipe> {
    vec![
        grammar(
            "alibi",
            "Grammar LM · ALiBi",
            "A character-level GPT (2 layers, 4 heads, d_model 32) trained on sentences of a small \
             English grammar. Each head adds a penalty proportional to distance to its \
             attention scores (ALiBi), so it keeps working on text longer than it was trained on.",
        ),
        grammar(
            "rope",
            "Grammar LM · RoPE",
            "The same language model with queries and keys rotated by their position (RoPE).",
        ),
        grammar(
            "sinusoidal",
            "Grammar LM · sinusoidal",
            "The same language model with the 2017 paper's fixed sine/cosine positions added to \
             the embeddings.",
        ),
        grammar(
            "learned",
            "Grammar LM · learned positions",
            "The same language model with a trained position table; rows past the trained \
             length were never trained.",
        ),
        grammar(
            "relative",
            "Grammar LM · relative (Shaw)",
            "The same language model with trained vectors for clipped key distances added to \
             keys and values.",
        ),
        grammar(
            "none",
            "Grammar LM · no positions",
            "The same language model with no position information at all: only the causal \
             mask tells tokens apart by place.",
        ),
        Recipe {
            file: "translate.safetensors",
            title: "Number words → digits",
            description: "An encoder-decoder (2 + 2 layers, the 2017 layout) that translates \
                          English number words to digits; cross-attention shows which word \
                          each digit comes from.",
            default_prompt: "three hundred twelve thousand five",
            run: RunSpec {
                task: "translate".into(),
                seed: 1,
                steps: 8000,
                dropout: Some(0.1),
                ..RunSpec::default()
            },
            threshold: 0.95,
        },
        Recipe {
            file: "sentiment.safetensors",
            title: "Sentiment with negation",
            description: "An encoder-only classifier that reads a short review and says \
                          positive or negative; negation and \"but\" decide.",
            default_prompt: "the movie was not good",
            run: RunSpec {
                task: "sentiment".into(),
                seed: 1,
                steps: 2000,
                ..RunSpec::default()
            },
            threshold: 0.95,
        },
        Recipe {
            file: "tagging.safetensors",
            title: "Part-of-speech tagging",
            description: "An encoder-only model that tags every word; duck, watch, fish … are \
                          nouns or verbs depending on their neighbours.",
            default_prompt: "the ducks watch the watches quickly .",
            run: RunSpec {
                task: "tagging".into(),
                seed: 1,
                steps: 2000,
                ..RunSpec::default()
            },
            threshold: 0.95,
        },
        Recipe {
            file: "reverse.safetensors",
            title: "Reverse a string",
            description: "A character-level GPT that reverses up to eight letters: each \
                          answer letter attends to its mirror image in the prompt.",
            default_prompt: "hgfedcba>",
            run: RunSpec {
                task: "reverse".into(),
                seed: 1,
                steps: 3000,
                ..RunSpec::default()
            },
            threshold: 0.99,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recipe_builds_a_valid_config_for_its_task() {
        for r in recipes() {
            let task = r.run.task().unwrap();
            let cfg = r.run.model_config(task.as_ref()).unwrap();
            assert_eq!(cfg.arch, task.arch(), "{}", r.file);
            r.run.train_options().unwrap();
            assert!(r.command().contains(&format!("--out models/{}", r.file)));
        }
    }

    #[test]
    fn one_grammar_model_per_position_encoding_on_the_same_task() {
        let mut seen: Vec<String> = recipes()
            .iter()
            .filter(|r| r.run.task == "grammar")
            .map(|r| r.run.pos_encoding.clone().unwrap())
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            ["alibi", "learned", "none", "relative", "rope", "sinusoidal"]
        );
    }
}

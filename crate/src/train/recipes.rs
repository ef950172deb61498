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
    /// How often the lab scores a run of this recipe on held-out examples, in steps, where
    /// it needs its own cadence (`tplay train --eval-every` takes the same number); `None`:
    /// six evaluations over the run, as for any task. It changes when the curve shows the
    /// score, never the weights. [`Recipe::lab_eval_every`] reads it.
    pub eval_every: Option<u64>,
    /// For a model that differs from another shipped one in one design choice: that
    /// model's file and the choice, in a few words (the page groups and labels them).
    pub variant: Option<Variant>,
}

/// How a sibling model differs from the shipped model it was derived from.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The file of the model it differs from.
    pub of: &'static str,
    /// The one design choice that differs, in a few words ("post-LN").
    pub label: &'static str,
}

/// The lab's default cadence for a run without a cadence of its own: six evaluations over
/// its `steps`.
pub(crate) fn six_evaluations(steps: u64) -> u64 {
    (steps / 6).max(1)
}

impl Recipe {
    /// The lab's default `eval_every` for this recipe's run.
    pub fn lab_eval_every(&self) -> u64 {
        self.eval_every
            .unwrap_or_else(|| six_evaluations(self.run.steps))
    }

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
        eval_every: None,
        variant: None,
    }
}

/// A Chinese grammar model: the English grammar models' recipe on `zh-grammar`, with
/// one token per Chinese character.
fn zh_grammar(pos: &'static str, title: &'static str, description: &'static str) -> Recipe {
    let mut r = grammar(pos, title, description);
    r.file = match pos {
        "none" => "zh-grammar-none.safetensors",
        "sinusoidal" => "zh-grammar-sinusoidal.safetensors",
        "learned" => "zh-grammar-learned.safetensors",
        _ => "zh-grammar-alibi.safetensors",
    };
    r.default_prompt = "这只猫";
    r.run.task = "zh-grammar".into();
    r
}

/// The grammar model whose heads use one matrix for queries and keys (W_K = W_Q), so
/// every head's score q_i·k_j equals q_j·k_i before the causal mask. Its positions are
/// sinusoidal, like its untied namesake's, for a side-by-side comparison: added to the
/// embeddings, they reach queries and keys alike and keep the symmetry (ALiBi and RoPE
/// would keep it too, Shaw's relative keys would not; a test below checks all six).
fn grammar_shared_qk() -> Recipe {
    let mut r = grammar(
        "sinusoidal",
        "Grammar LM · shared W_Q = W_K",
        "The sinusoidal language model with one matrix for queries and keys (W_K = W_Q): the \
         score of token i for token j equals that of j for i, so before the causal mask hides \
         the upper triangle each head's score matrix is symmetric. Sine/cosine positions, \
         added to the embeddings, keep the symmetry; so would ALiBi's distance penalty and \
         RoPE's rotations, while relative (Shaw) position vectors, added to the keys only, \
         would break it.",
    );
    r.file = "grammar-shared-qk.safetensors";
    r.run.share_qk = true;
    r
}

/// The reverse model's recipe, for the models that differ from it in one design choice.
fn reverse() -> Recipe {
    Recipe {
        file: "reverse.safetensors",
        title: "Reverse a string",
        description: "A character-level GPT that reverses up to eight letters: each \
                      answer letter attends to its mirror image in the prompt.",
        default_prompt: "hgfedcba>",
        run: RunSpec {
            task: "reverse".into(),
            seed: 1,
            // The Noam rate falls only as 1/√step, and at that rate this small model's
            // exact-match score keeps swinging by several points from one evaluation to the
            // next (3,000 steps without a cooldown reached 0.996); bringing the rate down
            // over the last 400 steps (0.4 of them) lets the weights settle: 1,000 steps reach
            // 1.000.
            steps: 1000,
            cooldown: 0.4,
            ..RunSpec::default()
        },
        threshold: 0.99,
        // Every 100 steps, so the lab finds the first score at the threshold soon after the
        // run reaches it.
        eval_every: Some(100),
        variant: None,
    }
}

/// A sibling of the reverse model: the same task, seed, steps and sizes with one design
/// choice changed (`change`), for the switches of the page to load.
fn reverse_sibling(
    file: &'static str,
    label: &'static str,
    title: &'static str,
    description: &'static str,
    threshold: f64,
    change: impl FnOnce(&mut RunSpec),
) -> Recipe {
    let mut r = reverse();
    r.variant = Some(Variant { of: r.file, label });
    r.file = file;
    r.title = title;
    r.description = description;
    r.threshold = threshold;
    change(&mut r.run);
    r
}

/// The reverse model's siblings, one design choice each — where the norm sits, the
/// residual connections, the √d_model embedding scale, the score function and dropout —
/// except the BatchNorm sibling, which changes two: the norm, and its place (after the add,
/// as BatchNorm is placed in the layer plan). The reverse task is the cheapest shipped one whose exact-match score shows
/// a weaker design (10 to 30 s of training each on one core). Each threshold sits a
/// little under what the model reached when it was trained (models/README.md).
pub fn reverse_siblings() -> Vec<Recipe> {
    vec![
        reverse_sibling(
            "reverse-post-ln.safetensors",
            "post-LN",
            "Reverse · post-LN",
            "The reverse model with each LayerNorm after its residual add, as in the 2017 \
             paper (x = LN(x + f(x))), instead of before the sublayer (pre-LN, the default).",
            0.97,
            |r| r.norm = Some("post_ln".into()),
        ),
        reverse_sibling(
            "reverse-batch-norm.safetensors",
            "BatchNorm, after the add",
            "Reverse · BatchNorm",
            "The reverse model with BatchNorm instead of LayerNorm, and in another place: \
             after each residual add (x = BN(x + f(x)), where post-LN puts its norm) instead \
             of before the sublayer, so it changes two design choices, the norm and where it \
             sits; the final norm after the stack stays a LayerNorm. Each feature is \
             normalised over the batch and the positions, so in train mode the other \
             sequences of a batch, and the other positions of the same sequence, change this \
             one's output; in eval mode it uses the running statistics it kept while training.",
            0.97,
            |r| r.norm = Some("batch_norm".into()),
        ),
        reverse_sibling(
            "reverse-no-residual.safetensors",
            "no residual",
            "Reverse · no residual connections",
            "The reverse model without residual connections: each sublayer's output \
             replaces its input instead of being added to it. It is meant to be weaker \
             than the reverse model: the letters and positions must survive every sublayer \
             instead of riding the residual stream past it, and the gradient has no \
             short path back to the embeddings.",
            0.8,
            |r| r.residual = Some(false),
        ),
        reverse_sibling(
            "reverse-no-embed-scale.safetensors",
            "no ×√d_model",
            "Reverse · no ×√d_model",
            "The reverse model whose token embeddings are not multiplied by √d_model \
             before the positions are added, so nothing lifts them to the size of the \
             sine/cosine position vectors: in these weights the position vectors are the \
             larger part of the sum (the embedding-scale view measures by how much).",
            0.97,
            |r| r.scale_embeddings = Some(false),
        ),
        reverse_sibling(
            "reverse-dot.safetensors",
            "dot scores",
            "Reverse · dot-product scores (no √d_k)",
            "The reverse model trained with plain dot-product scores q·k, not divided by \
             √d_k.",
            0.97,
            |r| r.score = Some("dot".into()),
        ),
        reverse_sibling(
            "reverse-additive.safetensors",
            "additive scores",
            "Reverse · additive scores",
            "The reverse model with additive (Bahdanau) scores, v·tanh(q + k) per head, \
             instead of scaled dot products: as many multiply-adds, plus an addition and a \
             tanh for every dimension of every (query, key) pair.",
            0.97,
            |r| r.score = Some("additive".into()),
        ),
        reverse_sibling(
            "reverse-dropout.safetensors",
            "dropout 0.1",
            "Reverse · dropout 0.1",
            "The reverse model trained with dropout 0.1: on the embeddings plus positions, on \
             every sublayer's output before the residual add, on the attention \
             probabilities and inside the FFN. At inference, in eval mode, dropout does \
             nothing.",
            0.75,
            |r| r.dropout = Some(0.1),
        ),
    ]
}

/// Every shipped model, the playground's default first.
pub fn recipes() -> Vec<Recipe> {
    let mut all = vec![
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
        grammar_shared_qk(),
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
            eval_every: None,
            variant: None,
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
            eval_every: None,
            variant: None,
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
            eval_every: None,
            variant: None,
        },
        reverse(),
        zh_grammar(
            "alibi",
            "中文 Chinese grammar LM · ALiBi",
            "A character-level GPT (2 layers, 4 heads, d_model 32) that writes Chinese, one \
             character per token: sentences such as 一只可爱的猫追两条狗。 with measure words \
             that agree with their noun (一只猫, 两条狗), 的-phrases, 也/都/很, and negation \
             with 不 or 没 (never together with 了). ALiBi positions: 猫追狗 and 狗追猫 mean \
             different things to it.",
        ),
        zh_grammar(
            "sinusoidal",
            "中文 Chinese grammar LM · sinusoidal",
            "The same Chinese language model with the 2017 paper's sine/cosine positions \
             added to the embeddings.",
        ),
        zh_grammar(
            "learned",
            "中文 Chinese grammar LM · learned positions",
            "The same Chinese language model with a trained position table; rows past the \
             trained length were never trained.",
        ),
        zh_grammar(
            "none",
            "中文 Chinese grammar LM · no positions",
            "The same Chinese language model with no position information: only the causal \
             mask tells characters apart by place. Without it (an encoder-style pass), 猫追狗 \
             and 狗追猫 give the same outputs in permuted order.",
        ),
        Recipe {
            file: "zh-numerals.safetensors",
            title: "中文 Chinese numerals → digits",
            description: "An encoder-decoder (2 + 2 layers, the 2017 layout) that reads a \
                          Chinese numeral one character at a time and writes its digits: \
                          三百一十二 → 312, 一万零五 → 10005. Cross-attention shows which \
                          character each digit comes from, and that one 零 stands for a run \
                          of zeros.",
            default_prompt: "一万零五",
            run: RunSpec {
                task: "zh-numerals".into(),
                seed: 1,
                steps: 8000,
                dropout: Some(0.1),
                ..RunSpec::default()
            },
            threshold: 0.95,
            eval_every: None,
            variant: None,
        },
        Recipe {
            file: "zh-sentiment.safetensors",
            title: "中文 Chinese sentiment with negation",
            description: "An encoder-only classifier that reads a short Chinese review one \
                          character at a time and says 正面 (positive) or 负面 (negative): \
                          这部电影很好 is praise, 这部电影不好 is not; 不 and 没 flip a \
                          clause, and after 但是 the second clause decides.",
            default_prompt: "这部电影不好",
            run: RunSpec {
                task: "zh-sentiment".into(),
                seed: 1,
                steps: 2000,
                ..RunSpec::default()
            },
            threshold: 0.95,
            eval_every: None,
            variant: None,
        },
    ];
    all.extend(reverse_siblings());
    all
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
        let seen = |task: &str| {
            let mut seen: Vec<String> = recipes()
                .iter()
                .filter(|r| r.run.task == task && !r.run.share_qk)
                .map(|r| r.run.pos_encoding.clone().unwrap())
                .collect();
            crate::sorting::sort_by(&mut seen, Ord::cmp);
            seen
        };
        assert_eq!(
            seen("grammar"),
            ["alibi", "learned", "none", "relative", "rope", "sinusoidal"]
        );
        assert_eq!(
            seen("zh-grammar"),
            ["alibi", "learned", "none", "sinusoidal"]
        );
    }

    #[test]
    fn shared_qk_model_ties_keys_to_queries_with_positions_that_keep_scores_symmetric() {
        let shared: Vec<Recipe> = recipes().into_iter().filter(|r| r.run.share_qk).collect();
        assert_eq!(shared.len(), 1);
        let r = &shared[0];
        assert_eq!(r.run.task, "grammar");
        let task = r.run.task().unwrap();
        let cfg = r.run.model_config(task.as_ref()).unwrap();
        assert!(cfg.share_qk);
        // Positions added to the embeddings (or none): the plainest case of q_i·k_j = q_j·k_i.
        assert!(matches!(
            cfg.pos_encoding,
            crate::config::PosEncoding::Sinusoidal | crate::config::PosEncoding::None
        ));
        assert!(r
            .command()
            .ends_with(&format!("--share-qk --out models/{}", r.file)));
        // The page opens with the first model, which must stay the ALiBi one.
        assert_ne!(recipes()[0].file, r.file);
        assert_eq!(recipes()[0].file, "grammar-alibi.safetensors");
    }

    /// Largest |s_ij − s_ji| and largest |s_ij| over every head and layer of a freshly
    /// initialised grammar model with W_K = W_Q and the given positions, run without the
    /// causal mask.
    fn shared_qk_asymmetry(pos: crate::config::PosEncoding) -> (f32, f32) {
        use crate::model::{forward::Batch, ForwardOptions, Model};
        let r = grammar_shared_qk();
        let task = r.run.task().unwrap();
        let mut cfg = r.run.model_config(task.as_ref()).unwrap();
        cfg.pos_encoding = pos;
        let model = Model::init(cfg, task.tokenizer().clone(), 7);
        let ids = model
            .tokenizer
            .encode("the cats that a dog sees sleep.")
            .ids;
        let opts = ForwardOptions {
            causal: Some(false),
            trace_attention: true,
            ..ForwardOptions::default()
        };
        let trace = model.forward(&Batch::single(&ids).unwrap(), &opts).unwrap();
        let (mut worst, mut largest) = (0.0f32, 0.0f32);
        for a in &trace.attention {
            let (h, t) = (a.scores.shape[1], a.scores.shape[2]); // (1, H, T, T)
            for head in 0..h {
                let s = &a.scores.data[head * t * t..(head + 1) * t * t]; // (T, T)
                for i in 0..t {
                    for j in 0..t {
                        largest = largest.max(s[i * t + j].abs());
                        worst = worst.max((s[i * t + j] - s[j * t + i]).abs());
                    }
                }
            }
        }
        (worst, largest)
    }

    #[test]
    fn with_shared_qk_only_shaws_relative_keys_break_the_symmetry_of_the_scores() {
        use crate::config::PosEncoding::*;
        // Added positions reach q and k alike; ALiBi's penalty −m·|i − j| is symmetric;
        // RoPE gives (R_i u_i)·(R_j u_j) = u_i·R_(j−i) u_j, the same read both ways since
        // R_(i−j) is the transpose of R_(j−i).
        for pos in [None, Sinusoidal, Learned, Rope, Alibi] {
            let (worst, largest) = shared_qk_asymmetry(pos);
            assert!(largest > 0.1, "{pos:?}: scores all near zero ({largest})");
            assert!(worst < 1e-4, "{pos:?}: scores differ by {worst}");
        }
        // Shaw: s_ij = u_i·(u_j + a_(j−i)) and s_ji = u_j·(u_i + a_(i−j)) differ.
        let (worst, _) = shared_qk_asymmetry(Relative);
        assert!(worst > 1e-3, "relative: scores nearly symmetric ({worst})");
    }
}

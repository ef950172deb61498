//! The shipped models (`models/`): each checkpoint loads, fits its task, and reaches its
//! accuracy threshold on the task's held-out split; the manifest the page reads and the
//! reproduction script agree with the recipes (`tplay::train::recipes`).
//!
//! Thresholds (also in models/README.md), on the held-out split:
//!
//! | model | metric | threshold | scored on |
//! |---|---|---|---|
//! | grammar-* (alibi, rope, sinusoidal, learned, relative) | sampled sentences that parse | ≥ 90% | 300 sentences sampled at temperature 1 from `<bos>` |
//! | grammar-none | sampled sentences that parse | ≥ 85% | 300 sentences, as above |
//! | grammar-shared-qk (sinusoidal, W_K = W_Q) | sampled sentences that parse | ≥ 90% | 300 sentences, as above |
//! | grammar-alibi (the default) | continuations of "the cat" that parse | ≥ 90% | 100 samples |
//! | translate | exact match of the greedy digits | ≥ 95% | 300 held-out numbers |
//! | sentiment | class accuracy | ≥ 95% | 500 held-out reviews |
//! | tagging | tag accuracy | ≥ 95% | 300 held-out sentences |
//! | reverse | exact match at the trained lengths (1–8) | ≥ 99% | 500 held-out strings |
//! | zh-grammar-* (alibi, sinusoidal, learned) | sampled sentences that parse | ≥ 90% | 200 sentences sampled at temperature 1 from `<bos>` |
//! | zh-grammar-none | sampled sentences that parse | ≥ 85% | 200 sentences, as above |
//! | zh-grammar-alibi | continuations of "这只猫" that parse | ≥ 90% | 50 samples |
//! | zh-numerals | exact match of the greedy digits | ≥ 95% | 300 held-out numerals |
//! | zh-sentiment | class accuracy | ≥ 95% | 500 held-out reviews |
//! | reverse-post-ln, -batch-norm, -no-embed-scale, -dot, -additive | exact match | ≥ 97% | 500 held-out strings |
//! | reverse-dropout | exact match | ≥ 75% | 500 held-out strings |
//! | reverse-no-residual (meant to be weak) | exact match | ≥ 80% | 500 held-out strings |

mod support;

use serde_json::Value;
use support::models_dir;
use tplay::config::Arch;
use tplay::model::Model;
use tplay::train::eval::{check_fit, first_sentence, sample_texts};
use tplay::train::evaluate;
use tplay::train::recipes::{recipes, Recipe};

/// The thresholds of the table above, by file; the recipes must state the same.
const THRESHOLDS: &[(&str, f64)] = &[
    ("grammar-alibi.safetensors", 0.90),
    ("grammar-rope.safetensors", 0.90),
    ("grammar-sinusoidal.safetensors", 0.90),
    ("grammar-learned.safetensors", 0.90),
    ("grammar-relative.safetensors", 0.90),
    ("grammar-none.safetensors", 0.85),
    ("grammar-shared-qk.safetensors", 0.90),
    ("translate.safetensors", 0.95),
    ("sentiment.safetensors", 0.95),
    ("tagging.safetensors", 0.95),
    ("reverse.safetensors", 0.99),
    ("zh-grammar-alibi.safetensors", 0.90),
    ("zh-grammar-sinusoidal.safetensors", 0.90),
    ("zh-grammar-learned.safetensors", 0.90),
    ("zh-grammar-none.safetensors", 0.85),
    ("zh-numerals.safetensors", 0.95),
    ("zh-sentiment.safetensors", 0.95),
    ("reverse-post-ln.safetensors", 0.97),
    ("reverse-batch-norm.safetensors", 0.97),
    ("reverse-no-residual.safetensors", 0.8),
    ("reverse-no-embed-scale.safetensors", 0.97),
    ("reverse-dot.safetensors", 0.97),
    ("reverse-additive.safetensors", 0.97),
    ("reverse-dropout.safetensors", 0.75),
];

/// Shipped weights together must stay small enough for an instant page: the page loads
/// one model at a time, but after a first visit the offline cache holds them all.
const MAX_TOTAL_BYTES: u64 = 3 * 1024 * 1024;

fn load(r: &Recipe) -> Model {
    tplay::checkpoint::load_file(&models_dir().join(r.file))
        .unwrap_or_else(|e| panic!("{}: {e}", r.file))
}

/// Held-out examples scored per task (kept modest: the test runs in the debug profile).
fn sample_size(task: &str) -> usize {
    match task {
        "grammar" => 300,
        "zh-grammar" => 200,
        "translate" | "tagging" | "zh-numerals" => 300,
        _ => 500,
    }
}

fn check(r: &Recipe) {
    let want = THRESHOLDS
        .iter()
        .find(|(f, _)| *f == r.file)
        .unwrap_or_else(|| panic!("{} has no threshold in this test", r.file))
        .1;
    assert_eq!(r.threshold, want, "{}: recipe and test disagree", r.file);
    let model = load(r);
    let task = r.run.task().unwrap();
    check_fit(&model, task.as_ref()).unwrap();
    let cfg = r.run.model_config(task.as_ref()).unwrap();
    assert_eq!(
        model.config, cfg,
        "{}: the checkpoint's config is not the recipe's",
        r.file
    );
    let report = evaluate(&model, task.as_ref(), sample_size(&r.run.task), 1).unwrap();
    eprintln!(
        "{}: {} {:.3} on {} (threshold {want}), held-out loss {:.4}; {:?}",
        r.file, report.metric, report.accuracy, report.n, report.held_out_loss, report.samples
    );
    assert!(
        report.accuracy >= want,
        "{}: {} is {:.3}, below {want}",
        r.file,
        report.metric,
        report.accuracy
    );
}

fn recipe(file: &str) -> Recipe {
    recipes()
        .into_iter()
        .find(|r| r.file == file)
        .unwrap_or_else(|| panic!("no recipe for {file}"))
}

#[test]
fn grammar_models_of_every_position_encoding_write_sentences_that_parse() {
    for r in recipes().iter().filter(|r| r.run.task == "grammar") {
        check(r);
    }
}

/// Share of `n` sampled continuations of the recipe's default prompt whose first sentence
/// parses; every sample must start with the prompt.
fn prompt_continuations_that_parse(r: &Recipe, n: usize) -> usize {
    let model = load(r);
    assert_eq!(model.config.arch, Arch::DecoderOnly);
    let task = r.run.task().unwrap();
    let prompt = model.tokenizer.encode(r.default_prompt);
    assert!(prompt.unknown.is_empty());
    let end = task.sentence_end();
    let stop = model.tokenizer.id(&end.to_string());
    let texts = sample_texts(&model, &prompt.ids, n, 64, stop, 3).unwrap();
    let good = texts
        .iter()
        .filter(|t| first_sentence(t, end).is_some_and(|s| task.accepts(s) == Some(true)))
        .count();
    eprintln!(
        "{}: \"{}\" → {good}/{n} parse, e.g. {:?}",
        r.file,
        r.default_prompt,
        &texts[..3]
    );
    assert!(texts.iter().all(|t| t.starts_with(r.default_prompt)));
    good
}

#[test]
fn default_model_continues_the_cat_with_sentences_that_parse() {
    let good = prompt_continuations_that_parse(&recipes()[0], 100);
    assert!(
        good >= 90,
        "only {good} of 100 continuations of the prompt parse"
    );
}

/// The largest |s_ij − s_ji| and the largest |s_ij| over every head of every layer, for
/// a grammar sentence run without the causal mask (every score finite).
fn score_asymmetry(model: &Model) -> (f32, f32) {
    let ids = model
        .tokenizer
        .encode("the dogs that the cat sees run.")
        .ids;
    let batch = tplay::model::forward::Batch::single(&ids).unwrap();
    let opts = tplay::model::ForwardOptions {
        causal: Some(false),
        trace_attention: true,
        ..Default::default()
    };
    let trace = model.forward(&batch, &opts).unwrap();
    assert_eq!(trace.attention.len(), model.config.n_layers);
    let (mut worst, mut largest) = (0.0f32, 0.0f32);
    for a in &trace.attention {
        let (h, t) = (a.scores.shape[1], a.scores.shape[2]); // (1, H, T, T)
        assert_eq!(a.scores.shape[3], t);
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
fn shared_qk_model_has_symmetric_scores_before_the_mask_and_its_untied_namesake_not() {
    let shared = recipes()
        .into_iter()
        .find(|r| r.run.share_qk)
        .expect("a recipe with W_K = W_Q");
    let model = load(&shared);
    assert!(model.config.share_qk, "{}: share_qk is off", shared.file);
    let (worst, largest) = score_asymmetry(&model);
    eprintln!(
        "{}: largest |s_ij − s_ji| = {worst:e} (largest |s| {largest})",
        shared.file
    );
    assert!(
        largest > 0.1,
        "{}: the scores are all near zero",
        shared.file
    );
    assert!(
        worst < 1e-4,
        "{}: scores differ by {worst} across the diagonal",
        shared.file
    );
    // The same recipe with separate W_Q and W_K: far from symmetric.
    let untied = recipe("grammar-sinusoidal.safetensors");
    let (worst, _) = score_asymmetry(&load(&untied));
    eprintln!("{}: largest |s_ij − s_ji| = {worst}", untied.file);
    assert!(
        worst > 0.1,
        "{}: scores nearly symmetric ({worst})",
        untied.file
    );
}

#[test]
fn translation_model_writes_the_digits_of_unseen_numbers() {
    check(&recipe("translate.safetensors"));
}

#[test]
fn sentiment_classifier_gets_negation_right_on_unseen_reviews() {
    check(&recipe("sentiment.safetensors"));
}

#[test]
fn tagger_tags_unseen_sentences() {
    check(&recipe("tagging.safetensors"));
}

#[test]
fn reverse_model_reverses_unseen_strings() {
    check(&recipe("reverse.safetensors"));
}

#[test]
fn chinese_grammar_models_write_sentences_that_parse() {
    let zh: Vec<Recipe> = recipes()
        .into_iter()
        .filter(|r| r.run.task == "zh-grammar")
        .collect();
    assert_eq!(zh.len(), 4, "alibi, sinusoidal, learned, none");
    for r in &zh {
        check(r);
    }
    let good = prompt_continuations_that_parse(&zh[0], 50);
    assert!(
        good >= 45,
        "only {good} of 50 continuations of the prompt parse"
    );
}

#[test]
fn chinese_numerals_model_writes_the_digits_of_unseen_numerals() {
    let r = recipe("zh-numerals.safetensors");
    check(&r);
    // The issue's own examples (written by hand), whatever their split.
    let model = load(&r);
    let task = tplay::tasks::zh_numerals::ZhNumeralsTask::new();
    for (numeral, digits) in [("三百一十二", "312"), ("一万零五", "10005")] {
        assert_eq!(
            tplay::tasks::zh_numerals::numeral(digits.parse().unwrap()),
            numeral
        );
        let ex = task.example(digits.parse().unwrap());
        let out = tplay::train::eval::greedy_answers(&model, &[ex]).unwrap();
        assert_eq!(
            model.tokenizer.decode(&out[0]),
            format!("{digits}<eos>"),
            "{numeral}"
        );
    }
    // 两 before 千 and 百 (written by hand): the same digits as the 二 reading.
    for (numeral, digits) in [("两千", 2000), ("一万两千", 12000), ("两百", 200)] {
        assert!(tplay::tasks::zh_numerals::readings(digits).contains(&numeral.to_string()));
        let ex = task.example_read(digits, numeral);
        let out = tplay::train::eval::greedy_answers(&model, &[ex]).unwrap();
        assert_eq!(
            model.tokenizer.decode(&out[0]),
            format!("{digits}<eos>"),
            "{numeral}"
        );
    }
}

#[test]
fn chinese_sentiment_classifier_gets_negation_right_on_unseen_reviews() {
    let r = recipe("zh-sentiment.safetensors");
    check(&r);
    let model = load(&r);
    let task = tplay::tasks::zh_sentiment::ZhSentimentTask::new();
    // Labelled by hand: 不 and 没 flip a clause.
    let reviews = [
        ("这部电影很好", 1),
        ("这部电影不好", 0),
        ("这部电影不差", 1),
        ("结局让我失望", 0),
        ("结局没让我失望", 1),
        ("这首歌没意思", 0),
        // 不错 is praise though it holds 不; 一般 is lukewarm blame, 还行 lukewarm praise.
        ("这部电影不错", 1),
        ("这部电影很一般", 0),
        ("这个故事还行", 1),
        ("这首歌很好听", 1),
        ("我很不喜欢这首歌", 0),
        ("这部电影很好，但是结局很一般。", 0),
    ];
    let examples: Vec<_> = reviews.iter().map(|(s, l)| task.example(s, *l)).collect();
    let got = tplay::train::eval::classify(&model, &examples).unwrap();
    for ((s, want), got) in reviews.iter().zip(got) {
        assert_eq!(got, *want, "{s}");
    }
}

/// (T, V) logits of one sequence, `<bos>` first, run without the causal mask.
fn logits_without_causal_mask(model: &Model, text: &str) -> Vec<Vec<f32>> {
    let mut ids = vec![model.tokenizer.spec.bos];
    let enc = model.tokenizer.encode(text);
    assert!(enc.unknown.is_empty(), "{text}");
    ids.extend(enc.ids);
    let batch = tplay::model::forward::Batch::single(&ids).unwrap();
    let opts = tplay::model::ForwardOptions {
        causal: Some(false),
        ..Default::default()
    };
    let trace = model.forward(&batch, &opts).unwrap();
    let v = model.config.vocab_size;
    trace
        .logits
        .data
        .chunks_exact(v)
        .map(<[f32]>::to_vec)
        .collect() // (T, V)
}

#[test]
fn without_positions_or_causal_mask_the_chinese_model_cannot_tell_cat_chases_dog_from_dog_chases_cat(
) {
    // <bos> 猫 追 狗 and <bos> 狗 追 猫: positions 1 and 3 swap.
    let swap = [0, 3, 2, 1];
    let none = load(&recipe("zh-grammar-none.safetensors"));
    let a = logits_without_causal_mask(&none, "猫追狗");
    let b = logits_without_causal_mask(&none, "狗追猫");
    for (t, &src) in swap.iter().enumerate() {
        let d = support::max_diff(&b[t], &a[src]);
        assert!(d < 1e-4, "position {t} ← {src}: differs by {d}");
    }
    // Not the same outputs at the same places: the permutation is what is preserved.
    support::assert_differ("the same place in the swapped sentence", &a[1], &b[1], 1e-2);
    // With positions (ALiBi) the two sentences are different inputs.
    let alibi = load(&recipe("zh-grammar-alibi.safetensors"));
    let a = logits_without_causal_mask(&alibi, "猫追狗");
    let b = logits_without_causal_mask(&alibi, "狗追猫");
    let (moved, permuted): (Vec<f32>, Vec<f32>) = swap
        .iter()
        .enumerate()
        .flat_map(|(t, &src)| b[t].iter().copied().zip(a[src].iter().copied()))
        .unzip();
    support::assert_differ(
        "ALiBi outputs against the permuted ones",
        &moved,
        &permuted,
        1e-2,
    );
}

#[test]
fn saving_a_shipped_checkpoint_again_gives_the_same_bytes() {
    // The header's keys are sorted, so retraining a model reproduces its file exactly.
    for r in recipes() {
        let path = models_dir().join(r.file);
        let bytes = std::fs::read(&path).unwrap();
        let again = tplay::checkpoint::save(&load(&r)).unwrap();
        assert!(
            bytes == again,
            "{}: saving it again changes its bytes",
            r.file
        );
    }
}

#[test]
fn every_recipe_has_a_threshold_and_every_threshold_a_recipe() {
    let files: Vec<&str> = recipes().iter().map(|r| r.file).collect();
    let listed: Vec<&str> = THRESHOLDS.iter().map(|(f, _)| *f).collect();
    assert_eq!(files, listed);
}

#[test]
fn manifest_lists_every_shipped_model_as_the_recipes_describe_it() {
    let text = std::fs::read_to_string(models_dir().join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    let entries = manifest.as_array().expect("the manifest is a list");
    let all = recipes();
    assert_eq!(entries.len(), all.len(), "one entry per shipped model");
    let mut total = 0;
    for (e, r) in entries.iter().zip(&all) {
        let field = |k: &str| {
            e[k].as_str()
                .unwrap_or_else(|| panic!("{}: `{k}` is missing or not a string", r.file))
        };
        assert_eq!(field("file"), r.file);
        assert_eq!(field("title"), r.title);
        assert_eq!(field("task"), r.run.task);
        assert_eq!(field("default_prompt"), r.default_prompt);
        assert_eq!(field("description"), r.description);
        assert_eq!(field("command"), r.command());
        let model = load(r);
        let cfg = serde_json::to_value(&model.config).unwrap();
        assert_eq!(e["arch"], cfg["arch"], "{}", r.file);
        assert_eq!(e["pos_encoding"], cfg["pos_encoding"], "{}", r.file);
        // A model with W_K = W_Q says so, for the page to tell it from its namesake
        // with the same position encoding; the others leave the field out.
        if model.config.share_qk {
            assert_eq!(e["share_qk"], Value::Bool(true), "{}", r.file);
        } else {
            assert!(
                e.get("share_qk").is_none(),
                "{}: share_qk on an untied model",
                r.file
            );
        }
        assert_eq!(
            e["params"].as_u64(),
            Some(model.param_count() as u64),
            "{}",
            r.file
        );
        // Classifiers name their classes, in label order, for the page to show.
        let names = r.run.task().unwrap().class_names().to_vec();
        if names.is_empty() {
            assert!(
                e.get("classes").is_none(),
                "{}: classes on a non-classifier",
                r.file
            );
        } else {
            assert_eq!(e["classes"], serde_json::json!(names), "{}", r.file);
        }
        // A sibling names the model it differs from and how, for the page to group it.
        match &r.variant {
            Some(v) => {
                assert_eq!(field("variant"), v.label);
                assert_eq!(field("variant_of"), v.of);
                assert!(e["train_seconds"].as_f64().is_some(), "{}", r.file);
            }
            None => assert!(
                e.get("variant").is_none() && e.get("variant_of").is_none(),
                "{}: a variant field on a model that is no sibling",
                r.file
            ),
        }
        let acc = e["held_out_accuracy"].as_f64().expect("held_out_accuracy");
        assert!(acc >= r.threshold, "{}: manifest says {acc}", r.file);
        total += std::fs::metadata(models_dir().join(r.file)).unwrap().len();
    }
    assert!(
        total <= MAX_TOTAL_BYTES,
        "shipped weights take {total} bytes, over {MAX_TOTAL_BYTES}"
    );
}

#[test]
fn train_all_script_runs_exactly_the_recipes_commands() {
    let script = std::fs::read_to_string(models_dir().join("train_all.sh")).unwrap();
    let lines: Vec<&str> = script
        .lines()
        .filter(|l| l.starts_with("cargo run"))
        .collect();
    let commands: Vec<String> = recipes().iter().map(Recipe::command).collect();
    assert_eq!(lines, commands);
}

#[test]
fn reverse_siblings_differ_from_the_reverse_model_in_one_design_choice_and_reach_their_thresholds()
{
    let base = recipe("reverse.safetensors");
    let base_cfg = load(&base).config;
    let siblings: Vec<Recipe> = recipes()
        .into_iter()
        .filter(|r| r.variant.is_some())
        .collect();
    assert_eq!(siblings.len(), 7);
    let mut changed = vec![];
    for r in &siblings {
        let v = r.variant.as_ref().unwrap();
        assert_eq!(v.of, base.file, "{}", r.file);
        assert_eq!(
            (r.run.task.as_str(), r.run.seed, r.run.steps),
            ("reverse", 1, 1000)
        );
        check(r);
        // Exactly one field of the config differs from the reverse model's.
        let a = serde_json::to_value(&base_cfg).unwrap();
        let b = serde_json::to_value(&load(r).config).unwrap();
        let diff: Vec<String> = a
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, va)| b[k.as_str()] != **va)
            .map(|(k, _)| format!("{k}={}", b[k.as_str()]))
            .collect();
        assert_eq!(diff.len(), 1, "{}: {diff:?}", r.file);
        changed.push(diff[0].clone());
    }
    changed.sort();
    assert_eq!(
        changed,
        [
            "dropout=0.10000000149011612", // 0.1 as an f32
            "norm=\"batch_norm\"",
            "norm=\"post_ln\"",
            "residual=false",
            "scale_embeddings=false",
            "score=\"additive\"",
            "score=\"dot\"",
        ]
    );
}

/// The evaluation decodes its greedy answers with the KV cache (prompt once, then one
/// position per token); every shipped exact-match model gives the same answers as the
/// recompute of every position, on 200 held-out examples of several prompt lengths.
#[test]
fn cached_greedy_answers_equal_the_recomputed_ones() {
    use tplay::tasks::{held_out_examples, Metric};
    use tplay::train::eval::{greedy_answers, greedy_answers_recomputed};
    let mut checked = 0;
    for r in recipes() {
        let task = r.run.task().unwrap();
        if task.metric() != Metric::ExactMatch {
            continue;
        }
        let model = load(&r);
        let examples = held_out_examples(task.as_ref(), 200, 7);
        let lengths: std::collections::BTreeSet<_> = examples
            .iter()
            .map(|e| (e.prompt_len, e.src.len()))
            .collect();
        assert!(lengths.len() > 1, "{}: one prompt length only", r.file);
        let cached = greedy_answers(&model, &examples).unwrap();
        let recomputed = greedy_answers_recomputed(&model, &examples).unwrap();
        assert_eq!(cached, recomputed, "{}", r.file);
        assert!(cached.iter().all(|a| !a.is_empty()));
        checked += 1;
    }
    assert!(checked >= 10, "exact-match models checked: {checked}");
}

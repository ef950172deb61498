//! `tplay` with the shipped Chinese models: Chinese text in through `--text`, `--prompt`
//! and `--src`, one token per character, UTF-8 out, and one `<unk>` per unknown character
//! at its character position (never one per byte).

mod support;

use serde_json::{json, Value};
use support::cli::{shipped_model as model, tplay_ok as tplay};
use tplay::tasks::zh_grammar;

fn json_of(args: &[&str]) -> Value {
    serde_json::from_slice(&tplay(args).stdout).expect("stdout is one JSON object")
}

fn stdout_text(args: &[&str]) -> String {
    String::from_utf8(tplay(args).stdout).expect("stdout is UTF-8")
}

/// Index of the largest class logit.
fn class_of(out: &Value) -> usize {
    let logits: Vec<f64> = out["class_logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    (0..logits.len())
        .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
        .unwrap()
}

#[test]
fn forward_reads_chinese_text_one_character_per_token_and_negation_flips_the_class() {
    let m = model("zh-sentiment.safetensors");
    let bad = json_of(&["forward", "--model", &m, "--text", "这部电影不好", "--bos"]);
    assert_eq!(
        bad["token_text"],
        json!(["<bos>", "这", "部", "电", "影", "不", "好"])
    );
    assert_eq!(bad["unknown"], json!([]));
    assert_eq!(class_of(&bad), 0, "这部电影不好 is negative (负面)");
    let good = json_of(&["forward", "--model", &m, "--text", "这部电影很好", "--bos"]);
    assert_eq!(class_of(&good), 1, "这部电影很好 is positive (正面)");
}

#[test]
fn unknown_characters_are_one_unk_each_at_their_character_position() {
    let m = model("zh-sentiment.safetensors");
    // 吃 (3 bytes) and 😀 (4 bytes) are not in the vocabulary.
    let out = json_of(&["forward", "--model", &m, "--text", "电影不好吃😀", "--bos"]);
    let tokens = out["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 7, "<bos> and six characters");
    assert_eq!(
        out["unknown"],
        json!([{"position": 5, "text": "吃"}, {"position": 6, "text": "😀"}])
    );
    assert_eq!(tokens[5], 3);
    assert_eq!(tokens[6], 3);
    assert_eq!(out["token_text"][5], "<unk>");
}

#[test]
fn numerals_model_writes_the_digits_of_a_chinese_numeral() {
    let m = model("zh-numerals.safetensors");
    for (numeral, digits) in [("一万零五", "10005"), ("三百一十二", "312")] {
        let text = stdout_text(&["generate", "--model", &m, "--src", numeral]);
        assert_eq!(text.trim_end(), digits, "{numeral}");
    }
    // An unknown source character is reported where it is, counted in characters.
    let out = stdout_text(&[
        "generate",
        "--model",
        &m,
        "--src",
        "一万零五块",
        "--json",
        "--max-tokens",
        "1",
    ]);
    let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(
        summary["src_unknown"],
        json!([{"position": 4, "text": "块"}])
    );
}

#[test]
fn grammar_model_continues_a_chinese_prompt_with_a_sentence_that_parses() {
    let m = model("zh-grammar-alibi.safetensors");
    let text = stdout_text(&[
        "generate",
        "--model",
        &m,
        "--prompt",
        "这只猫",
        "--max-tokens",
        "30",
    ]);
    let whole = format!("这只猫{}", text.trim_end());
    let end = whole.find(zh_grammar::STOP).expect("a full stop") + zh_grammar::STOP.len_utf8();
    let first = &whole[..end];
    assert!(zh_grammar::accepts(first), "{first:?} does not parse");
    // The prompt is one token per character, and so is every generated step.
    let out = stdout_text(&[
        "generate",
        "--model",
        &m,
        "--prompt",
        "这只猫",
        "--max-tokens",
        "5",
        "--json",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(
        summary["prompt"].as_array().unwrap().len(),
        4,
        "<bos>这只猫"
    );
    assert_eq!(summary["text"].as_str().unwrap().chars().count(), 5);
    assert!(whole.starts_with(&format!("这只猫{}", summary["text"].as_str().unwrap())));
}

//! `tplay generate`: text mode streams what `--json` reports step by step, the cache
//! does not change the tokens, unknown characters are reported with their positions, and
//! every bad argument exits non-zero with one line on stderr.

mod support;

use std::process::Output;

use serde_json::Value;
use support::cli::fixture_checkpoint as fixture;

/// Decoder-only, vocabulary <pad> <bos> <eos> <unk> a…i, max_len 16.
fn dec() -> String {
    fixture("dec_preln_gelu_rope")
}

/// Encoder-decoder with the same vocabulary.
fn encdec() -> String {
    fixture("encdec_preln_gelu_sin")
}

/// `tplay generate args…`, which must succeed.
fn ok(args: &[&str]) -> Output {
    support::cli::tplay_ok(&[&["generate"], args].concat())
}

/// The JSON lines of a `--json` run: steps, then the summary.
fn json_lines(args: &[&str]) -> (Vec<Value>, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = ok(&all);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is one JSON object"))
        .collect();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(summary["type"], "summary");
    assert!(lines.iter().all(|l| l["type"] == "step"));
    (lines, summary)
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn json_lines_hold_one_step_per_token_and_a_summary_that_agrees() {
    let m = dec();
    let (steps, summary) = json_lines(&[
        "--model",
        &m,
        "--prompt",
        "abc",
        "--temperature",
        "0.9",
        "--seed",
        "5",
        "--max-tokens",
        "6",
    ]);
    assert_eq!(steps.len() as u64, summary["steps"].as_u64().unwrap());
    let tokens: Vec<u64> = steps.iter().map(|s| s["token"].as_u64().unwrap()).collect();
    assert_eq!(tokens, ids(&summary["tokens"]));
    assert_eq!(ids(&summary["prompt"]), vec![1, 4, 5, 6], "<bos> a b c");
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["index"].as_u64().unwrap(), i as u64);
        assert_eq!(s["cache_len"].as_u64().unwrap(), 4 + i as u64);
        assert_eq!(s["logits"].as_array().unwrap().len(), 13);
        assert_eq!(s["attention"].as_array().unwrap().len(), 2, "two layers");
        assert!(s["flops"].as_u64().unwrap() > 0);
        assert!(s["wall_ms"].as_f64().unwrap() >= 0.0);
        assert_eq!(s["candidates"].as_array().unwrap().len(), 5);
    }
    let last = steps.last().unwrap();
    assert_eq!(last["stop"], summary["stop"]);
    assert!(steps[..steps.len() - 1].iter().all(|s| s["stop"].is_null()));
}

#[test]
fn text_mode_prints_the_tokens_json_reports() {
    let m = dec();
    let args = [
        "--model",
        &m,
        "--prompt",
        "ba",
        "--strategy",
        "sample",
        "--top-k",
        "4",
        "--seed",
        "9",
        "--max-tokens",
        "8",
    ];
    let text = String::from_utf8(ok(&args).stdout).unwrap();
    let (_, summary) = json_lines(&args);
    assert_eq!(text, format!("{}\n", summary["text"].as_str().unwrap()));
}

#[test]
fn no_cache_generates_the_same_tokens_at_a_higher_cost() {
    let m = dec();
    let args = [
        "--model",
        &m,
        "--prompt",
        "a",
        "--temperature",
        "1.2",
        "--seed",
        "2",
        "--max-tokens",
        "12",
    ];
    let (cached, with) = json_lines(&args);
    let mut slow = args.to_vec();
    slow.push("--no-cache");
    let (full, without) = json_lines(&slow);
    assert_eq!(with["tokens"], without["tokens"]);
    assert_eq!(with["use_cache"], true);
    assert_eq!(without["use_cache"], false);
    // Seed 2 runs the whole budget on this fixture; compare the last step's cost.
    assert_eq!(cached.len(), 12);
    let n = cached.len() - 1;
    assert!(full[n]["flops"].as_u64() > cached[n]["flops"].as_u64());
    assert_eq!(full[n]["fed"].as_u64().unwrap(), 2 + n as u64);
    assert_eq!(cached[n]["fed"].as_u64().unwrap(), 1);
}

#[test]
fn beam_search_reports_its_beams_and_prints_its_answer_at_the_end() {
    let m = encdec();
    let args = [
        "--model",
        &m,
        "--src",
        "abc",
        "--beam-width",
        "3",
        "--length-penalty",
        "0.6",
        "--max-tokens",
        "5",
    ];
    let (steps, summary) = json_lines(&args);
    for s in &steps {
        assert!(s["token"].is_null());
        let beam = &s["beam"];
        assert!(beam["live"].as_array().unwrap().len() <= 3);
        assert!(!s["cross_attention"].as_array().unwrap().is_empty());
    }
    assert_eq!(summary["strategy"]["kind"], "beam");
    assert_eq!(ids(&summary["src"]), vec![4, 5, 6]);
    let text = String::from_utf8(ok(&args).stdout).unwrap();
    assert_eq!(text, format!("{}\n", summary["text"].as_str().unwrap()));
}

#[test]
fn unknown_prompt_characters_are_reported_with_their_positions() {
    let m = dec();
    let (_, summary) = json_lines(&["--model", &m, "--prompt", "aZbY", "--max-tokens", "1"]);
    let unknown = summary["unknown"].as_array().unwrap();
    assert_eq!(unknown.len(), 2);
    assert_eq!(unknown[0]["position"], 1);
    assert_eq!(unknown[0]["text"], "Z");
    assert_eq!(unknown[1]["position"], 3);
    assert_eq!(
        ids(&summary["prompt"]),
        vec![1, 4, 3, 5, 3],
        "<unk> stands in"
    );
    let err = String::from_utf8(ok(&["--model", &m, "--prompt", "aZ"]).stderr).unwrap();
    assert!(err.contains("token 1") && err.contains("\"Z\""), "{err}");
}

/// `tplay generate args…` fails with one line naming `needle`.
fn fails_with(args: &[&str], needle: &str) {
    support::cli::fails_with(&[&["generate"], args].concat(), needle);
}

#[test]
fn bad_arguments_exit_nonzero_with_a_reason() {
    let (d, e) = (dec(), encdec());
    let d = d.as_str();
    fails_with(&["--model", d, "--temperature", "-1"], "temperature");
    fails_with(&["--model", d, "--temperature", "nan"], "temperature");
    fails_with(&["--model", d, "--top-p", "1.5"], "top_p");
    fails_with(&["--model", d, "--top-k", "0"], "top_k");
    fails_with(&["--model", d, "--beam-width", "0"], "beam width");
    fails_with(&["--model", d, "--length-penalty", "inf"], "α");
    fails_with(
        &["--model", d, "--beam-width", "2", "--top-k", "3"],
        "do not mix",
    );
    fails_with(
        &["--model", d, "--strategy", "greedy", "--temperature", "1"],
        "apply to --strategy sample",
    );
    fails_with(
        &["--model", d, "--strategy", "sample", "--beam-width", "2"],
        "apply to --strategy beam",
    );
    fails_with(&["--model", d, "--max-tokens", "0"], "max_new_tokens");
    fails_with(
        &["--model", d, "--prompt", "abcdefghiabcdefghi"],
        "max_len = 16",
    );
    fails_with(&["--model", d, "--src", "abc"], "--src");
    fails_with(&["--model", &e], "--src");
    fails_with(
        &["--model", &fixture("enc_postln_relu_sin")],
        "encoder_only",
    );
    fails_with(&["--model", "/nonexistent.safetensors"], "/nonexistent");
    fails_with(&["--model", d, "--strategy", "nucleus"], "error:");
    fails_with(&["--model", d, "--backend", "tpu"], "unknown backend 'tpu'");
}

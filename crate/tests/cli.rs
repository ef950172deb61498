//! The `tplay` binary: `forward` matches the PyTorch fixtures, `info` describes a
//! checkpoint, and every bad argument exits non-zero with one line on stderr.

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::cli::{fails_with, tplay};
use support::fixtures::dir as fixtures;

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "tplay failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn numbers(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(numbers).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        other => panic!("not a number: {other}"),
    }
}

/// Run `tplay forward` on the first sequence of a fixture's first case (its real tokens
/// only) and compare with PyTorch's numbers at those positions. Returns the worst error.
fn forward_matches_fixture(name: &str) -> f64 {
    let dir = fixtures();
    let fx: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
            .unwrap();
    let case = &fx["cases"][0];
    let row = |v: &Value| -> Vec<u64> {
        v[0].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .take_while(|&x| x != 0)
            .collect()
    };
    let tokens = row(&case["tokens"]);
    let list = |ids: &[u64]| {
        ids.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let model = dir.join(fx["checkpoint"].as_str().unwrap());
    let mut args = vec![
        "forward".to_string(),
        "--model".into(),
        model.to_string_lossy().into_owned(),
        "--tokens".into(),
        list(&tokens),
    ];
    if !case["src_tokens"].is_null() {
        args.push("--src-tokens".into());
        args.push(list(&row(&case["src_tokens"])));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let got = json_of(&tplay(&argv));
    let (got, want) = if case["class_logits"].is_null() {
        let want: Vec<f64> = case["logits"][0]
            .as_array()
            .unwrap()
            .iter()
            .take(tokens.len())
            .flat_map(numbers)
            .collect();
        (numbers(&got["logits"]), want)
    } else {
        (
            numbers(&got["class_logits"]),
            numbers(&case["class_logits"][0]),
        )
    };
    assert_eq!(got.len(), want.len(), "{name}: output size");
    let worst = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= 1e-5,
        "{name}: tplay forward differs from PyTorch by {worst}"
    );
    worst
}

#[test]
fn forward_matches_pytorch_for_each_architecture() {
    for name in [
        "dec_postln_relu_sin",
        "dec_preln_gelu_rope",
        "enc_postln_relu_sin",
        "enc_preln_gelu_sin_cls",
        "encdec_postln_relu_sin",
        "encdec_preln_gelu_relative_fn",
    ] {
        let worst = forward_matches_fixture(name);
        eprintln!("{name}: worst |tplay - torch| = {worst:.2e}");
    }
}

#[test]
fn forward_trace_has_one_probability_map_per_layer_and_head() {
    let model = fixtures().join("dec_preln_gelu_rope.safetensors");
    let out = json_of(&tplay(&[
        "forward",
        "--model",
        model.to_str().unwrap(),
        "--tokens",
        "1,5,6,7",
        "--trace",
    ]));
    let att = &out["attention"]["decoder_self"];
    let (l, h) = (
        att.as_array().unwrap().len(),
        att[0].as_array().unwrap().len(),
    );
    assert_eq!((l, h), (2, 4));
    // causal by default: row 0 attends only to itself
    assert_eq!(numbers(&att[0][0][0]), vec![1.0, 0.0, 0.0, 0.0]);
    let open = json_of(&tplay(&[
        "forward",
        "--model",
        model.to_str().unwrap(),
        "--tokens",
        "1,5,6,7",
        "--trace",
        "--no-causal-mask",
    ]));
    let row0 = numbers(&open["attention"]["decoder_self"][0][0][0]);
    assert!(
        row0[3] > 0.0,
        "without the causal mask the future gets weight: {row0:?}"
    );
}

#[test]
fn text_input_reports_unknown_characters() {
    let model = fixtures().join("dec_preln_gelu_rope.safetensors");
    let out = json_of(&tplay(&[
        "forward",
        "--model",
        model.to_str().unwrap(),
        "--text",
        "aZb",
    ]));
    assert_eq!(out["unknown"][0]["position"], 1);
    assert_eq!(out["unknown"][0]["text"], "Z");
    assert_eq!(out["tokens"][1], 3, "Z becomes <unk>");
    let with_bos = json_of(&tplay(&[
        "forward",
        "--model",
        model.to_str().unwrap(),
        "--text",
        "aZb",
        "--bos",
    ]));
    assert_eq!(with_bos["tokens"][0], 1, "<bos> first");
    assert_eq!(with_bos["unknown"][0]["position"], 2);
}

#[test]
fn info_describes_the_checkpoint() {
    let model = fixtures().join("encdec_postln_relu_sin.safetensors");
    let out = json_of(&tplay(&["info", "--model", model.to_str().unwrap()]));
    assert_eq!(out["config"]["arch"], "encoder_decoder");
    let tensors = out["tensors"].as_array().unwrap();
    assert!(tensors
        .iter()
        .any(|t| t["name"] == "decoder.layers.0.multihead_attn.in_proj_weight"));
    let counted: u64 = tensors
        .iter()
        .map(|t| {
            t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .product::<u64>()
        })
        .sum();
    assert_eq!(
        counted,
        out["parameters"].as_u64().unwrap() + out["buffers"].as_u64().unwrap()
    );
}

/// Bad input: non-zero exit, exactly one line on stderr that says what is wrong.
#[test]
fn ablate_reads_a_head_as_site_dot_layer_dot_head_and_the_older_colon_form_alike() {
    let dec = fixtures().join("dec_postln_relu_sin.safetensors");
    let logits = |extra: &[&str]| {
        let mut args = vec![
            "forward",
            "--model",
            dec.to_str().unwrap(),
            "--tokens",
            "1,4,5,6",
        ];
        args.extend_from_slice(extra);
        numbers(&json_of(&tplay(&args))["logits"])
    };
    let dotted = logits(&["--ablate", "decoder_self.0.1"]);
    let colon = logits(&["--ablate", "decoder_self:0:1"]);
    assert_eq!(dotted, colon, "the two spellings name the same head");
    assert_ne!(
        dotted,
        logits(&[]),
        "switching the head off changes the logits"
    );
    let other = logits(&["--ablate", "decoder_self.1.0"]);
    assert_ne!(dotted, other, "another head is another head");
}

#[test]
fn bad_arguments_exit_nonzero_with_a_reason() {
    let dec = fixtures().join("dec_preln_gelu_rope.safetensors");
    let dec = dec.to_str().unwrap();
    let encdec = fixtures().join("encdec_postln_relu_sin.safetensors");
    let encdec = encdec.to_str().unwrap();
    fails_with(
        &[
            "forward",
            "--model",
            "/nonexistent.safetensors",
            "--tokens",
            "1",
        ],
        "cannot read /nonexistent.safetensors",
    );
    fails_with(
        &["forward", "--model", dec, "--tokens", "1,x"],
        "'x' is not a token id",
    );
    fails_with(&["forward", "--model", dec, "--tokens", "1,999"], "999");
    fails_with(&["forward", "--model", dec, "--tokens", ""], "empty");
    fails_with(
        &[
            "forward",
            "--model",
            dec,
            "--tokens",
            "1",
            "--ablate",
            "decoder_self:0",
        ],
        "SITE.LAYER.HEAD",
    );
    fails_with(
        &[
            "forward",
            "--model",
            dec,
            "--tokens",
            "1",
            "--backend",
            "tpu",
        ],
        "unknown backend 'tpu'",
    );
    fails_with(&["forward", "--model", encdec, "--tokens", "1,4"], "source");
    fails_with(&["forward", "--model", dec], "error:");
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    fails_with(
        &["info", "--model", readme.to_str().unwrap()],
        "not a safetensors file",
    );
}

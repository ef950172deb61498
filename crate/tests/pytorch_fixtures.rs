//! The CPU forward pass against PyTorch: every forward fixture in `tests/fixtures/`
//! (made by `tests/fixtures/make_fixtures.py` from docs/model.md) is loaded from its
//! checkpoint, every case is run, and logits, class logits and attention probabilities
//! must agree within 1e-5.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tplay::model::forward::Batch;
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode, Trace};

/// Largest allowed absolute difference from the fixture's numbers.
const TOL: f32 = 1e-5;

/// The committed forward fixtures number 34; fewer found means the directory moved or a
/// file went missing, and the test must not pass on what is left.
const MIN_FIXTURES: usize = 34;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn ids(v: &Value) -> Vec<Vec<u32>> {
    v.as_array()
        .expect("a token batch is an array of rows")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a token row is an array")
                .iter()
                .map(|x| x.as_u64().expect("token ids are integers") as u32)
                .collect()
        })
        .collect()
}

/// Flatten nested JSON arrays of numbers, recording the shape.
fn flat(v: &Value, shape: &mut Vec<usize>, out: &mut Vec<f32>, depth: usize) {
    match v {
        Value::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else {
                assert_eq!(shape[depth], items.len(), "ragged array in a fixture");
            }
            for it in items {
                flat(it, shape, out, depth + 1);
            }
        }
        Value::Number(n) => out.push(n.as_f64().expect("a number") as f32),
        other => panic!("unexpected JSON value {other} in a numeric array"),
    }
}

fn tensor(v: &Value) -> (Vec<usize>, Vec<f32>) {
    let (mut shape, mut data) = (vec![], vec![]);
    flat(v, &mut shape, &mut data, 0);
    (shape, data)
}

fn max_diff(what: &str, got_shape: &[usize], got: &[f32], want: &Value) -> f32 {
    let (shape, data) = tensor(want);
    assert_eq!(got_shape, shape.as_slice(), "{what}: shape");
    let mut worst = 0.0f32;
    for (i, (g, w)) in got.iter().zip(&data).enumerate() {
        assert!(
            g.is_finite(),
            "{what}: non-finite value {g} at flat index {i}"
        );
        worst = worst.max((g - w).abs());
    }
    worst
}

fn options(case: &Value) -> ForwardOptions {
    let ablate = case["ablate"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|a| HeadRef {
                    site: AttnSite::parse(a[0].as_str().expect("site name"))
                        .expect("a known attention site"),
                    layer: a[1].as_u64().expect("layer index") as usize,
                    head: a[2].as_u64().expect("head index") as usize,
                })
                .collect()
        })
        .unwrap_or_default();
    ForwardOptions {
        causal: case["causal"].as_bool(),
        padding_mask: case["padding_mask"].as_bool().expect("padding_mask"),
        scale: case["scale"].as_bool().expect("scale"),
        ablate,
        mode: Mode::Eval,
        trace_attention: true,
        trace_hidden: false,
    }
}

/// Run one fixture file; returns its worst difference over every compared number and
/// how many numbers were compared.
fn run_fixture(path: &Path) -> (f32, usize) {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let fx: Value = serde_json::from_str(&text).expect("fixture is JSON");
    let name = fx["name"].as_str().expect("fixture name").to_string();
    let ckpt = fixtures_dir().join(fx["checkpoint"].as_str().expect("checkpoint file"));
    let model = tplay::checkpoint::load_file(&ckpt)
        .unwrap_or_else(|e| panic!("{name}: cannot load {}: {e}", ckpt.display()));
    let mut worst = 0.0f32;
    let mut compared = 0usize;
    let cases = fx["cases"].as_array().expect("cases");
    assert!(!cases.is_empty(), "{name}: no cases");
    for (ci, case) in cases.iter().enumerate() {
        let mut batch = Batch::new(ids(&case["tokens"])).expect("fixture tokens form a batch");
        if !case["src_tokens"].is_null() {
            batch = batch
                .with_source(ids(&case["src_tokens"]))
                .expect("fixture source tokens form a batch");
        }
        let opts = options(case);
        let trace: Trace = model
            .forward(&batch, &opts)
            .unwrap_or_else(|e| panic!("{name} case {ci}: forward failed: {e}"));
        let tag = format!("{name} case {ci}");
        if !case["logits"].is_null() {
            let d = max_diff(
                &format!("{tag} logits"),
                &trace.logits.shape,
                &trace.logits.data,
                &case["logits"],
            );
            compared += trace.logits.numel();
            worst = worst.max(d);
        }
        if !case["class_logits"].is_null() {
            let cl = trace
                .class_logits
                .as_ref()
                .unwrap_or_else(|| panic!("{tag}: the model gave no class logits"));
            let d = max_diff(
                &format!("{tag} class_logits"),
                &cl.shape,
                &cl.data,
                &case["class_logits"],
            );
            compared += cl.numel();
            worst = worst.max(d);
        }
        assert!(
            !case["logits"].is_null() || !case["class_logits"].is_null(),
            "{tag}: nothing to compare"
        );
        for att in case["attention"].as_array().into_iter().flatten() {
            let site = AttnSite::parse(att["site"].as_str().expect("site")).expect("known site");
            let layer = att["layer"].as_u64().expect("layer") as usize;
            let got = trace
                .attention
                .iter()
                .find(|a| a.site == site && a.layer == layer)
                .unwrap_or_else(|| {
                    panic!("{tag}: no {} layer {layer} attention traced", site.name())
                });
            let d = max_diff(
                &format!("{tag} {} layer {layer} probs", site.name()),
                &got.probs.shape,
                &got.probs.data,
                &att["probs"],
            );
            compared += got.probs.numel();
            worst = worst.max(d);
        }
    }
    eprintln!(
        "{name:<40} {} cases, {compared:>6} numbers, worst |diff| {worst:.2e}",
        cases.len()
    );
    (worst, compared)
}

#[test]
fn cpu_forward_matches_pytorch_on_every_forward_fixture() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            let file = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            file.ends_with(".json") && !file.starts_with("train_")
        })
        .collect();
    paths.sort();
    assert!(
        paths.len() >= MIN_FIXTURES,
        "found {} forward fixtures in {}, expected at least {MIN_FIXTURES}",
        paths.len(),
        fixtures_dir().display()
    );
    let mut worst = 0.0f32;
    let mut total = 0;
    let mut over = vec![];
    for p in &paths {
        let (w, n) = run_fixture(p);
        if w > TOL {
            over.push(format!("{} ({w:.2e})", p.display()));
        }
        worst = worst.max(w);
        total += n;
    }
    eprintln!(
        "{} fixtures, {total} numbers compared, worst |diff| {worst:.2e} (tolerance {TOL:.0e})",
        paths.len()
    );
    assert!(total > 0, "no number was compared");
    assert!(
        over.is_empty(),
        "differences above tolerance in: {}",
        over.join(", ")
    );
}

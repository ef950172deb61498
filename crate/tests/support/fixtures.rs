//! The PyTorch forward fixtures (`tests/fixtures/*.json`, made by
//! `tests/fixtures/make_fixtures.py`), and the one test body that runs them on a backend.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tplay::model::forward::Batch;
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode, Model, Trace};

use super::Device;

/// The committed forward fixtures number 36; fewer found means the directory moved or a
/// file went missing, and the test must not pass on what is left.
pub const MIN_FIXTURES: usize = 36;

/// Fewer compared cases than this means most of the fixtures were not run.
pub const MIN_CASES: usize = 100;

pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Token ids of a batch: an array of rows of integers.
pub fn ids(v: &Value) -> Vec<Vec<u32>> {
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
fn flatten(v: &Value, shape: &mut Vec<usize>, out: &mut Vec<f32>, depth: usize) {
    match v {
        Value::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else {
                assert_eq!(shape[depth], items.len(), "ragged array in a fixture");
            }
            for it in items {
                flatten(it, shape, out, depth + 1);
            }
        }
        Value::Number(n) => out.push(n.as_f64().expect("a number") as f32),
        other => panic!("unexpected JSON value {other} in a numeric array"),
    }
}

/// A nested JSON array of numbers as (shape, values).
pub fn tensor(v: &Value) -> (Vec<usize>, Vec<f32>) {
    let (mut shape, mut data) = (vec![], vec![]);
    flatten(v, &mut shape, &mut data, 0);
    (shape, data)
}

/// The forward fixture files (not the `train_*` ones), sorted.
pub fn forward_fixture_files() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/fixtures exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            let file = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            file.ends_with(".json") && !file.starts_with("train_")
        })
        .collect();
    paths.sort();
    paths
}

/// The forward options a fixture case names, tracing attention and hidden states.
pub fn options(case: &Value) -> ForwardOptions {
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
        masks: vec![],
        padding_mask: case["padding_mask"].as_bool().expect("padding_mask"),
        scale: case["scale"].as_bool().expect("scale"),
        ablate,
        mode: Mode::Eval,
        trace_attention: true,
        trace_hidden: true,
        trace_ffn: false,
    }
}

/// The token batch of a fixture case (with its source for an encoder-decoder).
pub fn batch(case: &Value) -> Batch {
    let mut batch = Batch::new(ids(&case["tokens"])).expect("fixture tokens form a batch");
    if !case["src_tokens"].is_null() {
        batch = batch
            .with_source(ids(&case["src_tokens"]))
            .expect("fixture source tokens form a batch");
    }
    batch
}

/// How far a backend may be from PyTorch's numbers (absolute).
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Logits and class logits.
    pub logits: f32,
    /// Attention probabilities.
    pub probs: f32,
}

/// Largest |got − want| of one traced tensor against the fixture's numbers; the shapes
/// must agree and every number the backend gave must be finite.
fn worst(what: &str, got_shape: &[usize], got: &[f32], want: &Value) -> f32 {
    let (shape, data) = tensor(want);
    assert_eq!(got_shape, shape.as_slice(), "{what}: shape");
    for (i, g) in got.iter().enumerate() {
        assert!(
            g.is_finite(),
            "{what}: non-finite value {g} at flat index {i}"
        );
    }
    super::max_diff(got, &data)
}

/// One test body for every backend: each forward fixture's checkpoint is loaded, each case
/// run on `backend`, and logits, class logits and attention probabilities must agree with
/// PyTorch's within `tol`. `also(name, model, batch, opts, trace)` adds a backend's own
/// check of the same trace (the GPU compares it with the CPU's). Returns the worst logit
/// and probability differences.
pub fn every_forward_fixture_matches_pytorch(
    backend: &Device,
    tol: Tolerance,
    mut also: impl FnMut(&str, &Model, &Batch, &ForwardOptions, &Trace) -> Result<(), String>,
) -> (f32, f32) {
    let paths = forward_fixture_files();
    assert!(
        paths.len() >= MIN_FIXTURES,
        "found {} forward fixtures in {}, expected at least {MIN_FIXTURES}",
        paths.len(),
        dir().display()
    );
    let mut failures = vec![];
    let (mut cases, mut compared) = (0usize, 0usize);
    let (mut worst_logits, mut worst_probs) = (0.0f32, 0.0f32);
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("fixture readable");
        let fx: Value = serde_json::from_str(&text).expect("fixture is JSON");
        let name = fx["name"].as_str().expect("fixture name").to_string();
        let ckpt = dir().join(fx["checkpoint"].as_str().expect("checkpoint file"));
        let model = tplay::checkpoint::load_file(&ckpt)
            .unwrap_or_else(|e| panic!("{name}: cannot load {}: {e}", ckpt.display()));
        let list = fx["cases"].as_array().expect("cases");
        assert!(!list.is_empty(), "{name}: no cases");
        let (mut fx_logits, mut fx_probs) = (0.0f32, 0.0f32);
        for (ci, case) in list.iter().enumerate() {
            let tag = format!("{name} case {ci}");
            let batch = batch(case);
            let opts = options(case);
            let trace = match backend.forward(&model, &batch, &opts) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{tag}: forward failed: {e}"));
                    continue;
                }
            };
            assert!(
                !case["logits"].is_null() || !case["class_logits"].is_null(),
                "{tag}: nothing to compare"
            );
            if !case["logits"].is_null() {
                let d = worst(
                    &format!("{tag} logits"),
                    &trace.logits.shape,
                    &trace.logits.data,
                    &case["logits"],
                );
                compared += trace.logits.numel();
                fx_logits = fx_logits.max(d);
            }
            if !case["class_logits"].is_null() {
                let cl = trace
                    .class_logits
                    .as_ref()
                    .unwrap_or_else(|| panic!("{tag}: the model gave no class logits"));
                let d = worst(
                    &format!("{tag} class_logits"),
                    &cl.shape,
                    &cl.data,
                    &case["class_logits"],
                );
                compared += cl.numel();
                fx_logits = fx_logits.max(d);
            }
            for att in case["attention"].as_array().into_iter().flatten() {
                let site =
                    AttnSite::parse(att["site"].as_str().expect("site")).expect("known site");
                let layer = att["layer"].as_u64().expect("layer") as usize;
                let Some(got) = trace
                    .attention
                    .iter()
                    .find(|a| a.site == site && a.layer == layer)
                else {
                    failures.push(format!(
                        "{tag}: no {} layer {layer} attention traced",
                        site.name()
                    ));
                    continue;
                };
                let d = worst(
                    &format!("{tag} {} layer {layer} probs", site.name()),
                    &got.probs.shape,
                    &got.probs.data,
                    &att["probs"],
                );
                compared += got.probs.numel();
                fx_probs = fx_probs.max(d);
            }
            if let Err(e) = also(&tag, &model, &batch, &opts, &trace) {
                failures.push(format!("{tag}: {e}"));
            }
            cases += 1;
        }
        eprintln!(
            "{name:<40} {} cases, worst |diff| logits {fx_logits:.2e}, probabilities {fx_probs:.2e}",
            list.len()
        );
        if fx_logits > tol.logits || fx_probs > tol.probs {
            failures.push(format!(
                "{name}: logits differ by {fx_logits:.2e} (allowed {:.0e}), \
                 probabilities by {fx_probs:.2e} (allowed {:.0e})",
                tol.logits, tol.probs
            ));
        }
        worst_logits = worst_logits.max(fx_logits);
        worst_probs = worst_probs.max(fx_probs);
    }
    eprintln!(
        "{} on {} fixtures, {cases} cases, {compared} numbers: worst |diff| logits \
         {worst_logits:.2e}, probabilities {worst_probs:.2e}",
        backend.name(),
        paths.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cases >= MIN_CASES, "only {cases} fixture cases ran");
    assert!(compared > 0, "no number was compared");
    (worst_logits, worst_probs)
}

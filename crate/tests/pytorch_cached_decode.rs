//! Cached decoding against PyTorch: for every forward fixture with a decoder
//! (`tests/fixtures/*.json`, made by `tests/fixtures/make_fixtures.py`), the default case's
//! target rows are fed one token at a time through the KV cache — a prefill of the first
//! column, then one decoding step per position — and each step's logits must equal the
//! logits PyTorch computed for that position over the whole sequence. The same body runs
//! on the CPU cache and on the GPU cache (skipped visibly without an adapter unless
//! TPLAY_REQUIRE_GPU=1). The fixtures include encoder-decoders with separate source and
//! target embeddings (`src_embed.weight`, `tgt_embed.weight`).

mod support;

use serde_json::Value;
use support::fixtures::{batch, dir, forward_fixture_files, ids, options, tensor};
use support::{max_diff, Device};
use tplay::model::forward::Batch;

/// Feed each decoder fixture's case 0 through `dev`'s KV cache; every position's logits
/// (the prefill's for position 0, then one step each) are compared with PyTorch's.
/// Returns (fixtures run, separate-embedding fixtures among them, worst |diff|).
fn every_decoder_fixture_decodes_as_pytorch(dev: &Device, tol: f32) -> (usize, usize, f32) {
    let mut failures = vec![];
    let (mut run, mut separate, mut worst) = (0, 0, 0.0f32);
    for path in forward_fixture_files() {
        let fx: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = fx["name"].as_str().unwrap().to_string();
        let model = tplay::checkpoint::load_file(&dir().join(fx["checkpoint"].as_str().unwrap()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let case = &fx["cases"][0];
        if model.config.decoder_layers() == 0 || model.config.is_classifier() {
            continue;
        }
        // Case 0 is the defaults (causal mask, padding mask, √D, no ablation): cacheable.
        assert!(
            case["causal"].is_null() && case["ablate"].as_array().unwrap().is_empty(),
            "{name}: case 0 should hold the default switches"
        );
        let rows = ids(&case["tokens"]);
        let (b, t) = (rows.len(), rows[0].len());
        let (shape, want) = tensor(&case["logits"]); // (B, T, V)
        assert_eq!(shape[..2], [b, t], "{name}: logits shape");
        let v = shape[2];
        let opts = options(case);
        // The first column (every row's <bos>), with the whole source.
        let first: Vec<Vec<u32>> = rows.iter().map(|r| vec![r[0]]).collect();
        let mut one = Batch::new(first).unwrap();
        if let Some(src) = batch(case).src_tokens.as_ref() {
            let s = batch(case).src_len;
            one = one
                .with_source(src.chunks_exact(s).map(<[u32]>::to_vec).collect())
                .unwrap();
        }
        let (mut cache, trace) = match dev.prefill(&model, &one, &opts) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{name}: prefill: {e}"));
                continue;
            }
        };
        let mut fx_worst = 0.0f32;
        for seq in 0..b {
            let want_row = &want[(seq * t) * v..(seq * t + 1) * v];
            fx_worst = fx_worst.max(max_diff(
                &trace.logits.data[seq * v..(seq + 1) * v],
                want_row,
            ));
        }
        for pos in 1..t {
            let toks: Vec<u32> = rows.iter().map(|r| r[pos]).collect();
            let out = match cache.decode_step(&model, &toks, &opts) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name}: step at position {pos}: {e}"));
                    break;
                }
            };
            assert_eq!(out.position, pos, "{name}");
            for seq in 0..b {
                let got = &out.logits.data[seq * v..(seq + 1) * v];
                let want_row = &want[(seq * t + pos) * v..(seq * t + pos + 1) * v];
                fx_worst = fx_worst.max(max_diff(got, want_row));
            }
        }
        eprintln!("{name:<45} {t} positions, worst |diff| {fx_worst:.2e}");
        if fx_worst.is_nan() || fx_worst > tol {
            failures.push(format!(
                "{name}: cached logits differ from PyTorch's by {fx_worst:.2e} (allowed {tol:.0e})"
            ));
        }
        worst = worst.max(fx_worst);
        run += 1;
        if model.src_embed.is_some() {
            separate += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (run, separate, worst)
}

/// The decoder-only and encoder-decoder forward fixtures: 17 + 11 (two of them with
/// separate source and target tables).
const DECODER_FIXTURES: usize = 28;

backend_tests!(
    cached_decoding_matches_pytorch_at_every_position_of_every_decoder_fixture,
    |dev| {
        let (run, separate, worst) =
            every_decoder_fixture_decodes_as_pytorch(dev, dev.pick(1e-5, 1e-4));
        eprintln!(
            "{} cache: {run} fixtures, worst |diff| from PyTorch {worst:.2e}",
            dev.name()
        );
        assert!(run >= DECODER_FIXTURES, "only {run} decoder fixtures ran");
        assert!(separate >= 2, "the separate-embedding fixtures did not run");
    }
);

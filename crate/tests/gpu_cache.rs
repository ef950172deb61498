//! What only the GPU's KV cache has: room for a set number of positions (positions past
//! max_len continue in a longer cache), beam reorders of its rows on the device (equal to
//! the CPU's rows), one submission and one readback per step, clear errors for what it
//! cannot do, and a lost device as an error value. That the cache equals a full recompute
//! and the CPU cache for every decoder, position encoding, score, norm, switch and mask is
//! `cache.rs`, whose bodies run on both backends.
//! Skips (visibly) without an adapter unless TPLAY_REQUIRE_GPU=1.

mod support;

use pollster::block_on;
use support::steps::{hidden_agree, steps_agree};
use support::{gpu_or_skip, gpu_prefill, letters, max_diff, padded_prompts};
use support::{step_tokens, two_head_config};
use tplay::backend::gpu::{GpuContext, GpuKvCache};
use tplay::config::{Arch, ModelConfig, PosEncoding};
use tplay::model::cache::KvCache;
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Mode, Model};
use tplay::Error;

const TOL: f32 = 1e-4;

/// Attention and the residual stream traced: every number a step reports is compared.
fn traced() -> ForwardOptions {
    ForwardOptions {
        trace_attention: true,
        trace_hidden: true,
        ..ForwardOptions::default()
    }
}

/// [`padded_prompts`] as a batch.
fn prompt_batch(m: &Model) -> Batch {
    let (prompts, src) = padded_prompts(m);
    let batch = Batch::new(prompts).unwrap();
    match src {
        Some(src) => batch.with_source(src).unwrap(),
        None => batch,
    }
}

/// Logits (V) of the last position of every sequence in `rows` under `opts`: the full
/// recompute.
fn recompute_last(
    m: &Model,
    rows: &[Vec<u32>],
    src: &Option<Vec<u32>>,
    s: usize,
    opts: &ForwardOptions,
) -> Vec<f32> {
    let mut batch = Batch::new(rows.to_vec()).unwrap();
    if let Some(src) = src {
        batch = batch
            .with_source(src.chunks(s).map(<[u32]>::to_vec).collect())
            .unwrap();
    }
    let trace = m.forward(&batch, opts).unwrap();
    let (t, v) = (batch.len, m.config.vocab_size);
    (0..batch.batch)
        .flat_map(|i| trace.logits.data[(i * t + t - 1) * v..(i * t + t) * v].to_vec())
        .collect() // (B, V)
}

/// Prefill on both backends, then `steps` decoding steps, comparing every step with the
/// CPU cache and with a full recompute. Returns the largest logit difference seen.
fn run_and_compare(
    ctx: &GpuContext,
    m: &Model,
    opts: &ForwardOptions,
    capacity: Option<usize>,
    steps: usize,
    what: &str,
) -> f32 {
    let batch = prompt_batch(m);
    let (mut gpu, gtrace) = gpu_prefill(ctx, m, &batch, opts, capacity)
        .unwrap_or_else(|e| panic!("{what}: prefill: {e}"));
    let (mut cpu, ctrace) = m.prefill(&batch, opts).unwrap();
    let mut worst = max_diff(&ctrace.logits.data, &gtrace.logits.data);
    assert!(worst <= TOL, "{what}: prefill logits differ by {worst}");
    assert_eq!(ctrace.attention.len(), gtrace.attention.len(), "{what}");
    for (c, g) in ctrace.attention.iter().zip(&gtrace.attention) {
        let d = max_diff(&c.probs.data, &g.probs.data);
        assert!(d <= TOL, "{what}: prefill attention differs by {d}");
    }
    hidden_agree(
        &format!("{what}: prefill"),
        &ctrace.hidden,
        &gtrace.hidden,
        TOL,
    );
    let mut rows: Vec<Vec<u32>> = (0..batch.batch).map(|i| batch.row(i).to_vec()).collect();
    for k in 0..steps {
        let toks = step_tokens(k, batch.batch);
        let g = block_on(gpu.decode_step(m, &toks, opts))
            .unwrap_or_else(|e| panic!("{what}, step {k}: {e}"));
        let c = m.decode_step(&mut cpu, &toks, opts).unwrap();
        let here = format!("{what}, step {k}");
        worst = worst.max(steps_agree(&here, &c, &g, TOL));
        for (r, &t) in rows.iter_mut().zip(&toks) {
            r.push(t);
        }
        let full = recompute_last(m, &rows, &batch.src_tokens, batch.src_len, opts);
        let d = max_diff(&full, &g.logits.data);
        assert!(d <= TOL, "{here}: GPU cache vs full recompute: {d}");
        worst = worst.max(d);
        assert_eq!(gpu.len(), cpu.len, "{here}: cache lengths");
        assert_eq!(gpu.tokens(), &cpu.tokens[..], "{here}: cached tokens");
    }
    assert_eq!(gpu.size_bytes(), cpu.size_bytes(), "{what}: bytes held");
    worst
}

#[test]
fn positions_past_max_len_continue_in_a_longer_cache() {
    let Some(ctx) = gpu_or_skip() else { return };
    for pos in PosEncoding::ALL {
        if pos == PosEncoding::Learned {
            continue;
        }
        let cfg = ModelConfig {
            max_len: 6,
            ..two_head_config(Arch::DecoderOnly, pos)
        };
        let m = Model::init(cfg, letters(12), 4);
        // 4 prompt positions + 7 steps: positions 4..10 of a model with max_len 6.
        run_and_compare(
            &ctx,
            &m,
            &traced(),
            Some(12),
            7,
            &format!("{pos:?} past max_len"),
        );
    }
}

/// Both caches keep `rows`, then take one step; the logits must still agree.
fn select_and_step(
    m: &Model,
    gpu: &mut GpuKvCache,
    cpu: &mut KvCache,
    rows: &[usize],
    k: usize,
    what: &str,
) {
    gpu.select(rows).unwrap();
    tplay::generate::generator::select_sequences(cpu, rows);
    assert_eq!(gpu.batch(), rows.len());
    assert_eq!(gpu.tokens(), &cpu.tokens[..], "{what}: tokens after select");
    let toks = step_tokens(k, rows.len());
    let g = block_on(gpu.decode_step(m, &toks, &traced())).unwrap();
    let c = m.decode_step(cpu, &toks, &traced()).unwrap();
    steps_agree(&format!("{what}: after keeping {rows:?}"), &c, &g, TOL);
}

#[test]
fn beam_reorders_of_the_gpu_cache_match_the_cpu_rows() {
    let Some(ctx) = gpu_or_skip() else { return };
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for pos in [PosEncoding::Learned, PosEncoding::Relative] {
            let m = Model::init(two_head_config(arch, pos), letters(12), 12);
            let bos = m.tokenizer.spec.bos;
            // Three different prompts (and sources): a wrong row shows in the logits.
            let mut batch =
                Batch::new(vec![vec![bos, 4, 5], vec![bos, 9, 10], vec![bos, 11, 6]]).unwrap();
            if arch == Arch::EncoderDecoder {
                batch = batch
                    .with_source(vec![vec![4, 4, 5], vec![7, 8, 9], vec![12, 11, 10]])
                    .unwrap();
            }
            let (mut gpu, _) = gpu_prefill(&ctx, &m, &batch, &traced(), None).unwrap();
            let (mut cpu, _) = m.prefill(&batch, &traced()).unwrap();
            let what = format!("{arch:?}/{pos:?}");
            select_and_step(&m, &mut gpu, &mut cpu, &[2, 0, 2], 0, &what);
            select_and_step(&m, &mut gpu, &mut cpu, &[1, 0, 2], 1, &what);
            // Two selections before a step compose.
            gpu.select(&[2, 2, 1]).unwrap();
            tplay::generate::generator::select_sequences(&mut cpu, &[2, 2, 1]);
            select_and_step(&m, &mut gpu, &mut cpu, &[2, 0], 2, &what);
            // Shrink to one row, then grow back to four copies of it.
            select_and_step(&m, &mut gpu, &mut cpu, &[1], 3, &what);
            select_and_step(&m, &mut gpu, &mut cpu, &[0, 0, 0, 0], 4, &what);
            // Keeping the first rows in place is no copy, and still right.
            select_and_step(&m, &mut gpu, &mut cpu, &[0, 1], 5, &what);
        }
    }
}

#[test]
fn a_decoding_step_is_one_submission_and_one_readback() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private context: the shared one counts the work of tests running in parallel.
    let ctx = block_on(GpuContext::request()).unwrap();
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let m = Model::init(two_head_config(arch, PosEncoding::Rope), letters(12), 2);
        let batch = prompt_batch(&m);
        let before = ctx.stats();
        let (mut cache, _) = gpu_prefill(&ctx, &m, &batch, &traced(), None).unwrap();
        let d = ctx.stats().since(&before);
        assert_eq!(
            (d.submissions, d.readbacks),
            (1, 1),
            "{arch:?} prefill: {d:?}"
        );
        let mut dispatches = vec![];
        for k in 0..4 {
            // Tracing on and off: either way one round trip.
            let opts = if k % 2 == 0 {
                traced()
            } else {
                ForwardOptions::default()
            };
            let before = ctx.stats();
            let out = block_on(cache.decode_step(&m, &step_tokens(k, 2), &opts)).unwrap();
            let d = ctx.stats().since(&before);
            assert_eq!(
                (d.submissions, d.readbacks),
                (1, 1),
                "{arch:?} step {k}: {d:?}"
            );
            assert_eq!(out.attention.is_empty(), k % 2 == 1, "{arch:?} step {k}");
            dispatches.push(d.dispatches);
        }
        // The work of a step does not grow with the cache: the same kernels every step
        // (the encoder and the prefix are not run again).
        assert!(
            dispatches.iter().all(|&n| n == dispatches[0]),
            "{arch:?}: dispatches per step {dispatches:?}"
        );
        // A beam reorder is gathered in the same submission as the step after it.
        cache.select(&[1, 0]).unwrap();
        let before = ctx.stats();
        block_on(cache.decode_step(&m, &step_tokens(9, 2), &traced())).unwrap();
        let d = ctx.stats().since(&before);
        assert_eq!(
            (d.submissions, d.readbacks),
            (1, 1),
            "{arch:?} reorder: {d:?}"
        );
        assert!(
            d.dispatches > dispatches[0],
            "{arch:?}: the gather ran: {d:?}"
        );
    }
}

/// An input error whose message says `needle`.
fn input_error<T: std::fmt::Debug>(got: Result<T, Error>, needle: &str) {
    let m = support::input_error(got);
    assert!(m.contains(needle), "'{m}' should say '{needle}'");
}

#[test]
fn learned_positions_stop_at_max_len_with_a_clear_message() {
    let Some(ctx) = gpu_or_skip() else { return };
    let cfg = ModelConfig {
        max_len: 6,
        ..two_head_config(Arch::DecoderOnly, PosEncoding::Learned)
    };
    let m = Model::init(cfg, letters(12), 3);
    let batch = prompt_batch(&m); // 4 positions
    input_error(
        gpu_prefill(&ctx, &m, &batch, &traced(), Some(8)),
        "learned positions stop at max_len = 6",
    );
    let (mut cache, _) = gpu_prefill(&ctx, &m, &batch, &traced(), None).unwrap();
    assert_eq!(cache.capacity(), 6);
    for k in 0..2 {
        block_on(cache.decode_step(&m, &step_tokens(k, 2), &traced())).unwrap();
    }
    input_error(
        block_on(cache.decode_step(&m, &step_tokens(2, 2), &traced())),
        "learned positions stop at max_len = 6",
    );
}

#[test]
fn what_the_gpu_cache_cannot_do_is_an_input_error_naming_the_problem() {
    let Some(ctx) = gpu_or_skip() else { return };
    let m = Model::init(
        two_head_config(Arch::DecoderOnly, PosEncoding::Alibi),
        letters(12),
        5,
    );
    let batch = prompt_batch(&m);
    let opts = ForwardOptions::default();
    let no_causal = ForwardOptions {
        causal: Some(false),
        ..ForwardOptions::default()
    };
    input_error(
        gpu_prefill(&ctx, &m, &batch, &no_causal, None),
        "causal mask",
    );
    let train = ForwardOptions {
        mode: Mode::Train { seed: 1 },
        ..ForwardOptions::default()
    };
    input_error(gpu_prefill(&ctx, &m, &batch, &train, None), "eval mode");
    input_error(
        gpu_prefill(&ctx, &m, &batch, &opts, Some(3)),
        "cannot hold a prompt of 4 tokens",
    );
    let enc = Model::init(
        ModelConfig::preset("encoder-nano", letters(12).vocab_size()).unwrap(),
        letters(12),
        1,
    );
    input_error(gpu_prefill(&ctx, &enc, &batch, &opts, None), "encoder_only");

    let (mut cache, _) = gpu_prefill(&ctx, &m, &batch, &opts, Some(5)).unwrap();
    input_error(
        block_on(cache.decode_step(&m, &[4], &opts)),
        "one token per sequence",
    );
    input_error(
        block_on(cache.decode_step(&m, &[4, 99], &opts)),
        "token id 99 for sequence 1",
    );
    let unscaled = ForwardOptions {
        scale: false,
        ..ForwardOptions::default()
    };
    input_error(
        block_on(cache.decode_step(&m, &[4, 5], &unscaled)),
        "prefill again",
    );
    input_error(cache.select(&[]), "at least one sequence");
    input_error(cache.select(&[0, 2]), "sequence 2 does not exist");
    // The errors above changed nothing: the cache still steps, until it is full.
    block_on(cache.decode_step(&m, &[4, 5], &opts)).unwrap();
    assert_eq!(cache.len(), 5);
    input_error(
        block_on(cache.decode_step(&m, &[4, 5], &opts)),
        "the KV cache is full",
    );
    let other = Model::init(
        two_head_config(Arch::DecoderOnly, PosEncoding::Rope),
        letters(12),
        5,
    );
    let (mut cache, _) = gpu_prefill(&ctx, &m, &batch, &opts, None).unwrap();
    input_error(
        block_on(cache.decode_step(&other, &[4, 5], &opts)),
        "different model",
    );
}

#[test]
fn a_lost_device_is_a_gpu_error_not_a_panic() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private device: this test destroys it.
    let ctx = block_on(GpuContext::request()).unwrap();
    let m = Model::init(
        two_head_config(Arch::EncoderDecoder, PosEncoding::Sinusoidal),
        letters(12),
        6,
    );
    let batch = prompt_batch(&m);
    let opts = traced();
    let (mut cache, _) = gpu_prefill(&ctx, &m, &batch, &opts, None).unwrap();
    ctx.device().destroy();
    match block_on(cache.decode_step(&m, &step_tokens(0, 2), &opts)) {
        Err(Error::Gpu(why)) => assert!(why.contains("lost"), "{why}"),
        other => panic!("expected Error::Gpu, got {other:?}"),
    }
    // And it stays an error: the caller moves to the CPU, which carries on from the tokens.
    assert!(matches!(
        block_on(cache.decode_step(&m, &step_tokens(0, 2), &opts)),
        Err(Error::Gpu(_))
    ));
    let (mut cpu, _) = m.prefill(&batch, &opts).unwrap();
    assert_eq!(cache.tokens(), &cpu.tokens[..]);
    m.decode_step(&mut cpu, &step_tokens(0, 2), &opts).unwrap();
}

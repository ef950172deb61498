//! Generation on the GPU backend, with its KV cache resident on the device and without
//! the cache: the same seed gives the same tokens as on the CPU, step logits and attention
//! agree to 1e-4, and beam search keeps the same beams. A cached step is one submission
//! and one readback; a device lost mid-generation is an `Error::Gpu` after which the CPU
//! carries on. Skips (visibly) without an adapter unless TPLAY_REQUIRE_GPU=1.

mod support;

use pollster::block_on;
use support::cli::{fixture_checkpoint, tplay_ok};
use support::generation::{run_to_end, runs_agree};
use support::{default_switches, eos_unlikely, gpu_or_skip, tokenizer};
use tplay::backend::gpu::GpuContext;
use tplay::backend::Backend;
use tplay::config::{Arch, ModelConfig, PosEncoding};
use tplay::generate::{
    GenerateOptions, Generator, LengthPenalty, Sampling, Step, Strategy, Summary,
};
use tplay::model::Model;
use tplay::Error;

const TOL: f32 = 1e-4;

/// A random model whose `<eos>` is unlikely, so that runs go through their whole budget.
fn model(arch: Arch, pos: PosEncoding, seed: u64) -> Model {
    let tok = tokenizer();
    let preset = match arch {
        Arch::DecoderOnly => "gpt-pico",
        _ => "seq2seq-nano",
    };
    let cfg = ModelConfig {
        pos_encoding: pos,
        max_len: 16,
        ..ModelConfig::preset(preset, tok.vocab_size()).unwrap()
    };
    eos_unlikely(Model::init(cfg, tok, seed))
}

fn run(m: &Model, backend: Backend, strategy: Strategy, use_cache: bool) -> (Vec<Step>, Summary) {
    let opts = GenerateOptions {
        strategy,
        seed: 2024,
        max_new_tokens: 8,
        use_cache,
        ..GenerateOptions::default()
    };
    let src = (m.config.arch == Arch::EncoderDecoder).then(|| vec![4, 7, 9, 5]);
    run_to_end(m, backend, &[m.tokenizer.spec.bos, 6], src, opts)
}

/// The CPU's run and the GPU's agree step by step within TOL.
fn agree(what: &str, cpu: &[Step], gpu: &[Step]) -> f32 {
    runs_agree(what, cpu, gpu, TOL)
}

#[test]
fn the_same_seed_gives_the_same_tokens_on_the_cpu_and_the_gpu_with_and_without_the_cache() {
    let Some(ctx) = gpu_or_skip() else { return };
    let sample = Strategy::Sample(Sampling {
        temperature: 1.0,
        top_k: Some(6),
        top_p: Some(0.9),
    });
    let mut worst = 0.0f32;
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for pos in PosEncoding::ALL {
            let m = model(arch, pos, 5);
            for strategy in [Strategy::Greedy, sample] {
                let what = format!("{arch:?}/{pos:?}/{strategy:?}");
                // The CPU with its cache against the GPU with its cache and the GPU's
                // recompute: the same numbers, the same draws.
                let (cpu, cs) = run(&m, Backend::Cpu, strategy, true);
                assert_eq!(cs.tokens.len(), 8, "{what}: the whole budget is used");
                for use_cache in [true, false] {
                    let (gpu, gs) = run(&m, Backend::Gpu(ctx.clone()), strategy, use_cache);
                    let what = format!("{what}, GPU cache {use_cache}");
                    assert_eq!(cs.tokens, gs.tokens, "{what}");
                    worst = worst.max(agree(&what, &cpu, &gpu));
                    let fed: Vec<usize> = gpu.iter().map(|s| s.fed).collect();
                    let lens: Vec<usize> = gpu.iter().map(|s| s.cache_len).collect();
                    assert_eq!(lens, (2..10).collect::<Vec<_>>(), "{what}");
                    if use_cache {
                        assert_eq!(fed, [2, 1, 1, 1, 1, 1, 1, 1], "{what}: one token per step");
                    } else {
                        assert_eq!(fed, lens, "{what}: the whole sequence per step");
                    }
                }
            }
        }
    }
    eprintln!("largest CPU-vs-GPU step logit difference: {worst:e}");
}

#[test]
fn beam_search_keeps_the_same_beams_on_the_cpu_and_the_gpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let beam = Strategy::Beam {
        width: 3,
        length_penalty: LengthPenalty::Gnmt { alpha: 0.6 },
    };
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for pos in [PosEncoding::Learned, PosEncoding::Rope] {
            let m = model(arch, pos, 8);
            let (cpu, cs) = run(&m, Backend::Cpu, beam, true);
            for use_cache in [true, false] {
                let what = format!("beam {arch:?}/{pos:?}, GPU cache {use_cache}");
                let (gpu, gs) = run(&m, Backend::Gpu(ctx.clone()), beam, use_cache);
                agree(&what, &cpu, &gpu);
                for (c, g) in cpu.iter().zip(&gpu) {
                    let live = |s: &Step| -> Vec<Vec<u32>> {
                        let b = s.beam.as_ref().unwrap();
                        b.live.iter().map(|h| h.tokens.clone()).collect()
                    };
                    assert_eq!(live(c), live(g), "{what}, step {}", c.index);
                }
                assert_eq!(cs.tokens, gs.tokens, "{what}");
                assert!((cs.score - gs.score).abs() < 1e-4, "{what}");
            }
        }
    }
}

#[test]
fn a_cached_generation_step_on_the_gpu_is_one_submission_and_one_readback() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private context: the shared one counts the work of tests running in parallel.
    let ctx = block_on(GpuContext::request()).unwrap();
    let beam = Strategy::Beam {
        width: 3,
        length_penalty: LengthPenalty::None,
    };
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for strategy in [Strategy::Greedy, beam] {
            let m = model(arch, PosEncoding::Alibi, 3);
            let opts = GenerateOptions {
                strategy,
                max_new_tokens: 6,
                ..GenerateOptions::default()
            };
            let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 7, 9, 5]);
            let prompt = vec![m.tokenizer.spec.bos, 6];
            let mut g = Generator::new(&m, Backend::Gpu(ctx.clone()), prompt, src, opts).unwrap();
            let mut steps = 0;
            loop {
                let before = ctx.stats();
                let Some(step) = block_on(g.step()).unwrap() else {
                    break;
                };
                let d = ctx.stats().since(&before);
                let what = format!("{arch:?} {strategy:?}, step {}", step.index);
                assert_eq!((d.submissions, d.readbacks), (1, 1), "{what}: {d:?}");
                let cache = g.gpu_cache().expect("the GPU keeps the cache");
                assert_eq!(cache.len(), step.cache_len, "{what}");
                steps += 1;
            }
            assert_eq!(steps, 6, "{arch:?} {strategy:?}");
        }
    }
}

#[test]
fn a_device_lost_mid_generation_is_a_gpu_error_and_resuming_on_the_cpu_gives_the_cpu_runs_tokens() {
    if gpu_or_skip().is_none() {
        return;
    }
    let sampled = Strategy::Sample(Sampling {
        temperature: 1.2,
        top_k: None,
        top_p: Some(0.95),
    });
    for (arch, strategy) in [
        (Arch::EncoderDecoder, Strategy::Greedy),
        (Arch::EncoderDecoder, sampled),
        (Arch::DecoderOnly, sampled),
    ] {
        let what = format!("{arch:?} {strategy:?}");
        // A private device: this test destroys it.
        let ctx = block_on(GpuContext::request()).unwrap();
        let m = model(arch, PosEncoding::Rope, 4);
        let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 7, 9, 5]);
        let prompt = vec![m.tokenizer.spec.bos, 6];
        let opts = GenerateOptions {
            strategy,
            seed: 99,
            max_new_tokens: 8,
            ..GenerateOptions::default()
        };
        let mut g = Generator::new(
            &m,
            Backend::Gpu(ctx.clone()),
            prompt.clone(),
            src.clone(),
            opts.clone(),
        )
        .unwrap();
        for _ in 0..3 {
            block_on(g.step()).unwrap();
        }
        ctx.device().destroy();
        match block_on(g.step()) {
            Err(Error::Gpu(why)) => assert!(why.contains("lost"), "{what}: {why}"),
            other => panic!("{what}: expected Error::Gpu, got {other:?}"),
        }
        assert_eq!(
            g.tokens().len(),
            3,
            "{what}: the failed step changed nothing"
        );
        // Carry on on the CPU: the same eight tokens as a CPU run with the same seed.
        block_on(g.resume_on(Backend::Cpu)).unwrap();
        let resumed = block_on(g.run_to_end()).unwrap().tokens;
        let whole = block_on(
            Generator::new(&m, Backend::Cpu, prompt, src, opts)
                .unwrap()
                .run_to_end(),
        )
        .unwrap()
        .tokens;
        assert_eq!(whole.len(), 8, "{what}");
        assert_eq!(resumed, whole, "{what}");
    }
}

/// The page's sampling request: temperature 1.1, no top-k or top-p, seed `seed`.
fn sampled_at_1_1(seed: u64) -> tplay::protocol::SamplingRequest {
    tplay::protocol::SamplingRequest {
        strategy: tplay::protocol::StrategyName::Sample,
        temperature: 1.1,
        top_k: 0,
        top_p: 1.0,
        beam_width: 1,
        seed,
    }
}

/// `tplay generate … --json`: the step lines and the summary line.
fn cli_json(args: &[&str]) -> (Vec<serde_json::Value>, serde_json::Value) {
    let out = tplay_ok(&[&["generate"], args, &["--json"]].concat());
    let mut lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let summary = lines.pop().expect("a summary line");
    (lines, summary)
}

#[test]
fn tplay_generate_on_the_gpu_keeps_the_cache_and_prints_the_cpu_tokens() {
    if gpu_or_skip().is_none() {
        return;
    }
    for (name, src) in [
        ("dec_preln_gelu_rope", None),
        ("encdec_preln_gelu_sin", Some("hgfe")),
    ] {
        let model = fixture_checkpoint(name);
        let model = model.as_str();
        let mut args = vec![
            "--model",
            model,
            "--prompt",
            "ab",
            "--temperature",
            "0.8",
            "--seed",
            "11",
            "--max-tokens",
            "6",
        ];
        if let Some(s) = src {
            args.extend(["--src", s]);
        }
        let (cpu_steps, cpu) = cli_json(&[&args[..], &["--backend", "cpu"]].concat());
        let (gpu_steps, gpu) = cli_json(&[&args[..], &["--backend", "gpu"]].concat());
        assert_eq!(gpu["backend"], "gpu", "{name}");
        assert_eq!(gpu["use_cache"], true, "{name}");
        assert_eq!(gpu["tokens"], cpu["tokens"], "{name}");
        let fed = |steps: &[serde_json::Value]| -> Vec<u64> {
            steps.iter().map(|s| s["fed"].as_u64().unwrap()).collect()
        };
        assert_eq!(fed(&gpu_steps), fed(&cpu_steps), "{name}");
        assert!(
            fed(&gpu_steps)[1..].iter().all(|&n| n == 1),
            "{name}: one token per cached step"
        );
    }
}

#[test]
fn the_page_engine_survives_a_lost_device_mid_generation_with_the_cpu_runs_tokens() {
    use tplay::engine::Engine;
    use tplay::protocol::{BackendName, GenerateStartRequest};
    if gpu_or_skip().is_none() {
        return;
    }
    let m = model(Arch::DecoderOnly, PosEncoding::Sinusoidal, 8);
    let bytes = tplay::checkpoint::save(&m).unwrap();
    let req = GenerateStartRequest {
        prompt: vec![m.tokenizer.spec.bos, 6],
        src: None,
        switches: default_switches(),
        sampling: sampled_at_1_1(5),
        max_new_tokens: 7,
        trace: None,
        use_cache: None,
    };
    let run = |e: &mut Engine| {
        e.generate_start(&req).unwrap();
        (0..7)
            .map(|_| block_on(e.generate_step()).unwrap())
            .collect::<Vec<_>>()
    };
    let mut cpu = Engine::new();
    cpu.load(&bytes).unwrap();
    let want = run(&mut cpu).pop().unwrap().generated;
    // A private device, lost after the third token.
    let ctx = block_on(GpuContext::request()).unwrap();
    let mut gpu = Engine::new();
    gpu.load(&bytes).unwrap();
    gpu.use_backend(Backend::Gpu(ctx.clone()));
    gpu.generate_start(&req).unwrap();
    for _ in 0..3 {
        let s = block_on(gpu.generate_step()).unwrap();
        assert_eq!(
            (s.backend, s.fallback.is_none()),
            (BackendName::Webgpu, true)
        );
    }
    ctx.device().destroy();
    let s = block_on(gpu.generate_step()).unwrap();
    assert_eq!(s.backend, BackendName::Cpu);
    assert!(
        s.fallback.as_deref().is_some_and(|w| w.contains("lost")),
        "{:?}",
        s.fallback
    );
    let mut last = s;
    for _ in 0..3 {
        last = block_on(gpu.generate_step()).unwrap();
        assert!(last.fallback.is_none());
    }
    assert!(last.done);
    assert_eq!(
        last.generated, want,
        "the same random stream on the CPU after the loss"
    );
}

#[test]
fn several_steps_per_call_on_the_gpu_give_the_cpu_tokens_with_one_submission_and_readback_each() {
    use tplay::engine::Engine;
    use tplay::protocol::{BackendName, GenerateStartRequest, GenerateStepsRequest};
    if gpu_or_skip().is_none() {
        return;
    }
    let m = model(Arch::DecoderOnly, PosEncoding::Sinusoidal, 4);
    let bytes = tplay::checkpoint::save(&m).unwrap();
    let req = GenerateStartRequest {
        prompt: vec![m.tokenizer.spec.bos, 6, 7],
        src: None,
        switches: default_switches(),
        sampling: sampled_at_1_1(9),
        max_new_tokens: 9,
        trace: Some(false),
        use_cache: None,
    };
    let mut cpu = Engine::new();
    cpu.load(&bytes).unwrap();
    cpu.generate_start(&req).unwrap();
    let want = block_on(cpu.generate_steps(&GenerateStepsRequest { n: 9 })).unwrap();
    assert!(want.done && want.gpu.is_none());
    // A private context: the shared one counts the work of tests running in parallel.
    let ctx = block_on(GpuContext::request()).unwrap();
    let mut gpu = Engine::new();
    gpu.load(&bytes).unwrap();
    gpu.use_backend(Backend::Gpu(ctx));
    gpu.generate_start(&req).unwrap();
    let prefill = block_on(gpu.generate_steps(&GenerateStepsRequest { n: 1 })).unwrap();
    let rest = block_on(gpu.generate_steps(&GenerateStepsRequest { n: 8 })).unwrap();
    assert_eq!(rest.backend, BackendName::Webgpu);
    assert!(rest.done);
    let work = rest.gpu.expect("the steps ran on the GPU");
    assert_eq!((work.submissions, work.readbacks), (8, 8), "{work:?}");
    assert!(work.dispatches >= 8, "{work:?}");
    let p = prefill.gpu.expect("the prefill ran on the GPU");
    assert_eq!((p.submissions, p.readbacks), (1, 1), "{p:?}");
    let tokens: Vec<u32> = prefill
        .tokens
        .0
        .iter()
        .chain(&rest.tokens.0)
        .copied()
        .collect();
    assert_eq!(tokens, want.tokens.0);
    assert_eq!(rest.generated.0, want.generated.0);
}

//! Where the GPU overtakes the CPU (`cargo bench -p tplay --bench gpu_crossover`, run by
//! `cargo xtask bench gpu`): one training step of the grammar recipe's shape and one
//! cached decoding step, on the CPU (one thread) and on the GPU (wgpu: whatever adapter
//! `WGPU_BACKEND` picks), as d_model grows with the heads, layers and batch fixed and
//! d_ff = 4 · d_model. A program that prints a markdown table; nothing here asserts on
//! time. Small models lose on the GPU: every dispatch costs about the same whatever its
//! size, so the CPU wins until the arithmetic outgrows that overhead.
//!
//! Environment: `TPLAY_BENCH_CROSSOVER` (the d_model values, comma-separated; default
//! 32,64,128,256,512), `TPLAY_BENCH_RUNS` (timed steps per cell, default 5).

use std::time::Instant;

use tplay::backend::gpu::{GpuContext, GpuTrainer};
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::model::{ForwardOptions, Mode, Model};
use tplay::train::optim::Adam;
use tplay::train::recipes::recipes;
use tplay::train::step::train_step;
use tplay::train::Trainer;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Milliseconds of one cached decoding step at context 64 (median of `runs`).
fn decode_ms(model: &Model, backend: &Backend, runs: usize) -> tplay::Result<f64> {
    let prompt: Vec<u32> = std::iter::once(model.tokenizer.spec.bos)
        .chain((1..63).map(|i| 4 + (i * 7 % 20) as u32))
        .collect();
    let opts = GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens: runs + 2,
        use_cache: true,
        top_candidates: 1,
        trace_attention: false,
        ..GenerateOptions::default()
    };
    let mut gen = Generator::new(model, backend.clone(), prompt, None, opts)?;
    pollster::block_on(gen.step())?; // the prefill
    pollster::block_on(gen.step())?; // warm-up
    let mut times = vec![];
    for _ in 0..runs {
        let t0 = Instant::now();
        if pollster::block_on(gen.step())?.is_none() {
            break;
        }
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

fn main() {
    let sizes: Vec<usize> = std::env::var("TPLAY_BENCH_CROSSOVER")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![32, 64, 128, 256, 512]);
    let runs: usize = std::env::var("TPLAY_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);
    let ctx = match pollster::block_on(GpuContext::request()) {
        Ok(ctx) => ctx,
        Err(e) => {
            println!("(no GPU: {e}; no crossover to measure)");
            return;
        }
    };
    let base = recipes()
        .into_iter()
        .find(|r| r.run.task == "grammar")
        .expect("a grammar recipe");
    let task = base.run.task().expect("recipes are valid");
    println!("GPU: {}", ctx.adapter_name());
    println!(
        "grammar recipe's task (B {}, T {}), 2 layers, 4 heads, d_ff = 4 · d_model; training: \
         whole steps/s (the GPU step in one submission); decoding: ms per cached step at \
         context 64; median of {runs}",
        base.run.batch,
        base.run.len.unwrap_or(0)
    );
    println!();
    println!(
        "| {:>7} | {:>9} | {:>11} | {:>11} | {:>9} | {:>12} | {:>12} | {:>9} |",
        "d_model",
        "params",
        "CPU steps/s",
        "GPU steps/s",
        "GPU ÷ CPU",
        "CPU ms/token",
        "GPU ms/token",
        "GPU ÷ CPU"
    );
    println!(
        "|{:-<9}|{:-<11}|{:-<13}|{:-<13}|{:-<11}|{:-<14}|{:-<14}|{:-<11}|",
        "", "", "", "", "", "", "", ""
    );
    let (mut train_cross, mut decode_cross) = (None, None);
    for &c in &sizes {
        let mut r = base.clone();
        r.run.d_model = Some(c);
        r.run.d_ff = Some(4 * c);
        r.run.heads = Some(4);
        r.run.layers = Some(2);
        let cfg = match r.run.model_config(task.as_ref()) {
            Ok(cfg) => cfg,
            Err(e) => {
                println!("| {c:>7} | invalid: {e} |");
                continue;
            }
        };
        let tr = Trainer::new(task.as_ref(), cfg, r.run.train_options().expect("valid"))
            .expect("a trainer");
        let mut tr = tr;
        let batches: Vec<_> = (0..runs + 1).map(|_| tr.next_batch()).collect();
        let (smoothing, clip, lr) = (tr.opts.label_smoothing, tr.opts.clip, tr.lr());
        let opts = |k: usize| ForwardOptions {
            mode: Mode::Train { seed: k as u64 },
            ..ForwardOptions::default()
        };
        let (mut model, mut adam) = (tr.model.clone(), Adam::new(&tr.model, tr.opts.adam));
        let mut cpu_t = vec![];
        for (k, tb) in batches.iter().enumerate() {
            let t0 = Instant::now();
            train_step(&mut model, &mut adam, tb, &opts(k), smoothing, lr, clip)
                .expect("a step runs");
            if k > 0 {
                cpu_t.push(t0.elapsed().as_secs_f64());
            }
        }
        let cpu = 1.0 / median(cpu_t);
        let gpu = match GpuTrainer::new(&ctx, &tr.model, &Adam::new(&tr.model, tr.opts.adam)) {
            Ok(mut g) => {
                let mut t = vec![];
                for (k, tb) in batches.iter().enumerate() {
                    let t0 = Instant::now();
                    pollster::block_on(g.step(tb, &opts(k), smoothing, lr, clip))
                        .expect("a GPU step runs");
                    if k > 0 {
                        t.push(t0.elapsed().as_secs_f64());
                    }
                }
                Some(1.0 / median(t))
            }
            Err(e) => {
                println!("| {c:>7} | GPU trainer failed: {e} |");
                None
            }
        };
        let cpu_dec = decode_ms(&tr.model, &Backend::Cpu, runs).unwrap_or(f64::NAN);
        let gpu_dec = decode_ms(&tr.model, &Backend::Gpu(ctx.clone()), runs).unwrap_or(f64::NAN);
        let g = gpu.unwrap_or(f64::NAN);
        if g > cpu && train_cross.is_none() {
            train_cross = Some(c);
        }
        if gpu_dec < cpu_dec && decode_cross.is_none() {
            decode_cross = Some(c);
        }
        println!(
            "| {c:>7} | {:>9} | {cpu:>11.2} | {g:>11.2} | {:>9.2} | {cpu_dec:>12.3} | {gpu_dec:>12.3} | {:>9.2} |",
            tr.model.param_count(),
            g / cpu,
            cpu_dec / gpu_dec
        );
    }
    println!();
    let say = |what: &str, at: Option<usize>| match at {
        Some(c) => println!("crossover, {what}: the GPU is faster from d_model {c}"),
        None => println!("crossover, {what}: the CPU was faster at every size measured"),
    };
    say("training", train_cross);
    say("decoding", decode_cross);
    println!(
        "load average (1, 5, 15 min): {}",
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    );
}

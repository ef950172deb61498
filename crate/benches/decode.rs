//! Decoding speed with and without the KV cache against the context length, on every
//! backend (`cargo bench -p tplay --bench decode`). A program that prints a table; nothing
//! here asserts on time.
//!
//! One row times one generation step at context n through the public `Generator`:
//! - with the cache, the step after a prefill of n − 1 tokens (one new token attends to
//!   n cached positions: cost ∝ n in attention, constant elsewhere); on the GPU the
//!   cache stays on the device and a step uploads one token and reads back one row of
//!   logits;
//! - without it, a step that recomputes all n positions (cost ∝ n in projections and FFN,
//!   ∝ n² in attention).
//!
//! The model is the `gpt-nano` preset with `max_len` raised to 2048 (sinusoidal positions
//! extend to any length), so the growth is visible beyond the preset's 64 positions.
//! Environment: `TPLAY_BENCH_RUNS` (timed steps per row, default 10).

use tplay::backend::gpu::GpuContext;
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::model::Model;
use tplay::{ModelConfig, Tokenizer};

const CONTEXTS: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Wall time (ms) of the step that runs at context `n`, and its multiply-adds.
fn step_at(
    model: &Model,
    backend: &Backend,
    use_cache: bool,
    n: usize,
) -> tplay::Result<(f64, u64)> {
    // The timed step is the second one, after a prompt of n − 1 tokens: with the cache it
    // feeds one token into n − 1 cached positions, without it it recomputes all n.
    let prompt: Vec<u32> = std::iter::once(model.tokenizer.spec.bos)
        .chain((1..n - 1).map(|i| 4 + (i * 7 % 26) as u32))
        .collect();
    let opts = GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens: 2,
        use_cache,
        top_candidates: 1,
        trace_attention: false,
        ..GenerateOptions::default()
    };
    let mut gen = Generator::new(model, backend.clone(), prompt, None, opts)?;
    pollster::block_on(gen.step())?;
    let step = pollster::block_on(gen.step())?;
    let step = step.ok_or_else(|| tplay::Error::Other("generation stopped early".into()))?;
    debug_assert_eq!(step.cache_len, n);
    Ok((step.wall_ms, step.multiply_adds))
}

fn main() {
    let runs: usize = std::env::var("TPLAY_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(10);
    let tok = Tokenizer::char_level("abcdefghijklmnopqrstuvwxyz");
    let cfg = ModelConfig {
        max_len: 2048,
        ..ModelConfig::preset("gpt-nano", tok.vocab_size()).expect("a known preset")
    };
    let model = Model::init(cfg, tok, 1);
    let gpu = match pollster::block_on(GpuContext::request()) {
        Ok(ctx) => {
            println!("GPU: {}", ctx.adapter_name());
            Some(ctx)
        }
        Err(e) => {
            println!("GPU: none ({e}); GPU rows are skipped");
            None
        }
    };
    println!(
        "gpt-nano (C 32, H 4, F 64, L 2, V {}), max_len 2048; one step at context n; median of {runs} steps after one warm-up",
        model.config.vocab_size
    );
    println!("attention maps not traced; the GPU keeps its KV cache on the device (one submission and one readback per step)");
    println!();
    println!(
        "| {:<7} | {:<5} | {:>7} | {:>10} | {:>9} | {:>12} | {:>11} | {:>12} |",
        "backend",
        "cache",
        "context",
        "ms / token",
        "tokens/s",
        "MACs / token",
        "ms ÷ ms@16",
        "MACs ÷ @16"
    );
    println!(
        "|{:-<9}|{:-<7}|{:-<9}|{:-<12}|{:-<11}|{:-<14}|{:-<13}|{:-<14}|",
        "", "", "", "", "", "", "", ""
    );
    let mut rows: Vec<(Backend, bool)> = vec![(Backend::Cpu, true), (Backend::Cpu, false)];
    if let Some(ctx) = &gpu {
        rows.push((Backend::Gpu(ctx.clone()), true));
        rows.push((Backend::Gpu(ctx.clone()), false));
    }
    for (backend, use_cache) in rows {
        let mut base: Option<(f64, u64)> = None;
        for n in CONTEXTS {
            if let Err(e) = step_at(&model, &backend, use_cache, n) {
                println!(
                    "| {:<7} | {:<5} | {n:>7} | failed: {e}",
                    backend.name(),
                    use_cache
                );
                continue;
            }
            let mut times = vec![];
            let mut macs = 0;
            for _ in 0..runs {
                match step_at(&model, &backend, use_cache, n) {
                    Ok((ms, m)) => {
                        times.push(ms);
                        macs = m;
                    }
                    Err(_) => break,
                }
            }
            if times.is_empty() {
                continue;
            }
            let ms = median(times);
            let (b_ms, b_macs) = *base.get_or_insert((ms, macs));
            println!(
                "| {:<7} | {:<5} | {n:>7} | {ms:>10.3} | {:>9.0} | {macs:>12} | {:>11.2} | {:>12.2} |",
                backend.name(),
                if use_cache { "yes" } else { "no" },
                1e3 / ms,
                ms / b_ms,
                macs as f64 / b_macs as f64
            );
        }
    }
}

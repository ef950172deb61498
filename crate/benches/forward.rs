//! Forward-pass time per backend for the default presets, and the GPU round trips each
//! pass costs. A program that prints a table (`cargo bench -p tplay --bench forward`);
//! nothing here asserts on time.
//!
//! Environment: `TPLAY_BENCH_RUNS` (timed passes per row, default 10); `WGPU_BACKEND`
//! narrows the GPU backends as usual.

use std::time::Instant;

use tplay::backend::gpu::GpuContext;
use tplay::backend::Backend;
use tplay::config::Arch;
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Model};
use tplay::{ModelConfig, Tokenizer};

/// Median of the timed passes, in milliseconds.
fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("TPLAY_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(10);
    let tok = Tokenizer::char_level("abcdefghijklmnopqrstuvwxyz");
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
    println!("batch 1, eval mode, no trace; median of {runs} passes after 2 warm-up passes");
    println!();
    println!(
        "| {:<13} | {:>3} | {:<7} | {:>10} | {:>11} | {:>9} | {:>10} |",
        "preset", "T", "backend", "ms / pass", "submissions", "readbacks", "dispatches"
    );
    println!(
        "|{:-<15}|{:-<5}|{:-<9}|{:-<12}|{:-<13}|{:-<11}|{:-<12}|",
        "", "", "", "", "", "", ""
    );
    for preset in ["gpt-nano", "encoder-nano", "seq2seq-nano"] {
        let cfg = ModelConfig::preset(preset, tok.vocab_size()).expect("a known preset");
        let arch = cfg.arch;
        let model = Model::init(cfg, tok.clone(), 1);
        for t in [16usize, 64] {
            // Ids 4.. are letters; position 0 is <bos> for a decoder.
            let ids: Vec<u32> = (0..t).map(|i| 4 + (i * 7 % 26) as u32).collect();
            let mut batch = Batch::single(&ids).expect("a non-empty sequence");
            if arch == Arch::EncoderDecoder {
                batch = batch
                    .with_source(vec![ids.clone()])
                    .expect("one source row");
            }
            let opts = ForwardOptions::default();
            let mut backends = vec![Backend::Cpu];
            if let Some(ctx) = &gpu {
                backends.push(Backend::Gpu(ctx.clone()));
            }
            for backend in backends {
                // Placed once, as the engine keeps it: the timed passes upload nothing.
                let placed = match backend.place(&model) {
                    Ok(p) => p,
                    Err(e) => {
                        println!(
                            "| {preset:<13} | {t:>3} | {:<7} | failed: {e}",
                            backend.name()
                        );
                        continue;
                    }
                };
                let pass = || pollster::block_on(placed.forward(&model, &batch, &opts));
                if let Err(e) = (0..2).try_for_each(|_| pass().map(|_| ())) {
                    println!(
                        "| {preset:<13} | {t:>3} | {:<7} | failed: {e}",
                        backend.name()
                    );
                    continue;
                }
                let before = gpu.as_ref().map(|c| c.stats());
                let mut times = vec![];
                for _ in 0..runs {
                    let start = Instant::now();
                    if pass().is_err() {
                        break;
                    }
                    times.push(start.elapsed().as_secs_f64() * 1e3);
                }
                if times.is_empty() {
                    continue;
                }
                let per = |n: u64| format!("{:.1}", n as f64 / times.len() as f64);
                let (subs, reads, disp) = match (&backend, &gpu, before) {
                    (Backend::Gpu(_), Some(ctx), Some(b)) => {
                        let d = ctx.stats().since(&b);
                        (per(d.submissions), per(d.readbacks), per(d.dispatches))
                    }
                    _ => ("-".into(), "-".into(), "-".into()),
                };
                println!(
                    "| {preset:<13} | {t:>3} | {:<7} | {:>10.3} | {subs:>11} | {reads:>9} | {disp:>10} |",
                    backend.name(),
                    median_ms(times)
                );
            }
        }
    }
}

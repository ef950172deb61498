//! A GPT-2-small-shaped model (124,439,808 parameters, random weights made here by
//! `tplay::hf::random`, never downloaded): how long its folder takes to load, what it holds
//! in memory, a 64-token prefill and greedy decoding with the KV cache, on the CPU (and on
//! the GPU when `TPLAY_BENCH_GPU=1`: a software adapter takes minutes at this size).
//! `cargo bench -p tplay --bench gpt2_small`; prints a table, asserts nothing on time.
//! Environment: `TPLAY_BENCH_TOKENS` (decoded tokens, default 16).

use std::time::Instant;

use tplay::backend::gpu::GpuContext;
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::hf::random::{folder, Shape};
use tplay::hf::HfFiles;
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Model};

fn load_avg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Peak resident memory of this process so far (MiB), where the OS says it.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn row(backend: &Backend, model: &Model, prompt: &[u32], tokens: usize) {
    let name = backend.name();
    let placed = match backend.place(model) {
        Ok(p) => p,
        Err(e) => return println!("| {name} | failed to place the model: {e} |"),
    };
    let batch = Batch::single(prompt).expect("a prompt");
    let opts = ForwardOptions::default();
    // One untimed pass (first-use costs), then the timed one.
    let _ = pollster::block_on(placed.forward(model, &batch, &opts));
    let t = Instant::now();
    if let Err(e) = pollster::block_on(placed.forward(model, &batch, &opts)) {
        return println!("| {name} | prefill failed: {e} |");
    }
    let prefill_ms = t.elapsed().as_secs_f64() * 1e3;
    let gen_opts = GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens: tokens + 1,
        use_cache: true,
        top_candidates: 1,
        trace_attention: false,
        ..GenerateOptions::default()
    };
    let mut gen = Generator::new(model, backend.clone(), prompt.to_vec(), None, gen_opts)
        .expect("a generation");
    // The first step is the prefill into the cache; the steps after it are the decoding.
    let _ = pollster::block_on(gen.step());
    let mut ms = vec![];
    for _ in 0..tokens {
        match pollster::block_on(gen.step()) {
            Ok(Some(s)) => ms.push(s.wall_ms),
            _ => break,
        }
    }
    ms.sort_by(f64::total_cmp);
    let median = ms.get(ms.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "| {name} | {prefill_ms:.0} | {:.0} | {median:.1} | {:.1} | {} |",
        64e3 / prefill_ms,
        1e3 / median,
        ms.len()
    );
}

fn main() {
    let tokens: usize = std::env::var("TPLAY_BENCH_TOKENS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    println!("GPT-2 small's shape (12 layers × 12 heads, d_model 768, 1,024 positions, 50,257 tokens), random weights; load {}", load_avg());
    let t = Instant::now();
    let f = folder(Shape::default(), 0).expect("GPT-2 small fits the limits");
    println!(
        "made the folder in {:.1} s: model.safetensors {:.1} MB, tokenizer.json {:.2} MB",
        t.elapsed().as_secs_f64(),
        f.model_safetensors.len() as f64 / 1e6,
        f.tokenizer_json.len() as f64 / 1e6
    );
    let files = HfFiles {
        config_json: &f.config_json,
        model_safetensors: &f.model_safetensors,
        tokenizer_json: Some(&f.tokenizer_json),
        vocab_json: None,
        merges_txt: None,
    };
    let t = Instant::now();
    let model = tplay::hf::load(&files).expect("the folder loads");
    let load_s = t.elapsed().as_secs_f64();
    drop(f);
    println!(
        "loaded in {load_s:.2} s: {} parameters, {:.1} MiB of f32 weights; peak resident memory so far {}",
        model.param_count(),
        model.param_count() as f64 * 4.0 / 1048576.0,
        peak_rss_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB"))
    );
    // The byte-level BPE on 60 KiB of mixed English, Chinese, digits and whitespace.
    let unit = "The cat chases the dog across 312 gardens.  猫追狗，狗追猫。 Hello, world!\n\t";
    let text: String = unit.repeat(60 * 1024 / unit.len());
    let t = Instant::now();
    let ids = model.tokenizer.encode(&text).ids;
    let s = t.elapsed().as_secs_f64();
    println!(
        "tokenizer: {} bytes → {} tokens in {:.1} ms ({:.0} tokens/s, {:.1} MB/s)",
        text.len(),
        ids.len(),
        s * 1e3,
        ids.len() as f64 / s,
        text.len() as f64 / s / 1e6
    );
    let prompt: Vec<u32> = model
        .tokenizer
        .encode(
            " the cat sat on the mat and the dog ran to the park where the children play every day",
        )
        .ids
        .into_iter()
        .cycle()
        .take(64)
        .collect();
    println!();
    println!("| backend | prefill of 64 tokens (ms) | prefill tokens/s | decode ms / token (median) | decode tokens/s | steps |");
    println!("|---|---:|---:|---:|---:|---:|");
    row(&Backend::Cpu, &model, &prompt, tokens);
    if std::env::var("TPLAY_BENCH_GPU").as_deref() == Ok("1") {
        match pollster::block_on(GpuContext::request()) {
            Ok(ctx) => row(&Backend::Gpu(ctx), &model, &prompt, tokens),
            Err(e) => println!("| gpu | none: {e} |"),
        }
    }
    println!("\ntargets (issue: real models): ≥ 20 tokens/s on one wasm core, ≥ 100 tokens/s on WebGPU on a real GPU");
}

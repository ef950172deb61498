//! The engine benchmark natively (`cargo bench -p tplay --bench engine --features bench`,
//! with `profile` for the per-phase breakdown): decode tokens/s, a 64-token forward pass,
//! the matrix-product peak, training speed as a fraction of it, and the per-token cost
//! against the context length. The same program runs in wasm (`src/bench/mod.rs`); `cargo
//! xtask bench` prints the two side by side. A program that prints numbers; it asserts
//! nothing about time.
//!
//! Natively it also counts heap allocations per decoding step (a counting allocator).
//! `TPLAY_BENCH_QUICK=1` shortens every part; `TPLAY_BENCH_JSON=1` prints the report as
//! one JSON line instead of tables.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use tplay::backend::Backend;
use tplay::bench;
use tplay::generate::{GenerateOptions, Generator, Strategy};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations (count, bytes) per decoding step of the decode figure.
fn allocations_per_step() -> (f64, f64) {
    let model = bench::decode_model(128);
    let prompt: Vec<u32> = std::iter::once(model.tokenizer.spec.bos)
        .chain((1..bench::PROMPT).map(|i| 4 + (i * 7 % 36) as u32))
        .collect();
    let opts = GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens: bench::NEW_TOKENS,
        top_candidates: 1,
        trace_attention: false,
        ..GenerateOptions::default()
    };
    let mut gen = Generator::new(&model, Backend::Cpu, prompt, None, opts).expect("generator");
    pollster::block_on(gen.step()).expect("prefill");
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    let mut steps = 0;
    while pollster::block_on(gen.step()).expect("step").is_some() {
        steps += 1;
    }
    let n = steps as f64;
    (
        (ALLOCS.load(Ordering::Relaxed) - a0) as f64 / n,
        (BYTES.load(Ordering::Relaxed) - b0) as f64 / n,
    )
}

fn main() {
    tplay::heap::keep_freed_memory();
    let quick = std::env::var("TPLAY_BENCH_QUICK").is_ok_and(|v| v == "1");
    let load_before = bench::load_average();
    let (allocs, bytes) = allocations_per_step();
    let report = bench::report(quick).expect("the bench runs");
    let load_after = bench::load_average();
    if std::env::var("TPLAY_BENCH_JSON").is_ok_and(|v| v == "1") {
        let mut v = serde_json::to_value(&report).expect("serialisable");
        v["allocs_per_step"] = allocs.into();
        v["alloc_bytes_per_step"] = bytes.into();
        println!("{v}");
        return;
    }
    // The wasm build's report, from the Chromium runner, printed beside this one.
    let wasm = std::env::var("TPLAY_BENCH_WASM_JSON").ok().map(|path| {
        let text = std::fs::read_to_string(&path).expect("the wasm report exists");
        serde_json::from_str::<bench::Report>(&text).expect("the wasm report parses")
    });
    let reports: Vec<(&str, &bench::Report)> = match &wasm {
        Some(w) => vec![("native", &report), ("wasm (Chromium)", w)],
        None => vec![("native", &report)],
    };
    println!("{}", bench::render(&reports));
    println!(
        "{}",
        bench::render_targets(&reports, &format!("{load_before} → {load_after}"))
    );
    println!("heap allocations per decoding step: {allocs:.1} ({bytes:.0} bytes)");
    println!(
        "load average (1, 5, 15 min) before the native run: {load_before}; after: {load_after}"
    );
    println!(
        "clocks: native figures use the thread's CPU time (other programs do not count); the \
         browser's are wall-clock time (performance.now), so on a loaded machine the wasm \
         figures and the ratios understate wasm"
    );
}

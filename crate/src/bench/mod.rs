//! The engine benchmark, one program for every build (`bench` feature): natively it runs
//! from `crate/benches/engine.rs`, in wasm from `Engine`'s bench export under node or in
//! the page. It measures, on the same weights everywhere:
//!
//! - decoding: a random decoder-only model (C 64, H 4, L 2, F 256, V 40, max_len 128,
//!   pre-LN, GELU, sinusoidal), a 16-token prompt, 64 greedy tokens with the KV cache,
//!   nothing traced; tokens/s over the 64 steps after the prefill;
//! - one forward pass of 64 tokens (the prefill of a 64-token prompt);
//! - the matrix-product peak of this build: the best GFLOP/s of `matmul_nt` over square
//!   and training-shaped products;
//! - training: steps/s, tokens/s and the matrix-product FLOP/s of a shipped recipe
//!   (same batch and seed in every build), as a fraction of that peak;
//! - per-token cost against the context length, with and without the cache.
//!
//! With the `profile` feature every figure also carries its per-phase breakdown.
//! Nothing here asserts on time: it returns numbers for a program to print.

use serde::{Deserialize, Serialize};

mod eval;
mod targets;
mod train;
pub use eval::{eval_cost, EvalCost};
pub use targets::{load_average, render_targets};
pub use train::{train, TrainRate};

use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::generate::{GenerateOptions, Generator, Strategy};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};
use crate::profile::{self, PhaseTotal};
use crate::tensor::{matmul_nt, matmul_nt_packed};
use crate::{Result, Tokenizer};

/// The prompt length and the number of greedy tokens of the decode figure.
pub const PROMPT: usize = 16;
pub const NEW_TOKENS: usize = 64;
/// Context lengths of the per-token cost sweep.
pub const CONTEXTS: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The decode-benchmark model: random weights (seed 1), vocabulary of 40 characters.
pub fn decode_model(max_len: usize) -> Model {
    let tok = Tokenizer::char_level("abcdefghijklmnopqrstuvwxyz0123456789");
    // The playground's decoder preset at the size: C 64, F 256, pre-LN, GELU, sinusoidal.
    let mut cfg = ModelConfig::preset("gpt-nano", tok.vocab_size()).expect("gpt-nano is a preset");
    cfg.d_model = 64;
    cfg.d_ff = 256;
    cfg.max_len = max_len;
    Model::init(cfg, tok, 1)
}

fn prompt(model: &Model, n: usize) -> Vec<u32> {
    std::iter::once(model.tokenizer.spec.bos)
        .chain((1..n).map(|i| 4 + (i * 7 % 36) as u32))
        .collect()
}

fn greedy(max_new_tokens: usize, use_cache: bool) -> GenerateOptions {
    GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens,
        use_cache,
        top_candidates: 1,
        trace_attention: false,
        ..GenerateOptions::default()
    }
}

/// A figure with its per-phase breakdown (empty without the `profile` feature).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timed {
    pub value: f64,
    pub phases: Vec<PhaseTotal>,
}

/// Decode tokens/s (median of `runs` generations; the clock runs over the steps after
/// the prefill), with the phases of all timed runs divided per token.
pub fn decode(model: &Model, runs: usize) -> Result<Timed> {
    let mut rates = vec![];
    let mut per_token = vec![];
    for run in 0..=runs {
        let mut gen = Generator::new(
            model,
            Backend::Cpu,
            prompt(model, PROMPT),
            None,
            greedy(NEW_TOKENS, true),
        )?;
        pollster_free::block_on(gen.step())?; // the prefill
        let _ = profile::take();
        let t0 = profile::now_ms();
        let mut steps = 0;
        while pollster_free::block_on(gen.step())?.is_some() {
            steps += 1;
        }
        let ms = profile::now_ms() - t0;
        let phases = profile::take();
        if run > 0 {
            // run 0 warms up
            rates.push(steps as f64 / (ms / 1e3));
            per_token.push((phases, steps));
        }
    }
    Ok(Timed {
        value: median(rates),
        phases: merge(per_token),
    })
}

/// Passes per timed batch of [`prefill_ms`]: a browser's clock without cross-origin
/// isolation ticks in 0.1 ms steps, so one pass is timed as a batch's share.
const PREFILL_BATCH: usize = 10;

/// Milliseconds of one untraced forward pass over `len` tokens (median over `runs`
/// batches of [`PREFILL_BATCH`] passes, each batch's time divided by its passes).
pub fn prefill_ms(model: &Model, len: usize, runs: usize) -> Result<Timed> {
    let batch = Batch::single(&prompt(model, len))?;
    let opts = ForwardOptions {
        causal: Some(true),
        ..ForwardOptions::default()
    };
    model.forward(&batch, &opts)?;
    let _ = profile::take();
    let mut times = vec![];
    let mut phases = vec![];
    for _ in 0..runs {
        let t0 = profile::now_ms();
        for _ in 0..PREFILL_BATCH {
            model.forward(&batch, &opts)?;
        }
        times.push((profile::now_ms() - t0) / PREFILL_BATCH as f64);
        phases.push((profile::take(), PREFILL_BATCH));
    }
    Ok(Timed {
        value: median(times),
        phases: merge(phases),
    })
}

/// Phase totals of several runs, averaged per unit (`n` units per run).
fn merge(runs: Vec<(Vec<PhaseTotal>, usize)>) -> Vec<PhaseTotal> {
    let units: usize = runs.iter().map(|(_, n)| n).sum::<usize>().max(1);
    let mut out: Vec<PhaseTotal> = vec![];
    for (phases, _) in runs {
        for p in phases {
            match out.iter_mut().find(|o| o.phase == p.phase) {
                Some(o) => {
                    o.ms += p.ms;
                    o.calls += p.calls;
                }
                None => out.push(p),
            }
        }
    }
    for o in &mut out {
        o.ms /= units as f64;
        o.calls /= units as u64;
    }
    out
}

/// One shape of the peak measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatmulRate {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// The forward pass's kernel (`tensor::matmul_nt`, no packing, rows independent).
    pub gflops: f64,
    /// The packed, blocked product (matrixmultiply), the backward pass's kernel.
    pub packed_gflops: f64,
}

/// A product `(a, w) → out` under measurement.
type Product<'a> = &'a dyn Fn(&[f32], &[f32]) -> Vec<f32>;

/// GFLOP/s of one product, best of three timed batches.
fn rate(f: Product, m: usize, k: usize, n: usize) -> f64 {
    let a: Vec<f32> = (0..m * k).map(|i| ((i % 97) as f32) * 0.01).collect();
    let w: Vec<f32> = (0..n * k).map(|i| ((i % 89) as f32) * 0.01).collect();
    let flops = 2.0 * (m * k * n) as f64;
    // Enough repetitions for ~25 ms at 20 GFLOP/s.
    let reps = ((5e8 / flops) as usize).max(3);
    let _ = f(&a, &w);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = profile::now_ms();
        for _ in 0..reps {
            std::hint::black_box(f(std::hint::black_box(&a), &w));
        }
        best = best.min((profile::now_ms() - t0) / reps as f64);
    }
    flops / (best * 1e6)
}

/// GFLOP/s of both kernels on square and training-shaped products (and the one-row
/// shapes of a decoding step); the best of all is the build's peak.
pub fn matmul_peak() -> Vec<MatmulRate> {
    let shapes = [
        (1, 64, 192),
        (1, 256, 64),
        (256, 256, 256),
        (512, 512, 512),
        (2048, 64, 64),
        (2048, 64, 256),
        (2048, 256, 64),
    ];
    shapes
        .iter()
        .map(|&(m, k, n)| MatmulRate {
            m,
            k,
            n,
            gflops: rate(&|a, w| matmul_nt(a, w, m, k, n), m, k, n),
            packed_gflops: rate(&|a, w| matmul_nt_packed(a, w, m, k, n), m, k, n),
        })
        .collect()
}

/// Per-token milliseconds at one context length.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextCost {
    pub context: usize,
    pub cached_ms: f64,
    pub uncached_ms: f64,
}

/// Milliseconds of the generation step that runs at context `n`: `runs` generators are
/// prefilled with n − 1 tokens (untimed), then their next steps are timed back to back
/// and the total divided by `runs` (one step may be shorter than a browser clock's tick).
fn step_at(model: &Model, use_cache: bool, n: usize, runs: usize) -> Result<f64> {
    let mut gens = (0..runs.max(1))
        .map(|_| {
            let mut gen = Generator::new(
                model,
                Backend::Cpu,
                prompt(model, n - 1),
                None,
                greedy(2, use_cache),
            )?;
            pollster_free::block_on(gen.step())?;
            Ok(gen)
        })
        .collect::<Result<Vec<_>>>()?;
    let t0 = profile::now_ms();
    for gen in &mut gens {
        pollster_free::block_on(gen.step())?;
    }
    Ok((profile::now_ms() - t0) / gens.len() as f64)
}

/// The sweep of [`CONTEXTS`] on the decode model with room for them.
pub fn context_costs(runs: usize) -> Result<Vec<ContextCost>> {
    let model = decode_model(2048);
    CONTEXTS
        .iter()
        .map(|&n| {
            Ok(ContextCost {
                context: n,
                cached_ms: step_at(&model, true, n, 8 * runs)?,
                uncached_ms: step_at(&model, false, n, runs.div_ceil(4))?,
            })
        })
        .collect()
}

/// The least-squares slope of log(ms) against log(context) over contexts ≥ `from`.
pub fn growth_exponent(costs: &[ContextCost], cached: bool, from: usize) -> f64 {
    let pts: Vec<(f64, f64)> = costs
        .iter()
        .filter(|c| c.context >= from)
        .map(|c| {
            let ms = if cached { c.cached_ms } else { c.uncached_ms };
            ((c.context as f64).ln(), ms.max(1e-9).ln())
        })
        .collect();
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    num / den
}

/// Everything above, as one value for a program to print (or a page to send back).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub build: String,
    pub profile: bool,
    pub decode_tokens_per_s: Timed,
    pub prefill_64_ms: Timed,
    pub matmul: Vec<MatmulRate>,
    pub peak_gflops: f64,
    pub train: Vec<TrainRate>,
    pub contexts: Vec<ContextCost>,
    pub cached_exponent: f64,
    pub uncached_exponent: f64,
    #[serde(default)]
    pub eval: Option<EvalCost>,
    /// What only a browser measures (tests/browser/engine-bench.mjs adds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserFigures>,
}

/// Engine-only decoding measured one way in the browser.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BrowserDecode {
    pub tokens_per_s: f64,
    /// The engine's own time per token (the steps' `wall_ms`), without the messages.
    pub engine_ms_per_token: f64,
}

/// The GPU work of one decode step of one shipped model (WebGPU in the browser).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GpuStepRow {
    pub model: String,
    #[serde(default)]
    pub dispatches: Option<f64>,
    #[serde(default)]
    pub submissions: Option<f64>,
    #[serde(default)]
    pub readbacks: Option<f64>,
    #[serde(default)]
    pub ms_per_token: Option<f64>,
    #[serde(default)]
    pub error: Option<String>,
}

/// The browser's rows: decoding on the main thread (keys: steps per call), through a
/// worker on the bench build and through the page's own worker (keys: steps per
/// message), and the WebGPU adapter's work per decode step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BrowserFigures {
    pub user_agent: String,
    pub main: std::collections::BTreeMap<String, BrowserDecode>,
    pub worker: std::collections::BTreeMap<String, BrowserDecode>,
    pub shipped: std::collections::BTreeMap<String, BrowserDecode>,
    pub adapter: Option<String>,
    pub adapter_note: String,
    pub gpu: Vec<GpuStepRow>,
    /// The machine's load averages (1, 5, 15 minutes) before and after the browser run.
    #[serde(default)]
    pub load: Option<String>,
    /// The bench build as compiled ("none") and through each `wasm-opt` level.
    #[serde(default)]
    pub opt: Vec<OptVariant>,
}

/// One `wasm-opt` level of the bench build: its size and the worker's decoding on it
/// (64 steps per message).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OptVariant {
    pub name: String,
    pub bytes: u64,
    pub gzip_bytes: u64,
    pub tokens_per_s: f64,
    pub engine_ms_per_token: f64,
}

/// The recipes the training figure runs.
pub const TRAIN_RECIPES: [&str; 2] = ["reverse.safetensors", "grammar-sinusoidal.safetensors"];

/// Run every part; `quick` shortens each (fewer runs and steps) for a smoke run.
pub fn report(quick: bool) -> Result<Report> {
    let (runs, steps) = if quick { (2, 3) } else { (7, 20) };
    let model = decode_model(128);
    let decode_tokens_per_s = decode(&model, runs)?;
    let prefill_64_ms = prefill_ms(&model, 64, runs)?;
    let matmul = matmul_peak();
    let peak_gflops = matmul
        .iter()
        .map(|m| m.gflops.max(m.packed_gflops))
        .fold(0.0, f64::max);
    let train = TRAIN_RECIPES
        .iter()
        .map(|f| train(f, steps))
        .collect::<Result<Vec<_>>>()?;
    let contexts = context_costs(runs)?;
    Ok(Report {
        build: if cfg!(target_arch = "wasm32") {
            if cfg!(target_feature = "simd128") {
                "wasm32 + simd128"
            } else {
                "wasm32 (no simd128)"
            }
        } else {
            "native"
        }
        .to_string(),
        profile: profile::ENABLED,
        decode_tokens_per_s,
        prefill_64_ms,
        peak_gflops,
        matmul,
        cached_exponent: growth_exponent(&contexts, true, 64),
        uncached_exponent: growth_exponent(&contexts, false, 64),
        train,
        contexts,
        eval: Some(eval_cost(if quick { 1 } else { 3 })?),
        browser: None,
    })
}

/// A minimal executor for the CPU backend's futures, which never wait: poll once.
mod pollster_free {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    pub fn block_on<F: Future>(f: F) -> F::Output {
        let mut f = pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }
}

/// Tables of one or more reports side by side (the first is the reference of the ratio
/// column), as markdown.
pub fn render(reports: &[(&str, &Report)]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let ratio = reports.len() > 1;
    let head = |o: &mut String, first: &str| {
        let _ = write!(o, "| {first:<44} |");
        for (name, _) in reports {
            let _ = write!(o, " {name:>14} |");
        }
        if ratio {
            let _ = write!(o, " {:>9} |", "ratio");
        }
        let _ = write!(o, "\n|{:-<46}|", "");
        for _ in reports {
            let _ = write!(o, "{:-<16}|", "");
        }
        if ratio {
            let _ = write!(o, "{:-<11}|", "");
        }
        o.push('\n');
    };
    let row = |o: &mut String, label: &str, vals: Vec<f64>, digits: usize| {
        let _ = write!(o, "| {label:<44} |");
        for v in &vals {
            let _ = write!(o, " {v:>14.digits$} |");
        }
        if ratio {
            let r = vals[vals.len() - 1] / vals[0];
            let _ = write!(o, " {r:>9.2} |");
        }
        o.push('\n');
    };
    let builds: Vec<&str> = reports.iter().map(|(_, r)| r.build.as_str()).collect();
    let _ = writeln!(
        o,
        "Engine: random decoder-only model (C 64, H 4, L 2, F 256, V 40, pre-LN, GELU, \
         sinusoidal); builds: {}\n",
        builds.join(", ")
    );
    head(&mut o, "figure");
    let all = |f: &dyn Fn(&Report) -> f64| reports.iter().map(|(_, r)| f(r)).collect();
    row(
        &mut o,
        "decode tokens/s (16-token prompt, 64 greedy)",
        all(&|r| r.decode_tokens_per_s.value),
        0,
    );
    row(
        &mut o,
        "forward pass of 64 tokens, ms",
        all(&|r| r.prefill_64_ms.value),
        3,
    );
    row(&mut o, "matmul peak, GFLOP/s", all(&|r| r.peak_gflops), 1);
    for (i, m) in reports[0].1.matmul.iter().enumerate() {
        let shape = format!("({}, {}) · ({}, {})ᵀ", m.m, m.k, m.n, m.k);
        row(
            &mut o,
            &format!("  {shape}: forward kernel"),
            all(&|r| r.matmul[i].gflops),
            1,
        );
        row(
            &mut o,
            &format!("  {shape}: packed"),
            all(&|r| r.matmul[i].packed_gflops),
            1,
        );
    }
    if reports.iter().all(|(_, r)| r.eval.is_some()) {
        let e = |r: &Report| r.eval.clone().expect("checked above");
        row(
            &mut o,
            "lab eval of 200 reverse strings, cached, ms",
            all(&|r| e(r).cached_ms),
            1,
        );
        row(
            &mut o,
            "  the same, every position recomputed, ms",
            all(&|r| e(r).recomputed_ms),
            1,
        );
    }
    for (i, t) in reports[0].1.train.iter().enumerate() {
        let name = t.recipe.trim_end_matches(".safetensors");
        let label = |what: &str| format!("train {name} (B {}): {what}", t.batch);
        row(
            &mut o,
            &label("steps/s"),
            all(&|r| r.train[i].steps_per_s),
            2,
        );
        row(
            &mut o,
            &label("tokens/s"),
            all(&|r| r.train[i].tokens_per_s),
            0,
        );
        row(&mut o, &label("GFLOP/s"), all(&|r| r.train[i].gflops), 2);
        row(
            &mut o,
            &label("fraction of peak"),
            all(&|r| r.train[i].gflops / r.peak_gflops),
            3,
        );
        row(&mut o, &label("mean loss"), all(&|r| r.train[i].loss), 6);
    }
    let native = reports[0].1.decode_tokens_per_s.value;
    for (name, r) in reports {
        let Some(b) = &r.browser else { continue };
        let _ = writeln!(
            o,
            "\nEngine-only decoding in {name} ({}; load average {}), tokens/s, against {} \
             decoding here ({native:.0} tokens/s):\n",
            b.user_agent,
            b.load.as_deref().unwrap_or("not recorded"),
            reports[0].0
        );
        let _ = writeln!(
            o,
            "| {:<52} | {:>10} | {:>16} | {:>9} | {:>13} |",
            "path", "tokens/s", "engine ms/token", "÷ native", "÷ main thread"
        );
        let _ = writeln!(
            o,
            "|{:-<54}|{:-<12}|{:-<18}|{:-<11}|{:-<15}|",
            "", "", "", "", ""
        );
        let main = b.main.get("1").map_or(f64::NAN, |d| d.tokens_per_s);
        let paths = [
            ("main thread, 1 step per call", &b.main),
            ("main thread, all steps in one call", &b.main),
            ("worker (bench build), per message:", &b.worker),
            ("page worker (shipped build, -Oz), per message:", &b.shipped),
        ];
        for (i, (label, map)) in paths.iter().enumerate() {
            for (per, d) in map.iter() {
                let keep = match i {
                    0 => per == "1",
                    1 => per != "1",
                    _ => true,
                };
                if !keep {
                    continue;
                }
                let what = if i < 2 {
                    label.to_string()
                } else {
                    format!("{label} {per} step(s)")
                };
                let _ = writeln!(
                    o,
                    "| {what:<52} | {:>10.0} | {:>16.4} | {:>9.2} | {:>13.2} |",
                    d.tokens_per_s,
                    d.engine_ms_per_token,
                    d.tokens_per_s / native,
                    d.tokens_per_s / main
                );
            }
        }
        if !b.opt.is_empty() {
            let _ = writeln!(
                o,
                "\nThe bench build through wasm-opt (worker, 64 steps per message; the page \
                 ships -Oz):\n"
            );
            let _ = writeln!(
                o,
                "| {:<9} | {:>10} | {:>10} | {:>10} | {:>16} |",
                "wasm-opt", "bytes", "gzip -9", "tokens/s", "engine ms/token"
            );
            let _ = writeln!(
                o,
                "|{:-<11}|{:-<12}|{:-<12}|{:-<12}|{:-<18}|",
                "", "", "", "", ""
            );
            for v in &b.opt {
                let _ = writeln!(
                    o,
                    "| {:<9} | {:>10} | {:>10} | {:>10.0} | {:>16.4} |",
                    v.name, v.bytes, v.gzip_bytes, v.tokens_per_s, v.engine_ms_per_token
                );
            }
        }
        let _ = writeln!(
            o,
            "\nWebGPU per decode step, {} ({}):\n",
            b.adapter.as_deref().unwrap_or("no adapter"),
            b.adapter_note
        );
        let _ = writeln!(
            o,
            "| {:<34} | {:>10} | {:>11} | {:>9} | {:>19} |",
            "model", "dispatches", "submissions", "readbacks", "ms/token (software)"
        );
        let _ = writeln!(
            o,
            "|{:-<36}|{:-<12}|{:-<13}|{:-<11}|{:-<21}|",
            "", "", "", "", ""
        );
        for g in &b.gpu {
            match &g.error {
                Some(e) => {
                    let _ = writeln!(o, "| {:<34} | failed: {e} |", g.model);
                }
                None => {
                    let n = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.1}"));
                    let _ = writeln!(
                        o,
                        "| {:<34} | {:>10} | {:>11} | {:>9} | {:>19} |",
                        g.model,
                        n(g.dispatches),
                        n(g.submissions),
                        n(g.readbacks),
                        n(g.ms_per_token)
                    );
                }
            }
        }
    }
    let _ = writeln!(o, "\nPer-token cost (ms) against the context length:\n");
    let mut h = String::from("context");
    for (name, _) in reports {
        let _ = write!(h, " | {name} cached | {name} no cache");
    }
    let _ = writeln!(o, "| {h} |");
    let _ = writeln!(o, "|{}", "---|".repeat(1 + 2 * reports.len()));
    for (i, c) in reports[0].1.contexts.iter().enumerate() {
        let _ = write!(o, "| {}", c.context);
        for (_, r) in reports {
            let x = &r.contexts[i];
            let _ = write!(o, " | {:.4} | {:.4}", x.cached_ms, x.uncached_ms);
        }
        let _ = writeln!(o, " |");
    }
    let _ = write!(o, "| growth exponent (fit over 64..1024)");
    for (_, r) in reports {
        let _ = write!(
            o,
            " | {:.2} | {:.2}",
            r.cached_exponent, r.uncached_exponent
        );
    }
    let _ = writeln!(o, " |");
    for (name, r) in reports {
        if !r.profile {
            continue;
        }
        let _ = writeln!(o, "\nPhases, {name} ({}):", r.build);
        let mut show = |what: &str, total: f64, phases: &[PhaseTotal]| {
            let _ = writeln!(o, "  {what}: {total:.4} ms");
            let mut sum = 0.0;
            for p in phases {
                sum += p.ms;
                let _ = writeln!(
                    o,
                    "    {:<40} {:>9.4} ms {:>5.1}%  ({} calls)",
                    p.phase,
                    p.ms,
                    100.0 * p.ms / total,
                    p.calls
                );
            }
            let _ = writeln!(
                o,
                "    {:<40} {:>9.4} ms {:>5.1}%",
                "everything else",
                total - sum,
                100.0 * (total - sum) / total
            );
        };
        show(
            "decode, per token",
            1e3 / r.decode_tokens_per_s.value,
            &r.decode_tokens_per_s.phases,
        );
        show(
            "forward pass of 64 tokens",
            r.prefill_64_ms.value,
            &r.prefill_64_ms.phases,
        );
        for t in &r.train {
            show(
                &format!("training step, {}", t.recipe),
                1e3 / t.steps_per_s,
                &t.phases,
            );
        }
    }
    o
}

/// The report as JSON, for the node runner (`tests/browser/engine-bench.mjs`).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = benchReport)]
pub fn bench_report(quick: bool) -> std::result::Result<String, wasm_bindgen::JsError> {
    let r = report(quick).map_err(|e| wasm_bindgen::JsError::new(&e.to_string()))?;
    serde_json::to_string(&r).map_err(|e| wasm_bindgen::JsError::new(&e.to_string()))
}

/// The decode-benchmark model as checkpoint bytes, so a page can load the same weights
/// into its `Engine` (main thread) and its worker.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = benchDecodeCheckpoint)]
pub fn bench_decode_checkpoint() -> std::result::Result<Vec<u8>, wasm_bindgen::JsError> {
    crate::checkpoint::save(&decode_model(128))
        .map_err(|e| wasm_bindgen::JsError::new(&e.to_string()))
}

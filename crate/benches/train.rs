//! Training speed and what training buys. A program that prints three tables
//! (`cargo bench -p tplay --bench train`); nothing here asserts anything.
//!
//! 1. Training steps per second natively, for each shipped model's recipe.
//! 2. Time to reach the shipped threshold: each task's recipe trained from scratch and
//!    evaluated every few hundred steps until its held-out accuracy reaches the threshold.
//! 3. Extrapolation: the shipped grammar models (one per position encoding, trained on
//!    sequences of 64 characters) scored at 1×, 2× and 4× that length.
//!
//! 4. Training steps per second on the CPU and on the GPU ([`GpuTrainer`]: the whole step
//!    in one submission), with the GPU's dispatches, submissions and readbacks per step,
//!    for the reverse and grammar recipes and a larger preset.
//!
//! 5. Training on 1, 2 (and every core's) threads: steps/s, the speed-up, and whether the
//!    weights came out the same to the bit (`tplay::par`).
//!
//! Environment: `TPLAY_BENCH_TRAIN=speed` prints table 1 only; `=extrapolation` table 3
//! only; `=gpu` table 4 only; `=threads` table 5 only. Table 3 needs the checkpoints in `models/`.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use tplay::backend::gpu::{GpuContext, GpuTrainer};
use tplay::explain::extrapolation as extrap;
use tplay::model::{ForwardOptions, Mode};
use tplay::train::optim::Adam;
use tplay::train::recipes::{recipes, Recipe, GRAMMAR_TRAIN_LEN};
use tplay::train::step::train_step;
use tplay::train::{evaluate, Trainer};

fn trainer_for<'t>(r: &Recipe, task: &'t dyn tplay::tasks::Task) -> Trainer<'t> {
    let cfg = r.run.model_config(task).expect("recipes are valid");
    Trainer::new(task, cfg, r.run.train_options().expect("recipes are valid"))
        .expect("recipes are valid")
}

fn speed() {
    println!("## Training steps per second (native, one thread, release build)");
    println!();
    println!(
        "| {:<32} | {:>9} | {:>5} | {:>11} | {:>10} |",
        "model", "params", "batch", "steps / s", "tokens / s"
    );
    println!(
        "|{:-<34}|{:-<11}|{:-<7}|{:-<13}|{:-<12}|",
        "", "", "", "", ""
    );
    let mut seen = HashSet::new();
    for r in recipes() {
        // One row per distinct model shape: the grammar models differ only in positions.
        let key = (r.run.task.clone(), r.run.pos_encoding.clone());
        if !seen.insert(key) {
            continue;
        }
        let task = r.run.task().expect("recipes are valid");
        let mut tr = trainer_for(&r, task.as_ref());
        for _ in 0..3 {
            tr.train_step().expect("a step runs");
        }
        let steps = 30;
        let mut tokens = 0usize;
        let start = Instant::now();
        for _ in 0..steps {
            let tb = tr.next_batch();
            tokens += tb.b * (tb.t + tb.s);
            tr.train_step().expect("a step runs");
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "| {:<32} | {:>9} | {:>5} | {:>11.1} | {:>10.0} |",
            r.file.trim_end_matches(".safetensors"),
            tr.model.param_count(),
            r.run.batch,
            steps as f64 / secs,
            tokens as f64 / secs
        );
    }
    println!();
}

fn time_to_threshold() {
    println!("## Time to reach the shipped threshold (from scratch, the recipe's settings)");
    println!();
    println!(
        "| {:<20} | {:<15} | {:>9} | {:>7} | {:>9} | {:>8} |",
        "model", "metric", "threshold", "steps", "accuracy", "seconds"
    );
    println!(
        "|{:-<22}|{:-<17}|{:-<11}|{:-<9}|{:-<11}|{:-<10}|",
        "", "", "", "", "", ""
    );
    let mut seen = HashSet::new();
    for r in recipes() {
        // One grammar model stands for all six here (the first, the default).
        if !seen.insert(r.run.task.clone()) {
            continue;
        }
        let task = r.run.task().expect("recipes are valid");
        let mut tr = trainer_for(&r, task.as_ref());
        let every = if r.run.task == "grammar" { 500 } else { 250 };
        let n = if r.run.task == "grammar" { 100 } else { 200 };
        let start = Instant::now();
        let mut train_secs = 0.0;
        let mut reached = None;
        let mut last = 0.0;
        while tr.step < r.run.steps {
            let t0 = Instant::now();
            for _ in 0..every {
                tr.train_step().expect("a step runs");
            }
            train_secs += t0.elapsed().as_secs_f64();
            let report = evaluate(&tr.model, task.as_ref(), n, 7).expect("evaluation runs");
            last = report.accuracy;
            if report.accuracy >= r.threshold {
                reached = Some(tr.step);
                break;
            }
        }
        let metric = task.metric().name();
        match reached {
            Some(step) => println!(
                "| {:<20} | {:<15} | {:>9.2} | {:>7} | {:>9.3} | {:>8.1} |",
                r.file.trim_end_matches(".safetensors"),
                metric,
                r.threshold,
                step,
                last,
                train_secs
            ),
            None => println!(
                "| {:<20} | {:<15} | {:>9.2} | {:>7} | {:>9.3} | {:>8} |",
                r.file.trim_end_matches(".safetensors"),
                metric,
                r.threshold,
                format!(">{}", r.run.steps),
                last,
                "not reached"
            ),
        }
        let _ = start;
    }
    println!();
    println!("(seconds count training steps only, not the evaluations in between)");
    println!();
}

fn extrapolation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let l = GRAMMAR_TRAIN_LEN;
    println!(
        "## Extrapolation: grammar models trained on {l} characters, scored on longer held-out text"
    );
    println!();
    println!("Next-character accuracy / cross-entropy (nats) on the positions new at each length:");
    println!(
        "1× = positions 0..{l} of {l}-long sequences, 2× = positions {l}..{} of {}-long ones, \
         4× = positions {}..{} of {}-long ones.",
        2 * l,
        2 * l,
        2 * l,
        4 * l,
        4 * l
    );
    println!();
    println!(
        "| {:<11} | {:>14} | {:>14} | {:>14} |",
        "positions", "1× acc / loss", "2× acc / loss", "4× acc / loss"
    );
    println!("|{:-<13}|{:-<16}|{:-<16}|{:-<16}|", "", "", "", "");
    for r in recipes().iter().filter(|r| r.run.task == "grammar") {
        let path = dir.join(r.file);
        let model = match tplay::checkpoint::load_file(&path) {
            Ok(m) => m,
            Err(e) => {
                println!(
                    "| {:<11} | (missing: {e}) |",
                    r.run.pos_encoding.as_deref().unwrap_or("?")
                );
                continue;
            }
        };
        // The same function the page's extrapolation view calls.
        let cells: Vec<String> = extrap::extrapolation(&model, extrap::SEQUENCES, extrap::SEED)
            .expect("evaluation runs")
            .bands
            .iter()
            .map(|b| format!("{:.3} / {:.2}", b.accuracy, b.loss))
            .collect();
        println!(
            "| {:<11} | {:>14} | {:>14} | {:>14} |",
            r.run.pos_encoding.as_deref().unwrap_or("?"),
            cells[0],
            cells[1],
            cells[2]
        );
    }
    println!();
}

/// Steps per second of `steps` calls of `step` after `warm` untimed ones.
fn rate(warm: usize, steps: usize, mut step: impl FnMut(u64)) -> f64 {
    for k in 0..warm {
        step(k as u64);
    }
    let start = Instant::now();
    for k in 0..steps {
        step((warm + k) as u64);
    }
    steps as f64 / start.elapsed().as_secs_f64()
}

fn gpu_speed() {
    println!("## Training steps per second: CPU vs GPU (whole step on the GPU, release build)");
    println!();
    let ctx = match pollster::block_on(GpuContext::request()) {
        Ok(ctx) => ctx,
        Err(e) => {
            println!("(no GPU: {e})");
            println!();
            return;
        }
    };
    let software = ctx.adapter_name().contains("Cpu")
        || ["llvmpipe", "lavapipe", "SwiftShader"]
            .iter()
            .any(|n| ctx.adapter_name().contains(n));
    println!(
        "GPU: {}{}",
        ctx.adapter_name(),
        if software {
            " — software adapter: speed means nothing"
        } else {
            ""
        }
    );
    println!();
    println!(
        "| {:<34} | {:>9} | {:>8} | {:>11} | {:>11} | {:>10} | {:>11} | {:>9} |",
        "model",
        "params",
        "B × T",
        "CPU steps/s",
        "GPU steps/s",
        "dispatches",
        "submissions",
        "readbacks"
    );
    println!(
        "|{:-<36}|{:-<11}|{:-<10}|{:-<13}|{:-<13}|{:-<12}|{:-<13}|{:-<11}|",
        "", "", "", "", "", "", "", ""
    );
    let all = recipes();
    let reverse = all.iter().find(|r| r.file == "reverse.safetensors");
    let grammar = all.iter().find(|r| r.run.task == "grammar");
    let mut rows: Vec<(String, Recipe, usize)> = vec![];
    if let Some(r) = reverse {
        rows.push(("reverse (recipe)".into(), r.clone(), 10));
    }
    if let Some(r) = grammar {
        rows.push((
            format!("{} (recipe)", r.file.trim_end_matches(".safetensors")),
            r.clone(),
            5,
        ));
        let mut big = r.clone();
        big.run.d_model = Some(128);
        big.run.heads = Some(4);
        big.run.layers = Some(4);
        big.run.d_ff = Some(512);
        big.run.batch = 32;
        rows.push(("grammar, C 128, 4 layers, 4 heads".into(), big, 2));
    }
    for (name, r, steps) in rows {
        let task = r.run.task().expect("recipes are valid");
        let mut tr = trainer_for(&r, task.as_ref());
        let (smoothing, clip) = (tr.opts.label_smoothing, tr.opts.clip);
        let batches: Vec<_> = (0..steps + 1).map(|_| tr.next_batch()).collect();
        let lr = tr.lr();
        let opts = |k: u64| ForwardOptions {
            mode: Mode::Train { seed: k },
            ..ForwardOptions::default()
        };
        let (b, t) = (batches[0].b, batches[0].t);
        let (mut model, mut adam) = (tr.model.clone(), Adam::new(&tr.model, tr.opts.adam));
        let cpu = rate(1, steps, |k| {
            let tb = &batches[k as usize % batches.len()];
            train_step(&mut model, &mut adam, tb, &opts(k), smoothing, lr, clip)
                .expect("a step runs");
        });
        let adam = Adam::new(&tr.model, tr.opts.adam);
        let (gpu, counts) = match GpuTrainer::new(&ctx, &tr.model, &adam) {
            Ok(mut g) => {
                let rate = rate(1, steps, |k| {
                    let tb = &batches[k as usize % batches.len()];
                    pollster::block_on(g.step(tb, &opts(k), smoothing, lr, clip))
                        .expect("a GPU step runs");
                });
                (format!("{rate:.2}"), Some(g.counts()))
            }
            Err(e) => (format!("({e})"), None),
        };
        let c = |f: fn(&tplay::backend::gpu::StepCounts) -> usize| {
            counts
                .as_ref()
                .map_or("-".to_string(), |x| f(x).to_string())
        };
        println!(
            "| {:<34} | {:>9} | {:>8} | {:>11.2} | {:>11} | {:>10} | {:>11} | {:>9} |",
            name,
            tr.model.param_count(),
            format!("{b} × {t}"),
            cpu,
            gpu,
            c(|x| x.dispatches),
            c(|x| x.submissions),
            c(|x| x.readbacks)
        );
    }
    println!();
    println!("(per step; the CPU runs one thread; the first step of each side is not timed)");
    println!();
}

/// Steps/s of `steps` steps of `r` (after one untimed) on `threads` threads, and the
/// trained weights' bytes.
fn threaded(r: &Recipe, steps: usize, threads: usize) -> (f64, Vec<u8>) {
    tplay::par::with_threads(threads, || {
        tplay::par::install(|| {
            let task = r.run.task().expect("recipes are valid");
            let mut tr = trainer_for(r, task.as_ref());
            tr.train_step().expect("a step runs");
            let t0 = Instant::now();
            for _ in 0..steps {
                tr.train_step().expect("a step runs");
            }
            let rate = steps as f64 / t0.elapsed().as_secs_f64();
            (rate, tplay::checkpoint::save(&tr.model).expect("saves"))
        })
    })
}

/// Table 5, training on several threads (`tplay::par`: sequences, rows and elements split,
/// no sum split): steps/s on 1 and 2 threads (and every core, where there are more), the
/// speed-up, and whether the weights came out the same to the bit.
fn threads_speed() {
    let cores = tplay::par::available();
    println!("## Training on threads (native, wall clock; {cores} cores here)");
    println!();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!(
        "load average (1, 5, 15 min) at the start: {}",
        load.join(" ")
    );
    println!();
    println!(
        "| {:<34} | {:>9} | {:>7} | {:>11} | {:>8} | {:>9} |",
        "model", "params", "threads", "steps / s", "speed-up", "same bits"
    );
    println!(
        "|{:-<36}|{:-<11}|{:-<9}|{:-<13}|{:-<10}|{:-<11}|",
        "", "", "", "", "", ""
    );
    let all = recipes();
    let mut rows: Vec<(String, Recipe, usize)> = vec![];
    if let Some(r) = all.iter().find(|r| r.file == "reverse.safetensors") {
        rows.push(("reverse (recipe)".into(), r.clone(), 200));
    }
    if let Some(r) = all
        .iter()
        .find(|r| r.file == "grammar-sinusoidal.safetensors")
    {
        rows.push(("grammar-sinusoidal (recipe)".into(), r.clone(), 30));
        let mut big = r.clone();
        (big.run.d_model, big.run.heads, big.run.layers, big.run.d_ff) =
            (Some(256), Some(8), Some(2), Some(1024));
        rows.push(("grammar, C 256, 2 layers, 8 heads".into(), big, 6));
    }
    let mut counts = vec![1, 2];
    if cores > 2 {
        counts.push(cores);
    }
    for (name, r, steps) in rows {
        let task = r.run.task().expect("recipes are valid");
        let params = trainer_for(&r, task.as_ref()).model.param_count();
        let (base, base_bytes) = threaded(&r, steps, 1);
        for &n in &counts {
            let (rate, bytes) = if n == 1 {
                (base, base_bytes.clone())
            } else {
                threaded(&r, steps, n)
            };
            println!(
                "| {:<34} | {:>9} | {:>7} | {:>11.2} | {:>7.2}× | {:>9} |",
                name,
                params,
                n,
                rate,
                rate / base,
                bytes == base_bytes
            );
        }
    }
    println!();
}

fn main() {
    tplay::heap::keep_freed_memory();
    let which = std::env::var("TPLAY_BENCH_TRAIN").unwrap_or_default();
    match which.as_str() {
        "speed" => speed(),
        "extrapolation" => extrapolation(),
        "gpu" => gpu_speed(),
        "threads" => threads_speed(),
        _ => {
            speed();
            threads_speed();
            gpu_speed();
            extrapolation();
            time_to_threshold();
        }
    }
}

//! Where the time goes: one decoding step and one training step of the lab's reverse
//! recipe, at a width the learner picks, timed on this device on the CPU and (where the
//! platform has one) on the GPU, and laid beside what this device's own measured rates say
//! the step's parts cost:
//!
//! - on the CPU, its arithmetic (the step's multiply-adds at the best rate the engine's
//!   product kernel reaches here) and its bytes (what the step must read, at the rate this
//!   device reads a buffer of about that size); what is left is everything else (softmax,
//!   norms, the choice of a token, copies, calls);
//! - on the GPU, its submissions (each one a round trip: submit, wait, read back) and its
//!   dispatches (each kernel launch), at their measured cost; what is left is the GPU's
//!   arithmetic and bytes, and the rest.
//!
//! Every figure is measured here; the parts are those measurements multiplied by the
//! step's counts, so they are estimates of the step's parts, and they may add up to more
//! than the step where the device overlaps them (the remainder is then 0, and says so).
//! [`time_rates`] measures the device once; [`time_width`] times one width, so that the
//! page can ask for one width after another and draw each as it arrives.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::backend::gpu::{GpuBuffer, GpuTrainer};
use crate::backend::race::{median, timed_greedy};
use crate::backend::{Backend, GpuContext, Placed};
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::generate::clock::Stopwatch;
use crate::generate::flops::training_step_macs;
use crate::generate::Generator;
use crate::model::Model;
use crate::train::footprint::activation_values;
use crate::train::recipes::{recipes, Recipe};
use crate::train::step::train_step_observed;
use crate::train::Trainer;

/// The recipe whose model is timed at every width: the lab's first.
pub const RECIPE: &str = "reverse.safetensors";
/// Widths the page may ask for.
pub const MIN_WIDTH: usize = 8;
pub const MAX_WIDTH: usize = 1024;
/// Each figure is the median of this many rounds.
pub const ROUNDS: usize = 3;
/// A round repeats what it times until this many milliseconds have passed (a page's
/// clock ticks every 0.1 ms in a worker).
pub const SPAN_MS: f64 = 15.0;
/// Training steps timed on each backend after one untimed warm-up, at most …
pub const TRAIN_STEPS: usize = 3;
/// … and no more once the timed ones have taken this long (a software GPU takes seconds
/// a step).
pub const TRAIN_BUDGET_MS: f64 = 1500.0;
/// The product the CPU's rate is measured on: (M, K) · (N, K)ᵀ.
pub const PEAK_SHAPE: [usize; 3] = [128, 256, 256];
/// The largest buffer read to measure the CPU's read rate.
pub const MAX_READ_BYTES: usize = 8 << 20;
/// How long the CPU's code runs before the first measurement.
pub const WARM_UP_MS: f64 = 250.0;
/// Launches in the recorder that measures one dispatch.
pub const DISPATCH_BATCH: usize = 64;

/// `timeRates`: measure this device once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TimeRatesRequest {
    /// Measure a GPU too, where the platform has one.
    pub gpu: bool,
}

/// What this device was measured to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DeviceRates {
    /// FLOP/s (10⁹) of the engine's faster product kernel on [`PEAK_SHAPE`].
    pub cpu_gflops: f64,
    /// The GPU, where there is one; else why not (`gpu_error`).
    pub gpu: Option<GpuRates>,
    pub gpu_error: Option<String>,
}

/// What one submission and one dispatch cost on this GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct GpuRates {
    /// The adapter's description.
    pub adapter: String,
    /// The adapter is a software one (the CPU standing in for a GPU): its times say little
    /// about a real GPU.
    pub software: bool,
    /// Milliseconds of one round trip: one tiny kernel submitted, waited for and its one
    /// value read back.
    pub round_trip_ms: f64,
    /// Milliseconds one more tiny kernel adds inside a submission (the slope over
    /// [`DISPATCH_BATCH`] launches).
    pub dispatch_ms: f64,
}

/// `timeWidth`: one width of the recipe's model, timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct TimeWidthRequest {
    /// d_model; d_ff is four times it, the heads and layers are the recipe's.
    pub d_model: usize,
    /// This device's rates (`timeRates`), against which the parts are laid.
    pub rates: DeviceRates,
}

/// One part of a step's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// The multiply-adds at this device's best product rate.
    Arithmetic,
    /// The bytes the step must read, at this device's read rate.
    Bytes,
    /// The GPU's submissions, each a measured round trip.
    Submissions,
    /// The GPU's kernel launches, at their measured cost.
    Dispatches,
    /// What the step took beyond the parts above.
    Rest,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Part {
    pub kind: PartKind,
    pub ms: f64,
}

/// One kind of step on one backend, timed and counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct StepTime {
    /// Milliseconds of one step (the median round; a decoding step is one token).
    pub ms: f64,
    /// Multiply-adds of one step.
    pub multiply_adds: f64,
    /// Bytes one step must read at least: every weight once, plus for decoding the cached
    /// keys and values, for training the gradients, Adam's moments and the saved activations.
    pub bytes: f64,
    /// Per step, on the GPU (0 on the CPU).
    pub submissions: f64,
    pub dispatches: f64,
    pub readbacks: f64,
    /// The parts, in the order the page stacks them; they add up to `ms` unless
    /// `overlapped`.
    pub parts: Vec<Part>,
    /// The estimated parts (all but the rest) added up to more than the step took: the
    /// device overlapped them, and the rest is 0.
    pub overlapped: bool,
}

/// One width of the recipe's model, timed both ways.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct WidthTime {
    pub d_model: usize,
    pub d_ff: usize,
    pub n_heads: usize,
    pub layers: usize,
    pub params: f64,
    /// Sequences in a training batch.
    pub batch: usize,
    pub decode_cpu: StepTime,
    pub train_cpu: StepTime,
    /// `None` without a GPU, or when it failed here (`gpu_error`).
    pub decode_gpu: Option<StepTime>,
    pub train_gpu: Option<StepTime>,
    pub gpu_error: Option<String>,
}

/// The recipe the widths are taken from.
fn recipe() -> Recipe {
    recipes()
        .into_iter()
        .find(|r| r.file == RECIPE)
        .expect("the reverse recipe ships")
}

thread_local! {
    /// The GPU the studies time, kept between requests (its pipelines compile once). It is
    /// never dropped: a device torn down in a thread's exit handlers aborts natively, and
    /// a lost one is left behind rather than freed.
    static GPU: std::cell::RefCell<Option<std::mem::ManuallyDrop<GpuContext>>> =
        const { std::cell::RefCell::new(None) };
}

/// The kept GPU, or a new one; `Err` says why there is none.
async fn gpu() -> Result<GpuContext> {
    let kept = GPU.with(|g| g.borrow().as_ref().map(|c| GpuContext::clone(c)));
    if let Some(ctx) = kept.filter(|c| !c.is_lost()) {
        return Ok(ctx);
    }
    let ctx = GpuContext::request().await?;
    GPU.with(|g| *g.borrow_mut() = Some(std::mem::ManuallyDrop::new(ctx.clone())));
    Ok(ctx)
}

/// Milliseconds of one run of `f`: the median of [`ROUNDS`] rounds, each repeating `f`
/// for at least [`SPAN_MS`]; `f` returns how many units it ran (the result is per unit).
async fn per_unit<F, Fut>(f: F) -> Result<f64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<usize>>,
{
    let mut rounds = rounds(f).await?;
    Ok(median(&mut rounds))
}

/// [`per_unit`]'s fastest round: a peak rate, the round least disturbed by the rest of
/// the machine.
async fn best_per_unit<F, Fut>(f: F) -> Result<f64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<usize>>,
{
    Ok(rounds(f).await?.into_iter().fold(f64::INFINITY, f64::min))
}

/// Milliseconds per unit of each of [`ROUNDS`] rounds of `f`.
async fn rounds<F, Fut>(mut f: F) -> Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<usize>>,
{
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let sw = Stopwatch::start(None);
        let mut units = 0usize;
        while units == 0 || sw.elapsed_ms() < SPAN_MS {
            units += f().await?;
        }
        rounds.push(sw.elapsed_ms() / units as f64);
    }
    Ok(rounds)
}

/// FLOP/s (10⁹) of the faster of the engine's two product kernels on [`PEAK_SHAPE`] (the
/// row-independent one the forward pass uses and the packed one, matrixmultiply's), each
/// its fastest round.
async fn cpu_gflops() -> Result<f64> {
    let [m, k, n] = PEAK_SHAPE;
    let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1).collect();
    let w: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 * 0.1).collect();
    let mut out = vec![0.0f32; m * n];
    let rows = best_per_unit(|| {
        crate::matmul::matmul_nt_into(&mut out, &a, &w, m, k, n);
        std::hint::black_box(&out);
        async { Ok(1) }
    })
    .await?;
    let packed = best_per_unit(|| {
        std::hint::black_box(crate::tensor::matmul_nt_packed(&a, &w, m, k, n));
        async { Ok(1) }
    })
    .await?;
    Ok(2.0 * (m * k * n) as f64 / rows.min(packed) / 1e6)
}

/// Milliseconds this device takes to read `bytes` once (summed as f32), measured on a
/// buffer of that size up to [`MAX_READ_BYTES`] and scaled linearly beyond it.
async fn read_ms(bytes: f64) -> Result<f64> {
    let len = ((bytes as usize).clamp(4096, MAX_READ_BYTES)) / 4;
    let buf: Vec<f32> = (0..len).map(|i| (i % 3) as f32).collect();
    let ms = per_unit(|| {
        let mut lanes = [0.0f32; 8];
        for c in buf.chunks_exact(8) {
            for l in 0..8 {
                lanes[l] += c[l];
            }
        }
        std::hint::black_box(lanes);
        async { Ok(1) }
    })
    .await?;
    Ok(ms * bytes / (len * 4) as f64)
}

/// One round trip (a tiny kernel, submitted, waited for, read back) with `launches`
/// launches of it.
async fn round_trip(ctx: &GpuContext, [x, y]: [&GpuBuffer; 2], launches: usize) -> Result<usize> {
    let mut rec = ctx.recorder()?;
    for _ in 0..launches {
        rec.add(x, y, 1)?;
    }
    rec.read(x, 0, 1)?;
    rec.finish().await?;
    Ok(1)
}

/// This GPU's cost of a round trip and of a dispatch.
async fn gpu_rates(ctx: &GpuContext) -> Result<GpuRates> {
    let x = ctx.zeros("timing probe", 1)?;
    let y = ctx.zeros("timing probe input", 1)?;
    round_trip(ctx, [&x, &y], DISPATCH_BATCH).await?; // the warm-up compiles the kernel
    let one = per_unit(|| round_trip(ctx, [&x, &y], 1)).await?;
    let many = per_unit(|| round_trip(ctx, [&x, &y], DISPATCH_BATCH)).await?;
    Ok(GpuRates {
        adapter: ctx.adapter_name().to_string(),
        software: ctx.is_software(),
        round_trip_ms: one,
        dispatch_ms: ((many - one) / (DISPATCH_BATCH - 1) as f64).max(0.0),
    })
}

/// Run the CPU's decoding and training code for a moment before anything is timed: a
/// browser first runs WebAssembly through a quick compiler and swaps in an optimised one
/// once a function is hot, so the first width measured would otherwise pay for that.
async fn warm_up() -> Result<()> {
    let r = recipe();
    let (run, _) = width_config(&r, MIN_WIDTH * 2)?;
    let task = run.task()?;
    let cfg = run.model_config(task.as_ref())?;
    let mut tr = Trainer::new(task.as_ref(), cfg, run.train_options()?)?;
    let sw = Stopwatch::start(None);
    while sw.elapsed_ms() < WARM_UP_MS {
        generation(&tr.model, &Placed::Cpu).await?;
        tr.train_step()?;
    }
    Ok(())
}

/// `timeRates`: this device's product rate, and where asked its GPU's costs.
pub async fn time_rates(req: &TimeRatesRequest) -> Result<DeviceRates> {
    warm_up().await?;
    let cpu_gflops = cpu_gflops().await?;
    let (gpu, gpu_error) = if !req.gpu {
        (None, None)
    } else {
        match gpu().await {
            Ok(ctx) => match gpu_rates(&ctx).await {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            },
            Err(e) => (None, Some(e.to_string())),
        }
    };
    Ok(DeviceRates {
        cpu_gflops,
        gpu,
        gpu_error,
    })
}

/// The recipe's run at width `d`: its task's trainer (random weights, its seed).
fn width_config(r: &Recipe, d: usize) -> Result<(crate::train::RunSpec, usize)> {
    let task = r.run.task()?;
    let base = r.run.model_config(task.as_ref())?;
    if !(MIN_WIDTH..=MAX_WIDTH).contains(&d) || !d.is_multiple_of(base.n_heads) {
        return Err(Error::Input(format!(
            "d_model must be a multiple of {} heads between {MIN_WIDTH} and {MAX_WIDTH} (got {d})",
            base.n_heads
        )));
    }
    let mut run = r.run.clone();
    run.d_model = Some(d);
    run.d_ff = Some(4 * d);
    Ok((run, base.n_heads))
}

/// The parts of a CPU step: its arithmetic and its bytes at this device's rates.
fn cpu_parts(ms: f64, macs: f64, read: f64, rates: &DeviceRates) -> (Vec<Part>, bool) {
    let arithmetic = 2.0 * macs / (rates.cpu_gflops.max(1e-9) * 1e6);
    with_rest(
        ms,
        vec![(PartKind::Arithmetic, arithmetic), (PartKind::Bytes, read)],
    )
}

/// The parts of a GPU step: its submissions and dispatches at this GPU's costs.
fn gpu_parts(ms: f64, submissions: f64, dispatches: f64, g: &GpuRates) -> (Vec<Part>, bool) {
    with_rest(
        ms,
        vec![
            (PartKind::Submissions, submissions * g.round_trip_ms),
            (PartKind::Dispatches, dispatches * g.dispatch_ms),
        ],
    )
}

/// `parts` and the rest of `ms` after them (0, and `true`, where they exceed it).
pub fn with_rest(ms: f64, parts: Vec<(PartKind, f64)>) -> (Vec<Part>, bool) {
    let sum: f64 = parts.iter().map(|p| p.1).sum();
    let mut out: Vec<Part> = parts
        .into_iter()
        .map(|(kind, ms)| Part { kind, ms })
        .collect();
    out.push(Part {
        kind: PartKind::Rest,
        ms: (ms - sum).max(0.0),
    });
    (out, sum > ms)
}

/// What one timed greedy generation decoded: tokens, multiply-adds, and the cached
/// positions its steps read.
struct Decoded {
    tokens: usize,
    macs: u64,
    cached: usize,
}

async fn generation(m: &Model, placed: &Placed) -> Result<Decoded> {
    let bos = m.tokenizer.spec.bos;
    let mut g = Generator::on(m, placed.clone(), vec![bos], None, timed_greedy(m))?;
    let mut d = Decoded {
        tokens: 0,
        macs: 0,
        cached: 0,
    };
    while let Some(step) = g.step().await? {
        d.tokens += 1;
        d.macs += step.multiply_adds;
        d.cached += step.index + 1;
    }
    Ok(d)
}

/// A decoding step (one token, with the KV cache) of `m` on `placed`.
async fn decode_time(
    m: &Model,
    placed: &Placed,
    gpu: Option<&GpuContext>,
) -> Result<(f64, Decoded, [f64; 3])> {
    generation(m, placed).await?; // the warm-up (the GPU compiles its pipelines)
    let before = gpu.map(|c| c.stats());
    let all = std::cell::RefCell::new(Decoded {
        tokens: 0,
        macs: 0,
        cached: 0,
    });
    let ms = per_unit(|| async {
        let d = generation(m, placed).await?;
        let mut a = all.borrow_mut();
        a.tokens += d.tokens;
        a.macs += d.macs;
        a.cached += d.cached;
        Ok(d.tokens)
    })
    .await?;
    let all = all.into_inner();
    let counts = match (gpu, before) {
        (Some(ctx), Some(b)) => {
            let s = ctx.stats().since(&b);
            let t = all.tokens.max(1) as f64;
            [
                s.submissions as f64 / t,
                s.dispatches as f64 / t,
                s.readbacks as f64 / t,
            ]
        }
        _ => [0.0; 3],
    };
    Ok((ms, all, counts))
}

/// Bytes a decoding step reads: every weight once, and the cached keys and values of
/// `cached` positions per layer.
fn decode_bytes(cfg: &ModelConfig, params: f64, d: &Decoded) -> f64 {
    let per_token_cached = d.cached as f64 / d.tokens.max(1) as f64;
    let layers = (cfg.encoder_layers() + cfg.decoder_layers()) as f64;
    4.0 * params + 4.0 * 2.0 * layers * cfg.d_model as f64 * per_token_cached
}

/// Bytes a training step reads at least: the weights in the forward and the backward
/// pass, the gradients, Adam's moments and the weights in the update (9 values a
/// parameter), and the saved activations written and read once.
fn train_bytes(cfg: &ModelConfig, params: f64, b: usize, t: usize) -> f64 {
    4.0 * (9.0 * params + 2.0 * activation_values(cfg, b as u64, t as u64) as f64)
}

/// Whether one more step may be timed after `times` (the warm-up first, then at least
/// one timed step, then more until [`TRAIN_BUDGET_MS`]).
fn within_budget(times: &[f64]) -> bool {
    times.len() < 2 || times[1..].iter().sum::<f64>() < TRAIN_BUDGET_MS
}

/// Milliseconds of a training step on the CPU and on `gpu` (the median of
/// [`TRAIN_STEPS`] after a warm-up), and the GPU's counts per step.
async fn train_times(
    tr: &Trainer<'_>,
    gpu: Option<&GpuContext>,
) -> Result<(f64, Option<Result<(f64, [f64; 3])>>)> {
    let inputs = tr.upcoming_steps(TRAIN_STEPS + 1, false);
    let (smoothing, clip) = (tr.opts.label_smoothing, tr.opts.clip);
    let (mut model, mut adam) = (tr.model.clone(), tr.adam().clone());
    let mut cpu = vec![];
    for (tb, fwd, lr) in &inputs {
        if within_budget(&cpu) {
            let sw = Stopwatch::start(None);
            train_step_observed(
                &mut model,
                &mut adam,
                tb,
                fwd,
                smoothing,
                *lr,
                clip,
                &mut |_| {},
            )?;
            cpu.push(sw.elapsed_ms());
        }
    }
    let cpu_ms = median(&mut cpu[1..]);
    let Some(ctx) = gpu else {
        return Ok((cpu_ms, None));
    };
    let on_gpu = async {
        let mut g = GpuTrainer::new(ctx, &tr.model, tr.adam())?;
        let mut times = vec![];
        for (tb, fwd, lr) in &inputs {
            if within_budget(&times) {
                let sw = Stopwatch::start(None);
                g.step(tb, fwd, smoothing, *lr, clip).await?;
                times.push(sw.elapsed_ms());
            }
        }
        let c = g.counts();
        Ok((
            median(&mut times[1..]),
            [
                c.submissions as f64,
                c.dispatches as f64,
                c.readbacks as f64,
            ],
        ))
    };
    Ok((cpu_ms, Some(on_gpu.await)))
}

/// `timeWidth`: the recipe's model at `req.d_model`, one decoding step and one training
/// step on the CPU and, where `req.rates` has one, on the GPU.
pub async fn time_width(req: &TimeWidthRequest) -> Result<WidthTime> {
    let r = recipe();
    let (run, n_heads) = width_config(&r, req.d_model)?;
    let task = run.task()?;
    let cfg = run.model_config(task.as_ref())?;
    let tr = Trainer::new(task.as_ref(), cfg.clone(), run.train_options()?)?;
    let m = &tr.model;
    let params = m.param_count() as f64;
    let ctx = match &req.rates.gpu {
        Some(_) => Some(gpu().await),
        None => None,
    };
    let mut gpu_error = ctx
        .as_ref()
        .and_then(|c| c.as_ref().err().map(|e| e.to_string()));
    let ctx = ctx.and_then(|c| c.ok());

    let (ms, dec, _) = decode_time(m, &Placed::Cpu, None).await?;
    let bytes = decode_bytes(&cfg, params, &dec);
    let macs = dec.macs as f64 / dec.tokens.max(1) as f64;
    let (parts, overlapped) = cpu_parts(ms, macs, read_ms(bytes).await?, &req.rates);
    let decode_cpu = StepTime {
        ms,
        multiply_adds: macs,
        bytes,
        submissions: 0.0,
        dispatches: 0.0,
        readbacks: 0.0,
        parts,
        overlapped,
    };

    let (b, t, s) = tr.peek_batch_shape();
    let train_macs = training_step_macs(&cfg, b, t, s) as f64;
    let tbytes = train_bytes(&cfg, params, b, t + s);
    let (train_ms, train_gpu_result) = train_times(&tr, ctx.as_ref()).await?;
    let (parts, overlapped) = cpu_parts(train_ms, train_macs, read_ms(tbytes).await?, &req.rates);
    let train_cpu = StepTime {
        ms: train_ms,
        multiply_adds: train_macs,
        bytes: tbytes,
        submissions: 0.0,
        dispatches: 0.0,
        readbacks: 0.0,
        parts,
        overlapped,
    };

    let (mut decode_gpu, mut train_gpu) = (None, None);
    if let (Some(ctx), Some(g)) = (&ctx, &req.rates.gpu) {
        let on_gpu = async {
            let placed = Backend::Gpu(ctx.clone()).place(m)?;
            let (ms, dec, [subs, disp, reads]) = decode_time(m, &placed, Some(ctx)).await?;
            let (parts, overlapped) = gpu_parts(ms, subs, disp, g);
            Ok::<_, Error>(StepTime {
                ms,
                multiply_adds: dec.macs as f64 / dec.tokens.max(1) as f64,
                bytes,
                submissions: subs,
                dispatches: disp,
                readbacks: reads,
                parts,
                overlapped,
            })
        };
        match on_gpu.await {
            Ok(st) => decode_gpu = Some(st),
            Err(e) => gpu_error = Some(e.to_string()),
        }
        match train_gpu_result {
            Some(Ok((ms, [subs, disp, reads]))) if gpu_error.is_none() => {
                let (parts, overlapped) = gpu_parts(ms, subs, disp, g);
                train_gpu = Some(StepTime {
                    ms,
                    multiply_adds: train_macs,
                    bytes: tbytes,
                    submissions: subs,
                    dispatches: disp,
                    readbacks: reads,
                    parts,
                    overlapped,
                });
            }
            Some(Err(e)) => gpu_error = Some(e.to_string()),
            _ => {}
        }
    }
    Ok(WidthTime {
        d_model: cfg.d_model,
        d_ff: cfg.d_ff,
        n_heads,
        layers: cfg.encoder_layers() + cfg.decoder_layers(),
        params,
        batch: b,
        decode_cpu,
        train_cpu,
        decode_gpu,
        train_gpu,
        gpu_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_is_what_the_parts_leave_and_never_negative() {
        let (p, over) = with_rest(
            10.0,
            vec![(PartKind::Arithmetic, 3.0), (PartKind::Bytes, 2.0)],
        );
        assert_eq!(p.last().unwrap().kind, PartKind::Rest);
        assert_eq!(p.last().unwrap().ms, 5.0);
        assert!(!over);
        let (p, over) = with_rest(
            4.0,
            vec![(PartKind::Submissions, 3.0), (PartKind::Dispatches, 2.0)],
        );
        assert_eq!(p.last().unwrap().ms, 0.0);
        assert!(over);
    }

    #[test]
    fn widths_are_checked_against_the_recipe() {
        let r = recipe();
        assert!(width_config(&r, 64).is_ok());
        for bad in [0, 4, 2048, 65] {
            let e = width_config(&r, bad).unwrap_err().to_string();
            assert!(e.contains("d_model"), "{e}");
        }
    }
}

//! Where an `auto` run trains is measured (`train::race`): its next steps timed on the CPU
//! and on the GPU from copies of its state, the GPU kept only where its losses agree and it
//! is faster per step. A test hook adds busy time to either side, so each outcome is
//! forced on any adapter; the race leaves no trace on the run. Skips (visibly) without an
//! adapter unless TPLAY_REQUIRE_GPU=1.

mod support;

use pollster::block_on;
use support::gpu_or_skip;
use tplay::backend::race::Handicap;
use tplay::backend::GpuContext;
use tplay::protocol::{
    RaceUnit, RunBackend, RunSettings, TrainBackendChoice, TrainChunkRequest, TrainPoint,
};
use tplay::train::race::LOSS_TOL;
use tplay::train::Session;

/// Busy time that makes a side lose: well above a small model's step on lavapipe.
const SLOW_MS: f64 = 150.0;
/// A slowed CPU step: far beyond a software adapter's step under load (35–48 ms on lavapipe
/// alone, 170 ms measured with two builds beside it), so the GPU wins on any machine.
const SLOW_CPU_MS: f64 = 1500.0;

fn settings(backend: TrainBackendChoice) -> RunSettings {
    let mut s = RunSettings::defaults("reverse").unwrap().settings;
    s.steps = 8;
    s.batch = 4;
    s.eval_every = 4;
    s.dropout = 0.1;
    s.backend = backend;
    s
}

/// A run placed on `ctx` after a race with `handicap`.
fn placed(ctx: &GpuContext, backend: TrainBackendChoice, handicap: Handicap) -> Session {
    let mut s = Session::new(settings(backend)).unwrap();
    s.test_only_race_with_handicap(handicap);
    block_on(s.place(Ok(ctx.clone()))).unwrap();
    s
}

/// Every step of a run, without the compute times.
fn run_out(s: &mut Session) -> Vec<TrainPoint> {
    let mut out = vec![];
    while !s.is_done() {
        let c = block_on(s.step_chunk(&TrainChunkRequest {
            max_steps: 3,
            budget_ms: 1e9,
        }))
        .unwrap();
        out.extend(c.points.into_iter().map(|p| TrainPoint {
            elapsed_ms: 0.0,
            ..p
        }));
    }
    out
}

#[test]
fn auto_with_a_slowed_gpu_trains_on_the_cpu_and_says_by_how_much() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    // Unslowed first, for the record: this adapter's figures.
    let natural = placed(&ctx, TrainBackendChoice::Auto, Handicap::default());
    eprintln!("auto, unslowed: {:?}", natural.backend());
    let handicap = Handicap {
        gpu_ms: SLOW_MS,
        cpu_ms: 0.0,
    };
    let mut s = placed(&ctx, TrainBackendChoice::Auto, handicap);
    match s.backend().clone() {
        RunBackend::CpuFaster {
            adapter,
            parity,
            cpu_ms,
            gpu_ms,
            unit,
        } => {
            assert_eq!(adapter, ctx.adapter_name());
            assert_eq!(unit, RaceUnit::Step);
            assert!((0.0..=LOSS_TOL).contains(&parity), "{parity}");
            assert!(gpu_ms as f64 >= SLOW_MS, "{gpu_ms}");
            assert!(cpu_ms > 0.0 && cpu_ms < gpu_ms, "{cpu_ms} vs {gpu_ms}");
        }
        b => panic!("auto with a slowed GPU: {b:?}"),
    }
    // It trains on the CPU and every chunk says why.
    let c = block_on(s.step_chunk(&TrainChunkRequest {
        max_steps: 2,
        budget_ms: 1e9,
    }))
    .unwrap();
    assert!(matches!(c.backend, RunBackend::CpuFaster { .. }));
    // The CPU measures the update ratios of step 1; GPU steps have none.
    assert!(!c.points[0].update_ratios.is_empty());
}

#[test]
fn auto_with_a_slowed_cpu_trains_on_the_gpu_with_both_figures() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let handicap = Handicap {
        gpu_ms: 0.0,
        cpu_ms: SLOW_CPU_MS,
    };
    let mut s = placed(&ctx, TrainBackendChoice::Auto, handicap);
    match s.backend().clone() {
        RunBackend::WebgpuChecked {
            adapter,
            parity,
            cpu_ms,
            gpu_ms,
            unit,
        } => {
            assert_eq!(adapter, ctx.adapter_name());
            assert_eq!(unit, RaceUnit::Step);
            assert!((0.0..=LOSS_TOL).contains(&parity), "{parity}");
            assert!(cpu_ms as f64 >= SLOW_CPU_MS, "{cpu_ms}");
            assert!(gpu_ms > 0.0 && gpu_ms < cpu_ms, "{gpu_ms} vs {cpu_ms}");
        }
        b => panic!("auto with a slowed CPU: {b:?}"),
    }
    // Its steps are a `webgpu` run's, number for number: the race took none of them.
    let got = run_out(&mut s);
    let mut insisted = placed(&ctx, TrainBackendChoice::Webgpu, Handicap::default());
    let want = run_out(&mut insisted);
    assert_eq!(got, want);
    assert!(
        !got[0].update_ratios.is_empty() && !got[0].attn_entropy.is_empty(),
        "a GPU health step is watched as a CPU one is"
    );
}

#[test]
fn webgpu_insists_however_slow_and_is_not_measured() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let handicap = Handicap {
        gpu_ms: SLOW_MS,
        cpu_ms: 0.0,
    };
    let s = placed(&ctx, TrainBackendChoice::Webgpu, handicap);
    assert_eq!(
        s.backend(),
        &RunBackend::Webgpu {
            adapter: ctx.adapter_name().to_string()
        }
    );
}

#[test]
fn the_race_leaves_no_trace_on_the_run() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let slow_gpu = Handicap {
        gpu_ms: SLOW_MS,
        cpu_ms: 0.0,
    };
    let mut measured = placed(&ctx, TrainBackendChoice::Auto, slow_gpu);
    assert!(matches!(measured.backend(), RunBackend::CpuFaster { .. }));
    let mut plain = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    let (got, want) = (run_out(&mut measured), run_out(&mut plain));
    // Step for step, bit for bit: the same batches, dropout masks, updates, evaluations.
    assert_eq!(got.len(), 8);
    assert_eq!(got, want);
    assert_eq!(measured.model().embed.data, plain.model().embed.data);
    assert_eq!(measured.checkpoint().unwrap(), plain.checkpoint().unwrap());
}

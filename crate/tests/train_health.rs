//! The lab's health watch (`train::health`): a NaN put into a chosen layer stops the run at
//! that step and names the layer and the operation (on the CPU, and on the GPU, whose
//! steps the CPU takes again to find it); the GPU reports the per-layer curves the CPU
//! reports, to float rounding, the update ratio and the attention entropy included; the update ratio and the attention entropy are measured
//! and a learning rate far too high is warned about. GPU cases skip (visibly) without an
//! adapter unless TPLAY_REQUIRE_GPU=1.

mod support;

use pollster::block_on;
use support::gpu_or_skip;
use tplay::protocol::{
    AlarmKind, FaultOp, LrSettings, RunBackend, RunSettings, TrainBackendChoice, TrainChunk,
    TrainChunkRequest,
};
use tplay::train::health::{HEALTH_EVERY, UPDATE_RATIO_ALARM};
use tplay::train::Session;

fn settings(backend: TrainBackendChoice) -> RunSettings {
    let mut s = RunSettings::defaults("reverse").unwrap().settings;
    s.steps = 12;
    s.batch = 4;
    s.eval_every = 0;
    s.n_layers = 3;
    s.backend = backend;
    s
}

fn chunk(n: u32) -> TrainChunkRequest {
    TrainChunkRequest {
        max_steps: n,
        budget_ms: 1e9,
    }
}

fn run(s: &mut Session, n: u32) -> TrainChunk {
    block_on(s.step_chunk(&chunk(n))).unwrap()
}

/// The stopping alarm of a chunk: step 5 and layer 2 (1-based), its FFN's first linear
/// layer, the NaN weight named.
fn assert_stopped_at_layer_2(c: &TrainChunk) {
    assert_eq!(
        c.points.iter().map(|p| p.step).collect::<Vec<_>>(),
        [4],
        "the steps before the NaN are reported"
    );
    let stop: Vec<_> = c.alarms.iter().filter(|a| a.stopped).collect();
    assert_eq!(stop.len(), 1, "{:?}", c.alarms);
    let a = stop[0];
    assert_eq!(a.kind, AlarmKind::NonFinite);
    assert_eq!(a.step, 5);
    assert_eq!(a.layer, Some(2));
    assert_eq!(a.op, Some(FaultOp::FfnLinear1));
    assert!(a.value.is_nan());
    let param = a.param.as_deref().unwrap_or("");
    assert!(param.ends_with("layers.1.linear1.weight"), "{param}");
    assert!(c.alarms.last().is_some_and(|l| l.stopped));
}

#[test]
fn a_nan_put_into_a_layer_stops_the_cpu_run_there_and_names_it() {
    let mut s = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    let first = run(&mut s, 4);
    assert!(first.alarms.iter().all(|a| !a.stopped));
    let before = s.model().embed.data.clone();
    assert!(!s.test_only_nan_at_layer(3), "the model has 3 layers");
    assert!(s.test_only_nan_at_layer(1));
    let c = run(&mut s, 4);
    assert_eq!(c.points, vec![]);
    // The run stands at step 4: the NaN step updated nothing.
    assert_eq!(s.step(), 4);
    assert_eq!(s.model().embed.data, before);
    let with_point = TrainChunk {
        points: first.points[3..].to_vec(),
        ..c.clone()
    };
    assert_stopped_at_layer_2(&with_point);
    // No step is taken after it.
    let e = block_on(s.step_chunk(&chunk(4))).unwrap_err().to_string();
    assert!(e.contains("stopped at step 5"), "{e}");
}

#[test]
fn the_first_op_named_follows_the_pass() {
    // A NaN in layer 1 (0-based 0): named as layer 1, not a later one it spreads to.
    let mut s = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    assert!(s.test_only_nan_at_layer(0));
    let c = run(&mut s, 3);
    let a = c.alarms.iter().find(|a| a.stopped).unwrap();
    assert_eq!(
        (a.step, a.layer, a.op),
        (1, Some(1), Some(FaultOp::FfnLinear1))
    );
    assert_eq!(s.step(), 0);
}

#[test]
fn update_ratios_and_attention_entropy_are_measured_and_a_huge_rate_is_warned_about() {
    let mut st = settings(TrainBackendChoice::Cpu);
    st.steps = HEALTH_EVERY;
    let mut s = Session::new(st.clone()).unwrap();
    let c = run(&mut s, HEALTH_EVERY as u32);
    let layers = 3;
    for p in &c.points {
        let measured = p.step == 1 || p.step % HEALTH_EVERY == 0;
        let want = if measured { layers } else { 0 };
        assert_eq!(p.update_ratios.len(), want, "step {}", p.step);
        assert_eq!(p.attn_entropy.len(), want, "step {}", p.step);
    }
    let p = &c.points[0];
    // The first step's update is small and its attention is spread: max entropy ln(S).
    assert!(
        p.update_ratios
            .iter()
            .all(|&r| r > 0.0 && r < UPDATE_RATIO_ALARM),
        "{:?}",
        p.update_ratios
    );
    assert!(
        p.attn_entropy.iter().all(|&h| h > 0.5),
        "{:?}",
        p.attn_entropy
    );
    assert!(c.alarms.is_empty(), "{:?}", c.alarms);
    // A constant rate of 1 moves the weights by far more than a tenth in one step.
    st.lr = LrSettings::Constant { value: 1.0 };
    let mut s = Session::new(st).unwrap();
    let c = run(&mut s, 1);
    let warned: Vec<_> = c
        .alarms
        .iter()
        .filter(|a| a.kind == AlarmKind::UpdateTooLarge)
        .collect();
    assert!(!warned.is_empty(), "{:?}", c.points[0].update_ratios);
    assert!(warned
        .iter()
        .all(|a| !a.stopped && a.value > UPDATE_RATIO_ALARM && a.lr == 1.0));
}

#[test]
fn the_gpu_reports_the_cpus_per_layer_curves() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let mut cpu = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    let mut gpu = Session::new(settings(TrainBackendChoice::Webgpu)).unwrap();
    block_on(gpu.place(Ok(ctx))).unwrap();
    let want = run(&mut cpu, 11).points;
    let c = run(&mut gpu, 11);
    assert!(
        matches!(c.backend, RunBackend::Webgpu { .. }),
        "{:?}",
        c.backend
    );
    let got = c.points;
    assert_eq!(got.len(), want.len());
    let mut worst: (f32, f32) = (0.0, 0.0);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.residual_norms.len(), 3, "step {}", g.step);
        assert_eq!(g.grad_norms.len(), 3, "step {}", g.step);
        // NaN-aware: a non-finite value on either side fails (f32::max would drop it).
        let all = g.residual_norms.iter().chain(&g.grad_norms);
        let all = all.chain(&w.residual_norms).chain(&w.grad_norms);
        assert!(all.clone().all(|x| x.is_finite()), "step {}", g.step);
        for (a, b) in g.residual_norms.iter().zip(&w.residual_norms) {
            worst.0 = worst.0.max((a - b).abs() / b.abs().max(1e-6));
        }
        for (a, b) in g.grad_norms.iter().zip(&w.grad_norms) {
            worst.1 = worst.1.max((a - b).abs() / b.abs().max(1e-6));
        }
    }
    eprintln!(
        "GPU vs CPU, relative: residual norms {:.2e}, layer gradient norms {:.2e}",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1e-4 && worst.1 <= 1e-3, "{worst:?}");
    // The update ratio and the attention entropy on the health steps (1 and 10), from the
    // weights copied back around the GPU's step, as the CPU measures them.
    let mut watched = vec![];
    let mut worst: (f32, f32) = (0.0, 0.0);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            g.update_ratios.len(),
            w.update_ratios.len(),
            "step {}",
            g.step
        );
        assert_eq!(
            g.attn_entropy.len(),
            w.attn_entropy.len(),
            "step {}",
            g.step
        );
        if w.update_ratios.is_empty() {
            continue;
        }
        watched.push(g.step);
        let all = g.update_ratios.iter().chain(&g.attn_entropy);
        assert!(
            all.clone().all(|x| x.is_finite() && *x > 0.0),
            "step {}: {g:?}",
            g.step
        );
        for (a, b) in g.update_ratios.iter().zip(&w.update_ratios) {
            worst.0 = worst.0.max((a - b).abs() / b.abs().max(1e-9));
        }
        for (a, b) in g.attn_entropy.iter().zip(&w.attn_entropy) {
            worst.1 = worst.1.max((a - b).abs() / b.abs().max(1e-9));
        }
    }
    assert_eq!(watched, [1, HEALTH_EVERY], "the health steps");
    eprintln!(
        "GPU vs CPU, relative: update ratios {:.2e}, attention entropy {:.2e}",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1e-3 && worst.1 <= 1e-4, "{worst:?}");
}

#[test]
fn a_nan_put_into_a_layer_stops_the_gpu_run_there_and_names_it() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let mut s = Session::new(settings(TrainBackendChoice::Webgpu)).unwrap();
    block_on(s.place(Ok(ctx))).unwrap();
    let first = run(&mut s, 4);
    assert!(matches!(first.backend, RunBackend::Webgpu { .. }));
    assert!(s.test_only_nan_at_layer(1));
    let c = run(&mut s, 4);
    // The CPU took the step again from the last copy back and found where.
    assert!(
        matches!(
            c.backend,
            RunBackend::CpuLost {
                step: 5,
                from: 4,
                ..
            }
        ),
        "{:?}",
        c.backend
    );
    let with_point = TrainChunk {
        points: first.points[3..].to_vec(),
        ..c.clone()
    };
    assert_stopped_at_layer_2(&with_point);
    assert_eq!(s.step(), 4);
}

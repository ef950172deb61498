//! The lab's training run on the GPU (`Session::place`): the backend its settings choose,
//! the same curve as on the CPU, and a GPU failure mid-run that the CPU carries on from the
//! last step copied back — the same steps a CPU run from that state takes, nothing already
//! reported lost. Skips (visibly) without an adapter unless TPLAY_REQUIRE_GPU=1.

mod support;

use pollster::block_on;
use support::gpu_or_skip;
use tplay::backend::gpu::GpuContext;
use tplay::backend::Backend;
use tplay::engine::Engine;
use tplay::protocol::{RunBackend, RunSettings, TrainBackendChoice, TrainChunkRequest, TrainPoint};
use tplay::train::Session;
use tplay::Error;

/// A GPU step's loss against the CPU's, relative.
const TOL: f32 = 1e-4;

fn settings(backend: TrainBackendChoice) -> RunSettings {
    let mut s = RunSettings::defaults("reverse").unwrap().settings;
    s.steps = 12;
    s.batch = 4;
    s.eval_every = 4;
    s.dropout = 0.1;
    s.backend = backend;
    s
}

fn chunk(n: u32) -> TrainChunkRequest {
    TrainChunkRequest {
        max_steps: n,
        budget_ms: 1e9,
    }
}

/// Every chunk of a run (`n` steps each) to its end.
fn run_out(s: &mut Session, n: u32) -> Vec<TrainPoint> {
    let mut out = vec![];
    while !s.is_done() {
        out.extend(block_on(s.step_chunk(&chunk(n))).unwrap().points);
    }
    out
}

/// The points without their compute times.
fn numbers(points: &[TrainPoint]) -> Vec<TrainPoint> {
    points
        .iter()
        .map(|p| TrainPoint {
            elapsed_ms: 0.0,
            ..p.clone()
        })
        .collect()
}

fn on_gpu(ctx: GpuContext, backend: TrainBackendChoice) -> Session {
    let mut s = Session::new(settings(backend)).unwrap();
    block_on(s.place(Ok(ctx))).unwrap();
    assert!(
        matches!(s.backend(), RunBackend::Webgpu { .. }),
        "{:?}",
        s.backend()
    );
    s
}

fn assert_close(got: &[TrainPoint], want: &[TrainPoint]) {
    assert_eq!(
        got.iter().map(|p| p.step).collect::<Vec<_>>(),
        want.iter().map(|p| p.step).collect::<Vec<_>>()
    );
    for (g, w) in got.iter().zip(want) {
        let rel = (g.loss - w.loss).abs() / w.loss.abs().max(1e-6);
        assert!(rel <= TOL, "step {}: {} vs {}", g.step, g.loss, w.loss);
        assert!((g.lr - w.lr).abs() <= TOL * w.lr, "step {} lr", g.step);
        assert_eq!(g.eval.is_some(), w.eval.is_some(), "step {}", g.step);
        if let (Some(ge), Some(we)) = (&g.eval, &w.eval) {
            let rel = (ge.loss - we.loss).abs() / we.loss.abs().max(1e-6);
            assert!(
                rel <= TOL as f64,
                "step {} held-out: {} vs {}",
                g.step,
                ge.loss,
                we.loss
            );
        }
    }
}

#[test]
fn a_run_on_the_gpu_has_the_cpus_curve() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let mut cpu = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    block_on(cpu.place(Ok(ctx.clone()))).unwrap();
    assert_eq!(cpu.backend(), &RunBackend::CpuChosen);
    let want = run_out(&mut cpu, 5);
    // `auto` times the run's next steps on both sides and says which won, with both
    // figures (crate/tests/train_backend_race.rs makes each side lose); `webgpu` insists.
    let mut auto = Session::new(settings(TrainBackendChoice::Auto)).unwrap();
    block_on(auto.place(Ok(ctx.clone()))).unwrap();
    match auto.backend() {
        RunBackend::CpuFaster { cpu_ms, gpu_ms, .. } => assert!(cpu_ms <= gpu_ms),
        RunBackend::WebgpuChecked { cpu_ms, gpu_ms, .. } => assert!(gpu_ms < cpu_ms),
        b => panic!("auto with a GPU that agrees: {b:?}"),
    }
    let mut gpu = on_gpu(ctx, TrainBackendChoice::Webgpu);
    let got = run_out(&mut gpu, 5);
    assert_close(&got, &want);
    assert!(matches!(gpu.backend(), RunBackend::Webgpu { .. }));
    // The weights copied back at the end are the CPU run's.
    let (g, c) = (&gpu.model().embed.data, &cpu.model().embed.data);
    support::assert_close("the embedding copied back", g, c, 1e-3);
}

#[test]
fn a_gpu_failure_mid_chunk_goes_on_on_the_cpu_from_the_last_copy_back() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    let mut gpu = on_gpu(ctx, TrainBackendChoice::Webgpu);
    // Steps 1–5 on the GPU, copied back at the chunk's end.
    let first = block_on(gpu.step_chunk(&chunk(5))).unwrap();
    assert_eq!(first.points.len(), 5);
    assert!(matches!(first.backend, RunBackend::Webgpu { .. }));
    let (ckpt, state) = (gpu.checkpoint().unwrap(), gpu.state().unwrap());
    // The GPU fails taking step 7, after step 6 was taken there but not copied back.
    gpu.test_only_fail_gpu_at(7);
    let second = block_on(gpu.step_chunk(&chunk(5))).unwrap();
    assert_eq!(
        second.backend,
        RunBackend::CpuLost {
            step: 7,
            from: 5,
            detail: "the GPU device was lost (a test-only failure)".into()
        }
    );
    // Nothing reported is lost and no step is reported twice: 6–10, taken on the CPU.
    assert_eq!(
        second.points.iter().map(|p| p.step).collect::<Vec<_>>(),
        [6, 7, 8, 9, 10]
    );
    let rest = run_out(&mut gpu, 5);
    // The same numbers, bit for bit, as a CPU run continued from the state of step 5.
    let mut cpu = Session::resume(settings(TrainBackendChoice::Cpu), &ckpt, &state).unwrap();
    let want = run_out(&mut cpu, 5);
    let got: Vec<TrainPoint> = second.points.into_iter().chain(rest).collect();
    assert_eq!(numbers(&got), numbers(&want));
    assert_eq!(gpu.model().embed.data, cpu.model().embed.data);
    // The CPU steps carry the per-layer curves again.
    assert!(got.iter().all(|p| !p.residual_norms.is_empty()));
}

#[test]
fn a_device_lost_between_chunks_goes_on_on_the_cpu_and_says_so() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A device of its own: this one is destroyed.
    let ctx = block_on(GpuContext::request()).unwrap();
    let mut gpu = on_gpu(ctx, TrainBackendChoice::Webgpu);
    let mut cpu = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    let want = run_out(&mut cpu, 4);
    let mut got = block_on(gpu.step_chunk(&chunk(4))).unwrap().points;
    assert!(gpu.test_only_lose_gpu());
    let c = block_on(gpu.step_chunk(&chunk(4))).unwrap();
    match &c.backend {
        RunBackend::CpuLost { step, from, .. } => assert_eq!((*step, *from), (5, 4)),
        b => panic!("expected the CPU after the loss, got {b:?}"),
    }
    got.extend(c.points);
    got.extend(run_out(&mut gpu, 4));
    assert_close(&got, &want);
    // The export after the loss is the CPU's own weights; no GPU is asked again.
    assert!(!gpu.test_only_lose_gpu());
    assert!(gpu.checkpoint().unwrap().len() > 1000);
}

#[test]
fn the_settings_choose_the_backend_and_say_why_not_the_gpu() {
    let none = || Err(Error::Gpu("no adapter: this machine has no GPU".into()));
    // auto: the CPU, saying why.
    let mut s = Session::new(settings(TrainBackendChoice::Auto)).unwrap();
    block_on(s.place(none())).unwrap();
    assert_eq!(
        s.backend(),
        &RunBackend::CpuNoGpu {
            detail: "no adapter: this machine has no GPU".into()
        }
    );
    // webgpu: refused by field, with the reason.
    let mut s = Session::new(settings(TrainBackendChoice::Webgpu)).unwrap();
    let e = block_on(s.place(none())).unwrap_err().to_string();
    assert!(e.contains("backend: ") && e.contains("no adapter"), "{e}");
    // cpu: never the GPU.
    let mut s = Session::new(settings(TrainBackendChoice::Cpu)).unwrap();
    block_on(s.place(none())).unwrap();
    assert_eq!(s.backend(), &RunBackend::CpuChosen);
    // Settings from before the field existed read as auto.
    let mut v = serde_json::to_value(settings(TrainBackendChoice::Cpu)).unwrap();
    v.as_object_mut().unwrap().remove("backend");
    let old: RunSettings = serde_json::from_value(v).unwrap();
    assert_eq!(old.backend, TrainBackendChoice::Auto);
}

#[test]
fn the_engine_starts_a_run_where_its_settings_say_and_its_test_hook_loses_the_runs_gpu() {
    if gpu_or_skip().is_none() {
        return;
    }
    let ctx = block_on(GpuContext::request()).unwrap();
    let mut engine = Engine::new();
    // An engine on the GPU lends its device to a run that asks for it.
    engine.use_backend(Backend::Gpu(ctx));
    let cpu = block_on(engine.train_start(&settings(TrainBackendChoice::Cpu))).unwrap();
    assert_eq!(cpu.backend, RunBackend::CpuChosen);
    let started = block_on(engine.train_start(&settings(TrainBackendChoice::Webgpu))).unwrap();
    assert!(matches!(started.backend, RunBackend::Webgpu { .. }));
    let first = block_on(engine.train_chunk(&chunk(3))).unwrap();
    assert_eq!(first.points.len(), 3);
    // The export copies the weights back first: it is the run's model at step 3.
    let before = block_on(engine.train_export()).unwrap();
    let state_then = block_on(engine.train_export_state()).unwrap();
    assert!(engine.test_only_lose_gpu());
    let next = block_on(engine.train_chunk(&chunk(3))).unwrap();
    assert!(
        matches!(
            next.backend,
            RunBackend::CpuLost {
                step: 4,
                from: 3,
                ..
            }
        ),
        "{:?}",
        next.backend
    );
    assert_eq!(
        next.points.iter().map(|p| p.step).collect::<Vec<_>>(),
        [4, 5, 6]
    );
    // The CPU went on from those weights: a CPU run resumed from them takes the same steps.
    let mut resumed = Engine::new();
    block_on(resumed.train_resume(&settings(TrainBackendChoice::Cpu), &before, &state_then))
        .unwrap();
    let want = block_on(resumed.train_chunk(&chunk(3))).unwrap();
    assert_eq!(numbers(&next.points), numbers(&want.points));
}

//! The engine keeps the GPU only where it agrees with the CPU and, unless the learner
//! insisted on it, is faster for the loaded model (`backend::race`). Each side is made to
//! lose on purpose with busy time added to its timed passes (the page's test hook), so the
//! choice is checked in both directions on any device, lavapipe included.

mod support;

use pollster::block_on;
use support::{gpu_or_skip, models_dir};
use tplay::backend::race::Handicap;
use tplay::engine::Engine;
use tplay::protocol::{BackendName, BackendStatus, RaceUnit};

fn engine(file: &str) -> Option<Engine> {
    gpu_or_skip()?;
    let mut e = Engine::new();
    e.load(&std::fs::read(models_dir().join(file)).unwrap())
        .unwrap();
    Some(e)
}

/// The race's figures; the models here generate, so it timed generated tokens.
fn times(s: &BackendStatus) -> (f32, f32) {
    match s {
        BackendStatus::WebgpuChecked {
            cpu_ms,
            gpu_ms,
            unit,
            ..
        }
        | BackendStatus::CpuFaster {
            cpu_ms,
            gpu_ms,
            unit,
            ..
        } => {
            assert_eq!(*unit, RaceUnit::Token, "{s:?}");
            (*cpu_ms, *gpu_ms)
        }
        other => panic!("no race in {other:?}"),
    }
}

#[test]
fn by_speed_the_gpu_is_kept_only_when_it_wins_the_race() {
    let Some(mut e) = engine("reverse.safetensors") else {
        return;
    };
    let s = block_on(e.select_backend(BackendName::Webgpu, None, true));
    let (cpu, gpu) = times(&s);
    assert!(
        cpu > 0.0 && gpu > 0.0 && cpu.is_finite() && gpu.is_finite(),
        "{s:?}"
    );
    // Whichever won, the status says so and the engine runs there.
    match &s {
        BackendStatus::WebgpuChecked { parity, .. } => {
            assert!(gpu < cpu, "{s:?}");
            assert!(*parity <= 1e-3);
            assert_eq!(e.backend(), BackendName::Webgpu);
        }
        BackendStatus::CpuFaster { parity, .. } => {
            assert!(gpu >= cpu, "{s:?}");
            assert!(*parity <= 1e-3);
            assert_eq!(e.backend(), BackendName::Cpu);
        }
        _ => unreachable!(),
    }
    // A slow dispatch: 5 ms of busy time on every GPU pass loses to the CPU.
    let slow_gpu = Handicap {
        gpu_ms: 5.0,
        cpu_ms: 0.0,
    };
    let s = block_on(e.test_only_race_with_handicap(slow_gpu));
    let (cpu, gpu) = times(&s);
    assert!(matches!(s, BackendStatus::CpuFaster { .. }), "{s:?}");
    assert!(gpu >= 5.0 && gpu > cpu, "{s:?}");
    assert_eq!(e.backend(), BackendName::Cpu);
    // A slow processor: 200 ms on every CPU pass (a software adapter's pass is a few ms,
    // tens under load), and the GPU wins (asked for again from the CPU the last race left
    // the engine on).
    let slow_cpu = Handicap {
        gpu_ms: 0.0,
        cpu_ms: 200.0,
    };
    let s = block_on(e.test_only_race_with_handicap(slow_cpu));
    let (cpu, gpu) = times(&s);
    assert!(matches!(s, BackendStatus::WebgpuChecked { .. }), "{s:?}");
    assert!(cpu >= 200.0 && gpu < cpu, "{s:?}");
    assert_eq!(e.backend(), BackendName::Webgpu);
}

#[test]
fn a_learner_who_insists_keeps_an_agreeing_gpu_however_slow() {
    let Some(mut e) = engine("zh-grammar-sinusoidal.safetensors") else {
        return;
    };
    let s = block_on(e.select_backend(BackendName::Webgpu, None, false));
    assert!(matches!(s, BackendStatus::WebgpuChecked { .. }), "{s:?}");
    let slow_gpu = Handicap {
        gpu_ms: 5.0,
        cpu_ms: 0.0,
    };
    let s = block_on(e.test_only_race_with_handicap(slow_gpu));
    let (cpu, gpu) = times(&s);
    assert!(matches!(s, BackendStatus::WebgpuChecked { .. }), "{s:?}");
    assert!(gpu > cpu, "the figures still say it is slower: {s:?}");
    assert_eq!(e.backend(), BackendName::Webgpu);
}

#[test]
fn a_new_model_races_again_from_the_cpu_a_lost_race_left() {
    let Some(mut e) = engine("reverse.safetensors") else {
        return;
    };
    block_on(e.select_backend(BackendName::Webgpu, None, true));
    let slow_gpu = Handicap {
        gpu_ms: 200.0,
        cpu_ms: 0.0,
    };
    let lost = block_on(e.test_only_race_with_handicap(slow_gpu));
    assert!(matches!(lost, BackendStatus::CpuFaster { .. }), "{lost:?}");
    assert_eq!(e.backend(), BackendName::Cpu);
    // Another model: the GPU is asked for again and raced on it, now without the 200 ms,
    // so the status is a fresh race's (kept as it was, its GPU figure would be the
    // handicapped one).
    e.load(&std::fs::read(models_dir().join("translate.safetensors")).unwrap())
        .unwrap();
    let again = block_on(e.recheck_backend(None));
    let (_, gpu) = times(&again);
    assert!(gpu < times(&lost).1 - 100.0, "{lost:?} then {again:?}");
    assert_eq!(e.backend(), again.name());
}

#[test]
fn a_model_that_does_not_generate_is_timed_on_its_forward_pass() {
    let Some(mut e) = engine("sentiment.safetensors") else {
        return;
    };
    let s = block_on(e.select_backend(BackendName::Webgpu, None, true));
    match &s {
        BackendStatus::WebgpuChecked {
            unit,
            cpu_ms,
            gpu_ms,
            ..
        }
        | BackendStatus::CpuFaster {
            unit,
            cpu_ms,
            gpu_ms,
            ..
        } => {
            assert_eq!(*unit, RaceUnit::Pass, "a classifier has no tokens to time");
            assert!(*cpu_ms > 0.0 && *gpu_ms > 0.0, "{s:?}");
        }
        other => panic!("no race in {other:?}"),
    }
}

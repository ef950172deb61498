//! Where the time goes (`explain::timing`): the parts of a step are this device's measured
//! rates times the step's counts, the rest is what they leave, the counts follow the
//! model's shape (checked against multiply-adds counted by hand here), and on a GPU the
//! submissions and dispatches of a step are counted.

mod support;

use pollster::block_on;
use support::gpu_or_skip;
use tplay::explain::timing::{
    time_rates, time_width, DeviceRates, PartKind, StepTime, TimeRatesRequest, TimeWidthRequest,
    WidthTime,
};

fn part(s: &StepTime, kind: PartKind) -> f64 {
    s.parts
        .iter()
        .find(|p| p.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} part in {s:?}"))
        .ms
}

/// The rest is the step less its estimated parts, and 0 (overlapped) where they exceed it.
fn check_rest(s: &StepTime) {
    let estimated: f64 = s
        .parts
        .iter()
        .filter(|p| p.kind != PartKind::Rest)
        .map(|p| p.ms)
        .sum();
    let rest = part(s, PartKind::Rest);
    assert!(s.ms > 0.0 && s.ms.is_finite(), "{s:?}");
    if estimated > s.ms {
        assert!(s.overlapped && rest == 0.0, "{s:?}");
    } else {
        assert!(!s.overlapped, "{s:?}");
        assert!(
            (rest - (s.ms - estimated)).abs() <= 1e-9 * s.ms.max(1.0),
            "{s:?}"
        );
    }
}

fn width(d_model: usize, rates: &DeviceRates) -> WidthTime {
    block_on(time_width(&TimeWidthRequest {
        d_model,
        rates: rates.clone(),
    }))
    .unwrap()
}

#[test]
fn cpu_steps_are_their_arithmetic_their_bytes_and_the_rest() {
    let rates = block_on(time_rates(&TimeRatesRequest { gpu: false })).unwrap();
    assert!(
        rates.cpu_gflops > 0.0 && rates.cpu_gflops.is_finite(),
        "{rates:?}"
    );
    assert!(rates.gpu.is_none() && rates.gpu_error.is_none());
    let small = width(16, &rates);
    let wide = width(32, &rates);
    for w in [&small, &wide] {
        assert!(w.decode_gpu.is_none() && w.train_gpu.is_none() && w.gpu_error.is_none());
        assert_eq!(w.d_ff, 4 * w.d_model);
        for s in [&w.decode_cpu, &w.train_cpu] {
            check_rest(s);
            // Arithmetic: the step's multiply-adds (2 FLOPs each) at the measured rate.
            let arithmetic = 2.0 * s.multiply_adds / (rates.cpu_gflops * 1e6);
            assert!(
                (part(s, PartKind::Arithmetic) - arithmetic).abs() <= 1e-12 + 1e-9 * arithmetic
            );
            assert!(part(s, PartKind::Bytes) > 0.0);
            assert!(s.bytes >= 4.0 * w.params, "every weight is read: {s:?}");
            assert_eq!((s.submissions, s.dispatches, s.readbacks), (0.0, 0.0, 0.0));
        }
        // A decoder-only layer's products per token, counted by hand: Q, K, V and O
        // (4·d²) and the FFN (2·d·d_ff); the LM head's d·V comes once. Attention adds
        // 2·d per cached position and layer, at least one position.
        let (d, l, f) = (w.d_model as f64, w.layers as f64, w.d_ff as f64);
        let products = l * (4.0 * d * d + 2.0 * d * f);
        let macs = w.decode_cpu.multiply_adds;
        assert!(macs > products + 2.0 * d * l, "{macs} ≤ {products}");
        // The vocabulary of the reverse task is small (under 64 tokens), and a
        // generation decodes at most 8 tokens.
        assert!(macs < products + 64.0 * d + 2.0 * d * l * 9.0, "{macs}");
        // A training step is at least three passes over its batch's tokens.
        assert!(w.train_cpu.multiply_adds > 3.0 * w.batch as f64 * products);
    }
    assert_eq!(wide.n_heads, small.n_heads);
    assert!(
        wide.params > 3.0 * small.params,
        "{} vs {}",
        wide.params,
        small.params
    );
    assert!(wide.decode_cpu.multiply_adds > 3.0 * small.decode_cpu.multiply_adds);
    assert!(wide.train_cpu.bytes > small.train_cpu.bytes);
}

#[test]
fn widths_outside_the_range_or_the_heads_are_refused_by_name() {
    let rates = block_on(time_rates(&TimeRatesRequest { gpu: false })).unwrap();
    for bad in [0, 2, 33, 4096] {
        let e = block_on(time_width(&TimeWidthRequest {
            d_model: bad,
            rates: rates.clone(),
        }))
        .unwrap_err()
        .to_string();
        assert!(e.contains("d_model") && e.contains(&bad.to_string()), "{e}");
    }
}

#[test]
fn gpu_steps_count_their_submissions_and_dispatches() {
    if gpu_or_skip().is_none() {
        return;
    }
    let rates = block_on(time_rates(&TimeRatesRequest { gpu: true })).unwrap();
    let g = rates
        .gpu
        .clone()
        .unwrap_or_else(|| panic!("no GPU rates: {rates:?}"));
    assert!(g.round_trip_ms > 0.0 && g.dispatch_ms >= 0.0, "{g:?}");
    assert!(!g.adapter.is_empty());
    let w = width(16, &rates);
    assert!(w.gpu_error.is_none(), "{:?}", w.gpu_error);
    let dec = w.decode_gpu.as_ref().unwrap();
    let train = w.train_gpu.as_ref().unwrap();
    for s in [dec, train] {
        check_rest(s);
        assert!(s.submissions >= 1.0 && s.readbacks >= 1.0, "{s:?}");
        assert!(
            (part(s, PartKind::Submissions) - s.submissions * g.round_trip_ms).abs() <= 1e-12,
            "{s:?}"
        );
        assert!((part(s, PartKind::Dispatches) - s.dispatches * g.dispatch_ms).abs() <= 1e-12);
    }
    // Every layer launches several kernels per token; a training step launches the forward
    // pass's kernels for the batch, the backward pass's and Adam's too.
    assert!(dec.dispatches >= 4.0 * w.layers as f64, "{dec:?}");
    assert!(
        train.dispatches > 2.0 * dec.dispatches,
        "{train:?} vs {dec:?}"
    );
    assert_eq!(dec.multiply_adds, w.decode_cpu.multiply_adds);
}

//! The comparisons every test uses fail on a broken number: a NaN or an infinity on either
//! side is never "close", and never "a difference that shows".

mod support;

use std::panic::catch_unwind;

use support::{assert_close, assert_differ, finite_diff, max_diff};
use tplay::backend::parity::logit_parity;
use tplay::model::inspect::qk_gap;
use tplay::model::Trace;
use tplay::tensor::Tensor;

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

/// Whether `f` panicked (its message is printed, which is what a failing test shows).
fn fails(f: impl FnOnce() + std::panic::UnwindSafe) -> bool {
    catch_unwind(f).is_err()
}

#[test]
fn finite_diff_is_infinite_for_any_nan_or_infinity_on_either_side() {
    assert_eq!(finite_diff(&[0.0, NAN], &[0.0, 0.0]), INF);
    assert_eq!(finite_diff(&[0.0, 0.0], &[NAN, 0.0]), INF);
    assert_eq!(finite_diff(&[NAN], &[NAN]), INF);
    assert_eq!(
        finite_diff(&[INF], &[INF]),
        INF,
        "the same infinity is no pass"
    );
    assert_eq!(finite_diff(&[-INF, 1.0], &[-INF, 1.0]), INF);
    assert_eq!(finite_diff(&[1.0, 2.0], &[1.0, 2.5]), 0.5);
    assert_eq!(finite_diff(&[], &[]), 0.0);
}

#[test]
fn max_diff_is_infinite_for_a_nan_and_zero_only_for_the_same_infinity() {
    assert_eq!(max_diff(&[NAN, 0.0], &[0.0, 0.0]), INF);
    assert_eq!(max_diff(&[0.0], &[NAN]), INF);
    assert_eq!(max_diff(&[INF], &[1.0]), INF);
    // A masked score, −∞ on both sides, is the same number.
    assert_eq!(max_diff(&[-INF, 1.0], &[-INF, 1.25]), 0.25);
}

#[test]
fn assert_close_fails_on_nan_and_infinity_and_on_a_real_difference() {
    assert_close("equal", &[1.0, -2.0], &[1.0, -2.0], 0.0);
    assert_close("within", &[1.0], &[1.00001], 1e-4);
    assert!(fails(|| assert_close("nan left", &[NAN], &[0.0], 1.0)));
    assert!(fails(|| assert_close("nan right", &[0.0], &[NAN], 1.0)));
    assert!(fails(|| assert_close("nan both", &[NAN], &[NAN], 1.0)));
    assert!(fails(|| assert_close("inf both", &[INF], &[INF], 1.0)));
    assert!(fails(|| assert_close("too far", &[0.0], &[0.1], 1e-2)));
}

#[test]
fn assert_differ_fails_on_nan_and_infinity_and_on_equal_results() {
    assert_eq!(assert_differ("moved", &[0.0, 1.0], &[0.5, 1.0], 1e-3), 0.5);
    assert!(fails(|| {
        assert_differ("nan looks like a change", &[NAN, 1.0], &[0.0, 1.0], 1e-3);
    }));
    assert!(fails(|| {
        assert_differ("nan on the other side", &[0.0, 1.0], &[0.0, NAN], 1e-3);
    }));
    assert!(fails(|| {
        assert_differ("infinity looks like a change", &[INF], &[0.0], 1e-3);
    }));
    assert!(fails(|| {
        assert_differ("no change", &[1.0, 2.0], &[1.0, 2.0], 1e-3);
    }));
}

#[test]
fn the_page_never_shows_a_nan_query_as_tied_with_its_key() {
    let q = [0.5, -1.0, 2.0, 0.0]; // (N 2, D 2) of one head
    let nan = [0.5, -1.0, NAN, 0.0];
    assert_eq!(qk_gap(&q, &q, 1, 1, 2, 2), vec![0.0]);
    assert_eq!(qk_gap(&nan, &q, 1, 1, 2, 2), vec![INF]);
    assert_eq!(qk_gap(&q, &nan, 1, 1, 2, 2), vec![INF]);
}

/// A trace holding only `logits` (B 1, T 1, V).
fn trace(logits: Vec<f32>) -> Trace {
    let n = logits.len();
    Trace {
        logits: Tensor::new(vec![1, 1, n], logits).unwrap(),
        class_logits: None,
        attention: vec![],
        hidden: vec![],
        ffn: vec![],
        running_stats: vec![],
    }
}

#[test]
fn gpu_parity_fails_on_a_nan_or_an_infinity_on_either_side_even_the_same_one() {
    let good = trace(vec![0.5, -1.0, 2.0]);
    assert!(logit_parity(&good, &good).unwrap().agrees);
    for broken in [NAN, INF, -INF] {
        let bad = trace(vec![0.5, broken, 2.0]);
        for (cpu, gpu) in [(&good, &bad), (&bad, &good), (&bad, &bad)] {
            let p = logit_parity(cpu, gpu).unwrap();
            assert_eq!((p.max_abs_diff, p.agrees), (INF, false), "{broken}");
        }
    }
}

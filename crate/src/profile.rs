//! Per-phase timers for the benchmarks, compiled in only with the `profile` feature.
//!
//! A kernel opens a [`scope`] for its phase; when the scope ends its wall time is added to
//! that phase's total. [`take`] returns the totals (milliseconds, and how often each phase
//! ran) and resets them. Without the feature a scope is an empty value the compiler
//! removes, so the shipped engine pays nothing.
//!
//! The clock ([`now_ms`]) is the thread's CPU time natively (so that other programs on a
//! busy machine do not inflate the figures); in wasm it is `globalThis.tplayBenchNow()`
//! when the host defines one (the node runner: the process's CPU time), else
//! `performance.now()`, which browsers coarsen (Chromium: 5 µs without cross-origin
//! isolation). Every scope costs two clock reads, so the totals of very short phases
//! include the clock.

/// The phases a decoding step and a training step spend their time in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Matrix products with one row (a decoding step's projections, FFN and LM head).
    MatmulRow,
    /// Matrix products with more than one row (prefill, training).
    Matmul,
    /// Scores, softmax and the weighted sum of v (forward).
    Attention,
    /// LayerNorm / BatchNorm (forward).
    Norm,
    /// GELU / ReLU (forward).
    Activation,
    /// Token embedding and position encodings.
    Embed,
    /// The vocabulary softmax, the choice of a token and the candidate list.
    Sampling,
    /// Turning a step's result into JavaScript values (wasm only).
    Serialise,
    /// The whole backward pass of a training step.
    Backward,
    /// The optimizer update (clipping and Adam).
    Optimizer,
    /// Drawing a training batch from the task.
    Data,
}

impl Phase {
    pub const ALL: [Phase; 11] = [
        Phase::MatmulRow,
        Phase::Matmul,
        Phase::Attention,
        Phase::Norm,
        Phase::Activation,
        Phase::Embed,
        Phase::Sampling,
        Phase::Serialise,
        Phase::Backward,
        Phase::Optimizer,
        Phase::Data,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::MatmulRow => "matmul, 1 row",
            Phase::Matmul => "matmul, many rows",
            Phase::Attention => "attention (scores, softmax, ·v)",
            Phase::Norm => "norms",
            Phase::Activation => "activation",
            Phase::Embed => "embedding + positions",
            Phase::Sampling => "vocabulary softmax, choice, candidates",
            Phase::Serialise => "step result to JS values",
            Phase::Backward => "backward pass",
            Phase::Optimizer => "clip + Adam",
            Phase::Data => "batch sampling",
        }
    }
}

/// One phase's total since the last [`take`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseTotal {
    pub phase: String,
    pub ms: f64,
    pub calls: u64,
}

#[cfg(feature = "profile")]
mod imp {
    use super::{Phase, PhaseTotal};
    use std::cell::RefCell;

    thread_local! {
        static TOTALS: RefCell<[(f64, u64); Phase::ALL.len()]> =
            const { RefCell::new([(0.0, 0); Phase::ALL.len()]) };
    }

    use super::now_ms;

    /// Adds its lifetime to `phase` when dropped.
    pub struct Scope {
        phase: Phase,
        start: f64,
    }

    pub fn scope(phase: Phase) -> Scope {
        Scope {
            phase,
            start: now_ms(),
        }
    }

    impl Drop for Scope {
        fn drop(&mut self) {
            let dt = now_ms() - self.start;
            let i = self.phase as usize;
            TOTALS.with(|t| {
                let mut t = t.borrow_mut();
                t[i].0 += dt;
                t[i].1 += 1;
            });
        }
    }

    pub fn take() -> Vec<PhaseTotal> {
        TOTALS.with(|t| {
            let mut t = t.borrow_mut();
            let out = Phase::ALL
                .iter()
                .zip(t.iter())
                .filter(|(_, (_, n))| *n > 0)
                .map(|(p, &(ms, calls))| PhaseTotal {
                    phase: p.name().to_string(),
                    ms,
                    calls,
                })
                .collect();
            *t = [(0.0, 0); Phase::ALL.len()];
            out
        })
    }
}

#[cfg(not(feature = "profile"))]
mod imp {
    use super::{Phase, PhaseTotal};

    /// Without the `profile` feature: nothing (its empty `Drop` lets callers end a scope
    /// early with `drop` in either build).
    pub struct Scope;

    impl Drop for Scope {
        #[inline(always)]
        fn drop(&mut self) {}
    }

    #[inline(always)]
    pub fn scope(_: Phase) -> Scope {
        Scope
    }

    pub fn take() -> Vec<PhaseTotal> {
        vec![]
    }
}

pub use imp::{scope, take, Scope};

/// Whether the timers are compiled in.
pub const ENABLED: bool = cfg!(feature = "profile");

/// Milliseconds of this thread's CPU time (natively), from an arbitrary origin.
#[cfg(all(
    any(feature = "profile", feature = "bench"),
    not(target_arch = "wasm32")
))]
pub fn now_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

/// Milliseconds from `globalThis.tplayBenchNow()` when the host defines it (the node
/// runner passes the process's CPU time), else `performance.now()`.
#[cfg(all(any(feature = "profile", feature = "bench"), target_arch = "wasm32"))]
pub fn now_ms() -> f64 {
    use js_sys::{Function, Reflect};
    use wasm_bindgen::JsCast;
    thread_local! {
        static CLOCK: (js_sys::Object, Function) = {
            let global = js_sys::global();
            let named = Reflect::get(&global, &"tplayBenchNow".into())
                .ok()
                .and_then(|f| f.dyn_into::<Function>().ok());
            match named {
                Some(f) => (global, f),
                None => {
                    let perf = Reflect::get(&global, &"performance".into())
                        .expect("performance exists in every host the engine runs in");
                    let now = Reflect::get(&perf, &"now".into())
                        .ok()
                        .and_then(|f| f.dyn_into::<Function>().ok())
                        .expect("performance.now exists");
                    (perf.unchecked_into(), now)
                }
            }
        };
    }
    CLOCK.with(|(this, f)| f.call0(this).ok().and_then(|v| v.as_f64()).unwrap_or(0.0))
}

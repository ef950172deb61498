//! Wall-clock time of a step. `std::time::Instant` panics on wasm32, so there the time
//! comes from the page's `performance.now()` (a window or a worker both have it), or
//! from `Date.now()` where even that is missing. A caller may also hand in its own clock.

/// A clock in milliseconds from an arbitrary origin.
pub type ClockFn = fn() -> f64;

/// Measures one interval.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    clock: Option<ClockFn>,
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    start_ms: f64,
}

impl Stopwatch {
    /// Start now, on `clock` if given, else on the platform's monotonic clock.
    pub fn start(clock: Option<ClockFn>) -> Self {
        Stopwatch {
            clock,
            #[cfg(not(target_arch = "wasm32"))]
            start: std::time::Instant::now(),
            start_ms: match clock {
                Some(f) => f(),
                None => platform_now_ms(),
            },
        }
    }

    /// Milliseconds since `start`.
    pub fn elapsed_ms(&self) -> f64 {
        match self.clock {
            Some(f) => f() - self.start_ms,
            None => self.platform_elapsed_ms(),
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn platform_elapsed_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }

    #[cfg(target_arch = "wasm32")]
    fn platform_elapsed_ms(&self) -> f64 {
        platform_now_ms() - self.start_ms
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn platform_now_ms() -> f64 {
    // Natively the interval is measured with `Instant`; no absolute time is needed.
    0.0
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// The page's `Performance` object.
    type Performance;

    /// The global `performance` of a window or a Web Worker alike, looked up once; `None`
    /// where there is none.
    #[wasm_bindgen(thread_local_v2, js_name = performance)]
    static PERFORMANCE: Option<Performance>;

    #[wasm_bindgen(method, js_name = now)]
    fn now(this: &Performance) -> f64;
}

/// `performance.now()`, else `Date.now()`. Bound imports: a step reads the clock twice, and
/// looking `performance` and `now` up by name (`Reflect::get`) turned both names into JS
/// strings on every read: about a fifteenth of a decoding step's call in Chromium.
#[cfg(target_arch = "wasm32")]
fn platform_now_ms() -> f64 {
    PERFORMANCE
        .with(|p| p.as_ref().map(Performance::now))
        .unwrap_or_else(js_sys::Date::now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static TICKS: AtomicU64 = AtomicU64::new(0);

    /// A clock that advances 2.5 ms every time it is read.
    fn fake_clock() -> f64 {
        TICKS.fetch_add(1, Ordering::SeqCst) as f64 * 2.5
    }

    #[test]
    fn a_caller_clock_measures_the_interval() {
        let sw = Stopwatch::start(Some(fake_clock));
        assert_eq!(sw.elapsed_ms(), 2.5);
    }

    #[test]
    fn the_native_clock_is_monotonic_and_non_negative() {
        let sw = Stopwatch::start(None);
        let a = sw.elapsed_ms();
        let b = sw.elapsed_ms();
        assert!(a >= 0.0 && b >= a);
    }
}

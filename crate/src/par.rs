//! Work split across threads only where the split changes no number.
//!
//! A training step's numbers must not depend on how many threads ran it: the page's
//! figures equal the command line's, a run resumed elsewhere carries on as it would have,
//! and the same seed trains the same model. So nothing here ever splits a sum. The work
//! is divided only along axes whose pieces are computed independently and written to
//! disjoint memory — the sequences of a batch (attention forward and backward), the rows
//! of a row-independent product, the output rows of a weight gradient (each element of
//! which the product sums over the batch the same way whatever rows surround it), the
//! elements of an element-wise function. Each piece runs the same code, in the same
//! order, that one thread runs: the results are equal bit for bit for any thread count
//! (tested in `crate/tests/threads.rs`).
//!
//! With the `threads` feature (native builds) the pieces run on a rayon pool of
//! [`set_threads`] threads; without it (the page's wasm builds) or at one thread they run
//! in order on the calling thread, through the same functions.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads every caller uses unless it overrides them ([`with_threads`]).
static THREADS: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// This thread's override of [`THREADS`] ([`with_threads`]).
    static OVERRIDE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The smallest piece worth handing to another thread, in multiply-adds (or elements of
/// an element-wise function): below it the hand-over costs more than the work.
const MIN_WORK: usize = 1 << 15;

/// Use `n` threads (at least 1) for the work split here, from now on and in every thread.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// The threads the calling thread's work is split across.
pub fn threads() -> usize {
    if !cfg!(feature = "threads") {
        return 1;
    }
    OVERRIDE
        .with(Cell::get)
        .unwrap_or_else(|| THREADS.load(Ordering::Relaxed))
        .max(1)
}

/// Run `f` with the calling thread's work split across `n` threads (tests compare thread
/// counts side by side with it without touching other threads).
pub fn with_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    let before = OVERRIDE.with(|o| o.replace(Some(n.max(1))));
    let out = f();
    OVERRIDE.with(|o| o.set(before));
    out
}

/// The hardware's threads (1 where it cannot say).
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run `f` on a thread of the pool (when there are several threads), so that the work it
/// splits runs there and on the pool's other threads, while the calling thread waits
/// without taking a core. A long run (a training loop) runs whole inside one `install`:
/// its serial parts then run on a pool thread, and between its split parts the other
/// threads wait for work rather than contend with it.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let n = threads();
    #[cfg(feature = "threads")]
    if n > 1 {
        // The pool's thread splits across the same count as the caller asked for.
        return on_pool(n, || with_threads(n, f));
    }
    let _ = n;
    f()
}

/// How many pieces to cut `items` units into when each costs `work_each`: one per thread,
/// fewer when a piece would be under [`MIN_WORK`], never more than `items`.
fn pieces(items: usize, work_each: usize) -> usize {
    let by_work = (items * work_each.max(1)) / MIN_WORK;
    threads().min(by_work.max(1)).min(items.max(1))
}

/// Run every task, across the threads when there are several. Tasks must not share
/// anything they write.
pub fn run<T: Send>(tasks: Vec<T>, f: impl Fn(T) + Sync + Send) {
    let n = threads();
    if n <= 1 || tasks.len() <= 1 {
        tasks.into_iter().for_each(f);
        return;
    }
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        on_pool(n, || tasks.into_par_iter().for_each(f));
    }
    #[cfg(not(feature = "threads"))]
    tasks.into_iter().for_each(f);
}

/// `out`, rows of `row_len`, cut into consecutive blocks of whole rows (one per thread
/// when the rows are worth it, `work_per_row` multiply-adds each), and `f(first_row,
/// block)` run on each block.
pub fn rows(
    out: &mut [f32],
    row_len: usize,
    work_per_row: usize,
    f: impl Fn(usize, &mut [f32]) + Sync + Send,
) {
    let n_rows = out.len().checked_div(row_len).unwrap_or(0);
    let k = pieces(n_rows, work_per_row);
    if k <= 1 {
        f(0, out);
        return;
    }
    let per = n_rows.div_ceil(k);
    let tasks: Vec<(usize, &mut [f32])> = out
        .chunks_mut(per * row_len)
        .enumerate()
        .map(|(i, c)| (i * per, c))
        .collect();
    run(tasks, |(first, block)| f(first, block));
}

/// Run `f` on a thread of the pool of `n` threads. In wasm the pool is rayon's global one,
/// whose threads are Web Workers sharing the module's memory, started by the page
/// (`initThreadPool`); its size is the page's choice.
#[cfg(all(feature = "threads", target_arch = "wasm32"))]
fn on_pool<R: Send>(_n: usize, f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    rayon::scope(|_| f())
}

/// Run `f` on a thread of the pool of `n` threads (built the first time it is asked for).
#[cfg(all(feature = "threads", not(target_arch = "wasm32")))]
fn on_pool<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
    pool(n).install(f)
}

#[cfg(all(feature = "threads", not(target_arch = "wasm32")))]
fn pool(n: usize) -> std::sync::Arc<rayon::ThreadPool> {
    use std::sync::{Arc, Mutex};
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(k, _)| *k == n) {
        return p.clone();
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("tplay-{i}"))
            .build()
            .expect("a thread pool (the OS refused a thread)"),
    );
    pools.push((n, p.clone()));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_cover_every_row_once_in_whole_rows() {
        for threads in [1, 2, 3, 7] {
            with_threads(threads, || {
                for n_rows in [0, 1, 5, 64, 1000] {
                    let mut out = vec![0.0f32; n_rows * 3];
                    rows(&mut out, 3, MIN_WORK, |first, block| {
                        assert_eq!(block.len() % 3, 0);
                        for (r, row) in block.chunks_mut(3).enumerate() {
                            row.fill((first + r) as f32 + 1.0);
                        }
                    });
                    let want: Vec<f32> = (0..n_rows).flat_map(|r| [r as f32 + 1.0; 3]).collect();
                    assert_eq!(out, want, "{threads} threads, {n_rows} rows");
                }
            })
        }
    }

    #[test]
    fn small_work_stays_in_one_piece_and_large_work_is_cut_per_thread() {
        with_threads(4, || {
            assert_eq!(pieces(10, 1), 1);
            let cut = if cfg!(feature = "threads") { 4 } else { 1 };
            assert_eq!(pieces(1000, MIN_WORK), cut);
            assert_eq!(pieces(2, MIN_WORK), 2.min(cut));
        });
        with_threads(1, || assert_eq!(pieces(1000, MIN_WORK), 1));
    }
}

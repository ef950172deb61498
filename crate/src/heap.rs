//! The native heap between training steps.

/// Keep the memory a native program frees for its next use instead of handing it back to
/// the system. A training step allocates its records and gradients anew (megabytes for
/// the grammar recipe) and frees them at its end; glibc's `malloc` then gave the freed top
/// of its heap back to the kernel (`brk`), and the next step took the same pages again,
/// each a page fault and a zeroing: a sixth of a grammar step's time natively. The
/// thresholds for giving memory back and for mapping a large block on its own are set to
/// 512 MiB, which keeps the heap as the browser does (wasm memory never shrinks).
///
/// Programs call it once at their start (the CLI, the benches); the library never does.
/// It does nothing but on Linux with glibc, in the builds that have `libc` (`cli`, `bench`).
pub fn keep_freed_memory() {
    #[cfg(all(
        target_os = "linux",
        target_env = "gnu",
        any(feature = "cli", feature = "bench")
    ))]
    // SAFETY: mallopt only changes two of malloc's tuning parameters; it is called before
    // the program's threads start and is safe to call at any time in glibc.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 << 20);
    }
}

//! `cargo xtask serve | test | build | bench | fuzz | arch`: the project's few commands, in Rust so a
//! fresh machine needs nothing but cargo to run them.

mod arch;
mod bench;
mod bench_gpu;
mod bench_race;
mod bench_threads;
mod build;
mod fuzz;
mod serve;
mod setup;
mod test;
mod util;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = &args[args.len().min(1)..];
    let result = match args.first().map(String::as_str) {
        Some("arch") => arch::run(rest),
        Some("serve") => serve::run(rest),
        Some("test") => test::run(rest),
        Some("build") => build::run(rest),
        Some("bench") => bench::run(rest),
        Some("fuzz") => fuzz::run(rest),
        _ => {
            eprintln!("usage: cargo xtask <serve | test | build | bench | fuzz | arch>");
            eprintln!("  serve   build the wasm engine and the page, serve on 127.0.0.1 (--lan: on the network, printing the addresses for students)");
            eprintln!(
                "  test    fmt, clippy, every Rust test (GPU on lavapipe) and the browser tests;"
            );
            eprintln!("          --no-gpu lets the GPU tests skip where there is no Vulkan at all");
            eprintln!("  build   build the wasm engine and the page into www/dist");
            eprintln!("  bench   print speed and size figures (native and browser); `bench race`: the engine against onnxruntime-web; `bench gpu`: the run for a machine with a real GPU");
            eprintln!(
                "  arch    no import circle in crate/src, no hand-written file over 800 lines"
            );
            eprintln!("  fuzz    replay the fuzz corpora and fuzz each target briefly (nightly)");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}

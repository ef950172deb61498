//! The performance targets the engine benchmark prints beside its figures, each row with
//! the machine's load averages when it was measured. A target is a figure to compare
//! with, never an assertion: a loaded machine misses it without anything being wrong.

use std::fmt::Write;

use super::Report;

/// The engine's decoding step in wasm, µs (≥ 50,000 tokens/s).
pub const DECODE_STEP_US: f64 = 20.0;
/// One engine call per token on the main thread of Chromium, tokens/s.
pub const ONE_CALL_PER_TOKEN_TPS: f64 = 40_000.0;
/// Training's matrix-product throughput as a fraction of the build's product peak.
pub const TRAIN_FRACTION_OF_PEAK: f64 = 0.30;

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "missed"
    }
}

/// The machine's load averages (1, 5, 15 minutes) as /proc/loadavg gives them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A markdown table: each target beside its figure for every build, with the load.
/// `native_load` is the load while the native report ran (the browser's report carries
/// its own).
pub fn render_targets(reports: &[(&str, &Report)], native_load: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nTargets (figure against target, and the load while it was measured):\n"
    );
    let _ = writeln!(
        o,
        "| {:<46} | {:<16} | {:>12} | {:>12} | {:<7} | {:<20} |",
        "figure", "build", "measured", "target", "", "load (1, 5, 15 min)"
    );
    let _ = writeln!(
        o,
        "|{:-<48}|{:-<18}|{:-<14}|{:-<14}|{:-<9}|{:-<22}|",
        "", "", "", "", "", ""
    );
    let line =
        |o: &mut String, what: &str, build: &str, v: String, t: String, ok: bool, load: &str| {
            let _ = writeln!(
                o,
                "| {what:<46} | {build:<16} | {v:>12} | {t:>12} | {:<7} | {load:<20} |",
                verdict(ok)
            );
        };
    for (name, r) in reports {
        let wasm = r.build.starts_with("wasm32");
        let load = match &r.browser {
            Some(b) => b.load.clone().unwrap_or_else(|| "not recorded".into()),
            None => native_load.to_string(),
        };
        let step_us = 1e6 / r.decode_tokens_per_s.value;
        if wasm {
            line(
                &mut o,
                "decode: the engine's step, µs",
                name,
                format!("{step_us:.1}"),
                format!("≤ {DECODE_STEP_US}"),
                step_us <= DECODE_STEP_US,
                &load,
            );
        }
        if let Some(d) = r.browser.as_ref().and_then(|b| b.main.get("1")) {
            line(
                &mut o,
                "decode: one call per token (main thread), tok/s",
                name,
                format!("{:.0}", d.tokens_per_s),
                format!("≥ {ONE_CALL_PER_TOKEN_TPS}"),
                d.tokens_per_s >= ONE_CALL_PER_TOKEN_TPS,
                &load,
            );
        }
        for t in &r.train {
            let frac = t.gflops / r.peak_gflops;
            line(
                &mut o,
                &format!(
                    "train {}: fraction of product peak",
                    t.recipe.trim_end_matches(".safetensors")
                ),
                name,
                format!("{frac:.3}"),
                format!("≥ {TRAIN_FRACTION_OF_PEAK}"),
                frac >= TRAIN_FRACTION_OF_PEAK,
                &load,
            );
        }
    }
    let _ = writeln!(
        o,
        "\n(the first load, the lab's reverse run and playback are the browser bench's \
         rows, printed there with their targets)"
    );
    o
}

//! The training benchmark on wasm threads: a shipped recipe trained on one thread and on
//! several, in the same page, through the same `tplay::par` the native build uses.

use wasm_bindgen::prelude::*;
pub use wasm_bindgen_rayon::init_thread_pool;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn now() -> f64;
}

/// Train `steps` steps (after one untimed step) of the recipe saved as `file` on `threads`
/// threads; with `wide`, at C 256 with 8 heads and d_ff 1024 in 2 layers (the native
/// bench's larger row). Returns steps/s and an FNV-1a hash of the trained checkpoint's bytes, as
/// "steps_per_s hash": runs on any thread count must give the same hash.
#[wasm_bindgen]
pub fn train_bench(
    file: &str,
    steps: usize,
    threads: usize,
    wide: bool,
) -> Result<String, JsError> {
    let mut recipe = tplay::train::recipes::recipes()
        .into_iter()
        .find(|r| r.file == file)
        .ok_or_else(|| JsError::new(&format!("no recipe saves {file}")))?;
    if wide {
        let r = &mut recipe.run;
        (r.d_model, r.heads, r.layers, r.d_ff) = (Some(256), Some(8), Some(2), Some(1024));
    }
    let run = || -> tplay::Result<String> {
        let task = recipe.run.task()?;
        let cfg = recipe.run.model_config(task.as_ref())?;
        let opts = recipe.run.train_options()?;
        let mut tr = tplay::train::Trainer::new(task.as_ref(), cfg, opts)?;
        tr.train_step()?;
        let t0 = now();
        for _ in 0..steps {
            tr.train_step()?;
        }
        let rate = steps as f64 / ((now() - t0) / 1000.0);
        let hash = tplay::checkpoint::save(&tr.model)?
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
            });
        Ok(format!("{rate} {hash:016x}"))
    };
    tplay::par::with_threads(threads, || tplay::par::install(run))
        .map_err(|e| JsError::new(&e.to_string()))
}

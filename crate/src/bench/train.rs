//! Training speed in the engine benchmark: steps/s, tokens/s and the products' FLOP/s of a
//! shipped recipe.

use serde::{Deserialize, Serialize};

use super::merge;
use crate::generate::flops::training_step_macs;
use crate::profile::{self, PhaseTotal};
use crate::tasks::Task;
use crate::train::recipes::{recipes, Recipe};
use crate::train::Trainer;
use crate::Result;

/// Training speed of one shipped recipe.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainRate {
    pub recipe: String,
    pub batch: usize,
    pub params: usize,
    pub steps_per_s: f64,
    pub tokens_per_s: f64,
    /// Matrix-product FLOP/s (forward + backward: 3 × the forward's multiply-adds × 2).
    pub gflops: f64,
    /// Mean loss of the timed steps: the same in every build for the same seed.
    pub loss: f64,
    pub phases: Vec<PhaseTotal>,
}

/// The shipped recipe saved as `file`, and its task.
pub(super) fn recipe_task(file: &str) -> Result<(Recipe, Box<dyn Task>)> {
    let r = recipes()
        .into_iter()
        .find(|r| r.file == file)
        .ok_or_else(|| crate::Error::Input(format!("no recipe saves {file}")))?;
    let task = r.run.task()?;
    Ok((r, task))
}

/// A trainer of recipe `r` on `task`, at its first step.
pub(super) fn recipe_trainer<'t>(r: &Recipe, task: &'t dyn Task) -> Result<Trainer<'t>> {
    Trainer::new(task, r.run.model_config(task)?, r.run.train_options()?)
}

/// `steps` timed training steps (after 2 untimed ones) of the recipe saved as `file`.
pub fn train(file: &str, steps: usize) -> Result<TrainRate> {
    let (r, task) = recipe_task(file)?;
    let mut tr = recipe_trainer(&r, task.as_ref())?;
    for _ in 0..2 {
        tr.train_step()?;
    }
    let _ = profile::take();
    let mut tokens = 0usize;
    let mut macs = 0u64;
    let mut loss = 0.0f64;
    let mut ms = 0.0;
    for _ in 0..steps {
        // The next batch is drawn again inside the step from the same generator state;
        // peek at its size on a clone of the generator state.
        let (b, t, s) = tr.peek_batch_shape();
        tokens += b * (t + s);
        macs += training_step_macs(&tr.model.config, b, t, s);
        let t0 = profile::now_ms();
        loss += tr.train_step()?.loss as f64;
        ms += profile::now_ms() - t0;
    }
    let secs = ms / 1e3;
    Ok(TrainRate {
        recipe: r.file.to_string(),
        batch: r.run.batch,
        params: tr.model.param_count(),
        steps_per_s: steps as f64 / secs,
        tokens_per_s: tokens as f64 / secs,
        gflops: 2.0 * macs as f64 / secs / 1e9,
        loss: loss / steps as f64,
        phases: merge(vec![(profile::take(), steps)]),
    })
}

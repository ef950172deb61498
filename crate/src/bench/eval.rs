//! The lab's evaluation in the engine benchmark: the greedy answers with the KV cache
//! against recomputing every position.

use serde::{Deserialize, Serialize};

use super::median;
use super::train::{recipe_task, recipe_trainer};
use crate::profile;
use crate::Result;

/// The lab's periodic evaluation of the reverse recipe (200 held-out strings, greedy),
/// with the KV cache and by recomputing every position, in milliseconds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalCost {
    pub examples: usize,
    pub cached_ms: f64,
    pub recomputed_ms: f64,
}

/// [`EvalCost`] on the reverse recipe's model after 50 training steps (its answers still run
/// long, as early in a run), the median of `runs`.
pub fn eval_cost(runs: usize) -> Result<EvalCost> {
    let (r, task) = recipe_task("reverse.safetensors")?;
    let mut tr = recipe_trainer(&r, task.as_ref())?;
    for _ in 0..50 {
        tr.train_step()?;
    }
    let examples = crate::tasks::held_out_examples(task.as_ref(), 200, 1);
    let time = |f: &dyn Fn() -> Result<Vec<Vec<u32>>>| -> Result<f64> {
        let mut v = vec![];
        for _ in 0..runs.max(1) {
            let t0 = profile::now_ms();
            f()?;
            v.push(profile::now_ms() - t0);
        }
        Ok(median(v))
    };
    Ok(EvalCost {
        examples: examples.len(),
        cached_ms: time(&|| crate::train::eval::greedy_answers(&tr.model, &examples))?,
        recomputed_ms: time(&|| {
            crate::train::eval::greedy_answers_recomputed(&tr.model, &examples)
        })?,
    })
}

//! The CPU backend: the reference forward pass of `model::forward`, behind the same
//! `async` signature as the GPU backend so callers switch between them at run time.

use crate::error::Result;
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};

/// `Model::forward`, unchanged. Nothing is awaited: the future is ready at once.
pub async fn forward(model: &Model, batch: &Batch, opts: &ForwardOptions) -> Result<Trace> {
    model.forward(batch, opts)
}

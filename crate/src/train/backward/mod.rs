//! Hand-written backward passes, one file per forward file of `model/` (llm.c style):
//! each function undoes its forward namesake, quotes the forward line it undoes, and ADDS
//! into gradient buffers that [`zero_grads`] creates zeroed once per step.
//!
//! [`model_backward`] runs them in reverse over the activations a recorded forward pass
//! kept (`Model::forward_recorded`).

pub mod attention;
pub mod embedding;
pub mod ffn;
pub mod head;
pub mod model;
pub mod norm;
pub mod position;

pub use model::{model_backward, zero_grads, HeadGrad};

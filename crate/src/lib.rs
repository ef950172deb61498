//! Transformer Playground core: a tiny transformer whose CPU forward pass is the
//! specification, with WebGPU kernels, generation and a trainer built on the same types.
//!
//! Shape letters (used in every comment): B batch, T target length, S source/key length,
//! C = d_model, H heads, D = d_head, F = d_ff, V vocab, L layers.

pub mod checkpoint;
pub mod config;
pub mod engine;
pub mod error;
pub mod explain;
pub mod heap;
pub mod hf;
pub mod lanes;
pub mod limits;
pub mod matmul;
pub mod model;
pub mod par;
pub mod profile;
pub mod protocol;
pub mod sorting;
pub mod tensor;
pub mod tokenizer;
pub mod wire;

pub use config::ModelConfig;
pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
pub mod backend;
#[cfg(feature = "bench")]
pub mod bench;
pub mod generate;
pub mod tasks;
pub mod train;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

//! One launch function per WGSL kernel, each checking its arguments and recording a
//! dispatch: one file per op family, forward then backward, named after its shaders
//! (`matmul.rs` launches `shaders/matmul.wgsl` and `shaders/matmul_backward.wgsl`). The
//! kernels themselves are listed in `catalogue.rs`.
//!
//! Each launch mirrors one CPU function (`model::*` forward, `train::backward::*`,
//! `train::loss`, `train::optim`); `crate/tests/gpu_kernels.rs`, `gpu_backward.rs` and
//! `gpu_attention_backward.rs` run both on the same inputs. Backward launches ADD into
//! gradient buffers the caller zeroed once per step, as the CPU's backward functions do;
//! the intermediate (B, H, T, S) gradients of attention (`dprobs`, `dscores`) are written.
//! Kernels are specialised with WGSL `override` constants (set when the pipeline is
//! created) and a uniform block of sizes, never by editing source.

mod launch;

mod activation;
mod adam;
mod add;
mod attention;
mod attention_decode;
mod attention_scores;
mod attention_values;
mod batch_norm;
mod copy_rows;
mod cross_entropy;
mod dropout;
mod embedding;
mod grad_norm;
mod layer_norm;
mod matmul;
mod rope;
mod softmax;

pub use adam::{AdamArgs, LrRule};
pub use attention::AttnDims;
pub use attention_decode::DecodeAttnArgs;
pub use attention_scores::{ScoreArgs, ScoreGradArgs, MASKED};
pub use attention_values::{ValueArgs, ValueGradArgs};
pub use batch_norm::{BatchNormGradArgs, BatchNormTrainArgs};
pub use copy_rows::{CopyArgs, SeqRows};
pub use cross_entropy::CrossEntropyArgs;
pub use dropout::{dropout_key, DropoutArgs};
pub use launch::Rows;
pub use matmul::{Epilogue, GemmArgs, LinearBackwardArgs, MatmulArgs, Strided};

//! The WebGPU backend: every forward op as a WGSL compute kernel (`shaders/*.wgsl`), run
//! through wgpu, natively (Vulkan) and in the browser (WebGPU).
//!
//! - [`GpuContext`]: a device with its limits checked, errors captured (never a panic) and
//!   round trips counted ([`GpuStats`]).
//! - [`Recorder`]: kernel launches recorded into one command encoder, submitted once, read
//!   back once. One launch function per kernel ([`kernels`], one file per op family,
//!   forward beside backward), each mirroring a CPU op; [`Kernel`] is their catalogue.
//! - [`GpuModel`]: a model's weights resident on the device and the whole forward pass,
//!   recorded by the one walk of the layer plan (`pass`) that the trainer runs too.
//! - [`PositionTables`]: the sinusoidal, RoPE and ALiBi tables the kernels read.
//! - [`GpuKvCache`]: generation's keys and values resident on the device
//!   (`GpuModel::prefill`, then one `decode_step` per token: one submission each).

// In the browser the WebGPU handles are not `Send` (JavaScript runs them on one thread), so
// the `Arc`s below are shared ownership on that thread; natively the handles are
// `Send + Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

mod activations;
mod cache;
mod catalogue;
mod context;
pub mod kernels;
mod model;
mod optim;
mod pass;
mod positions;
mod trace;
pub mod train;

pub use super::LayerStats;
pub use cache::GpuKvCache;
pub use catalogue::Kernel;
pub use context::{request_device, GpuBuffer, GpuContext, GpuStats, ReadSlot, Readback, Recorder};
pub use kernels::{
    dropout_key, AdamArgs, AttnDims, BatchNormGradArgs, BatchNormTrainArgs, CopyArgs,
    CrossEntropyArgs, DecodeAttnArgs, DropoutArgs, Epilogue, GemmArgs, LinearBackwardArgs, LrRule,
    MatmulArgs, Rows, ScoreArgs, ScoreGradArgs, SeqRows, Strided, ValueArgs, ValueGradArgs, MASKED,
};
pub use model::{check_fits, GpuModel, GpuWeights};
pub use optim::GpuAdam;
pub use positions::{rope_table, PositionTables};
pub use train::{GpuTrainer, StepCounts};

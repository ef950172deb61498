//! The WebGPU backend: every forward op as a WGSL compute kernel (`shaders/*.wgsl`), run
//! through wgpu, natively (Vulkan) and in the browser (WebGPU).
//!
//! - [`GpuContext`]: a device with its limits checked, errors captured (never a panic) and
//!   round trips counted ([`GpuStats`]).
//! - [`Recorder`]: kernel launches recorded into one command encoder, submitted once, read
//!   back once. One launch function per kernel ([`kernels`]), each mirroring a CPU op.
//! - [`GpuModel`]: a model's weights resident on the device and the whole forward pass
//!   (`GpuContext::forward` keeps the last model uploaded).

mod context;
pub mod kernels;
mod model;

pub use context::{request_device, GpuBuffer, GpuContext, GpuStats, ReadSlot, Readback, Recorder};
pub use kernels::{AttnDims, Kernel, MatmulArgs, Rows, ScoreArgs, ValueArgs, MASKED};
pub use model::{model_fingerprint, rope_table, GpuModel, GpuWeights};

//! Backends: the CPU reference and the WebGPU kernels, switched at run time.
//!
//! ```text
//! let backend = Backend::from_name("gpu").await?;   // or Backend::Cpu
//! let placed = backend.place(&model)?;               // the weights uploaded once
//! let trace = placed.forward(&model, &batch, &opts).await?;
//! ```
//!
//! Whoever owns a model keeps its [`Placed`] copy (the page's engine keeps one per loaded
//! model and backend); nothing is cached inside the device.
//!
//! Both compute `Model::forward` (docs/model.md); the GPU one is tested against the CPU
//! one (crate/tests/gpu_*.rs). A GPU failure is an `Error::Gpu` value: the caller can
//! switch to `Backend::Cpu` and carry on.

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(not(feature = "gpu"))]
#[path = "gpu_absent.rs"]
pub mod gpu;
pub mod parity;
pub mod race;

use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};

pub use gpu::{GpuContext, GpuModel};

/// Counters of GPU round trips since the context was made, so benchmarks and tests can
/// check that a forward pass submits once and reads back once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuStats {
    /// `queue.submit` calls.
    pub submissions: u64,
    /// Buffers mapped for reading (each is one GPU → CPU transfer the caller waits for).
    pub readbacks: u64,
    /// Compute dispatches recorded.
    pub dispatches: u64,
}

impl GpuStats {
    /// Counts that happened between `earlier` and `self`.
    pub fn since(&self, earlier: &GpuStats) -> GpuStats {
        GpuStats {
            submissions: self.submissions - earlier.submissions,
            readbacks: self.readbacks - earlier.readbacks,
            dispatches: self.dispatches - earlier.dispatches,
        }
    }
}

/// What a watched step reports per layer (encoder layers first), as the CPU session
/// computes it (`train::health`): the gradient's norm before clipping and the mean
/// ‖x‖₂ per position of the residual stream after the layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerStats {
    pub grad_norms: Vec<f32>,
    pub residual_norms: Vec<f32>,
}

/// Where a forward pass runs.
#[derive(Clone, Debug)]
pub enum Backend {
    /// The reference implementation on the CPU: works everywhere.
    Cpu,
    /// WGSL kernels on a WebGPU / Vulkan device (eval and train mode).
    Gpu(GpuContext),
}

impl Backend {
    /// `"cpu"` or `"gpu"`; `"gpu"` asks the platform for a device and fails with
    /// `Error::Gpu` (saying why, in plain words) when there is none.
    pub async fn from_name(name: &str) -> Result<Backend> {
        match name {
            "cpu" => Ok(Backend::Cpu),
            "gpu" => Ok(Backend::Gpu(GpuContext::request().await?)),
            other => Err(Error::Input(format!(
                "unknown backend '{other}' (known: cpu, gpu)"
            ))),
        }
    }

    /// Natively, [`Backend::from_name`] driven to completion on this thread (for the CLI).
    #[cfg(all(not(target_arch = "wasm32"), feature = "cli"))]
    pub fn from_name_blocking(name: &str) -> Result<Backend> {
        pollster::block_on(Backend::from_name(name))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu(_) => "gpu",
        }
    }

    /// `model` placed on this backend: on the GPU its weights uploaded once, to run pass
    /// after pass ([`Placed::forward`], the KV cache). Fails with `Error::Gpu` when the
    /// device cannot hold it.
    pub fn place(&self, model: &Model) -> Result<Placed> {
        match self {
            Backend::Cpu => Ok(Placed::Cpu),
            Backend::Gpu(ctx) => Ok(Placed::Gpu(GpuModel::upload(ctx, model)?)),
        }
    }

    /// `Model::forward` on this backend, once: on the GPU the weights are uploaded for
    /// this pass alone. A model that runs again and again is placed first
    /// ([`Backend::place`]).
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        self.place(model)?.forward(model, batch, opts).await
    }
}

/// A model placed on a backend: the CPU, or its weights resident on a GPU.
#[derive(Clone)]
pub enum Placed {
    Cpu,
    Gpu(GpuModel),
}

impl Placed {
    /// The backend the model is placed on.
    // Without the `gpu` feature a GPU context has no value, and rustc says so here.
    #[cfg_attr(not(feature = "gpu"), allow(unreachable_code))]
    pub fn backend(&self) -> Backend {
        match self {
            Placed::Cpu => Backend::Cpu,
            Placed::Gpu(gm) => Backend::Gpu(gm.context().clone()),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Placed::Cpu => "cpu",
            Placed::Gpu(_) => "gpu",
        }
    }

    /// `Model::forward` of the placed model: one submission and one readback on the GPU.
    /// `model` must be the model that was placed (the GPU refuses another config).
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        match self {
            Placed::Cpu => cpu::forward(model, batch, opts).await,
            Placed::Gpu(gm) => gm.forward(model, batch, opts).await,
        }
    }
}

impl std::fmt::Debug for Placed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

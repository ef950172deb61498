//! Backends: the CPU reference and the WebGPU kernels, switched at run time.
//!
//! ```text
//! let backend = Backend::from_name("gpu").await?;   // or Backend::Cpu
//! let trace = backend.forward(&model, &batch, &opts).await?;
//! ```
//!
//! Both compute `Model::forward` (docs/model.md); the GPU one is tested against the CPU
//! one (crate/tests/gpu_*.rs). A GPU failure is an `Error::Gpu` value: the caller can
//! switch to `Backend::Cpu` and carry on.

pub mod cpu;
pub mod gpu;
pub mod parity;

use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model, Trace};

pub use gpu::GpuContext;

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

    /// `Model::forward` on this backend. On the GPU the model's weights are uploaded once
    /// and reused while the model is unchanged; one pass is one submission and one
    /// readback.
    pub async fn forward(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<Trace> {
        match self {
            Backend::Cpu => cpu::forward(model, batch, opts).await,
            Backend::Gpu(ctx) => ctx.forward(model, batch, opts).await,
        }
    }
}

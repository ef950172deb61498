//! One test body, run on each backend (candle's `test_device!`): [`backend_tests!`] turns
//! `fn name(dev) { … }` into a module `name` with the tests `name::cpu` and `name::gpu`,
//! each handing the body a [`Device`]. The GPU test takes the shared context of
//! [`super::gpu_or_skip`] (and so skips visibly without an adapter, or fails under
//! `TPLAY_REQUIRE_GPU=1`).
//!
//! The GPU forward pass and the GPU KV cache are reached only through [`gpu_forward`] and
//! [`gpu_prefill`]: the model's weights are uploaded by the test (`GpuModel::upload`), not
//! looked up in a cache inside the device context.

use pollster::block_on;
use tplay::backend::gpu::{GpuContext, GpuKvCache, GpuModel};
use tplay::backend::Backend;
use tplay::generate::generator::select_sequences;
use tplay::model::cache::{KvCache, StepOutput};
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Model, Trace};
use tplay::Result;

/// `Model::forward` on the GPU: the weights uploaded, then one pass.
pub fn gpu_forward(
    ctx: &GpuContext,
    model: &Model,
    batch: &Batch,
    opts: &ForwardOptions,
) -> Result<Trace> {
    block_on(GpuModel::upload(ctx, model)?.forward(model, batch, opts))
}

/// `Model::prefill` on the GPU: the weights uploaded, then the prompt run once and its keys
/// and values kept on the device, with room for `capacity` positions (default max_len).
pub fn gpu_prefill(
    ctx: &GpuContext,
    model: &Model,
    batch: &Batch,
    opts: &ForwardOptions,
    capacity: Option<usize>,
) -> Result<(GpuKvCache, Trace)> {
    block_on(GpuModel::upload(ctx, model)?.prefill(model, batch, opts, capacity))
}

/// The backend a test body runs on.
#[derive(Clone, Debug)]
pub enum Device {
    Cpu,
    Gpu(GpuContext),
}

impl Device {
    pub fn name(&self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu(_) => "gpu",
        }
    }

    /// `cpu` on the CPU, `gpu` on the GPU: a tolerance (or any value) per backend.
    pub fn pick<T>(&self, cpu: T, gpu: T) -> T {
        match self {
            Device::Cpu => cpu,
            Device::Gpu(_) => gpu,
        }
    }

    /// The run-time backend the generator and the engine take.
    pub fn backend(&self) -> Backend {
        match self {
            Device::Cpu => Backend::Cpu,
            Device::Gpu(ctx) => Backend::Gpu(ctx.clone()),
        }
    }

    /// `Model::forward` on this backend.
    pub fn forward(&self, model: &Model, batch: &Batch, opts: &ForwardOptions) -> Result<Trace> {
        match self {
            Device::Cpu => model.forward(batch, opts),
            Device::Gpu(ctx) => gpu_forward(ctx, model, batch, opts),
        }
    }

    /// `Model::prefill` on this backend: the KV cache of `batch` and the prompt's trace.
    pub fn prefill(
        &self,
        model: &Model,
        batch: &Batch,
        opts: &ForwardOptions,
    ) -> Result<(Cache, Trace)> {
        match self {
            Device::Cpu => model.prefill(batch, opts).map(|(c, t)| (Cache::Cpu(c), t)),
            Device::Gpu(ctx) => {
                gpu_prefill(ctx, model, batch, opts, None).map(|(c, t)| (Cache::Gpu(c), t))
            }
        }
    }
}

/// A KV cache on either backend.
#[allow(clippy::large_enum_variant)]
pub enum Cache {
    Cpu(KvCache),
    Gpu(GpuKvCache),
}

impl Cache {
    /// One decoding step: one token per sequence.
    pub fn decode_step(
        &mut self,
        model: &Model,
        tokens: &[u32],
        opts: &ForwardOptions,
    ) -> Result<StepOutput> {
        match self {
            Cache::Cpu(c) => model.decode_step(c, tokens, opts),
            Cache::Gpu(c) => block_on(c.decode_step(model, tokens, opts)),
        }
    }

    /// Positions held per sequence.
    pub fn len(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.len,
            Cache::Gpu(c) => c.len(),
        }
    }

    /// The tokens of every sequence so far.
    pub fn tokens(&self) -> &[Vec<u32>] {
        match self {
            Cache::Cpu(c) => &c.tokens,
            Cache::Gpu(c) => c.tokens(),
        }
    }

    /// Bytes of keys and values held.
    pub fn size_bytes(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.size_bytes(),
            Cache::Gpu(c) => c.size_bytes(),
        }
    }

    /// Keep the sequences `rows` (a beam reorder).
    pub fn select(&mut self, rows: &[usize]) {
        match self {
            Cache::Cpu(c) => select_sequences(c, rows),
            Cache::Gpu(c) => c.select(rows).expect("rows of the cache"),
        }
    }
}

/// One body per property, a test per backend:
///
/// ```ignore
/// // What the tests prove.
/// backend_tests!(cached_steps_equal_a_recompute, |dev| {
///     let trace = dev.forward(&m, &batch, &opts).unwrap();
///     …
/// });
/// ```
///
/// gives `cached_steps_equal_a_recompute::cpu` and `cached_steps_equal_a_recompute::gpu`.
/// (A closure in form, so that rustfmt formats the body; `dev` is a `&Device`.)
#[macro_export]
macro_rules! backend_tests {
    ($name:ident, |$dev:ident| $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::support::device::Device;

            fn body($dev: &Device) {
                $body
            }

            #[test]
            fn cpu() {
                body(&Device::Cpu);
            }

            #[test]
            fn gpu() {
                let Some(ctx) = $crate::support::gpu_or_skip() else {
                    return;
                };
                body(&Device::Gpu(ctx));
            }
        }
    };
}

//! The GPU device, its error handling and its buffers; beside it ([`recorder`]) the
//! recorder that turns a list of kernel launches into one command encoder, one submission
//! and one readback.
//!
//! `GpuContext::new` takes a device someone else created (wgpu's `hello_compute` style), so
//! tests and the browser can hand it theirs; [`request_device`] is the usual way to get one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::catalogue::{kernel_needs, Kernel, PipelineKey};
pub use crate::backend::GpuStats;
use crate::error::{Error, Result};

mod recorder;

pub use recorder::{ReadSlot, Readback, Recorder};

#[derive(Default)]
struct Counters {
    submissions: AtomicU64,
    readbacks: AtomicU64,
    dispatches: AtomicU64,
}

/// What the device told us asynchronously: loss, and errors outside any error scope.
#[derive(Default)]
struct DeviceState {
    lost: Mutex<Option<String>>,
    uncaptured: Mutex<Vec<String>>,
}

struct Inner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    adapter_name: String,
    state: Arc<DeviceState>,
    counters: Counters,
    layouts: HashMap<Kernel, (wgpu::BindGroupLayout, wgpu::PipelineLayout)>,
    modules: Mutex<HashMap<Kernel, wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
    /// 16 zero bytes bound where a kernel's optional input is switched off.
    dummy: wgpu::Buffer,
}

/// A WebGPU device ready to run the model's kernels. Cheap to clone (shared inside).
#[derive(Clone)]
pub struct GpuContext {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuContext({})", self.inner.adapter_name)
    }
}

/// Ask the platform for a GPU: the browser's WebGPU, or natively Vulkan (the backends can
/// be narrowed with the `WGPU_BACKEND` environment variable, e.g. `WGPU_BACKEND=vulkan`).
/// Returns the adapter's name with the device. Fails with a plain-words `Error::Gpu` when
/// there is no adapter or it cannot run the kernels, so the caller can use the CPU.
pub async fn request_device() -> Result<(wgpu::Device, wgpu::Queue, String)> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            ..Default::default()
        })
        .await
        .map_err(|e| {
            Error::Gpu(format!(
                "no WebGPU/Vulkan adapter found ({e}); the CPU backend works everywhere. \
                 In a browser, WebGPU needs a recent Chrome/Edge (or a flag elsewhere); \
                 natively, install a Vulkan driver (lavapipe: `mesa-vulkan-drivers`)"
            ))
        })?;
    let info = adapter.get_info();
    let name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
    let limits = adapter.limits();
    check_limits(&limits, &name)?;
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("tplay"),
            required_features: wgpu::Features::empty(),
            // Everything the adapter offers: the model is checked against these limits.
            required_limits: limits,
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        })
        .await
        .map_err(|e| Error::Gpu(format!("the adapter {name} refused to open a device: {e}")))?;
    Ok((device, queue, name))
}

/// Refuse a device whose limits are below what the kernels were written for.
fn check_limits(l: &wgpu::Limits, name: &str) -> Result<()> {
    let need = kernel_needs();
    let checks = [
        (
            "storage buffers per shader stage",
            l.max_storage_buffers_per_shader_stage,
            need.storage_buffers,
        ),
        (
            "uniform buffers per shader stage",
            l.max_uniform_buffers_per_shader_stage,
            need.uniform_buffers,
        ),
        (
            "bindings per bind group",
            l.max_bindings_per_bind_group,
            need.bindings,
        ),
        (
            "invocations per workgroup",
            l.max_compute_invocations_per_workgroup,
            need.invocations,
        ),
        (
            "workgroup size x",
            l.max_compute_workgroup_size_x,
            need.workgroup_x,
        ),
        (
            "workgroup size y",
            l.max_compute_workgroup_size_y,
            need.workgroup_y,
        ),
        (
            "bytes of workgroup storage",
            l.max_compute_workgroup_storage_size,
            need.workgroup_storage,
        ),
    ];
    for (what, have, need) in checks {
        if have < need {
            return Err(Error::Gpu(format!(
                "the GPU {name} allows {have} {what}, the kernels need {need}; use the CPU backend"
            )));
        }
    }
    Ok(())
}

impl GpuContext {
    /// Wrap a device: check its limits, install the error and device-loss handlers (so no
    /// GPU failure ever panics), and build the bind-group layouts of every kernel.
    /// `name` describes the adapter in messages.
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, name: &str) -> Result<GpuContext> {
        let limits = device.limits();
        check_limits(&limits, name)?;
        let state = Arc::new(DeviceState::default());
        {
            let s = state.clone();
            // Without a handler wgpu panics on an uncaptured error; record it instead.
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                if let Ok(mut v) = s.uncaptured.lock() {
                    v.push(e.to_string());
                }
            }));
            let s = state.clone();
            device.set_device_lost_callback(move |reason, msg| {
                if let Ok(mut l) = s.lost.lock() {
                    *l = Some(format!("{reason:?}: {msg}"));
                }
            });
        }
        let layouts = Kernel::ALL
            .iter()
            .map(|&k| {
                let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(k.name()),
                    entries: &k.layout_entries(),
                });
                let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some(k.name()),
                    bind_group_layouts: &[Some(&bgl)],
                    immediate_size: 0,
                });
                (k, (bgl, pl))
            })
            .collect();
        // Buffers are zeroed at creation (a WebGPU guarantee).
        let dummy = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("unused input"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        Ok(GpuContext {
            inner: Arc::new(Inner {
                device,
                queue,
                limits,
                adapter_name: name.to_string(),
                state,
                counters: Counters::default(),
                layouts,
                modules: Mutex::new(HashMap::new()),
                pipelines: Mutex::new(HashMap::new()),
                dummy,
            }),
        })
    }

    /// [`request_device`] then [`GpuContext::new`]: the whole way from nothing to a
    /// context, or an `Error::Gpu` saying why not.
    pub async fn request() -> Result<GpuContext> {
        let (device, queue, name) = request_device().await?;
        GpuContext::new(device, queue, &name)
    }

    /// The adapter's name, backend and type, e.g. "llvmpipe (Vulkan, Cpu)".
    pub fn adapter_name(&self) -> &str {
        &self.inner.adapter_name
    }

    /// Whether the adapter is a software one (lavapipe/llvmpipe natively, SwiftShader or
    /// another fallback adapter in a browser): a correctness target, not a fast one.
    pub fn is_software(&self) -> bool {
        is_software_adapter(&self.inner.adapter_name)
    }

    /// Test-only: destroy the device now, as a driver reset would; the next GPU call
    /// fails.
    pub fn test_only_lose(&self) {
        self.device().destroy();
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    pub fn limits(&self) -> &wgpu::Limits {
        &self.inner.limits
    }

    /// Submissions, readbacks and dispatches so far.
    pub fn stats(&self) -> GpuStats {
        let c = &self.inner.counters;
        GpuStats {
            submissions: c.submissions.load(Ordering::Relaxed),
            readbacks: c.readbacks.load(Ordering::Relaxed),
            dispatches: c.dispatches.load(Ordering::Relaxed),
        }
    }

    /// Whether the device is gone (a driver reset, `destroy`).
    pub fn is_lost(&self) -> bool {
        self.check_alive().is_err()
    }

    /// `Err` once the device is gone: every later call fails the same way.
    fn check_alive(&self) -> Result<()> {
        if let Some(why) = self.inner.state.lost.lock().ok().and_then(|l| l.clone()) {
            return Err(Error::Gpu(format!(
                "the GPU device was lost ({why}); switch to the CPU backend or make a new GPU context"
            )));
        }
        Ok(())
    }

    /// The largest storage buffer one binding may see, in bytes.
    fn max_binding_bytes(&self) -> u64 {
        let l = &self.inner.limits;
        l.max_storage_buffer_binding_size.min(l.max_buffer_size)
    }

    /// Refuse a buffer the device cannot bind, naming it.
    pub fn check_buffer_size(&self, what: &str, elements: usize) -> Result<()> {
        let bytes = elements as u64 * 4;
        let max = self.max_binding_bytes();
        if bytes > max {
            return Err(Error::Gpu(format!(
                "{what} needs {bytes} bytes but this GPU binds at most {max} bytes per buffer \
                 (max_storage_buffer_binding_size); use a smaller model or batch, or the CPU backend"
            )));
        }
        Ok(())
    }

    /// A storage buffer holding `data` (f32), readable by kernels and copyable.
    pub fn upload(&self, what: &str, data: &[f32]) -> Result<GpuBuffer> {
        self.upload_bytes(what, bytemuck::cast_slice(data), data.len())
    }

    /// A storage buffer holding `data` (u32: token ids, flags).
    pub fn upload_u32(&self, what: &str, data: &[u32]) -> Result<GpuBuffer> {
        self.upload_bytes(what, bytemuck::cast_slice(data), data.len())
    }

    fn upload_bytes(&self, what: &str, bytes: &[u8], len: usize) -> Result<GpuBuffer> {
        self.check_buffer_size(what, len)?;
        let buffer = self.storage_buffer(what, len)?;
        // Staged now, copied before the next submission runs. (Not `create_buffer_init`:
        // its mapping step panics on a lost device.)
        if !bytes.is_empty() {
            self.inner.queue.write_buffer(&buffer, 0, bytes);
        }
        Ok(GpuBuffer { buffer, len })
    }

    /// A storage buffer of `len` elements (at least one: a binding may not be empty),
    /// or the device-lost error.
    fn storage_buffer(&self, what: &str, len: usize) -> Result<wgpu::Buffer> {
        self.check_alive()?;
        Ok(self.inner.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size: (len.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    /// Overwrite the start of `buf` with `data` (u32) before the next submission runs:
    /// a resident buffer refilled each step instead of a new upload.
    pub fn write_u32(&self, buf: &GpuBuffer, data: &[u32]) -> Result<()> {
        self.check_alive()?;
        if data.len() > buf.len {
            return Err(Error::Gpu(format!(
                "a write of {} elements into a buffer of {}",
                data.len(),
                buf.len
            )));
        }
        if !data.is_empty() {
            self.inner
                .queue
                .write_buffer(&buf.buffer, 0, bytemuck::cast_slice(data));
        }
        Ok(())
    }

    /// A zeroed storage buffer of `len` elements for kernel outputs.
    pub fn zeros(&self, what: &str, len: usize) -> Result<GpuBuffer> {
        self.check_buffer_size(what, len)?;
        let buffer = self.storage_buffer(what, len)?;
        Ok(GpuBuffer { buffer, len })
    }

    pub(super) fn dummy(&self) -> &wgpu::Buffer {
        &self.inner.dummy
    }

    pub(super) fn bind_group_layout(&self, k: Kernel) -> &wgpu::BindGroupLayout {
        &self.inner.layouts[&k].0
    }

    /// The compute pipeline of a kernel specialised by its `override` constants, compiled
    /// once per context.
    pub(super) fn pipeline(&self, key: &PipelineKey) -> wgpu::ComputePipeline {
        let mut pipelines = self
            .inner
            .pipelines
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pipelines.get(key) {
            return p.clone();
        }
        let module = {
            let mut modules = self.inner.modules.lock().unwrap_or_else(|p| p.into_inner());
            modules
                .entry(key.kernel)
                .or_insert_with(|| {
                    self.inner
                        .device
                        .create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(key.kernel.name()),
                            source: wgpu::ShaderSource::Wgsl(key.kernel.source().into()),
                        })
                })
                .clone()
        };
        let constants: Vec<(&str, f64)> =
            key.constants.iter().map(|&(n, v)| (n, v as f64)).collect();
        let pipeline =
            self.inner
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(key.kernel.name()),
                    layout: Some(&self.inner.layouts[&key.kernel].1),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                });
        pipelines.insert(key.clone(), pipeline.clone());
        pipeline
    }
}

/// A storage buffer of `len` f32 (or u32) elements on the GPU.
#[derive(Clone, Debug)]
pub struct GpuBuffer {
    pub(super) buffer: wgpu::Buffer,
    len: usize,
}

impl GpuBuffer {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// [`GpuContext::is_software`] from an adapter name as [`request_device`] writes it
/// ("name (Backend, DeviceType)"; a browser's fallback adapter reports the type `Cpu`).
pub fn is_software_adapter(name: &str) -> bool {
    let n = name.to_lowercase();
    n.ends_with(", cpu)")
        || ["swiftshader", "llvmpipe", "lavapipe", "software"]
            .iter()
            .any(|s| n.contains(s))
}

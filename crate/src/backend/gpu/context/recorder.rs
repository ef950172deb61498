//! The recorder: kernel launches and readbacks of one GPU round trip, encoded into one
//! command encoder, submitted once, read back once through one staging buffer.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::{GpuBuffer, GpuContext};
use crate::backend::gpu::catalogue::PipelineKey;
use crate::error::{Error, Result};

impl GpuContext {
    /// Start recording a batch of kernel launches. Recording is synchronous; everything
    /// recorded runs in one command encoder at [`Recorder::finish`].
    pub fn recorder(&self) -> Result<Recorder> {
        self.check_alive()?;
        let scope = self
            .inner
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = self
            .inner
            .device
            .push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        Ok(Recorder {
            ctx: self.clone(),
            ops: Vec::new(),
            read_len: 0,
            scopes: Some((oom, scope)),
        })
    }
}

/// Where one requested readback lands in the single staging buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadSlot {
    start: usize,
    len: usize,
}

enum Op {
    Dispatch {
        pipeline: wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        groups: (u32, u32),
    },
    /// Copy `len` elements of `src` from `offset` into the staging buffer at `dst`.
    Read {
        src: wgpu::Buffer,
        offset: usize,
        dst: usize,
        len: usize,
    },
    /// Set every byte of `buf` to zero (an encoder command, not a dispatch).
    Clear { buf: wgpu::Buffer, len: usize },
    /// Copy `len` elements from the start of `src` to the start of `dst`.
    Copy {
        src: wgpu::Buffer,
        dst: wgpu::Buffer,
        len: usize,
    },
}

/// Kernel launches and readbacks of one GPU round trip. Dispatches run in the order they
/// were recorded (each dispatch sees the writes of the ones before it); a read copies the
/// buffer as it is at that point of the sequence.
pub struct Recorder {
    ctx: GpuContext,
    ops: Vec<Op>,
    /// Elements of the staging buffer requested so far.
    read_len: usize,
    /// (out-of-memory, validation) error scopes around the whole recording.
    scopes: Option<(wgpu::ErrorScopeGuard, wgpu::ErrorScopeGuard)>,
}

impl Recorder {
    pub fn ctx(&self) -> &GpuContext {
        &self.ctx
    }

    /// Record one dispatch of `groups` workgroups (a 1-D count laid on a 2-D grid when it
    /// exceeds the per-dimension limit; the kernels rebuild the index from
    /// `num_workgroups`).
    pub(in crate::backend::gpu) fn dispatch(
        &mut self,
        key: PipelineKey,
        uniform: &[u8],
        storage: &[&wgpu::Buffer],
        groups: u32,
    ) -> Result<()> {
        let grid = self.grid(groups)?;
        self.dispatch_2d(key, uniform, storage, grid)
    }

    /// Record one dispatch with an explicit (x, y) workgroup grid.
    pub(in crate::backend::gpu) fn dispatch_2d(
        &mut self,
        key: PipelineKey,
        uniform: &[u8],
        storage: &[&wgpu::Buffer],
        (gx, gy): (u32, u32),
    ) -> Result<()> {
        let max = self.ctx.inner.limits.max_compute_workgroups_per_dimension;
        if gx > max || gy > max {
            return Err(Error::Gpu(format!(
                "{} needs a {gx} × {gy} grid of workgroups; this GPU allows {max} per dimension",
                key.kernel.name()
            )));
        }
        if gx == 0 || gy == 0 {
            return Ok(());
        }
        let device = &self.ctx.inner.device;
        let ubuf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(key.kernel.name()),
            size: uniform.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.ctx.inner.queue.write_buffer(&ubuf, 0, uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: ubuf.as_entire_binding(),
        }];
        for (i, b) in storage.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: b.as_entire_binding(),
            });
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(key.kernel.name()),
            layout: self.ctx.bind_group_layout(key.kernel),
            entries: &entries,
        });
        let pipeline = self.ctx.pipeline(&key);
        self.ops.push(Op::Dispatch {
            pipeline,
            bind_group,
            groups: (gx, gy),
        });
        Ok(())
    }

    /// Lay `groups` workgroups on a 2-D grid within the per-dimension limit.
    fn grid(&self, groups: u32) -> Result<(u32, u32)> {
        let max = self
            .ctx
            .inner
            .limits
            .max_compute_workgroups_per_dimension
            .max(1);
        if groups <= max {
            Ok((groups, 1))
        } else {
            Ok((max, groups.div_ceil(max)))
        }
    }

    /// Ask for `len` elements of `buf` from element `offset`, as they are now.
    pub fn read(&mut self, buf: &GpuBuffer, offset: usize, len: usize) -> Result<ReadSlot> {
        if offset + len > buf.len {
            return Err(Error::Gpu(format!(
                "read of {len} elements at {offset} from a buffer of {} elements",
                buf.len
            )));
        }
        let slot = ReadSlot {
            start: self.read_len,
            len,
        };
        self.ops.push(Op::Read {
            src: buf.buffer.clone(),
            offset,
            dst: self.read_len,
            len,
        });
        self.read_len += len;
        Ok(slot)
    }

    /// Zero the first `len` elements of `buf` at this point of the sequence (a buffer
    /// command between dispatches: gradients that kernels add to start from zero).
    pub fn clear(&mut self, buf: &GpuBuffer, len: usize) -> Result<()> {
        if len > buf.len {
            return Err(Error::Gpu(format!(
                "clear of {len} elements of a buffer of {} elements",
                buf.len
            )));
        }
        if len > 0 {
            self.ops.push(Op::Clear {
                buf: buf.buffer.clone(),
                len,
            });
        }
        Ok(())
    }

    /// Copy the first `len` elements of `src` to the start of `dst` at this point of the
    /// sequence (a buffer command, not a dispatch). `src` and `dst` are different buffers.
    pub fn copy(&mut self, src: &GpuBuffer, dst: &GpuBuffer, len: usize) -> Result<()> {
        if len > src.len || len > dst.len {
            return Err(Error::Gpu(format!(
                "copy of {len} elements from a buffer of {} to one of {}",
                src.len, dst.len
            )));
        }
        if len > 0 {
            self.ops.push(Op::Copy {
                src: src.buffer.clone(),
                dst: dst.buffer.clone(),
                len,
            });
        }
        Ok(())
    }

    /// Ask for the whole of `buf`.
    pub fn read_all(&mut self, buf: &GpuBuffer) -> Result<ReadSlot> {
        self.read(buf, 0, buf.len)
    }

    /// Encode everything, submit once, and read every requested slot back through one
    /// staging buffer (one map). Any validation error, out-of-memory, map failure or lost
    /// device comes back as `Error::Gpu`.
    ///
    /// The submission happens now; the returned future waits for the results (it holds
    /// nothing tied to this thread, so it may be sent elsewhere).
    pub fn finish(mut self) -> impl Future<Output = Result<Readback>> {
        let ctx = self.ctx.clone();
        let staging = (self.read_len > 0).then(|| {
            ctx.inner.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: (self.read_len * 4) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let ops = std::mem::take(&mut self.ops);
        encode_and_submit(&ctx, ops, staging.as_ref());

        // Pop the error scopes now, synchronously, on the thread that pushed them; their
        // results are awaited below.
        let (oom, validation) = self.scopes.take().expect("scopes are taken once, here");
        let oom = oom.pop();
        let validation = validation.pop();
        drop(self);

        let mapped = staging.as_ref().map(|st| {
            ctx.inner.counters.readbacks.fetch_add(1, Ordering::Relaxed);
            let (future, done) = oneshot();
            st.slice(..).map_async(wgpu::MapMode::Read, done);
            future
        });
        // Natively nothing progresses unless the device is polled; in the browser there is
        // no poll and the map completes through the event loop.
        #[cfg(not(target_arch = "wasm32"))]
        let polled = ctx
            .inner
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Gpu(format!("waiting for the GPU failed: {e}")));
        #[cfg(target_arch = "wasm32")]
        let polled: Result<()> = Ok(());

        async move {
            // A lost device makes every later launch invalid: when it is gone, say that
            // rather than what failed because of it.
            ctx.check_alive()?;
            if let Err(e) = polled {
                ctx.check_alive()?;
                return Err(e);
            }
            if let Some(e) = validation.await {
                ctx.check_alive()?;
                return Err(Error::Gpu(format!("a kernel launch was rejected: {e}")));
            }
            if let Some(e) = oom.await {
                ctx.check_alive()?;
                return Err(Error::Gpu(format!("the GPU ran out of memory: {e}")));
            }
            ctx.check_alive()?;
            let mut data = Vec::new();
            if let (Some(st), Some(mapped)) = (&staging, mapped) {
                mapped.await.map_err(|e| {
                    Error::Gpu(format!("reading results back from the GPU failed: {e}"))
                })?;
                {
                    let view = st.slice(..).get_mapped_range().map_err(|e| {
                        Error::Gpu(format!("reading the mapped results failed: {e}"))
                    })?;
                    data = bytemuck::pod_collect_to_vec::<u8, f32>(&view);
                }
                st.unmap();
            }
            let uncaptured: Vec<String> = ctx
                .inner
                .state
                .uncaptured
                .lock()
                .map(|mut v| std::mem::take(&mut *v))
                .unwrap_or_default();
            if !uncaptured.is_empty() {
                return Err(Error::Gpu(format!(
                    "the GPU reported: {}",
                    uncaptured.join("; ")
                )));
            }
            Ok(Readback { data })
        }
    }
}

/// Replay the recorded operations into one command encoder and submit it.
fn encode_and_submit(ctx: &GpuContext, ops: Vec<Op>, staging: Option<&wgpu::Buffer>) {
    let inner = &ctx.inner;
    let mut encoder = inner
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("tplay"),
        });
    let mut dispatches = 0u64;
    let mut ops = ops.into_iter().peekable();
    while let Some(op) = ops.next() {
        match op {
            Op::Dispatch {
                pipeline,
                bind_group,
                groups,
            } => {
                // Consecutive dispatches share one compute pass; WebGPU runs them in order
                // and makes each one's writes visible to the next.
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                let mut next = Some((pipeline, bind_group, groups));
                while let Some((p, bg, (gx, gy))) = next.take() {
                    pass.set_pipeline(&p);
                    pass.set_bind_group(0, &bg, &[]);
                    pass.dispatch_workgroups(gx, gy, 1);
                    dispatches += 1;
                    if matches!(ops.peek(), Some(Op::Dispatch { .. })) {
                        if let Some(Op::Dispatch {
                            pipeline,
                            bind_group,
                            groups,
                        }) = ops.next()
                        {
                            next = Some((pipeline, bind_group, groups));
                        }
                    }
                }
            }
            Op::Read {
                src,
                offset,
                dst,
                len,
            } => {
                if let Some(st) = staging {
                    encoder.copy_buffer_to_buffer(
                        &src,
                        (offset * 4) as u64,
                        st,
                        (dst * 4) as u64,
                        Some((len * 4) as u64),
                    );
                }
            }
            Op::Clear { buf, len } => encoder.clear_buffer(&buf, 0, Some((len * 4) as u64)),
            Op::Copy { src, dst, len } => {
                encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, Some((len * 4) as u64))
            }
        }
    }
    inner.queue.submit([encoder.finish()]);
    inner.counters.submissions.fetch_add(1, Ordering::Relaxed);
    inner
        .counters
        .dispatches
        .fetch_add(dispatches, Ordering::Relaxed);
}

/// The values read back by one [`Recorder::finish`].
#[derive(Debug)]
pub struct Readback {
    data: Vec<f32>,
}

impl Readback {
    /// The f32 values of one slot.
    pub fn f32(&self, slot: ReadSlot) -> &[f32] {
        &self.data[slot.start..slot.start + slot.len]
    }
}

/// A one-value channel whose receiving end is a future: the bridge from wgpu's
/// `map_async` callback to `async` code, with no executor of its own.
type Shared<T> = Arc<Mutex<(Option<T>, Option<Waker>)>>;

struct OneShot<T> {
    shared: Shared<T>,
}

fn oneshot<T: Send + 'static>() -> (OneShot<T>, impl FnOnce(T) + Send + 'static) {
    let shared: Shared<T> = Arc::new(Mutex::new((None, None)));
    let tx = shared.clone();
    let send = move |v: T| {
        let waker = {
            let mut s = tx.lock().unwrap_or_else(|p| p.into_inner());
            s.0 = Some(v);
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    };
    (OneShot { shared }, send)
}

impl<T> Future for OneShot<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        match s.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

//! Which backend runs the engine's passes, and the status the page is told: the CPU, or
//! the GPU only while its test pass agrees with the CPU reference (`backend::parity`) and,
//! unless the learner insists on it, is faster than the CPU for the loaded model
//! (`backend::race`).

use crate::backend::parity::{gpu_parity, Parity};
use crate::backend::race::{race, Handicap};
use crate::backend::{Backend, GpuContext};
use crate::error::Result;
use crate::model::Trace;
use crate::protocol::{BackendName, BackendStatus};

use super::Engine;

/// The adapter's description without the parentheses some platforms put around it.
fn adapter_words(name: &str) -> String {
    let name = name.trim();
    match name.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
        Some(inner) => inner.to_string(),
        None => name.to_string(),
    }
}

impl Engine {
    /// Run on the CPU from now on.
    pub fn use_cpu(&mut self) {
        self.set_backend(Backend::Cpu);
    }

    /// Ask the platform for a GPU device and run on it from now on; returns the
    /// adapter's description. Fails (and stays on the current backend) when there is none.
    pub async fn use_gpu(&mut self) -> Result<String> {
        let ctx = GpuContext::request().await?;
        let name = ctx.adapter_name().to_string();
        self.set_backend(Backend::Gpu(ctx));
        Ok(name)
    }

    /// Run on `backend` from now on (natively, tests hand in their own device).
    pub fn use_backend(&mut self, backend: Backend) {
        self.set_backend(backend);
    }

    /// What runs the next forward pass.
    pub fn backend(&self) -> BackendName {
        BackendName::of(&self.backend)
    }

    /// Where the passes run now and why.
    pub fn backend_status(&self) -> &BackendStatus {
        &self.status
    }

    /// Choose the backend: the CPU, or a GPU device (described as `adapter` when the
    /// platform describes it better than the device does) kept only while its test pass
    /// on the loaded model agrees with the CPU and, `by_speed`, is faster than the CPU
    /// (without it the GPU is kept where it agrees, however slow: the learner insisted).
    /// Never fails: what went wrong is the status.
    pub async fn select_backend(
        &mut self,
        want: BackendName,
        adapter: Option<String>,
        by_speed: bool,
    ) -> BackendStatus {
        self.by_speed = by_speed;
        self.status = match want {
            BackendName::Cpu => {
                self.use_cpu();
                BackendStatus::CpuChosen
            }
            BackendName::Webgpu => match self.use_gpu().await {
                Err(e) => {
                    self.use_cpu();
                    BackendStatus::CpuNoGpu {
                        detail: e.to_string(),
                    }
                }
                Ok(name) => {
                    let adapter = adapter
                        .filter(|a| !a.trim().is_empty())
                        .unwrap_or_else(|| adapter_words(&name));
                    self.checked(adapter, None).await
                }
            },
        };
        self.status.clone()
    }

    /// Measure the GPU against the CPU again (on a newly loaded model); the status is
    /// unchanged on the CPU, except where the CPU runs because it was faster for the last
    /// model: the GPU is asked for again and races on this one. `corrupt` is for the
    /// test-only request only.
    pub async fn recheck_backend(&mut self, corrupt: Option<fn(&mut Trace)>) -> BackendStatus {
        if let BackendStatus::CpuFaster { adapter, .. } = &self.status {
            if corrupt.is_none() {
                let adapter = adapter.clone();
                return self
                    .select_backend(BackendName::Webgpu, Some(adapter), true)
                    .await;
            }
        }
        if let (Backend::Gpu(_), Some(adapter)) = (&self.backend, self.status.adapter()) {
            let adapter = adapter.to_string();
            self.status = self.checked(adapter, corrupt).await;
        }
        self.status.clone()
    }

    /// Test-only: busy time added to every timed pass of each side of the race, then the
    /// backend measured again (`by_speed` as it was chosen).
    pub async fn test_only_race_with_handicap(&mut self, handicap: Handicap) -> BackendStatus {
        self.handicap = handicap;
        let status = self.recheck_backend(None).await;
        self.handicap = Handicap::default();
        status
    }

    /// The status after one test pass on the GPU; the CPU takes over unless it agrees, and
    /// (`by_speed`) unless the GPU also wins the race.
    async fn checked(&mut self, adapter: String, corrupt: Option<fn(&mut Trace)>) -> BackendStatus {
        match self.parity(corrupt).await {
            Ok(p) if p.agrees => match self.race().await {
                Ok(r) if r.gpu_wins() || !self.by_speed => BackendStatus::WebgpuChecked {
                    adapter,
                    parity: p.max_abs_diff,
                    cpu_ms: r.cpu_ms,
                    gpu_ms: r.gpu_ms,
                    unit: r.unit,
                },
                Ok(r) => {
                    self.use_cpu();
                    BackendStatus::CpuFaster {
                        adapter,
                        parity: p.max_abs_diff,
                        cpu_ms: r.cpu_ms,
                        gpu_ms: r.gpu_ms,
                        unit: r.unit,
                    }
                }
                Err(e) => {
                    self.use_cpu();
                    BackendStatus::CpuTestFailed {
                        adapter,
                        detail: e.to_string(),
                    }
                }
            },
            Ok(p) => {
                self.use_cpu();
                BackendStatus::CpuDisagrees {
                    adapter,
                    max_abs_diff: p.max_abs_diff.is_finite().then_some(p.max_abs_diff),
                }
            }
            Err(e) => {
                self.use_cpu();
                BackendStatus::CpuTestFailed {
                    adapter,
                    detail: e.to_string(),
                }
            }
        }
    }

    /// The GPU failed during `during` (`why`): the CPU runs from now on, and says so.
    pub(super) fn fell_back(&mut self, during: crate::protocol::FailedPass, why: &str) {
        self.set_backend(Backend::Cpu);
        self.status = BackendStatus::CpuFellBack {
            during,
            adapter: self.status.adapter().unwrap_or_default().to_string(),
            detail: why.to_string(),
        };
    }

    /// Test-only: one weight of the training run's layer `layer` (from 0, the lab plots'
    /// order) turns NaN before its next step; the run must stop there and name the layer
    /// (false without a run or such a layer).
    pub fn test_only_nan_at_layer(&mut self, layer: usize) -> bool {
        self.session
            .as_mut()
            .is_some_and(|s| s.test_only_nan_at_layer(layer))
    }

    /// Test-only: destroy the GPU device now (the engine's, and the training run's), as a
    /// driver reset would (true when there was one); the next GPU call fails and the
    /// engine (or the run) carries on on the CPU.
    pub fn test_only_lose_gpu(&self) -> bool {
        let run = self
            .session
            .as_ref()
            .is_some_and(|s| s.test_only_lose_gpu());
        match &self.backend {
            Backend::Gpu(ctx) => {
                ctx.test_only_lose();
                true
            }
            Backend::Cpu => run,
        }
    }

    /// The loaded model's test pass timed on the CPU and on this GPU (`backend::race`).
    async fn race(&mut self) -> Result<crate::backend::race::Race> {
        let placed = self.placed()?;
        race(self.model()?, &placed, self.handicap).await
    }

    /// GPU-vs-CPU parity of the loaded model on this device (`backend::parity`);
    /// `corrupt` is for the test-only request only.
    /// The test pass runs on the engine's placed model, which the passes after it reuse.
    pub async fn parity(&mut self, corrupt: Option<fn(&mut Trace)>) -> Result<Parity> {
        let placed = self.placed()?;
        gpu_parity(self.model()?, &placed, corrupt).await
    }
}

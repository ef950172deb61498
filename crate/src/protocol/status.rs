//! What the page is told about the backend and about failures: one status for inference
//! and training alike, and the core's errors as `{kind, message}`. The page words both by
//! `kind`, in its own language.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::Error;

/// Which pass the GPU failed in before the CPU took over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FailedPass {
    Forward,
    Generate,
}

/// What a race between the backends timed: a generated token (cached decoding, as the page
/// generates), a pass of the test input (a model that does not generate), or a training
/// step (a lab run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RaceUnit {
    Token,
    Pass,
    Step,
}

/// Where the engine's passes (or a training run's steps) run now, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BackendStatus {
    /// On the CPU: no backend has been chosen yet.
    Starting,
    /// On the CPU because it was chosen (or a run's settings ask for it).
    CpuChosen,
    /// On the GPU (`adapter`: the device's description); a training run's steps.
    Webgpu { adapter: String },
    /// On the GPU, whose test pass agreed with the CPU: max |logit_gpu − logit_cpu| is
    /// `parity`; one `unit` (a generated token, or a pass of the test input;
    /// `backend::race`) took `gpu_ms` there and `cpu_ms` on the CPU (the GPU won, or the
    /// learner insisted on it). A training run under `auto`: its first steps timed on both
    /// (`train::race`), `parity` the largest relative loss difference of a step, `cpu_ms`
    /// and `gpu_ms` per step.
    WebgpuChecked {
        adapter: String,
        parity: f32,
        cpu_ms: f32,
        gpu_ms: f32,
        unit: RaceUnit,
    },
    /// On the CPU: the GPU agrees (`parity`) but is not faster for this model: one `unit`
    /// took `gpu_ms` there and `cpu_ms` on the CPU. A training run: as in `WebgpuChecked`,
    /// per step.
    CpuFaster {
        adapter: String,
        parity: f32,
        cpu_ms: f32,
        gpu_ms: f32,
        unit: RaceUnit,
    },
    /// On the CPU: no GPU device could be had (`detail`: why).
    CpuNoGpu { detail: String },
    /// On the CPU: the GPU started but its test pass (a run's timed steps) failed
    /// (`detail`: how).
    CpuTestFailed { adapter: String, detail: String },
    /// On the CPU: the GPU's logits disagree with the CPU's by `max_abs_diff` (absent:
    /// the GPU returned NaN or infinite logits where the CPU did not). A training run:
    /// the largest relative loss difference of its first steps (absent: a NaN or an
    /// infinity on either side).
    CpuDisagrees {
        adapter: String,
        max_abs_diff: Option<f32>,
    },
    /// On the CPU: the GPU trainer does not take this model (`detail`: what it cannot train).
    CpuRefused { detail: String },
    /// On the CPU since the GPU failed during a forward pass or a generation step
    /// (`detail`: how); the pass or the generation carried on on the CPU.
    CpuFellBack {
        during: FailedPass,
        adapter: String,
        detail: String,
    },
    /// On the CPU since the GPU failed taking training step `step` (`detail`: how); the
    /// CPU went on from step `from`, the last one whose weights had been copied back.
    CpuLost {
        step: u64,
        from: u64,
        detail: String,
    },
}

/// A training run's backend is told the same way.
pub type RunBackend = BackendStatus;

impl BackendStatus {
    pub fn name(&self) -> super::BackendName {
        match self {
            BackendStatus::Webgpu { .. } | BackendStatus::WebgpuChecked { .. } => {
                super::BackendName::Webgpu
            }
            _ => super::BackendName::Cpu,
        }
    }

    /// The GPU's description, when one was found.
    pub fn adapter(&self) -> Option<&str> {
        match self {
            BackendStatus::Webgpu { adapter }
            | BackendStatus::WebgpuChecked { adapter, .. }
            | BackendStatus::CpuTestFailed { adapter, .. }
            | BackendStatus::CpuDisagrees { adapter, .. }
            | BackendStatus::CpuFaster { adapter, .. }
            | BackendStatus::CpuFellBack { adapter, .. } => Some(adapter),
            _ => None,
        }
    }
}

/// The kind of a core error (`crate::error::Error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Config,
    Checkpoint,
    Input,
    Gpu,
    Other,
}

/// A core error as it crosses to the page: its kind, and the core's sentence (the kind's
/// words first, as `Display` writes it: `bad input: …`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub message: String,
}

impl From<&Error> for EngineError {
    fn from(e: &Error) -> EngineError {
        let kind = match e {
            Error::Config(_) => ErrorKind::Config,
            Error::Checkpoint(_) => ErrorKind::Checkpoint,
            Error::Input(_) => ErrorKind::Input,
            Error::Gpu(_) => ErrorKind::Gpu,
            Error::Other(_) => ErrorKind::Other,
        };
        EngineError {
            kind,
            message: e.to_string(),
        }
    }
}

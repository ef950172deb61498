//! The page's engine, in the core: one loaded model, one backend, at most one generation,
//! and a method per request of the worker protocol (`crate::protocol`). Everything the
//! page is told is computed here, natively testable; `wasm.rs` only converts JS values
//! to these requests and the results back.
//!
//! A GPU failure (a lost device, an out-of-memory) is survived here: the pass runs again
//! on the CPU, a generation carries on there with `Generator::resume_on`, the backend
//! stays the CPU from then on, and the result says why in `fallback`.

mod backend;
mod explain;
mod forward;
mod generate;
mod input;
mod train;
mod weights;

#[cfg(test)]
mod tests;

use std::rc::Rc;

use crate::backend::{Backend, Placed};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::generate::Generator;
use crate::model::forward::AttnSite;
use crate::model::mask::attention_mask;
use crate::model::{ForwardOptions, Model};
use crate::protocol::{BackendName, BackendStatus, ModelInfo};
use crate::train::session::Session;

pub use forward::{forward_macs, forward_options, forward_result, mask_views};
pub use generate::StepReply;
pub use input::model_input;
pub use weights::{EDIT_INDICES, MAX_WEIGHT_VALUES};

impl BackendName {
    pub fn of(b: &Backend) -> BackendName {
        match b {
            Backend::Cpu => BackendName::Cpu,
            Backend::Gpu(_) => BackendName::Webgpu,
        }
    }
}

/// A generation in progress.
pub(super) struct Generation {
    pub(super) gen: Generator<Rc<Model>>,
}

/// The stateful engine behind the page's worker.
pub struct Engine {
    model: Option<Rc<Model>>,
    backend: Backend,
    /// The loaded model on `backend` (its weights resident on the GPU), placed by the
    /// first pass that needs it and dropped when the model or the backend changes.
    placed: Option<Placed>,
    generation: Option<Generation>,
    /// Where the passes run and why (`select_backend`, and a GPU failure since).
    status: BackendStatus,
    /// The GPU is kept only where it is faster too (the page's `auto`), not only where
    /// it agrees (`select_backend`).
    by_speed: bool,
    /// Test-only busy time added to each timed pass of the race (`backend::race`).
    handicap: crate::backend::race::Handicap,
    /// The training run of this engine (the lab runs each in its own engine).
    session: Option<Session>,
    /// The model as loaded, kept once a weight is edited by hand (`weights`); `model`
    /// then holds the edited copy.
    trained: Option<Rc<Model>>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    pub fn new() -> Engine {
        Engine {
            model: None,
            backend: Backend::Cpu,
            placed: None,
            generation: None,
            status: BackendStatus::Starting,
            by_speed: false,
            handicap: Default::default(),
            session: None,
            trained: None,
        }
    }

    fn model(&self) -> Result<&Rc<Model>> {
        self.model
            .as_ref()
            .ok_or_else(|| Error::Input("no model is loaded: call load() first".into()))
    }

    /// Load a checkpoint from its bytes; returns the model's description.
    pub fn load(&mut self, bytes: &[u8]) -> Result<ModelInfo> {
        self.install(crate::checkpoint::load(bytes)?)
    }

    /// Load a Hugging Face folder's files (`crate::hf`); returns the model's description.
    /// A bad folder leaves the model that was loaded before.
    pub fn load_hf(&mut self, files: &crate::hf::HfFiles) -> Result<ModelInfo> {
        self.install(crate::hf::load(files)?)
    }

    fn install(&mut self, model: Model) -> Result<ModelInfo> {
        let info = model_info(&model);
        self.model = Some(Rc::new(model));
        self.trained = None;
        self.placed = None;
        self.generation = None;
        Ok(info)
    }

    /// The loaded model on the running backend, placed there (uploaded) the first time.
    pub(super) fn placed(&mut self) -> Result<Placed> {
        if let Some(p) = &self.placed {
            return Ok(p.clone());
        }
        let p = self.backend.place(self.model()?)?;
        self.placed = Some(p.clone());
        Ok(p)
    }

    /// Run on `backend` from now on; the model is placed there at the next pass.
    fn set_backend(&mut self, backend: Backend) {
        self.backend = backend;
        self.placed = None;
    }
}

/// What the page is told about a loaded checkpoint.
pub fn model_info(model: &Model) -> ModelInfo {
    let cfg = &model.config;
    let spec = &model.tokenizer.spec;
    ModelInfo {
        arch: cfg.arch,
        pos_encoding: cfg.pos_encoding,
        norm: cfg.norm,
        score: cfg.score,
        activation: cfg.activation,
        d_model: cfg.d_model,
        n_heads: cfg.n_heads,
        d_head: cfg.d_head(),
        d_ff: cfg.d_ff,
        max_len: cfg.max_len,
        encoder_layers: cfg.encoder_layers(),
        decoder_layers: cfg.decoder_layers(),
        vocab: spec.tokens.clone(),
        tokenizer_kind: spec.kind,
        pad: spec.pad,
        bos: spec.bos,
        eos: spec.eos,
        unk: spec.unk,
        num_classes: cfg.num_classes,
        params: model.param_count(),
        relative_max_distance: cfg.relative_max_distance,
        dropout: cfg.dropout,
        causal_default: attention_mask(cfg, main_site(cfg), &ForwardOptions::default()).is_causal(),
    }
}

/// The main stack's self-attention: the one the causal switch and the mask editor act on.
pub fn main_site(cfg: &crate::config::ModelConfig) -> AttnSite {
    match cfg.arch {
        Arch::EncoderOnly => AttnSite::EncoderSelf,
        _ => AttnSite::DecoderSelf,
    }
}

//! The page's engine, in the core: one loaded model, one backend, at most one generation,
//! and a method per request of the worker protocol (`crate::protocol`). Everything the
//! page is told is computed here, natively testable; `wasm.rs` only converts JS values
//! to these requests and the results back.
//!
//! A GPU failure (a lost device, an out-of-memory) is survived here: the pass runs again
//! on the CPU, a generation carries on there with `Generator::resume_on`, the backend
//! stays the CPU from then on, and the result says why in `fallback`.

use std::borrow::Cow;
use std::rc::Rc;

use crate::backend::parity::{gpu_parity, Parity};
use crate::backend::{Backend, GpuContext};
use crate::config::{Arch, PosEncoding};
use crate::error::{Error, Result};
use crate::explain::blocks::{
    block_diff, block_probe, dropout_demo, mode_of, norm_coupling, with_dropout, BlockDiff,
    BlockProbe, CouplingRequest, DropoutDemo, DropoutRequest, NormCoupling, TrainMode,
};
use crate::explain::extrapolation::{extrapolation, Extrapolation, SEED as EXTRAPOLATION_SEED};
use crate::explain::order::permutation;
use crate::explain::parallel::{parallel_vs_serial, ParallelTiming};
use crate::explain::positions::{
    additive_table, alibi_matrices, embedding_map, embedding_scale_of, relative_tables,
    rope_demo_of_model, similarity, EmbeddingScale, RopeDemo,
};
use crate::explain::scoring::{compare_scoring, ScoringComparison};
use crate::explain::sqrt_dk::{score_scaling, ScoreScaling, WIDTHS as SQRT_DK_WIDTHS};
use crate::generate::clock::Stopwatch;
use crate::generate::flops::{decoder_macs, encoder_macs};
use crate::generate::sampling::{argmax, sampling_distribution, softmax, Sampling};
use crate::generate::{GenerateOptions, Generator, LengthPenalty, Step, Strategy};
use crate::limits::{self, MAX_BEAM_WIDTH};
use crate::model::cost::{cost_report, CostReport};
use crate::model::forward::{Activations, AttnSite, Batch};
use crate::model::inspect::{by_head, qk_gap, recorded_qkv, saturation, state_norms};
use crate::model::mask::{attention_mask, check_masks, SiteMask};
use crate::model::plan::{layer_plan, LayerPlan, StackInput};
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::protocol::{
    AttnView, BackendName, BlockDiffRequest, BlockProbeRequest, CostRequest, Dense,
    EmbeddingScaleRequest, F32Array, F64Array, ForwardRequest, ForwardResult, GenerateStartRequest,
    GenerateStarted, GenerateStep, GenerateStepCompact, GenerateSteps, GenerateStepsRequest,
    GpuWork, HiddenView, MaskView, ModelInfo, NoamRequest, ParallelRequest, PermutationResult,
    Positions, PositionsRequest, RelativeTable, RopeDemoRequest, RunDefaults, RunDefaultsRequest,
    RunSettings, SamplingRequest, ScoreScalingRequest, ScoringRequest, StrategyName, Switches,
    Tokenized, TrainBackendChoice, TrainChunk, TrainChunkRequest, TrainStarted, U32Array,
};
use crate::train::schedule::{noam_curve, Schedule};
use crate::train::session::Session;

/// Candidates reported with each generation step.
const TOP_CANDIDATES: usize = 8;

impl SamplingRequest {
    /// The distribution the forward view shows as "drawn from": greedy is one-hot,
    /// beam search ranks by the model's own probabilities.
    pub fn sampling(&self) -> Sampling {
        match self.strategy {
            StrategyName::Sample => Sampling {
                temperature: self.temperature,
                top_k: (self.top_k > 0).then_some(self.top_k),
                top_p: (self.top_p < 1.0).then_some(self.top_p),
            },
            StrategyName::Greedy => Sampling {
                temperature: 0.0,
                top_k: None,
                top_p: None,
            },
            StrategyName::Beam => Sampling::default(),
        }
    }

    /// The generator's strategy. Beam search compares hypotheses with the GNMT length
    /// penalty (α = 0.6), so short endings are not favoured just for being short.
    pub fn strategy(&self) -> Result<Strategy> {
        match self.strategy {
            StrategyName::Greedy => Ok(Strategy::Greedy),
            StrategyName::Sample => Ok(Strategy::Sample(self.sampling())),
            StrategyName::Beam => {
                if self.beam_width == 0 || self.beam_width > MAX_BEAM_WIDTH {
                    return Err(Error::Input(format!(
                        "beam width must be from 1 to {MAX_BEAM_WIDTH}, got {}",
                        self.beam_width
                    )));
                }
                Ok(Strategy::Beam {
                    width: self.beam_width,
                    length_penalty: LengthPenalty::Gnmt { alpha: 0.6 },
                })
            }
        }
    }
}

impl BackendName {
    pub fn of(b: &Backend) -> BackendName {
        match b {
            Backend::Cpu => BackendName::Cpu,
            Backend::Gpu(_) => BackendName::Webgpu,
        }
    }
}

/// A generation in progress.
struct Generation {
    gen: Generator<Rc<Model>>,
}

/// The stateful engine behind the page's worker.
pub struct Engine {
    model: Option<Rc<Model>>,
    backend: Backend,
    generation: Option<Generation>,
    /// The training run of this engine (the lab runs each in its own engine).
    session: Option<Session>,
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
            generation: None,
            session: None,
        }
    }

    fn model(&self) -> Result<&Rc<Model>> {
        self.model
            .as_ref()
            .ok_or_else(|| Error::Input("no model is loaded: call load() first".into()))
    }

    /// Load a checkpoint from its bytes; returns the model's description.
    pub fn load(&mut self, bytes: &[u8]) -> Result<ModelInfo> {
        let model = crate::checkpoint::load(bytes)?;
        let info = model_info(&model);
        self.model = Some(Rc::new(model));
        self.generation = None;
        Ok(info)
    }

    /// The settings a task's runs start from (its shipped recipe, or its nano preset),
    /// with a line about every field and why a field does not apply. Needs no model.
    pub fn run_defaults(&self, req: &RunDefaultsRequest) -> Result<RunDefaults> {
        RunSettings::defaults(&req.task)
    }

    /// Start a training run (a fresh model from the settings' seed) on the backend its
    /// settings choose (`Session::place`); any earlier run of this engine is dropped. Bad
    /// settings are refused by field, and nothing changes.
    pub async fn train_start(&mut self, settings: &RunSettings) -> Result<TrainStarted> {
        let session = Session::new(settings.clone())?;
        self.begin_run(session).await
    }

    /// The device a run may train on: the engine's own when it runs on one, else a new one.
    async fn training_gpu(&self) -> Result<GpuContext> {
        match &self.backend {
            Backend::Gpu(ctx) => Ok(ctx.clone()),
            Backend::Cpu => GpuContext::request().await,
        }
    }

    async fn begin_run(&mut self, mut session: Session) -> Result<TrainStarted> {
        let gpu = match session.settings().backend {
            TrainBackendChoice::Cpu => Err(Error::Gpu("not asked for".into())),
            _ => self.training_gpu().await,
        };
        session.place(gpu)?;
        let out = TrainStarted {
            info: model_info(session.model()),
            settings: session.settings().clone(),
            command: session.spec().args(),
            backend: session.backend().clone(),
        };
        self.session = Some(session);
        Ok(out)
    }

    fn session(&mut self) -> Result<&mut Session> {
        self.session
            .as_mut()
            .ok_or_else(|| Error::Input("no training run: call trainStart first".into()))
    }

    /// The next chunk of the run's steps. A failed step (a diverged loss) ends the run:
    /// later chunks are refused with the same reason; its last weights can still be
    /// exported. A GPU failure is not one: the run goes on on the CPU and says so.
    pub async fn train_chunk(&mut self, req: &TrainChunkRequest) -> Result<TrainChunk> {
        self.session()?.step_chunk(req).await
    }

    /// The run's state besides its weights (`Session::state`); with `train_export` taken
    /// right before or after it, `train_resume` continues the run exactly.
    pub async fn train_export_state(&mut self) -> Result<Vec<u8>> {
        let s = self.session()?;
        s.sync_weights().await;
        s.state()
    }

    /// Continue a saved run (its settings, weights and state) on the backend its settings
    /// choose; any earlier run of this engine is dropped. Bytes that do not fit are
    /// refused with the reason.
    pub async fn train_resume(
        &mut self,
        settings: &RunSettings,
        checkpoint: &[u8],
        state: &[u8],
    ) -> Result<TrainStarted> {
        let session = Session::resume(settings.clone(), checkpoint, state)?;
        self.begin_run(session).await
    }

    /// The run's model as it is now (copied back from the GPU first), as checkpoint bytes
    /// (DESIGN.md §3).
    pub async fn train_export(&mut self) -> Result<Vec<u8>> {
        let s = self.session()?;
        s.sync_weights().await;
        s.checkpoint()
    }

    /// The loaded model's layer plan (`model::plan::layer_plan`): the stacks, sublayers,
    /// norm placements and head the architecture diagram draws.
    pub fn layer_plan(&self) -> Result<LayerPlan> {
        Ok(layer_plan(&self.model()?.config))
    }

    /// Why √d_k: Var(q·k) and the softmax's spread against d_k = 1 … 512, sampled with a
    /// seed (`explain::sqrt_dk`). Needs no model.
    pub fn score_scaling(&self, req: &ScoreScalingRequest) -> Result<ScoreScaling> {
        score_scaling(&SQRT_DK_WIDTHS, req.samples, req.keys, req.rows, req.seed)
    }

    /// The loaded model's position encoding for positions 0..t: the additive table and
    /// its similarity matrix, ALiBi's slopes and biases, Shaw's tables, and the embedding
    /// map (`explain::positions`).
    pub fn positions(&self, req: &PositionsRequest) -> Result<Positions> {
        let m = self.model()?;
        let cfg = &m.config;
        let t = req.t;
        if t == 0 || t > cfg.max_len {
            return Err(Error::Input(format!(
                "positions: t must be from 1 to {}, got {t}",
                cfg.max_len
            )));
        }
        let (c, h) = (cfg.d_model, cfg.n_heads);
        let (table, similarity) = match additive_table(m, t)? {
            // (T, C) and (T, T)
            Some(pe) => (
                Some(Dense::new(&[t, c], &pe)),
                Some(Dense::new(&[t, t], &similarity(&pe, t, c))),
            ),
            None => (None, None),
        };
        let (slopes, alibi) = if cfg.pos_encoding == PosEncoding::Alibi {
            let (slopes, bias) = alibi_matrices(h, t);
            // (H) and (H, T, T)
            (Some(F32Array(slopes)), Some(Dense::new(&[h, t, t], &bias)))
        } else {
            (None, None)
        };
        let rows = 2 * cfg.relative_max_distance + 1;
        let relative = relative_tables(m)
            .into_iter()
            .map(|r| RelativeTable {
                stack: if r.stack == "encoder_self" {
                    AttnSite::EncoderSelf
                } else {
                    AttnSite::DecoderSelf
                },
                layer: r.layer,
                rel_k: Dense::new(&[rows, cfg.d_head()], &r.rel_k), // (2K+1, D)
                rel_v: Dense::new(&[rows, cfg.d_head()], &r.rel_v), // (2K+1, D)
            })
            .collect();
        Ok(Positions {
            scheme: cfg.pos_encoding,
            t,
            table,
            similarity,
            slopes,
            alibi,
            relative,
            max_distance: cfg.relative_max_distance,
            map: embedding_map(m, t)?,
        })
    }

    /// RoPE on the loaded model's own q (at `i`) and k (at `j`), head `head` of layer
    /// `layer`: pair `pair`'s path over the input's positions and the score before and
    /// after shifting both positions by `shift`.
    pub fn rope_demo(&self, req: &RopeDemoRequest) -> Result<RopeDemo> {
        let m = self.model()?;
        m.check_batch(&Batch::single(&req.tokens)?)?;
        rope_demo_of_model(
            m,
            &req.tokens,
            req.layer,
            req.head,
            req.i,
            req.j,
            req.pair,
            req.shift,
        )
    }

    /// ‖token embedding‖ (as stored and ×√d_model) and ‖position vector‖ per position.
    pub fn embedding_scale(&self, req: &EmbeddingScaleRequest) -> Result<EmbeddingScale> {
        if req.tokens.len() > limits::MAX_SEQUENCE_TOKENS {
            return Err(Error::Input(format!(
                "embedding scale: at most {} tokens, got {}",
                limits::MAX_SEQUENCE_TOKENS,
                req.tokens.len()
            )));
        }
        embedding_scale_of(self.model()?, &req.tokens)
    }

    /// Train short, test long: load the grammar checkpoint in `bytes` (the loaded model
    /// stays) and score it on held-out text up to 4× its trained length.
    pub fn extrapolation(&self, bytes: &[u8], sequences: usize) -> Result<Extrapolation> {
        let m = crate::checkpoint::load(bytes)?;
        extrapolation(&m, sequences, EXTRAPOLATION_SEED)
    }

    /// Order-blindness: the checkpoint in `bytes` (the loaded model stays) run on `text`
    /// and on `text` reordered by `perm`, with or without the causal mask.
    pub fn permutation(
        &self,
        bytes: &[u8],
        text: &str,
        perm: &[u32],
        causal: bool,
    ) -> Result<PermutationResult> {
        limits::check_text(text)?;
        let m = crate::checkpoint::load(bytes)?;
        let perm: Vec<usize> = perm.iter().map(|&p| p as usize).collect();
        let ids = m.tokenizer.encode(text).ids;
        m.check_batch(&Batch::single(&ids)?)?;
        let r = permutation(&m, &ids, &perm, causal)?;
        let names = |ids: &[u32]| -> Vec<String> {
            ids.iter()
                .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
                .collect()
        };
        let (t, v) = (ids.len(), m.config.vocab_size);
        Ok(PermutationResult {
            tokens: names(&r.tokens),
            permuted: names(&r.permuted),
            perm: r.perm,
            causal: r.causal,
            pos_encoding: m.config.pos_encoding,
            logits: Dense::new(&[t, v], &r.logits), // (T, V)
            permuted_logits: Dense::new(&[t, v], &r.permuted_logits), // (T, V)
            row_diff: F32Array(r.row_diff),         // (T)
            row_identical: r.row_identical,
        })
    }

    /// Text to ids with the loaded model's tokenizer, and where `<unk>` had to be used.
    pub fn tokenize(&self, text: &str) -> Result<Tokenized> {
        let m = self.model()?;
        limits::check_text(text)?;
        let enc = m.tokenizer.encode(text);
        let tokens = enc
            .ids
            .iter()
            .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
            .collect();
        Ok(Tokenized {
            ids: enc.ids,
            tokens,
            unknown: enc.unknown,
        })
    }

    /// Parameters and FLOPs per token of every component of the loaded model rebuilt
    /// with `n_heads` heads, each query attending to `context` keys.
    pub fn cost(&self, req: &CostRequest) -> Result<CostReport> {
        cost_report(self.model()?, req.n_heads, req.context)
    }

    /// The Noam learning rate (factor 1) for the loaded model's d_model.
    pub fn noam(&self, req: &NoamRequest) -> Result<Schedule> {
        let c = self.model()?.config.d_model;
        let NoamRequest {
            warmup,
            last_step,
            points,
        } = *req;
        if warmup == 0 || !(2..=1_000_000).contains(&last_step) || !(2..=2000).contains(&points) {
            return Err(Error::Input(format!(
                "schedule: warmup must be positive, the last step from 2 to 1000000 and the \
                 points from 2 to 2000; got warmup {warmup}, last step {last_step}, {points} points"
            )));
        }
        Ok(noam_curve(
            c,
            warmup as u64,
            last_step as u64,
            points as u64,
        ))
    }

    /// Training is parallel, inference serial: `req.prompt` extended greedily to
    /// `req.length` tokens, run as teacher-forced passes and token by token with and
    /// without the KV cache on the running backend, timed and counted
    /// (`explain::parallel`).
    pub async fn parallel(&self, req: &ParallelRequest) -> Result<ParallelTiming> {
        let m = self.model()?;
        parallel_vs_serial(
            m,
            &self.backend,
            &req.prompt,
            req.length,
            req.repeats,
            &ForwardOptions::default(),
            None,
        )
        .await
    }

    /// Dot, scaled-dot and additive scoring on the loaded model's shape: operation counts
    /// and the measured time of one pass over `req.tokens` tokens (`explain::scoring`).
    pub async fn scoring(&self, req: &ScoringRequest) -> Result<ScoringComparison> {
        compare_scoring(self.model()?, &self.backend, req.tokens, req.repeats, None).await
    }

    /// Run on the CPU from now on.
    pub fn use_cpu(&mut self) {
        self.backend = Backend::Cpu;
    }

    /// Ask the platform for a GPU device and run on it from now on; returns the
    /// adapter's description. Fails (and stays on the current backend) when there is none.
    pub async fn use_gpu(&mut self) -> Result<String> {
        let ctx = GpuContext::request().await?;
        let name = ctx.adapter_name().to_string();
        self.backend = Backend::Gpu(ctx);
        Ok(name)
    }

    /// Run on `backend` from now on (natively, tests hand in their own device).
    pub fn use_backend(&mut self, backend: Backend) {
        self.backend = backend;
    }

    /// What runs the next forward pass.
    pub fn backend(&self) -> BackendName {
        BackendName::of(&self.backend)
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
                ctx.device().destroy();
                true
            }
            Backend::Cpu => run,
        }
    }

    /// GPU-vs-CPU parity of the loaded model on this device (`backend::parity`);
    /// `corrupt` is for the test-only request only.
    pub async fn parity(&self, corrupt: Option<fn(&mut Trace)>) -> Result<Parity> {
        gpu_parity(self.model()?, &self.backend, corrupt).await
    }

    /// One forward pass with every trace the page draws.
    pub async fn forward(&mut self, req: &ForwardRequest) -> Result<ForwardResult> {
        if req.batch.is_empty() {
            return Err(Error::Input("forward request: the batch is empty".into()));
        }
        let m = self.model()?.clone();
        let m = &*m;
        limits::check_forward_request(
            &m.config,
            &req.batch,
            req.src.as_deref(),
            req.switches.ablate.len(),
        )?;
        // Train mode: the same weights, dropout p as asked, on the CPU (the GPU's train-mode
        // pass gives the same numbers, crate/tests/gpu_forward.rs, but is not used here).
        let (owned, opts) = variant(m, &req.switches, req.train.as_ref())?;
        let m = &*owned;
        let batch = batch_of(&req.batch, req.src.as_deref(), m)?;
        let qkv = req.qkv.unwrap_or(false);
        let train_note = req.train.as_ref().map(|t| train_note(m, t, &self.backend));
        let backend = if req.train.is_some() {
            Backend::Cpu
        } else {
            self.backend.clone()
        };
        let clock = Stopwatch::start(None);
        // On the CPU with the q·k inspector open, one recorded pass gives both the trace
        // and the q, k, v (`forward` is the same pass without the recording).
        if qkv && matches!(backend, Backend::Cpu) {
            let (trace, acts) = m.forward_recorded(&batch, &opts)?;
            let ms = clock.elapsed_ms();
            let mut r = forward_result(
                m,
                req,
                &batch,
                &trace,
                Some(&acts),
                ms,
                BackendName::Cpu,
                None,
            )?;
            r.train_note = train_note;
            return Ok(r);
        }
        let (trace, fallback) = match backend.forward(m, &batch, &opts).await {
            Ok(t) => (t, None),
            // A GPU failure (lost device, out of memory): the CPU takes over from here on.
            Err(Error::Gpu(why)) => (Backend::Cpu.forward(m, &batch, &opts).await?, Some(why)),
            Err(e) => return Err(e),
        };
        let ms = clock.elapsed_ms();
        let ran = if fallback.is_some() {
            self.backend = Backend::Cpu;
            BackendName::Cpu
        } else {
            BackendName::of(&backend)
        };
        // The q·k inspector reads q, k and v from the CPU reference's recorded pass (the
        // GPU keeps no per-head copies of them).
        let acts = if qkv {
            Some(m.forward_recorded(&batch, &opts)?.1)
        } else {
            None
        };
        let mut r = forward_result(m, req, &batch, &trace, acts.as_ref(), ms, ran, fallback)?;
        r.train_note = train_note;
        Ok(r)
    }

    /// Every block's live tensors for a batch (`explain::blocks::block_probe`), on the CPU.
    pub fn block_probe(&self, req: &BlockProbeRequest) -> Result<BlockProbe> {
        let m = self.model()?;
        limits::check_forward_request(
            &m.config,
            &req.batch,
            req.src.as_deref(),
            req.switches.ablate.len(),
        )?;
        let (owned, opts) = variant(m, &req.switches, req.train.as_ref())?;
        let m = &*owned;
        let batch = batch_of(&req.batch, req.src.as_deref(), m)?;
        block_probe(m, &batch, &opts)
    }

    /// Two inputs compared row by row, bit-exactly (`explain::blocks::block_diff`).
    pub fn block_diff(&self, req: &BlockDiffRequest) -> Result<BlockDiff> {
        let m = self.model()?;
        for s in [&req.before, &req.after] {
            check_one(m, &s.tokens, s.src.as_ref(), req.switches.ablate.len())?;
        }
        let (owned, opts) = variant(m, &req.switches, req.train.as_ref())?;
        let m = &*owned;
        block_diff(m, &req.before, &req.after, &opts)
    }

    /// LayerNorm vs BatchNorm on a batch (`explain::blocks::norm_coupling`): the loaded
    /// model beside the trained checkpoint in `sibling` (named `name`; it needs the other
    /// kind of norm), or beside an untrained model of the other kind when none is given.
    pub fn norm_coupling(
        &self,
        req: &CouplingRequest,
        sibling: Option<(&[u8], &str)>,
    ) -> Result<NormCoupling> {
        let m = self.model()?;
        match sibling {
            Some((bytes, name)) => {
                let sib = crate::checkpoint::load(bytes)?;
                norm_coupling(m, req, Some((&sib, name)))
            }
            None => norm_coupling(m, req, None),
        }
    }

    /// Dropout's masks in train mode and the identity in eval mode
    /// (`explain::blocks::dropout_demo`).
    pub fn dropout_demo(&self, req: &DropoutRequest) -> Result<DropoutDemo> {
        let m = self.model()?;
        check_one(m, &req.input.tokens, req.input.src.as_ref(), 0)?;
        dropout_demo(m, req)
    }

    /// Start generating after `prompt` (decoder ids, `<bos>` first) and, for an
    /// encoder-decoder model, from the source `src`. Steps come from `generate_step`.
    pub fn generate_start(&mut self, req: &GenerateStartRequest) -> Result<GenerateStarted> {
        limits::check_generate_request(
            req.prompt.len(),
            req.src.as_ref().map(Vec::len),
            req.max_new_tokens,
            (req.sampling.strategy == StrategyName::Beam).then_some(req.sampling.beam_width),
            req.switches.ablate.len(),
        )?;
        let m = self.model()?.clone();
        let mut forward = forward_options(&req.switches, &m)?;
        forward.trace_attention = false;
        forward.trace_hidden = false;
        let opts = GenerateOptions {
            strategy: req.sampling.strategy()?,
            seed: req.sampling.seed,
            max_new_tokens: req.max_new_tokens,
            use_cache: req.use_cache.unwrap_or(true),
            top_candidates: TOP_CANDIDATES,
            trace_attention: req.trace.unwrap_or(true),
            forward,
        };
        self.generation = None;
        let gen = Generator::new(
            m,
            self.backend.clone(),
            req.prompt.clone(),
            req.src.clone(),
            opts,
        )?;
        let recompute = gen.recompute_reason().map(str::to_string);
        self.generation = Some(Generation { gen });
        Ok(GenerateStarted {
            backend: self.backend(),
            fallback: None,
            recompute,
        })
    }

    /// One generation step. A GPU failure moves the generation to the CPU where it
    /// stands (`Generator::resume_on`: the same tokens, the same random stream) and
    /// the step runs there.
    pub async fn generate_step(&mut self) -> Result<GenerateStep> {
        let (step, fallback) = self.advance().await?;
        let g = self.running()?;
        Ok(GenerateStep {
            step,
            generated: g.tokens(),
            done: g.is_done(),
            backend: self.backend(),
            fallback,
        })
    }

    /// One generation step in the form the page receives it: the full record for a
    /// traced generation (the views draw its attention), the compact one
    /// ([`GenerateStepCompact`]: typed arrays, no object per number) for a generation
    /// started with `trace: false`. The same step as [`Engine::generate_step`].
    pub async fn generate_step_reply(&mut self) -> Result<StepReply> {
        let traced = self.running()?.options().trace_attention;
        let step = self.generate_step().await?;
        Ok(if traced {
            StepReply::Full(step)
        } else {
            StepReply::Compact(step.into())
        })
    }

    /// Up to `req.n` generation steps in one call (fewer when the generation stops):
    /// the same steps, tokens and random stream as `n` calls of `generate_step`, sent
    /// back as flat arrays with only the last step in full.
    pub async fn generate_steps(&mut self, req: &GenerateStepsRequest) -> Result<GenerateSteps> {
        if req.n == 0 || req.n > limits::MAX_NEW_TOKENS {
            return Err(Error::Input(format!(
                "generateSteps: n must be between 1 and {}, not {}",
                limits::MAX_NEW_TOKENS,
                req.n
            )));
        }
        let mut index = Vec::with_capacity(req.n);
        let mut tokens = Vec::with_capacity(req.n);
        let mut fed = Vec::with_capacity(req.n);
        let mut wall_ms = Vec::with_capacity(req.n);
        let mut multiply_adds = 0u64;
        let mut fallback = None;
        let mut last = None;
        let gpu_before = match &self.backend {
            Backend::Gpu(ctx) => Some((ctx.clone(), ctx.stats())),
            Backend::Cpu => None,
        };
        while index.len() < req.n {
            if !index.is_empty() && self.running()?.is_done() {
                break;
            }
            let (step, fell) = self.advance().await?;
            fallback = fallback.or(fell);
            index.push(step.index as u32);
            if let Some(t) = step.token {
                tokens.push(t);
            }
            fed.push(step.fed as u32);
            wall_ms.push(step.wall_ms);
            multiply_adds += step.multiply_adds;
            last = Some(step);
        }
        let gpu = match (&self.backend, gpu_before) {
            (Backend::Gpu(_), Some((ctx, before))) if fallback.is_none() => {
                let d = ctx.stats().since(&before);
                Some(GpuWork {
                    submissions: d.submissions,
                    readbacks: d.readbacks,
                    dispatches: d.dispatches,
                })
            }
            _ => None,
        };
        let g = self.running()?;
        Ok(GenerateSteps {
            steps: index.len(),
            index: U32Array(index),
            tokens: U32Array(tokens),
            fed: U32Array(fed),
            wall_ms: F64Array(wall_ms),
            multiply_adds,
            last: last.expect("the loop runs at least once"),
            generated: U32Array(g.tokens()),
            done: g.is_done(),
            backend: self.backend(),
            fallback,
            gpu,
        })
    }

    /// The running generation's generator.
    fn running(&self) -> Result<&Generator<Rc<Model>>> {
        self.generation.as_ref().map(|g| &g.gen).ok_or_else(|| {
            Error::Input("no generation is running: call generate_start() first".into())
        })
    }

    /// Run the next step of the generation (on the CPU from here on if the GPU fails),
    /// with the GPU's failure when there was one.
    async fn advance(&mut self) -> Result<(Step, Option<String>)> {
        let mut g = self.generation.take().ok_or_else(|| {
            Error::Input("no generation is running: call generate_start() first".into())
        })?;
        let mut fallback = None;
        let step = match g.gen.step().await {
            Ok(s) => s,
            Err(Error::Gpu(why)) => {
                self.backend = Backend::Cpu;
                fallback = Some(why);
                let resumed = g.gen.resume_on(Backend::Cpu).await;
                match resumed {
                    Ok(()) => g.gen.step().await,
                    Err(e) => Err(e),
                }
                .inspect_err(|_| self.generation = None)?
            }
            Err(e) => {
                self.generation = Some(g);
                return Err(e);
            }
        };
        self.generation = Some(g);
        let Some(step) = step else {
            return Err(Error::Input(
                "generation has already stopped: start it again".into(),
            ));
        };
        Ok((step, fallback))
    }
}

/// What `generateStep` answers: [`GenerateStep`] for a traced generation,
/// [`GenerateStepCompact`] for one started with `trace: false`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum StepReply {
    Full(GenerateStep),
    Compact(GenerateStepCompact),
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
    }
}

/// The page's switches as forward options, every ablated head checked against the model.
pub fn forward_options(sw: &Switches, m: &Model) -> Result<ForwardOptions> {
    let cfg = &m.config;
    for h in &sw.ablate {
        let layers = match h.site {
            AttnSite::EncoderSelf => cfg.encoder_layers(),
            AttnSite::DecoderSelf => cfg.decoder_layers(),
            AttnSite::Cross if cfg.arch == Arch::EncoderDecoder => cfg.decoder_layers(),
            AttnSite::Cross => 0,
        };
        if h.layer >= layers || h.head >= cfg.n_heads {
            return Err(Error::Input(format!(
                "ablation: this model has no {} layer {} head {}",
                h.site.name(),
                h.layer,
                h.head
            )));
        }
    }
    // The mask editor acts on the main stack's self-attention, as the causal switch does.
    let main = match cfg.arch {
        Arch::EncoderOnly => AttnSite::EncoderSelf,
        _ => AttnSite::DecoderSelf,
    };
    let masks = match &sw.mask {
        Some(edit) => vec![SiteMask {
            site: main,
            rule: edit.rule,
            cells: edit.cells.clone(),
        }],
        None => vec![],
    };
    check_masks(cfg, &masks)?;
    Ok(ForwardOptions {
        causal: Some(sw.causal),
        masks,
        padding_mask: sw.padding_mask,
        scale: sw.scale,
        ablate: sw.ablate.clone(),
        mode: Mode::Eval,
        trace_attention: true,
        trace_hidden: true,
    })
}

/// What a train-mode pass tells the page: p, and that it ran on the CPU.
fn train_note(m: &Model, t: &crate::explain::blocks::TrainMode, backend: &Backend) -> String {
    let p = m.config.dropout;
    let bn = m.config.norm == crate::config::Norm::BatchNorm;
    let what = match (p > 0.0, bn) {
        (true, true) => format!(
            "dropout p = {p} drawn from seed {}, BatchNorm with the batch's own statistics",
            t.seed
        ),
        (true, false) => format!("dropout p = {p} drawn from seed {}", t.seed),
        (false, true) => "BatchNorm with the batch's own statistics (dropout p = 0)".to_string(),
        (false, false) => {
            "dropout p = 0 and no BatchNorm: train mode computes exactly what eval mode does"
                .to_string()
        }
    };
    match backend {
        Backend::Gpu(_) => format!(
            "train mode ({what}) ran on the CPU: the page's train-mode passes use the CPU \
             reference, also when WebGPU is chosen"
        ),
        Backend::Cpu => format!("train mode: {what}"),
    }
}

/// The rows padded into one batch (with the source for an encoder-decoder).
/// The model a request runs (with its train-mode dropout p) and its forward options.
fn variant<'m>(
    m: &'m Model,
    sw: &Switches,
    train: Option<&TrainMode>,
) -> Result<(Cow<'m, Model>, ForwardOptions)> {
    let owned = with_dropout(m, train.and_then(|t| t.dropout))?;
    let mut opts = forward_options(sw, &owned)?;
    opts.mode = mode_of(train);
    Ok((owned, opts))
}

/// One sequence (and its source) within the size limits and the vocabulary.
fn check_one(m: &Model, tokens: &[u32], src: Option<&Vec<u32>>, ablate: usize) -> Result<()> {
    let tokens = [tokens.to_vec()];
    let src = src.map(|x| vec![x.clone()]);
    limits::check_forward_request(&m.config, &tokens, src.as_deref(), ablate)?;
    batch_of(&tokens, src.as_deref(), m).map(|_| ())
}

fn batch_of(rows: &[Vec<u32>], src: Option<&[Vec<u32>]>, m: &Model) -> Result<Batch> {
    let pad = m.tokenizer.spec.pad;
    let batch = Batch::padded(rows.to_vec(), pad)?;
    let batch = match (src, m.config.arch) {
        (Some(src), Arch::EncoderDecoder) => batch.with_padded_source(src.to_vec(), pad)?,
        (None, Arch::EncoderDecoder) => {
            return Err(Error::Input(
                "an encoder-decoder model needs source sequences".into(),
            ))
        }
        (Some(_), _) => {
            return Err(Error::Input(
                "only an encoder-decoder model takes source sequences".into(),
            ))
        }
        (None, _) => batch,
    };
    m.check_batch(&batch)?;
    Ok(batch)
}

/// Multiply-adds of one forward pass over the whole batch (`generate::flops`).
pub fn forward_macs(m: &Model, batch: &Batch) -> u64 {
    let cfg = &m.config;
    let (t, src) = (batch.len, batch.src_len);
    let per_sequence = match cfg.arch {
        Arch::EncoderOnly => encoder_macs(cfg, t),
        Arch::DecoderOnly => decoder_macs(cfg, 0, t, 0, false, t),
        Arch::EncoderDecoder => encoder_macs(cfg, src) + decoder_macs(cfg, 0, t, src, true, t),
    };
    batch.batch as u64 * per_sequence
}

/// The mask of every attention site of `m` in a pass over `batch` with `opts`, and why
/// each cell is hidden (`MaskSpec::reasons`), as the masks view draws them.
pub fn mask_views(m: &Model, opts: &ForwardOptions, batch: &Batch) -> Vec<MaskView> {
    let pad = m.tokenizer.spec.pad;
    let mut views = vec![];
    for sp in &layer_plan(&m.config).stacks {
        let (keys, t) = match sp.input {
            StackInput::Source => match &batch.src_tokens {
                Some(src) => (src.as_slice(), batch.src_len),
                None => continue,
            },
            StackInput::Tokens => (batch.tokens.as_slice(), batch.len),
        };
        let mut sites = vec![(sp.site, keys, t)];
        if sp.reads_memory {
            if let Some(src) = &batch.src_tokens {
                sites.push((AttnSite::Cross, src.as_slice(), batch.src_len));
            }
        }
        for (site, keys, s) in sites {
            let mask = attention_mask(&m.config, site, opts);
            let mut reasons = Vec::with_capacity(batch.batch * t * s); // (B, T, S)
            for row in keys.chunks(s) {
                reasons.extend(mask.reasons(row, pad, 0, t).into_iter().map(f32::from));
            }
            views.push(MaskView {
                site,
                rule: mask.rule,
                cells: mask.cells.clone(),
                padding: mask.padding,
                reasons: Dense::new(&[batch.batch, t, s], &reasons),
            });
        }
    }
    views
}

/// The trace as the page's `ForwardResult`: every derived number (saturation, q·k
/// gap, norms, the next-token distributions, FLOPs) computed here.
#[allow(clippy::too_many_arguments)]
pub fn forward_result(
    m: &Model,
    req: &ForwardRequest,
    batch: &Batch,
    trace: &Trace,
    acts: Option<&Activations>,
    ms: f64,
    backend: BackendName,
    fallback: Option<String>,
) -> Result<ForwardResult> {
    let cfg = &m.config;
    let tokens = (0..batch.batch).map(|i| batch.row(i).to_vec()).collect();
    let src_tokens = match &batch.src_tokens {
        Some(s) => s.chunks(batch.src_len).map(<[u32]>::to_vec).collect(),
        None => vec![],
    };
    let mut attention = vec![];
    for a in &trace.attention {
        // Queries are target rows, except in an encoder-decoder's encoder.
        let real: Vec<usize> = match (a.site, &req.src) {
            (AttnSite::EncoderSelf, Some(src)) => src.iter().map(Vec::len).collect(),
            _ => req.batch.iter().map(Vec::len).collect(),
        };
        let (entropy, max_prob) = saturation(&a.probs, &real); // (B, H), (B, H)
        let (b, h, t, s) = (
            a.probs.shape[0],
            a.probs.shape[1],
            a.probs.shape[2],
            a.probs.shape[3],
        );
        let bh = [b, h];
        let mut view = AttnView {
            site: a.site,
            layer: a.layer,
            scores: Dense::new(&a.scores.shape, &a.scores.data), // (B, H, T, S)
            probs: Dense::new(&a.probs.shape, &a.probs.data),    // (B, H, T, S)
            entropy: Dense::new(&bh, &entropy),                  // (B, H)
            max_prob: Dense::new(&bh, &max_prob),                // (B, H)
            q: None,
            k: None,
            v: None,
            qk_gap: None,
        };
        if let Some(c) = acts.and_then(|acts| recorded_qkv(acts, a.site, a.layer)) {
            let d = cfg.d_head();
            let q = by_head(&c.q, b, t, h, d); // (B, H, T, D)
            let k = by_head(&c.k, b, s, h, d); // (B, H, S, D)
            let v = by_head(&c.v, b, s, h, d); // (B, H, S, D)
            if a.site != AttnSite::Cross {
                view.qk_gap = Some(Dense::new(&bh, &qk_gap(&q, &k, b, h, t, d)));
                // (B, H)
            }
            view.q = Some(Dense::new(&[b, h, t, d], &q));
            view.k = Some(Dense::new(&[b, h, s, d], &k));
            view.v = Some(Dense::new(&[b, h, s, d], &v));
        }
        attention.push(view);
    }
    let masks = mask_views(m, &forward_options(&req.switches, m)?, batch);
    let hidden = trace
        .hidden
        .iter()
        .map(|h| {
            let (shape, norms) = state_norms(&h.states); // (L+1, B, T)
            HiddenView {
                stack: h.stack,
                norms: Dense::new(&shape, &norms),
            }
        })
        .collect();

    let v = cfg.vocab_size;
    let last = req.batch[0].len().saturating_sub(1);
    let (logits, model_probs, next_probs, predicted, class_probs) = match &trace.class_logits {
        Some(cl) => {
            let nc = cl.shape[1];
            (
                Dense::new(&cl.shape, &cl.data), // (B, num_classes)
                F32Array::default(),
                F32Array::default(),
                vec![],
                Some(F32Array(softmax(&cl.data[..nc]))),
            )
        }
        None => {
            let t = batch.len;
            let row0 = &trace.logits.data[..t * v]; // (T, V)
            let at_last = &row0[last * v..(last + 1) * v]; // (V)
                                                           // (V): what sampling draws from, after temperature, top-k and top-p
            let drawn = sampling_distribution(at_last, &req.sampling.sampling())?;
            let predicted = row0 // (T)
                .chunks(v)
                .map(argmax)
                .collect::<Result<Vec<u32>>>()?;
            (
                Dense::new(&trace.logits.shape, &trace.logits.data), // (B, T, V)
                F32Array(softmax(at_last)),
                F32Array(drawn.into_iter().map(|p| p as f32).collect()),
                predicted,
                None,
            )
        }
    };
    Ok(ForwardResult {
        backend,
        ms,
        tokens,
        src_tokens,
        logits,
        attention,
        masks,
        hidden,
        model_probs,
        next_probs,
        predicted,
        class_probs,
        flops: 2.0 * forward_macs(m, batch) as f64,
        fallback,
        train_note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::explain::blocks::{SequenceInput, TrainMode};
    use crate::model::HeadParams;
    use crate::protocol::{NoamRequest, SamplingRequest};
    use crate::Tokenizer;
    use pollster::block_on;

    fn engine(arch: Arch) -> Engine {
        let tok = Tokenizer::char_level("abcdefgh");
        let preset = if arch == Arch::DecoderOnly {
            "gpt-pico"
        } else {
            "seq2seq-nano"
        };
        let cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
        let mut m = Model::init(cfg, tok, 5);
        let eos = m.tokenizer.spec.eos as usize;
        if let HeadParams::Lm {
            bias: Some(bias), ..
        } = &mut m.head
        {
            bias.data[eos] = -30.0; // runs use their whole budget
        }
        let mut e = Engine::new();
        let info = e.load(&crate::checkpoint::save(&m).unwrap()).unwrap();
        assert_eq!(info.arch, arch);
        e
    }

    fn sampling(strategy: StrategyName) -> SamplingRequest {
        SamplingRequest {
            strategy,
            temperature: 0.8,
            top_k: 0,
            top_p: 0.9,
            beam_width: 3,
            seed: 12,
        }
    }

    fn switches() -> Switches {
        Switches {
            causal: true,
            padding_mask: true,
            scale: true,
            ablate: vec![],
            mask: None,
        }
    }

    #[test]
    fn forward_results_carry_the_cores_numbers() {
        let mut e = engine(Arch::DecoderOnly);
        let req = ForwardRequest {
            batch: vec![vec![1, 4, 5, 6], vec![1, 7]],
            src: None,
            switches: switches(),
            sampling: sampling(StrategyName::Sample),
            qkv: Some(true),
            train: None,
        };
        let r = block_on(e.forward(&req)).unwrap();
        let m = e.model().unwrap().clone();
        let batch = Batch::padded(req.batch.clone(), m.tokenizer.spec.pad).unwrap();
        let trace = block_on(Backend::Cpu.forward(
            &m,
            &batch,
            &forward_options(&req.switches, &m).unwrap(),
        ))
        .unwrap();
        let v = m.config.vocab_size;
        // The model's distribution after the last real token of row 0, over the whole vocabulary.
        assert_eq!(r.model_probs.0, softmax(&trace.logits.data[3 * v..4 * v]));
        let total: f32 = r.next_probs.0.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "{total}");
        assert_eq!(r.flops, 2.0 * forward_macs(&m, &batch) as f64);
        assert_eq!(r.tokens, vec![vec![1, 4, 5, 6], vec![1, 7, 0, 0]]);
        let a = &r.attention[0];
        assert_eq!(a.probs.shape, vec![2, m.config.n_heads, 4, 4]); // (B, H, T, S)
        assert!(a.q.is_some() && a.qk_gap.is_some(), "q, k, v asked for");
        assert_eq!(r.backend, BackendName::Cpu);
        assert!(r.fallback.is_none());
    }

    #[test]
    fn train_mode_forward_runs_on_the_cpu_and_repeats_differ_only_with_a_new_seed() {
        let mut e = engine(Arch::DecoderOnly);
        let req = |train: Option<TrainMode>| ForwardRequest {
            batch: vec![vec![1, 4, 5, 6, 7]],
            src: None,
            switches: switches(),
            sampling: sampling(StrategyName::Greedy),
            qkv: None,
            train,
        };
        let t = |seed| {
            Some(TrainMode {
                seed,
                dropout: Some(0.3),
            })
        };
        let a = block_on(e.forward(&req(t(1)))).unwrap();
        let a2 = block_on(e.forward(&req(t(1)))).unwrap();
        let b = block_on(e.forward(&req(t(2)))).unwrap();
        let ev = block_on(e.forward(&req(None))).unwrap();
        let ev2 = block_on(e.forward(&req(None))).unwrap();
        assert_eq!(a.logits, a2.logits, "one seed, one set of masks");
        assert_ne!(a.logits, b.logits);
        assert_ne!(a.logits, ev.logits);
        assert_eq!(ev.logits, ev2.logits);
        assert!(a.train_note.as_deref().unwrap().contains("p = 0.3"));
        assert!(ev.train_note.is_none());
        let bad = req(Some(TrainMode {
            seed: 1,
            dropout: Some(1.5),
        }));
        assert!(matches!(block_on(e.forward(&bad)), Err(Error::Input(_))));
    }

    #[test]
    fn block_requests_check_their_input_and_answer_from_the_core() {
        let e = engine(Arch::DecoderOnly);
        let p = e
            .block_probe(&BlockProbeRequest {
                batch: vec![vec![1, 4, 5], vec![1, 6]],
                src: None,
                switches: switches(),
                train: None,
            })
            .unwrap();
        let c = e.model().unwrap().config.d_model;
        assert_eq!(p.stacks[0].ffn[0].input.shape, vec![2, 3, c]);
        let seq = |tokens: Vec<u32>| SequenceInput { tokens, src: None };
        let d = e
            .block_diff(&BlockDiffRequest {
                before: seq(vec![1, 4, 5, 6]),
                after: seq(vec![1, 4, 5, 7]),
                switches: switches(),
                train: None,
            })
            .unwrap();
        assert_eq!(d.edited, vec![3]);
        let bad = e.block_diff(&BlockDiffRequest {
            before: seq(vec![1, 4, 500]),
            after: seq(vec![1]),
            switches: switches(),
            train: None,
        });
        assert!(matches!(bad, Err(Error::Input(_))), "{bad:?}");
    }

    #[test]
    fn the_schedule_peaks_where_the_closed_form_says() {
        let e = engine(Arch::DecoderOnly);
        let s = e
            .noam(&NoamRequest {
                warmup: 300,
                last_step: 2000,
                points: 50,
            })
            .unwrap();
        assert_eq!((s.peak_step, s.steps.len()), (300, 50));
        let bad = NoamRequest {
            warmup: 0,
            last_step: 2000,
            points: 50,
        };
        assert!(matches!(e.noam(&bad), Err(Error::Input(_))));
    }

    #[test]
    fn generation_steps_through_the_engine_like_the_generator() {
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            let mut e = engine(arch);
            let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
            let req = GenerateStartRequest {
                prompt: vec![1],
                src: src.clone(),
                switches: switches(),
                sampling: sampling(StrategyName::Sample),
                max_new_tokens: 5,
                trace: Some(false),
                use_cache: None,
            };
            e.generate_start(&req).unwrap();
            let mut last = None;
            for _ in 0..5 {
                last = Some(block_on(e.generate_step()).unwrap());
            }
            let last = last.unwrap();
            assert!(last.done);
            let m = e.model().unwrap().clone();
            let opts = GenerateOptions {
                strategy: req.sampling.strategy().unwrap(),
                seed: 12,
                max_new_tokens: 5,
                top_candidates: TOP_CANDIDATES,
                trace_attention: false,
                forward: ForwardOptions {
                    trace_attention: false,
                    trace_hidden: false,
                    ..forward_options(&req.switches, &m).unwrap()
                },
                ..GenerateOptions::default()
            };
            let mut g = Generator::new(m, Backend::Cpu, vec![1], src, opts).unwrap();
            assert_eq!(last.generated, block_on(g.run_to_end()).unwrap().tokens);
            assert!(matches!(block_on(e.generate_step()), Err(Error::Input(_))));
        }
    }

    #[test]
    fn an_untraced_step_answers_compactly_with_the_full_steps_numbers() {
        for (arch, strategy) in [
            (Arch::DecoderOnly, StrategyName::Sample),
            (Arch::DecoderOnly, StrategyName::Beam),
            (Arch::EncoderDecoder, StrategyName::Greedy),
        ] {
            let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
            let req = |trace| GenerateStartRequest {
                prompt: vec![1, 4],
                src: src.clone(),
                switches: switches(),
                sampling: sampling(strategy),
                max_new_tokens: 4,
                trace: Some(trace),
                use_cache: None,
            };
            let what = format!("{arch:?} {strategy:?}");
            // The full record of an untraced generation, step by step, beside the reply.
            let (mut full, mut reply) = (engine(arch), engine(arch));
            full.generate_start(&req(false)).unwrap();
            reply.generate_start(&req(false)).unwrap();
            for _ in 0..4 {
                let want = block_on(full.generate_step()).unwrap();
                let StepReply::Compact(got) = block_on(reply.generate_step_reply()).unwrap() else {
                    panic!("{what}: an untraced generation answers compactly");
                };
                let (s, w) = (&got.step, &want.step);
                assert_eq!(
                    (s.index, s.fed, s.token),
                    (w.index, w.fed, w.token),
                    "{what}"
                );
                assert_eq!(s.text, w.text, "{what}");
                assert_eq!(s.logits.0, w.logits, "{what}");
                let ids: Vec<u32> = w.candidates.iter().map(|c| c.id).collect();
                let probs: Vec<f32> = w.candidates.iter().map(|c| c.prob).collect();
                let drawn: Vec<f32> = w.candidates.iter().map(|c| c.sample_prob).collect();
                assert_eq!(s.candidate_ids.0, ids, "{what}");
                assert_eq!(s.candidate_probs.0, probs, "{what}");
                assert_eq!(s.candidate_sample_probs.0, drawn, "{what}");
                assert!(!ids.is_empty(), "{what}");
                assert_eq!(
                    (s.cache_len, s.multiply_adds, s.flops),
                    (w.cache_len, w.multiply_adds, w.flops),
                    "{what}"
                );
                assert_eq!((s.stop, &s.beam), (w.stop, &w.beam), "{what}");
                assert_eq!(got.generated.0, want.generated, "{what}");
                assert_eq!((got.done, got.backend), (want.done, want.backend), "{what}");
            }
            // A traced generation keeps the full record, attention included.
            let mut traced = engine(arch);
            traced.generate_start(&req(true)).unwrap();
            match block_on(traced.generate_step_reply()).unwrap() {
                StepReply::Full(s) => assert!(!s.step.attention.is_empty(), "{what}"),
                StepReply::Compact(_) => panic!("{what}: a traced generation answers in full"),
            }
        }
        let mut idle = engine(Arch::DecoderOnly);
        assert!(matches!(
            block_on(idle.generate_step_reply()),
            Err(Error::Input(_))
        ));
    }

    #[test]
    fn several_steps_per_call_give_the_same_steps_as_one_step_per_call() {
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for strategy in [
                StrategyName::Greedy,
                StrategyName::Sample,
                StrategyName::Beam,
            ] {
                for use_cache in [true, false] {
                    let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
                    let req = GenerateStartRequest {
                        prompt: vec![1, 4],
                        src,
                        switches: switches(),
                        sampling: sampling(strategy),
                        max_new_tokens: 7,
                        trace: Some(false),
                        use_cache: Some(use_cache),
                    };
                    let mut one = engine(arch);
                    one.generate_start(&req).unwrap();
                    let mut singles = vec![];
                    loop {
                        let s = block_on(one.generate_step()).unwrap();
                        let done = s.done;
                        singles.push(s);
                        if done {
                            break;
                        }
                    }
                    let mut many = engine(arch);
                    many.generate_start(&req).unwrap();
                    // Batches of 3 that do not divide the 7 steps: the last batch stops at the end.
                    let mut batches = vec![];
                    loop {
                        let b =
                            block_on(many.generate_steps(&GenerateStepsRequest { n: 3 })).unwrap();
                        let done = b.done;
                        batches.push(b);
                        if done {
                            break;
                        }
                    }
                    let what = format!("{arch:?} {strategy:?} cache {use_cache}");
                    assert_eq!(
                        batches.iter().map(|b| b.steps).collect::<Vec<_>>(),
                        [3, 3, 1],
                        "{what}"
                    );
                    let index: Vec<u32> = batches.iter().flat_map(|b| b.index.0.clone()).collect();
                    let want: Vec<u32> = singles.iter().map(|s| s.step.index as u32).collect();
                    assert_eq!(index, want, "{what}");
                    let tokens: Vec<u32> =
                        batches.iter().flat_map(|b| b.tokens.0.clone()).collect();
                    let want: Vec<u32> = singles.iter().filter_map(|s| s.step.token).collect();
                    assert_eq!(tokens, want, "{what}");
                    let fed: Vec<u32> = batches.iter().flat_map(|b| b.fed.0.clone()).collect();
                    let want: Vec<u32> = singles.iter().map(|s| s.step.fed as u32).collect();
                    assert_eq!(fed, want, "{what}");
                    assert!(batches.iter().all(|b| b.gpu.is_none()), "{what}");
                    let last = batches.last().unwrap();
                    let single = singles.last().unwrap();
                    assert_eq!(last.generated.0, single.generated, "{what}");
                    assert_eq!(last.last.logits, single.step.logits, "{what}");
                    assert_eq!(last.last.candidates, single.step.candidates, "{what}");
                    assert_eq!(last.last.stop, single.step.stop, "{what}");
                    let macs: u64 = singles.iter().map(|s| s.step.multiply_adds).sum();
                    assert_eq!(
                        batches.iter().map(|b| b.multiply_adds).sum::<u64>(),
                        macs,
                        "{what}"
                    );
                    // Past the end, and a bad count: clear refusals, nothing lost.
                    let past = block_on(many.generate_steps(&GenerateStepsRequest { n: 2 }));
                    assert!(matches!(past, Err(Error::Input(_))), "{what}");
                    let zero = block_on(many.generate_steps(&GenerateStepsRequest { n: 0 }));
                    assert!(matches!(zero, Err(Error::Input(_))), "{what}");
                }
            }
        }
        let mut idle = engine(Arch::DecoderOnly);
        let none = block_on(idle.generate_steps(&GenerateStepsRequest { n: 4 }));
        assert!(matches!(none, Err(Error::Input(_))));
    }
}

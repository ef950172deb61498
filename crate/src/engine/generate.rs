//! Generation through the engine: one generator at a time, stepped one or several
//! steps per call, carried on on the CPU when the GPU fails.

use std::rc::Rc;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::generate::sampling::Sampling;
use crate::generate::{GenerateOptions, Generator, LengthPenalty, Step, Strategy};
use crate::limits::{self, MAX_BEAM_WIDTH};
use crate::model::Model;
use crate::protocol::{
    F64Array, FailedPass, GenerateStartRequest, GenerateStarted, GenerateStep, GenerateStepCompact,
    GenerateSteps, GenerateStepsRequest, GpuWork, SamplingRequest, StrategyName, U32Array,
};

use super::forward::forward_options;
use super::{Engine, Generation};

/// Candidates reported with each generation step.
pub(super) const TOP_CANDIDATES: usize = 8;

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

impl Engine {
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
        // The generation runs on the engine's resident copy of the model; a GPU that
        // cannot take it fails the first step, which carries on on the CPU.
        let gen = match self.placed() {
            Ok(placed) => Generator::on(m, placed, req.prompt.clone(), req.src.clone(), opts)?,
            Err(Error::Gpu(_)) => Generator::new(
                m,
                self.backend.clone(),
                req.prompt.clone(),
                req.src.clone(),
                opts,
            )?,
            Err(e) => return Err(e),
        };
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
                self.fell_back(FailedPass::Generate, &why);
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

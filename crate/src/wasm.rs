//! The thin wasm-bindgen boundary (compiled on wasm32 only): one stateful [`Engine`]
//! that the page's Web Worker drives. Plain arrays, numbers and strings come in; typed
//! arrays and serde values go out; failures are `JsError`s with the core's message.
//! No model logic lives here: every number comes from the Rust core.

use std::rc::Rc;

use js_sys::{Array, Float32Array, Object, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::backend::parity::{gpu_parity, nan_logits};
use crate::backend::{Backend, GpuContext};
use crate::config::Arch;
use crate::error::{Error, Result};
use crate::explain::extrapolation::{extrapolation, SEED as EXTRAPOLATION_SEED};
use crate::explain::order::permutation;
use crate::explain::positions::{
    additive_table, alibi_matrices, embedding_map, embedding_scale_of, relative_tables,
    rope_demo_of_model, similarity,
};
use crate::explain::sqrt_dk::{score_scaling, WIDTHS as SQRT_DK_WIDTHS};
use crate::generate::clock::Stopwatch;
use crate::generate::flops::{decoder_macs, encoder_macs};
use crate::generate::sampling::{argmax, sampling_distribution, softmax, Sampling};
use crate::generate::{GenerateOptions, Generator, LengthPenalty, Strategy};
use crate::limits::{self, MAX_BEAM_WIDTH};
use crate::model::cost::cost_report;
use crate::model::forward::{Activations, AttnSite, Batch, HeadRef};
use crate::model::inspect::{by_head, qk_gap, recorded_qkv, saturation, state_norms};
use crate::model::{ForwardOptions, Mode, Model, Trace};
use crate::train::schedule::noam_lr;

/// Candidates reported with each generation step.
const TOP_CANDIDATES: usize = 8;

fn js_err(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn input(msg: impl Into<String>) -> JsError {
    js_err(Error::Input(msg.into()))
}

/// Run-time switches as the page sends them.
#[derive(Deserialize)]
struct Switches {
    causal: bool,
    padding_mask: bool,
    scale: bool,
    ablate: Vec<HeadRef>,
}

/// The page's sampling controls.
#[derive(Deserialize)]
struct SamplingReq {
    strategy: String,
    temperature: f32,
    top_k: usize,
    top_p: f32,
    beam_width: usize,
    seed: u64,
}

impl SamplingReq {
    /// The distribution the forward view shows as "drawn from": greedy is one-hot,
    /// beam search ranks by the model's own probabilities.
    fn sampling(&self) -> Sampling {
        match self.strategy.as_str() {
            "sample" => Sampling {
                temperature: self.temperature,
                top_k: (self.top_k > 0).then_some(self.top_k),
                top_p: (self.top_p < 1.0).then_some(self.top_p),
            },
            "greedy" => Sampling {
                temperature: 0.0,
                top_k: None,
                top_p: None,
            },
            _ => Sampling::default(),
        }
    }

    /// The generator's strategy. Beam search compares hypotheses with the GNMT length
    /// penalty (α = 0.6), so short endings are not favoured just for being short.
    fn strategy(&self) -> Result<Strategy> {
        match self.strategy.as_str() {
            "greedy" => Ok(Strategy::Greedy),
            "sample" => Ok(Strategy::Sample(self.sampling())),
            "beam" => {
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
            other => Err(Error::Input(format!(
                "unknown strategy '{other}' (known: greedy, sample, beam)"
            ))),
        }
    }
}

#[derive(Deserialize)]
struct GenerateReq {
    prompt: Vec<u32>,
    #[serde(default)]
    src: Option<Vec<u32>>,
    switches: Switches,
    sampling: SamplingReq,
    max_new_tokens: usize,
    /// Report each step's attention over the cache (the page draws it); off for speed.
    #[serde(default)]
    trace: Option<bool>,
}

#[derive(Deserialize)]
struct ForwardReq {
    batch: Vec<Vec<u32>>,
    #[serde(default)]
    src: Option<Vec<Vec<u32>>>,
    switches: Switches,
    sampling: SamplingReq,
    /// Also report every attention sublayer's q, k and v per head (the q·k inspector).
    #[serde(default)]
    qkv: bool,
}

/// What the page is told about a loaded checkpoint.
#[derive(Serialize)]
struct ModelInfo<'a> {
    arch: Arch,
    pos_encoding: crate::config::PosEncoding,
    norm: crate::config::Norm,
    score: crate::config::Score,
    activation: crate::config::Activation,
    d_model: usize,
    n_heads: usize,
    d_head: usize,
    d_ff: usize,
    max_len: usize,
    encoder_layers: usize,
    decoder_layers: usize,
    vocab: &'a [String],
    tokenizer_kind: crate::tokenizer::TokenizerKind,
    pad: u32,
    bos: u32,
    eos: u32,
    unk: u32,
    num_classes: usize,
    params: usize,
    /// K of Shaw's relative positions: offsets j − i are clipped to ±K.
    relative_max_distance: usize,
}

#[derive(Serialize)]
struct Tokenized {
    ids: Vec<u32>,
    tokens: Vec<String>,
    unknown: Vec<(usize, String)>,
}

/// Set `obj[key] = value`; a failure here means a frozen object, which ours never are.
fn set(obj: &Object, key: &str, value: &JsValue) -> std::result::Result<(), JsError> {
    Reflect::set(obj, &JsValue::from_str(key), value)
        .map(|_| ())
        .map_err(|_| JsError::new(&format!("cannot set `{key}` on a result object")))
}

fn to_js<T: Serialize + ?Sized>(v: &T) -> std::result::Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot convert a result for the page: {e}")))
}

/// `{shape, data: Float32Array}`: a tensor for the page, copied once.
fn dense(shape: &[usize], data: &[f32]) -> std::result::Result<JsValue, JsError> {
    let obj = Object::new();
    set(&obj, "shape", &to_js(shape)?)?;
    set(&obj, "data", &Float32Array::from(data).into())?;
    Ok(obj.into())
}

fn f32s(xs: impl IntoIterator<Item = f64>) -> Vec<f32> {
    xs.into_iter().map(|x| x as f32).collect()
}

/// The page's name for a backend.
fn backend_name(b: &Backend) -> &'static str {
    match b {
        Backend::Cpu => "cpu",
        Backend::Gpu(_) => "webgpu",
    }
}

/// The stateful engine behind the page's worker: one model, one backend.
#[wasm_bindgen]
pub struct Engine {
    model: Option<Rc<Model>>,
    backend: Backend,
    generation: Option<Generation>,
}

/// A generation in progress, and what is needed to carry it on elsewhere.
struct Generation {
    gen: Generator<Rc<Model>>,
    /// The request that started it (a GPU failure restarts it on the CPU).
    prompt: Vec<u32>,
    src: Option<Vec<u32>>,
    opts: GenerateOptions,
    /// Tokens generated before a fallback restarted the generator after them.
    before: Vec<u32>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    fn model(&self) -> std::result::Result<&Rc<Model>, JsError> {
        self.model
            .as_ref()
            .ok_or_else(|| input("no model is loaded: call load() first"))
    }

    /// A generator on `backend` (both backends keep a KV cache).
    fn generator(
        m: &Rc<Model>,
        backend: &Backend,
        prompt: Vec<u32>,
        src: Option<Vec<u32>>,
        opts: &GenerateOptions,
    ) -> Result<Generator<Rc<Model>>> {
        Generator::new(m.clone(), backend.clone(), prompt, src, opts.clone())
    }

    fn options(&self, sw: &Switches, m: &Model) -> Result<ForwardOptions> {
        let cfg = &m.config;
        for h in &sw.ablate {
            let layers = match h.site {
                AttnSite::EncoderSelf => cfg.encoder_layers(),
                AttnSite::DecoderSelf => cfg.decoder_layers(),
                AttnSite::Cross => {
                    if cfg.arch == Arch::EncoderDecoder {
                        cfg.decoder_layers()
                    } else {
                        0
                    }
                }
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
        Ok(ForwardOptions {
            causal: Some(sw.causal),
            padding_mask: sw.padding_mask,
            scale: sw.scale,
            ablate: sw.ablate.clone(),
            mode: Mode::Eval,
            trace_attention: true,
            trace_hidden: true,
        })
    }

    fn batch(&self, req: &ForwardReq, m: &Model) -> Result<Batch> {
        let pad = m.tokenizer.spec.pad;
        let batch = Batch::padded(req.batch.clone(), pad)?;
        let batch = match (&req.src, m.config.arch) {
            (Some(src), Arch::EncoderDecoder) => batch.with_padded_source(src.clone(), pad)?,
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

    /// The trace as the page's `ForwardResult`.
    #[allow(clippy::too_many_arguments)]
    fn forward_result(
        &self,
        m: &Model,
        req: &ForwardReq,
        batch: &Batch,
        trace: &Trace,
        acts: Option<&Activations>,
        ms: f64,
        backend: &str,
    ) -> std::result::Result<Object, JsError> {
        let out = Object::new();
        let cfg = &m.config;
        set(&out, "backend", &JsValue::from_str(backend))?;
        set(&out, "ms", &JsValue::from_f64(ms))?;
        let rows: Vec<&[u32]> = (0..batch.batch).map(|i| batch.row(i)).collect();
        set(&out, "tokens", &to_js(&rows)?)?;
        let src_rows: Vec<&[u32]> = match &batch.src_tokens {
            Some(s) => s.chunks(batch.src_len).collect(),
            None => vec![],
        };
        set(&out, "src_tokens", &to_js(&src_rows)?)?;
        let attention = Array::new();
        for a in &trace.attention {
            let o = Object::new();
            set(&o, "site", &JsValue::from_str(a.site.name()))?;
            set(&o, "layer", &JsValue::from_f64(a.layer as f64))?;
            set(&o, "scores", &dense(&a.scores.shape, &a.scores.data)?)?; // (B, H, T, S)
            set(&o, "probs", &dense(&a.probs.shape, &a.probs.data)?)?; // (B, H, T, S)
                                                                       // Queries are target rows, except in an encoder-decoder's encoder.
            let real: Vec<usize> = match (a.site, &req.src) {
                (AttnSite::EncoderSelf, Some(src)) => src.iter().map(Vec::len).collect(),
                _ => req.batch.iter().map(Vec::len).collect(),
            };
            let (entropy, max_prob) = saturation(&a.probs, &real); // (B, H), (B, H)
            let bh = [a.probs.shape[0], a.probs.shape[1]];
            set(&o, "entropy", &dense(&bh, &entropy)?)?; // (B, H)
            set(&o, "max_prob", &dense(&bh, &max_prob)?)?; // (B, H)
            if let Some(c) = acts.and_then(|acts| recorded_qkv(acts, a.site, a.layer)) {
                let (b, h, t, s) = (
                    a.probs.shape[0],
                    a.probs.shape[1],
                    a.probs.shape[2],
                    a.probs.shape[3],
                );
                let d = cfg.d_head();
                let q = by_head(&c.q, b, t, h, d); // (B, H, T, D)
                let k = by_head(&c.k, b, s, h, d); // (B, H, S, D)
                let v = by_head(&c.v, b, s, h, d); // (B, H, S, D)
                set(&o, "q", &dense(&[b, h, t, d], &q)?)?;
                set(&o, "k", &dense(&[b, h, s, d], &k)?)?;
                set(&o, "v", &dense(&[b, h, s, d], &v)?)?;
                let gap = if a.site == AttnSite::Cross {
                    JsValue::NULL
                } else {
                    dense(&bh, &qk_gap(&q, &k, b, h, t, d))? // (B, H)
                };
                set(&o, "qk_gap", &gap)?;
            }
            attention.push(&o);
        }
        set(&out, "attention", &attention)?;
        let hidden = Array::new();
        for h in &trace.hidden {
            let (shape, norms) = state_norms(&h.states); // (L+1, B, T)
            let o = Object::new();
            set(&o, "stack", &JsValue::from_str(h.stack.name()))?;
            set(&o, "norms", &dense(&shape, &norms)?)?;
            hidden.push(&o);
        }
        set(&out, "hidden", &hidden)?;

        let v = cfg.vocab_size;
        let last = req.batch[0].len().saturating_sub(1);
        if let Some(cl) = &trace.class_logits {
            let nc = cl.shape[1];
            set(&out, "logits", &dense(&cl.shape, &cl.data)?)?; // (B, num_classes)
            set(
                &out,
                "class_probs",
                &Float32Array::from(softmax(&cl.data[..nc]).as_slice()).into(),
            )?;
            set(
                &out,
                "model_probs",
                &Float32Array::new_with_length(0).into(),
            )?;
            set(&out, "next_probs", &Float32Array::new_with_length(0).into())?;
            set(&out, "predicted", &to_js::<[u32]>(&[])?)?;
        } else {
            // (B, T, V)
            set(
                &out,
                "logits",
                &dense(&trace.logits.shape, &trace.logits.data)?,
            )?;
            let t = batch.len;
            let row0 = &trace.logits.data[..t * v]; // (T, V)
            let at_last = &row0[last * v..(last + 1) * v]; // (V)
            set(
                &out,
                "model_probs",
                &Float32Array::from(softmax(at_last).as_slice()).into(),
            )?;
            // (V): what sampling draws from, after temperature, top-k and top-p
            let drawn = sampling_distribution(at_last, &req.sampling.sampling()).map_err(js_err)?;
            set(
                &out,
                "next_probs",
                &Float32Array::from(f32s(drawn).as_slice()).into(),
            )?;
            let predicted = row0 // (T)
                .chunks(v)
                .map(argmax)
                .collect::<Result<Vec<u32>>>()
                .map_err(js_err)?;
            set(&out, "predicted", &to_js(&predicted)?)?;
            set(&out, "class_probs", &JsValue::NULL)?;
        }
        // Multiply-adds of the whole pass, per sequence, then for the batch.
        let (t, src) = (batch.len, batch.src_len);
        let per_sequence = match cfg.arch {
            Arch::EncoderOnly => encoder_macs(cfg, t),
            Arch::DecoderOnly => decoder_macs(cfg, 0, t, 0, false, t),
            Arch::EncoderDecoder => encoder_macs(cfg, src) + decoder_macs(cfg, 0, t, src, true, t),
        };
        let macs = batch.batch as u64 * per_sequence;
        set(&out, "flops", &JsValue::from_f64(2.0 * macs as f64))?;
        Ok(out)
    }
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        Engine {
            model: None,
            backend: Backend::Cpu,
            generation: None,
        }
    }

    /// Load a checkpoint from its bytes; returns the model's description.
    pub fn load(&mut self, bytes: &[u8]) -> std::result::Result<JsValue, JsError> {
        let model = crate::checkpoint::load(bytes).map_err(js_err)?;
        let cfg = &model.config;
        let spec = &model.tokenizer.spec;
        let info = to_js(&ModelInfo {
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
            vocab: &spec.tokens,
            tokenizer_kind: spec.kind,
            pad: spec.pad,
            bos: spec.bos,
            eos: spec.eos,
            unk: spec.unk,
            num_classes: cfg.num_classes,
            params: model.param_count(),
            relative_max_distance: cfg.relative_max_distance,
        })?;
        self.model = Some(Rc::new(model));
        self.generation = None;
        Ok(info)
    }

    /// The loaded model's layer plan (`model::plan::layer_plan`): the stacks, sublayers,
    /// norm placements and head the architecture diagram draws.
    pub fn layer_plan(&self) -> std::result::Result<JsValue, JsError> {
        to_js(&crate::model::plan::layer_plan(&self.model()?.config))
    }

    /// Text to ids with the loaded model's tokenizer, and where `<unk>` had to be used.
    pub fn tokenize(&self, text: &str) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?;
        limits::check_text(text).map_err(js_err)?;
        let enc = m.tokenizer.encode(text);
        let tokens = enc
            .ids
            .iter()
            .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
            .collect();
        to_js(&Tokenized {
            ids: enc.ids,
            tokens,
            unknown: enc.unknown,
        })
    }

    /// Parameters and FLOPs per token of every component of the loaded model rebuilt
    /// with `n_heads` heads (a divisor of d_model), each query attending to `context`
    /// keys (`model::cost::cost_report`).
    pub fn cost(&self, n_heads: usize, context: usize) -> std::result::Result<JsValue, JsError> {
        to_js(&cost_report(self.model()?, n_heads, context).map_err(js_err)?)
    }

    /// The Noam learning rate (factor 1) for the loaded model's d_model at `points`
    /// evenly spaced steps from 1 to `last_step`, and the peak found over every step.
    pub fn noam(
        &self,
        warmup: u32,
        last_step: u32,
        points: u32,
    ) -> std::result::Result<JsValue, JsError> {
        let c = self.model()?.config.d_model;
        if warmup == 0 || !(2..=1_000_000).contains(&last_step) || !(2..=2000).contains(&points) {
            return Err(input(format!(
                "schedule: warmup must be positive, the last step from 2 to 1000000 and the \
                 points from 2 to 2000; got warmup {warmup}, last step {last_step}, {points} points"
            )));
        }
        let (warmup, last) = (warmup as u64, last_step as u64);
        let steps: Vec<u64> = (0..points as u64)
            .map(|i| 1 + i * (last - 1) / (points as u64 - 1))
            .collect();
        let lr: Vec<f32> = steps.iter().map(|&s| noam_lr(s, c, warmup, 1.0)).collect();
        let (mut peak_step, mut peak_lr) = (1u64, f32::MIN);
        for s in 1..=last {
            let v = noam_lr(s, c, warmup, 1.0);
            if v > peak_lr {
                (peak_step, peak_lr) = (s, v);
            }
        }
        #[derive(Serialize)]
        struct Schedule {
            d_model: usize,
            warmup: u64,
            steps: Vec<u64>,
            lr: Vec<f32>,
            peak_step: u64,
            peak_lr: f32,
        }
        to_js(&Schedule {
            d_model: c,
            warmup,
            steps,
            lr,
            peak_step,
            peak_lr,
        })
    }

    /// Run on the CPU from now on.
    pub fn use_cpu(&mut self) {
        self.backend = Backend::Cpu;
    }

    /// Ask the browser for a WebGPU device and run on it from now on; returns the
    /// adapter's description. Fails (and stays on the current backend) when there is none.
    pub async fn use_gpu(&mut self) -> std::result::Result<String, JsError> {
        let ctx = GpuContext::request().await.map_err(js_err)?;
        let name = ctx.adapter_name().to_string();
        self.backend = Backend::Gpu(ctx);
        Ok(name)
    }

    /// Test-only: trap on purpose (a panic, which aborts the wasm instance) so the browser
    /// tests can prove the page restarts a dead engine. The page sends it only from its
    /// test hook (`testOnlyCrashEngine`); nothing a user types or links reaches it.
    pub fn test_only_trap(&self) {
        panic!("test-only trap: the engine was told to crash");
    }

    /// Test-only: destroy the WebGPU device now, as a driver reset or an unplugged GPU
    /// would, so the browser tests can prove generation carries on on the CPU. Does nothing
    /// on the CPU backend. The page sends it only from its test hook (`testOnlyLoseGpu`).
    pub fn test_only_lose_gpu(&self) -> bool {
        match &self.backend {
            Backend::Gpu(ctx) => {
                ctx.device().destroy();
                true
            }
            Backend::Cpu => false,
        }
    }

    /// "cpu" or "webgpu": what runs the next forward pass.
    pub fn backend(&self) -> String {
        backend_name(&self.backend).to_string()
    }

    /// GPU-vs-CPU parity of the loaded model on this device (`backend::parity`):
    /// `{max_abs_diff, agrees}`.
    pub async fn parity(&mut self) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?.clone();
        to_js(&gpu_parity(&m, &self.backend, None).await.map_err(js_err)?)
    }

    /// TEST ONLY: the same check with every GPU logit replaced by NaN, as a broken kernel
    /// would return — the browser tests use it to see the page catch such a GPU.
    pub async fn test_only_parity_with_nan_gpu_logits(
        &mut self,
    ) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?.clone();
        to_js(
            &gpu_parity(&m, &self.backend, Some(nan_logits))
                .await
                .map_err(js_err)?,
        )
    }

    /// One forward pass with every trace the page draws.
    pub async fn forward(&mut self, req: JsValue) -> std::result::Result<JsValue, JsError> {
        let req: ForwardReq = serde_wasm_bindgen::from_value(req)
            .map_err(|e| input(format!("forward request: {e}")))?;
        if req.batch.is_empty() {
            return Err(input("forward request: the batch is empty"));
        }
        let m = self.model()?.clone();
        let m = &*m;
        limits::check_forward_request(
            &m.config,
            &req.batch,
            req.src.as_deref(),
            req.switches.ablate.len(),
        )
        .map_err(js_err)?;
        let opts = self.options(&req.switches, m).map_err(js_err)?;
        let batch = self.batch(&req, m).map_err(js_err)?;
        let backend = self.backend.clone();
        let clock = Stopwatch::start(None);
        // On the CPU with the q·k inspector open, one recorded pass gives both the trace
        // and the q, k, v (`forward` is the same pass without the recording).
        if req.qkv && matches!(backend, Backend::Cpu) {
            let (trace, acts) = m.forward_recorded(&batch, &opts).map_err(js_err)?;
            let ms = clock.elapsed_ms();
            let out = self.forward_result(m, &req, &batch, &trace, Some(&acts), ms, "cpu")?;
            set(&out, "fallback", &JsValue::NULL)?;
            return Ok(out.into());
        }
        let (trace, fallback) = match backend.forward(m, &batch, &opts).await {
            Ok(t) => (t, None),
            // A GPU failure (lost device, out of memory): the CPU takes over from here on.
            Err(Error::Gpu(why)) => (
                Backend::Cpu
                    .forward(m, &batch, &opts)
                    .await
                    .map_err(js_err)?,
                Some(why),
            ),
            Err(e) => return Err(js_err(e)),
        };
        let ms = clock.elapsed_ms();
        if fallback.is_some() {
            self.backend = Backend::Cpu;
        }
        let ran = if fallback.is_some() {
            "cpu"
        } else {
            backend_name(&backend)
        };
        // The q·k inspector reads q, k and v from the CPU reference's recorded pass (the
        // GPU keeps no per-head copies of them).
        let acts = if req.qkv {
            Some(m.forward_recorded(&batch, &opts).map_err(js_err)?.1)
        } else {
            None
        };
        let out = self.forward_result(m, &req, &batch, &trace, acts.as_ref(), ms, ran)?;
        let why = fallback.map_or(JsValue::NULL, |w| JsValue::from_str(&w));
        set(&out, "fallback", &why)?;
        Ok(out.into())
    }

    /// Why √d_k: Var(q·k) and the softmax's spread against d_k = 1 … 512, sampled with a
    /// seed (`explain::sqrt_dk`). Needs no model.
    pub fn score_scaling(
        &self,
        samples: usize,
        keys: usize,
        rows: usize,
        seed: u64,
    ) -> std::result::Result<JsValue, JsError> {
        let r = score_scaling(&SQRT_DK_WIDTHS, samples, keys, rows, seed).map_err(js_err)?;
        to_js(&r)
    }

    /// The loaded model's position encoding for positions 0..t: the additive table and
    /// its similarity matrix, ALiBi's slopes and biases, Shaw's tables, and the embedding
    /// map (`explain::positions`).
    pub fn positions(&self, t: usize) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?;
        let cfg = &m.config;
        if t == 0 || t > cfg.max_len {
            return Err(input(format!(
                "positions: t must be from 1 to {}, got {t}",
                cfg.max_len
            )));
        }
        let (c, h) = (cfg.d_model, cfg.n_heads);
        let out = Object::new();
        set(&out, "scheme", &to_js(&cfg.pos_encoding)?)?;
        set(&out, "t", &JsValue::from_f64(t as f64))?;
        match additive_table(m, t).map_err(js_err)? {
            Some(pe) => {
                set(&out, "table", &dense(&[t, c], &pe)?)?; // (T, C)
                set(&out, "similarity", &dense(&[t, t], &similarity(&pe, t, c))?)?;
                // (T, T)
            }
            None => {
                set(&out, "table", &JsValue::NULL)?;
                set(&out, "similarity", &JsValue::NULL)?;
            }
        }
        if cfg.pos_encoding == crate::config::PosEncoding::Alibi {
            let (slopes, bias) = alibi_matrices(h, t);
            set(
                &out,
                "slopes",
                &Float32Array::from(slopes.as_slice()).into(),
            )?; // (H)
            set(&out, "alibi", &dense(&[h, t, t], &bias)?)?; // (H, T, T)
        } else {
            set(&out, "slopes", &JsValue::NULL)?;
            set(&out, "alibi", &JsValue::NULL)?;
        }
        let rel = Array::new();
        let rows = 2 * cfg.relative_max_distance + 1;
        for r in relative_tables(m) {
            let o = Object::new();
            set(&o, "stack", &JsValue::from_str(r.stack))?;
            set(&o, "layer", &JsValue::from_f64(r.layer as f64))?;
            set(&o, "rel_k", &dense(&[rows, cfg.d_head()], &r.rel_k)?)?; // (2K+1, D)
            set(&o, "rel_v", &dense(&[rows, cfg.d_head()], &r.rel_v)?)?; // (2K+1, D)
            rel.push(&o);
        }
        set(&out, "relative", &rel)?;
        set(
            &out,
            "max_distance",
            &JsValue::from_f64(cfg.relative_max_distance as f64),
        )?;
        set(&out, "map", &to_js(&embedding_map(m, t).map_err(js_err)?)?)?;
        Ok(out.into())
    }

    /// RoPE on the loaded model's own q (at `i`) and k (at `j`), head `head` of layer
    /// `layer`: pair `pair`'s path over the input's positions and the score before and
    /// after shifting both positions by `shift`.
    #[allow(clippy::too_many_arguments)]
    pub fn rope_demo(
        &self,
        tokens: Vec<u32>,
        layer: usize,
        head: usize,
        i: usize,
        j: usize,
        pair: usize,
        shift: usize,
    ) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?;
        m.check_batch(&Batch::single(&tokens).map_err(js_err)?)
            .map_err(js_err)?;
        to_js(&rope_demo_of_model(m, &tokens, layer, head, i, j, pair, shift).map_err(js_err)?)
    }

    /// ‖token embedding‖ (as stored and ×√d_model) and ‖position vector‖ per position.
    pub fn embedding_scale(&self, tokens: Vec<u32>) -> std::result::Result<JsValue, JsError> {
        if tokens.len() > limits::MAX_SEQUENCE_TOKENS {
            return Err(input(format!(
                "embedding scale: at most {} tokens, got {}",
                limits::MAX_SEQUENCE_TOKENS,
                tokens.len()
            )));
        }
        to_js(&embedding_scale_of(self.model()?, &tokens).map_err(js_err)?)
    }

    /// Train short, test long: load the grammar checkpoint in `bytes` (the loaded model
    /// stays) and score it on held-out text up to 4× its trained length.
    pub fn extrapolation(
        &self,
        bytes: &[u8],
        sequences: usize,
    ) -> std::result::Result<JsValue, JsError> {
        let m = crate::checkpoint::load(bytes).map_err(js_err)?;
        to_js(&extrapolation(&m, sequences, EXTRAPOLATION_SEED).map_err(js_err)?)
    }

    /// Order-blindness: the checkpoint in `bytes` (the loaded model stays) run on `text`
    /// and on `text` reordered by `perm`, with or without the causal mask.
    pub fn permutation(
        &self,
        bytes: &[u8],
        text: &str,
        perm: Vec<u32>,
        causal: bool,
    ) -> std::result::Result<JsValue, JsError> {
        limits::check_text(text).map_err(js_err)?;
        let m = crate::checkpoint::load(bytes).map_err(js_err)?;
        let perm: Vec<usize> = perm.into_iter().map(|p| p as usize).collect();
        let ids = m.tokenizer.encode(text).ids;
        m.check_batch(&Batch::single(&ids).map_err(js_err)?)
            .map_err(js_err)?;
        let r = permutation(&m, &ids, &perm, causal).map_err(js_err)?;
        let out = Object::new();
        let names = |ids: &[u32]| -> Vec<String> {
            ids.iter()
                .map(|&id| m.tokenizer.token(id).unwrap_or("<?>").to_string())
                .collect()
        };
        let (t, v) = (ids.len(), m.config.vocab_size);
        set(&out, "tokens", &to_js(&names(&r.tokens))?)?;
        set(&out, "permuted", &to_js(&names(&r.permuted))?)?;
        set(&out, "perm", &to_js(&r.perm)?)?;
        set(&out, "causal", &JsValue::from_bool(r.causal))?;
        set(&out, "pos_encoding", &to_js(&m.config.pos_encoding)?)?;
        set(&out, "logits", &dense(&[t, v], &r.logits)?)?; // (T, V)
        set(
            &out,
            "permuted_logits",
            &dense(&[t, v], &r.permuted_logits)?,
        )?; // (T, V)
        set(
            &out,
            "row_diff",
            &Float32Array::from(r.row_diff.as_slice()).into(),
        )?; // (T)
        set(&out, "row_identical", &to_js(&r.row_identical)?)?; // (T)
        Ok(out.into())
    }

    /// Start generating after `prompt` (decoder ids, `<bos>` first) and, for an
    /// encoder-decoder model, from the source `src`. Steps come from `generate_step`.
    pub fn generate_start(&mut self, req: JsValue) -> std::result::Result<JsValue, JsError> {
        let req: GenerateReq = serde_wasm_bindgen::from_value(req)
            .map_err(|e| input(format!("generate request: {e}")))?;
        limits::check_generate_request(
            req.prompt.len(),
            req.src.as_ref().map(Vec::len),
            req.max_new_tokens,
            (req.sampling.strategy == "beam").then_some(req.sampling.beam_width),
            req.switches.ablate.len(),
        )
        .map_err(js_err)?;
        let m = self.model()?.clone();
        let mut forward = self.options(&req.switches, &m).map_err(js_err)?;
        forward.trace_attention = false;
        forward.trace_hidden = false;
        let opts = GenerateOptions {
            strategy: req.sampling.strategy().map_err(js_err)?,
            seed: req.sampling.seed,
            max_new_tokens: req.max_new_tokens,
            use_cache: true,
            top_candidates: TOP_CANDIDATES,
            trace_attention: req.trace.unwrap_or(true),
            forward,
        };
        self.generation = None;
        let gen = Self::generator(
            &m,
            &self.backend,
            req.prompt.clone(),
            req.src.clone(),
            &opts,
        )
        .map_err(js_err)?;
        self.generation = Some(Generation {
            gen,
            prompt: req.prompt,
            src: req.src,
            opts,
            before: vec![],
        });
        let out = Object::new();
        set(
            &out,
            "backend",
            &JsValue::from_str(backend_name(&self.backend)),
        )?;
        set(&out, "fallback", &JsValue::NULL)?;
        Ok(out.into())
    }

    /// One generation step: `{step, generated, done, backend, fallback}`. A GPU failure
    /// moves the generation to the CPU, after the tokens generated so far, and carries on.
    pub async fn generate_step(&mut self) -> std::result::Result<JsValue, JsError> {
        let m = self.model()?.clone();
        let mut g = self
            .generation
            .take()
            .ok_or_else(|| input("no generation is running: call generate_start() first"))?;
        let mut fallback = None;
        let step = match g.gen.step().await {
            Ok(s) => s,
            Err(Error::Gpu(why)) => {
                // Carry on on the CPU from where the GPU stopped (beam search restarts:
                // its hypotheses lived on the GPU side of the failed step).
                self.backend = Backend::Cpu;
                let beam = matches!(g.opts.strategy, Strategy::Beam { .. });
                let done = if beam { vec![] } else { g.gen.tokens() };
                g.before.extend_from_slice(&done);
                let prompt = [&g.prompt[..], &g.before[..]].concat();
                let opts = GenerateOptions {
                    max_new_tokens: g.opts.max_new_tokens.saturating_sub(g.before.len()).max(1),
                    ..g.opts.clone()
                };
                g.gen = Self::generator(&m, &Backend::Cpu, prompt, g.src.clone(), &opts)
                    .map_err(js_err)?;
                fallback = Some(why);
                g.gen.step().await.map_err(js_err)?
            }
            Err(e) => {
                self.generation = Some(g);
                return Err(js_err(e));
            }
        };
        let Some(step) = step else {
            self.generation = Some(g);
            return Err(input("generation has already stopped: start it again"));
        };
        let out = Object::new();
        set(&out, "step", &to_js(&step)?)?;
        let generated = [&g.before[..], &g.gen.tokens()[..]].concat();
        set(&out, "generated", &to_js(&generated)?)?;
        set(&out, "done", &JsValue::from_bool(g.gen.is_done()))?;
        set(
            &out,
            "backend",
            &JsValue::from_str(backend_name(&self.backend)),
        )?;
        let why = fallback.map_or(JsValue::NULL, |w| JsValue::from_str(&w));
        set(&out, "fallback", &why)?;
        self.generation = Some(g);
        Ok(out.into())
    }
}

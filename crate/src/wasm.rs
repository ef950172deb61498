//! The thin wasm-bindgen boundary (compiled on wasm32 only): the page's Web Worker drives
//! one [`Engine`]. Each method converts — a JS request into its `protocol` type, the
//! core's result back into a JS value (typed arrays for the floats), a failure into a
//! `JsError` with the core's message — and does nothing else: `crate::engine` holds the
//! engine, natively tested.
//!
//! Built twice for the page: the inference engine (no `lab` feature: loading, forward
//! passes, generation, weights), which the first visit downloads, and the whole engine
//! (`lab`: also the trainer and the side studies, `wasm/lab.rs`), fetched when first needed.

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::prelude::*;

use crate::backend::parity::{nan_logits, wrong_logit};
use crate::engine;
use crate::error::Error;
use crate::protocol::{
    BackendName, CostRequest, EngineError, ForwardRequest, GenerateStartRequest,
    GenerateStepsRequest, ModelInputRequest, NoamRequest, WeightRestoreRequest, WeightSelection,
    WeightSetRequest,
};

#[cfg(feature = "lab")]
mod hf;
#[cfg(feature = "lab")]
mod lab;

type JsResult<T> = std::result::Result<T, JsValue>;

/// A core error as the page receives it: a JS `Error` whose `message` is the core's
/// sentence, with the error's `kind` beside it (`protocol::EngineError`).
fn js_err(e: Error) -> JsValue {
    let EngineError { kind, message } = EngineError::from(&e);
    let err = js_sys::Error::new(&message);
    let kind = serde_wasm_bindgen::to_value(&kind).unwrap_or(JsValue::NULL);
    // Setting a property of a fresh Error object cannot fail; if it did, the message stays.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("kind"), &kind);
    err.into()
}

fn from_js<T: DeserializeOwned>(what: &str, v: JsValue) -> JsResult<T> {
    serde_wasm_bindgen::from_value(v)
        .map_err(|e| js_err(Error::Input(format!("{what} request: {e}"))))
}

fn to_js<T: Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| {
            js_err(Error::Other(format!(
                "cannot convert a result for the page: {e}"
            )))
        })
}

// The generated protocol types (crate/src/protocol.rs → www/src/engine/generated.ts) name
// what each method takes and returns in the bindings' TypeScript (www/pkg/tplay.d.ts).
#[wasm_bindgen(typescript_custom_section)]
const PROTOCOL_TYPES: &str = r#"
import type { BlockDiff, BlockDiffRequest, BlockProbe, BlockProbeRequest, CouplingRequest,
  DropoutDemo, DropoutRequest, NormCoupling, CostReport, CostRequest, EmbeddingScaleRequest, ForwardRequest, ForwardResult,
  BackendStatus, GenerateStartRequest, HfCheck, TokenizeTrace, GenerateStarted, ModelInput, ModelInputRequest, GenerateStep, GenerateStepCompact, GenerateSteps, GenerateStepsRequest, LayerPlan, ModelInfo, NoamRequest, Parity,
  PermutationResult, Positions, PositionsRequest, RopeDemoRequest, RunDefaults, RunDefaultsRequest,
  RunSettings, Schedule, ScoreScalingRequest, Tokenized, TrainChunk, TrainChunkRequest, TrainStarted,
  ParallelRequest, ParallelTiming, ScoringRequest, ScoringComparison, WeightEdits, WeightRestoreRequest,
  WeightSelection, WeightSetRequest, WeightTensor, WeightValues } from '../src/engine/generated';
import type { EmbeddingScale, Extrapolation, RopeDemo, ScoreScaling } from '../src/engine/protocol';
"#;

/// The stateful engine behind the page's worker: one model, one backend.
#[wasm_bindgen]
#[derive(Default)]
pub struct Engine(engine::Engine);

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        Engine(engine::Engine::new())
    }

    /// Load a checkpoint from its bytes; returns its `ModelInfo`.
    #[wasm_bindgen(unchecked_return_type = "ModelInfo")]
    pub fn load(&mut self, bytes: &[u8]) -> JsResult<JsValue> {
        to_js(&self.0.load(bytes).map_err(js_err)?)
    }

    /// The loaded model's `LayerPlan` (what the architecture diagram draws).
    #[wasm_bindgen(unchecked_return_type = "LayerPlan")]
    pub fn layer_plan(&self) -> JsResult<JsValue> {
        to_js(&self.0.layer_plan().map_err(js_err)?)
    }

    /// `TokenizeRequest` → `Tokenized`.
    #[wasm_bindgen(unchecked_return_type = "Tokenized")]
    pub fn tokenize(&self, text: &str) -> JsResult<JsValue> {
        to_js(&self.0.tokenize(text).map_err(js_err)?)
    }

    /// `CostRequest` → `CostReport`.
    #[wasm_bindgen(unchecked_return_type = "CostReport")]
    pub fn cost(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CostRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: CostRequest = from_js("cost", req)?;
        to_js(&self.0.cost(&req).map_err(js_err)?)
    }

    /// `NoamRequest` → `Schedule`.
    #[wasm_bindgen(unchecked_return_type = "Schedule")]
    pub fn noam(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NoamRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: NoamRequest = from_js("schedule", req)?;
        to_js(&self.0.noam(&req).map_err(js_err)?)
    }

    /// Run on the CPU from now on.
    pub fn use_cpu(&mut self) {
        self.0.use_cpu();
    }

    /// Ask the browser for a WebGPU device and run on it from now on; returns the
    /// adapter's description. Fails (and stays on the current backend) when there is none.
    pub async fn use_gpu(&mut self) -> JsResult<String> {
        self.0.use_gpu().await.map_err(js_err)
    }

    /// Choose the backend (`"cpu"` or `"webgpu"`; `adapter`: the browser's description of
    /// its GPU, when it has one) → `BackendStatus`. The GPU is kept only while its test
    /// pass agrees with the CPU and, `by_speed`, is faster than the CPU for the loaded
    /// model; what went wrong is the status, never an error.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub async fn select_backend(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "BackendName")] want: JsValue,
        adapter: Option<String>,
        by_speed: bool,
    ) -> JsResult<JsValue> {
        let want: BackendName = from_js("backend", want)?;
        to_js(&self.0.select_backend(want, adapter, by_speed).await)
    }

    /// TEST ONLY: the race measured again with `gpu_ms` / `cpu_ms` of busy time added to
    /// every timed pass of that side (a slow dispatch, a slow processor) → `BackendStatus`.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub async fn test_only_race_with_handicap(
        &mut self,
        gpu_ms: f64,
        cpu_ms: f64,
    ) -> JsResult<JsValue> {
        let h = crate::backend::race::Handicap { gpu_ms, cpu_ms };
        to_js(&self.0.test_only_race_with_handicap(h).await)
    }

    /// Measure the GPU against the CPU again, on the model loaded now → `BackendStatus`.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub async fn recheck_backend(&mut self) -> JsResult<JsValue> {
        to_js(&self.0.recheck_backend(None).await)
    }

    /// TEST ONLY: the same check with every GPU logit replaced by NaN, as a broken kernel
    /// would return — the browser tests use it to see the page catch such a GPU.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub async fn test_only_recheck_with_nan_gpu_logits(&mut self) -> JsResult<JsValue> {
        to_js(&self.0.recheck_backend(Some(nan_logits)).await)
    }

    /// TEST ONLY: the same check with one GPU logit off by ten times the tolerance, as a
    /// kernel wrong in one place would return.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub async fn test_only_recheck_with_wrong_gpu_logit(&mut self) -> JsResult<JsValue> {
        to_js(&self.0.recheck_backend(Some(wrong_logit)).await)
    }

    /// Where the passes run now and why (after a GPU failure: the CPU) → `BackendStatus`.
    #[wasm_bindgen(unchecked_return_type = "BackendStatus")]
    pub fn backend_status(&self) -> JsResult<JsValue> {
        to_js(self.0.backend_status())
    }

    /// `ModelInputRequest` → `ModelInput`: the page's text rows as the model reads them.
    #[wasm_bindgen(unchecked_return_type = "ModelInput")]
    pub fn model_input(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ModelInputRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: ModelInputRequest = from_js("model input", req)?;
        to_js(&self.0.model_input(&req).map_err(js_err)?)
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
        self.0.test_only_lose_gpu()
    }

    /// `ForwardRequest` → `ForwardResult`.
    #[wasm_bindgen(unchecked_return_type = "ForwardResult")]
    pub async fn forward(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ForwardRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: ForwardRequest = from_js("forward", req)?;
        to_js(&self.0.forward(&req).await.map_err(js_err)?)
    }

    /// Every parameter tensor of the loaded model → `WeightTensor[]`.
    #[wasm_bindgen(unchecked_return_type = "WeightTensor[]")]
    pub fn weight_tensors(&self) -> JsResult<JsValue> {
        to_js(&self.0.weight_tensors().map_err(js_err)?)
    }

    /// `WeightSelection` → `WeightValues` (now and as trained).
    #[wasm_bindgen(unchecked_return_type = "WeightValues")]
    pub fn read_weights(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WeightSelection")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: WeightSelection = from_js("read weights", req)?;
        to_js(&self.0.read_weights(&req).map_err(js_err)?)
    }

    /// `WeightSetRequest` → `WeightEdits`.
    #[wasm_bindgen(unchecked_return_type = "WeightEdits")]
    pub fn set_weights(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "WeightSetRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: WeightSetRequest = from_js("set weights", req)?;
        to_js(&self.0.set_weights(&req).map_err(js_err)?)
    }

    /// `WeightRestoreRequest` → `WeightEdits`.
    #[wasm_bindgen(unchecked_return_type = "WeightEdits")]
    pub fn restore_weights(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "WeightRestoreRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: WeightRestoreRequest = from_js("restore weights", req)?;
        to_js(&self.0.restore_weights(&req).map_err(js_err)?)
    }

    /// What is edited now → `WeightEdits`.
    #[wasm_bindgen(unchecked_return_type = "WeightEdits")]
    pub fn weight_edits(&self) -> JsResult<JsValue> {
        to_js(&self.0.weight_edits().map_err(js_err)?)
    }

    /// The model as it computes now (edited or not), as checkpoint bytes (.safetensors).
    pub fn export_model(&self) -> JsResult<Vec<u8>> {
        self.0.export_model().map_err(js_err)
    }

    /// `GenerateStartRequest` → `GenerateStarted`.
    #[wasm_bindgen(unchecked_return_type = "GenerateStarted")]
    pub fn generate_start(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "GenerateStartRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: GenerateStartRequest = from_js("generate", req)?;
        to_js(&self.0.generate_start(&req).map_err(js_err)?)
    }

    /// The next step: a `GenerateStep` when the generation traces its attention (the
    /// default), a `GenerateStepCompact` (typed arrays) when it was started with
    /// `trace: false`.
    #[wasm_bindgen(unchecked_return_type = "GenerateStep | GenerateStepCompact")]
    pub async fn generate_step(&mut self) -> JsResult<JsValue> {
        let r = self.0.generate_step_reply().await.map_err(js_err)?;
        let _t = crate::profile::scope(crate::profile::Phase::Serialise);
        to_js(&r)
    }

    /// `GenerateStepsRequest` → `GenerateSteps`: several steps in one call.
    #[wasm_bindgen(unchecked_return_type = "GenerateSteps")]
    pub async fn generate_steps(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "GenerateStepsRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: GenerateStepsRequest = from_js("generateSteps", req)?;
        to_js(&self.0.generate_steps(&req).await.map_err(js_err)?)
    }
}

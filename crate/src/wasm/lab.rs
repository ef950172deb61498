//! The lab module's part of the boundary (feature `lab`): training runs and the side
//! studies. The page's first load carries the inference engine alone (the same
//! [`Engine`] without these methods); the worker fetches the build with them when the lab
//! or a view that needs one of them first opens (www/src/engine/worker.ts).

use wasm_bindgen::prelude::*;

use super::{from_js, js_err, to_js, Engine, JsResult};
use crate::explain::blocks::{CouplingRequest, DropoutRequest};
use crate::explain::timing::{time_rates, time_width, TimeRatesRequest, TimeWidthRequest};
use crate::protocol::{
    BlockDiffRequest, BlockProbeRequest, EmbeddingScaleRequest, ParallelRequest, PositionsRequest,
    RopeDemoRequest, RunDefaultsRequest, RunSettings, ScoreScalingRequest, ScoringRequest,
    TrainChunkRequest,
};

#[wasm_bindgen]
impl Engine {
    /// `RunDefaultsRequest` → `RunDefaults`.
    #[wasm_bindgen(unchecked_return_type = "RunDefaults")]
    pub fn run_defaults(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RunDefaultsRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: RunDefaultsRequest = from_js("run defaults", req)?;
        to_js(&self.0.run_defaults(&req).map_err(js_err)?)
    }

    /// `RunSettings` → `RunFootprint`: what the run will need, before it starts.
    #[wasm_bindgen(unchecked_return_type = "RunFootprint")]
    pub fn run_footprint(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RunSettings")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: RunSettings = from_js("run footprint", req)?;
        to_js(&self.0.run_footprint(&req).map_err(js_err)?)
    }

    /// `RunSettings` → `TrainStarted` (on the backend the settings choose).
    #[wasm_bindgen(unchecked_return_type = "TrainStarted")]
    pub async fn train_start(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "RunSettings")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: RunSettings = from_js("train", req)?;
        to_js(&self.0.train_start(&req).await.map_err(js_err)?)
    }

    /// `TrainChunkRequest` → `TrainChunk`.
    #[wasm_bindgen(unchecked_return_type = "TrainChunk")]
    pub async fn train_chunk(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "TrainChunkRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: TrainChunkRequest = from_js("train chunk", req)?;
        to_js(&self.0.train_chunk(&req).await.map_err(js_err)?)
    }

    /// The training run's state besides its weights (optimiser moments, data position).
    pub async fn train_export_state(&mut self) -> JsResult<Vec<u8>> {
        self.0.train_export_state().await.map_err(js_err)
    }

    /// Continue a saved run: `RunSettings`, its checkpoint and state bytes → `TrainStarted`.
    #[wasm_bindgen(unchecked_return_type = "TrainStarted")]
    pub async fn train_resume(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "RunSettings")] settings: JsValue,
        checkpoint: Vec<u8>,
        state: Vec<u8>,
    ) -> JsResult<JsValue> {
        let settings: RunSettings = from_js("train", settings)?;
        to_js(
            &self
                .0
                .train_resume(&settings, &checkpoint, &state)
                .await
                .map_err(js_err)?,
        )
    }

    /// Test-only: one weight of the training run's layer `layer` (from 0) turns NaN before
    /// its next step, so the browser tests can prove the run stops there and names the
    /// layer. The page sends it only from its test hook (`testOnlyNanAtLayer`).
    pub fn test_only_nan_at_layer(&mut self, layer: u32) -> bool {
        self.0.test_only_nan_at_layer(layer as usize)
    }

    /// The training run's model now (copied back from the GPU first), as checkpoint bytes.
    pub async fn train_export(&mut self) -> JsResult<Vec<u8>> {
        self.0.train_export().await.map_err(js_err)
    }

    /// `ScoreScalingRequest` → `ScoreScaling`.
    #[wasm_bindgen(unchecked_return_type = "ScoreScaling")]
    pub fn score_scaling(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ScoreScalingRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: ScoreScalingRequest = from_js("score scaling", req)?;
        to_js(&self.0.score_scaling(&req).map_err(js_err)?)
    }

    /// `PositionsRequest` → `Positions`.
    #[wasm_bindgen(unchecked_return_type = "Positions")]
    pub fn positions(
        &self,
        #[wasm_bindgen(unchecked_param_type = "PositionsRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: PositionsRequest = from_js("positions", req)?;
        to_js(&self.0.positions(&req).map_err(js_err)?)
    }

    /// `RopeDemoRequest` → `RopeDemo`.
    #[wasm_bindgen(unchecked_return_type = "RopeDemo")]
    pub fn rope_demo(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RopeDemoRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: RopeDemoRequest = from_js("RoPE", req)?;
        to_js(&self.0.rope_demo(&req).map_err(js_err)?)
    }

    /// `EmbeddingScaleRequest` → `EmbeddingScale`.
    #[wasm_bindgen(unchecked_return_type = "EmbeddingScale")]
    pub fn embedding_scale(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EmbeddingScaleRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: EmbeddingScaleRequest = from_js("embedding scale", req)?;
        to_js(&self.0.embedding_scale(&req).map_err(js_err)?)
    }

    /// Train short, test long on the grammar checkpoint in `bytes` (the loaded model
    /// stays) → `Extrapolation`.
    #[wasm_bindgen(unchecked_return_type = "Extrapolation")]
    pub fn extrapolation(&self, bytes: &[u8], sequences: usize) -> JsResult<JsValue> {
        to_js(&self.0.extrapolation(bytes, sequences).map_err(js_err)?)
    }

    /// Order-blindness of the checkpoint in `bytes` (the loaded model stays) →
    /// `PermutationResult`.
    #[wasm_bindgen(unchecked_return_type = "PermutationResult")]
    pub fn permutation(
        &self,
        bytes: &[u8],
        text: &str,
        perm: Vec<u32>,
        causal: bool,
    ) -> JsResult<JsValue> {
        to_js(
            &self
                .0
                .permutation(bytes, text, &perm, causal)
                .map_err(js_err)?,
        )
    }

    /// `BlockProbeRequest` → `BlockProbe`.
    #[wasm_bindgen(unchecked_return_type = "BlockProbe")]
    pub fn block_probe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "BlockProbeRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: BlockProbeRequest = from_js("block probe", req)?;
        to_js(&self.0.block_probe(&req).map_err(js_err)?)
    }

    /// `BlockDiffRequest` → `BlockDiff`.
    #[wasm_bindgen(unchecked_return_type = "BlockDiff")]
    pub fn block_diff(
        &self,
        #[wasm_bindgen(unchecked_param_type = "BlockDiffRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: BlockDiffRequest = from_js("block diff", req)?;
        to_js(&self.0.block_diff(&req).map_err(js_err)?)
    }

    /// `CouplingRequest` → `NormCoupling`; `sibling`: a trained checkpoint with the other
    /// kind of norm and its name (empty bytes: an untrained one built in memory).
    #[wasm_bindgen(unchecked_return_type = "NormCoupling")]
    pub fn norm_coupling(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CouplingRequest")] req: JsValue,
        sibling: &[u8],
        name: &str,
    ) -> JsResult<JsValue> {
        let req: CouplingRequest = from_js("norms", req)?;
        let sib = (!sibling.is_empty()).then_some((sibling, name));
        to_js(&self.0.norm_coupling(&req, sib).map_err(js_err)?)
    }

    /// `DropoutRequest` → `DropoutDemo`.
    #[wasm_bindgen(unchecked_return_type = "DropoutDemo")]
    pub fn dropout_demo(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DropoutRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: DropoutRequest = from_js("dropout", req)?;
        to_js(&self.0.dropout_demo(&req).map_err(js_err)?)
    }

    /// `ParallelRequest` → `ParallelTiming`.
    #[wasm_bindgen(unchecked_return_type = "ParallelTiming")]
    pub async fn parallel(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ParallelRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: ParallelRequest = from_js("parallel", req)?;
        to_js(&self.0.parallel(&req).await.map_err(js_err)?)
    }

    /// `ScoringRequest` → `ScoringComparison`.
    #[wasm_bindgen(unchecked_return_type = "ScoringComparison")]
    pub async fn scoring(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ScoringRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: ScoringRequest = from_js("scoring", req)?;
        to_js(&self.0.scoring(&req).await.map_err(js_err)?)
    }

    /// `TimeRatesRequest` → `DeviceRates`: this device's product rate and, where asked, its
    /// GPU's cost of a round trip and of a dispatch (`explain::timing`).
    #[wasm_bindgen(unchecked_return_type = "DeviceRates")]
    pub async fn time_rates(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TimeRatesRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: TimeRatesRequest = from_js("time rates", req)?;
        to_js(&time_rates(&req).await.map_err(js_err)?)
    }

    /// `TimeWidthRequest` → `WidthTime`: one width of the lab's reverse model, a decoding
    /// step and a training step timed on the CPU and the GPU (`explain::timing`).
    #[wasm_bindgen(unchecked_return_type = "WidthTime")]
    pub async fn time_width(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TimeWidthRequest")] req: JsValue,
    ) -> JsResult<JsValue> {
        let req: TimeWidthRequest = from_js("time width", req)?;
        to_js(&time_width(&req).await.map_err(js_err)?)
    }
}

//! Hugging Face folders and the tokenizer's trace at the boundary (feature `lab`): the
//! folder loader parses JSON and safetensors headers the first load does not need, so both
//! come with the whole engine, which the worker fetches when a folder is first dropped on
//! the page or the tokenizer view first opens (www/src/engine/worker.ts).

use wasm_bindgen::prelude::*;

use super::{js_err, to_js, Engine, JsResult};

#[wasm_bindgen]
impl Engine {
    /// Check a Hugging Face folder's `config.json` against the engine's limits before its
    /// weights are fetched → `HfCheck` (its parameter count and shape).
    #[wasm_bindgen(unchecked_return_type = "HfCheck")]
    pub fn hf_check(&self, config: &[u8]) -> JsResult<JsValue> {
        to_js(&crate::hf::check_config(config).map_err(js_err)?)
    }

    /// Load a Hugging Face folder from its files' bytes (`tokenizer_json`, or `vocab_json`
    /// and `merges`); returns its `ModelInfo`. A bad folder keeps the model loaded before.
    #[wasm_bindgen(unchecked_return_type = "ModelInfo")]
    pub fn load_hf(
        &mut self,
        config: &[u8],
        model: &[u8],
        tokenizer_json: Option<Vec<u8>>,
        vocab_json: Option<Vec<u8>>,
        merges: Option<Vec<u8>>,
    ) -> JsResult<JsValue> {
        let files = crate::hf::HfFiles {
            config_json: config,
            model_safetensors: model,
            tokenizer_json: tokenizer_json.as_deref(),
            vocab_json: vocab_json.as_deref(),
            merges_txt: merges.as_deref(),
        };
        to_js(&self.0.load_hf(&files).map_err(js_err)?)
    }

    /// How the loaded model's tokenizer reads `text`, step by step → `TokenizeTrace`.
    #[wasm_bindgen(unchecked_return_type = "TokenizeTrace")]
    pub fn tokenize_trace(&self, text: &str) -> JsResult<JsValue> {
        to_js(&self.0.tokenize_trace(text).map_err(js_err)?)
    }
}

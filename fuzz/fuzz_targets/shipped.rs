//! The shipped models the request targets run on, loaded once per fuzzing process: every
//! architecture (decoder-only, encoder-only classifier and tagger, encoder-decoder) and
//! the position encodings with their own limits (learned positions stop at max_len).

use std::sync::OnceLock;

use tplay::checkpoint;
use tplay::model::Model;

const FILES: [&[u8]; 6] = [
    include_bytes!("../../models/grammar-alibi.safetensors"),
    include_bytes!("../../models/grammar-learned.safetensors"),
    include_bytes!("../../models/grammar-relative.safetensors"),
    include_bytes!("../../models/sentiment.safetensors"),
    include_bytes!("../../models/tagging.safetensors"),
    include_bytes!("../../models/translate.safetensors"),
];

pub fn model(i: u8) -> &'static Model {
    static MODELS: OnceLock<Vec<Model>> = OnceLock::new();
    let models = MODELS.get_or_init(|| {
        FILES
            .iter()
            .map(|b| checkpoint::load(b).expect("a shipped model loads"))
            .collect()
    });
    &models[i as usize % models.len()]
}

//! The page's input before the model's rules: tokenized text rows and the tokens
//! generated so far. `modelInput` answers the rows the model reads (where `<bos>` goes,
//! what a classifier and an encoder-decoder read) and how to find the page's input again
//! in a forward result.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::explain::blocks::SequenceInput;

/// `modelInput`: token ids per text row (as the tokenizer gave them) and the tokens
/// generated after row 0 so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ModelInputRequest {
    pub rows: Vec<Vec<u32>>,
    #[serde(default)]
    pub generated: Vec<u32>,
}

/// The page's input as the loaded model reads it.
#[derive(Clone, Debug, PartialEq, Serialize, TS)]
pub struct ModelInput {
    /// Target-side ids per sequence: a `ForwardRequest`'s `batch`.
    pub batch: Vec<Vec<u32>>,
    /// Source ids per sequence (encoder-decoder only): a `ForwardRequest`'s `src`.
    pub src: Option<Vec<Vec<u32>>>,
    /// Where a fresh generation starts: decoder ids, `<bos>` first (a
    /// `GenerateStartRequest`'s `prompt`); absent for a model that does not generate.
    pub prompt: Option<Vec<u32>>,
    /// The source a generation reads (encoder-decoder only).
    pub prompt_src: Option<Vec<u32>>,
    /// The page's input is the source rows of a forward result (encoder-decoder).
    pub input_is_source: bool,
    /// Ids of row 0 that are input; the rest were generated (decoder-only). Absent: the
    /// rows are all input.
    pub prompt_len: Option<usize>,
    /// Row 0 without the generated tokens, as one sequence: what the block views probe.
    pub sequence: SequenceInput,
}

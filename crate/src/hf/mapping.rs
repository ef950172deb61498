//! The shapes every family's loader shares: the folder's files, and a family's mapping of
//! its `config.json` and tensor names onto the core.

use crate::config::ModelConfig;
use crate::error::Error;

pub(crate) fn bad(msg: impl Into<String>) -> Error {
    Error::Checkpoint(msg.into())
}

/// The files of a Hugging Face folder, as bytes (read from disk, or handed over by the page).
#[derive(Clone, Copy, Debug, Default)]
pub struct HfFiles<'a> {
    pub config_json: &'a [u8],
    pub model_safetensors: &'a [u8],
    pub tokenizer_json: Option<&'a [u8]>,
    pub vocab_json: Option<&'a [u8]>,
    pub merges_txt: Option<&'a [u8]>,
}

/// One core tensor and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The core's name (`decoder.layers.0.self_attn.in_proj_weight`).
    pub core: String,
    /// The Hugging Face name, without the family's optional prefix (`h.0.attn.c_attn.weight`).
    pub hf: String,
    /// Stored (in, out), as a GPT-2 `Conv1D`: the core's (out, in) is its transpose.
    pub transposed: bool,
}

/// What a family's `config.json` means for the core.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub config: ModelConfig,
    /// A prefix every tensor name may carry (`transformer.` for GPT-2's LM head model).
    pub prefix: &'static str,
    pub rules: Vec<Rule>,
    /// Tensors of the file that are not weights (GPT-2's `attn.bias` mask buffers): their
    /// name ends with one of these.
    pub ignored_suffixes: &'static [&'static str],
    /// Tensors the file may hold that the core does not read (a tied LM head's copy).
    pub ignored: Vec<String>,
    /// `bos_token_id` / `eos_token_id` from the config, when it states them.
    pub bos: Option<u32>,
    pub eos: Option<u32>,
}

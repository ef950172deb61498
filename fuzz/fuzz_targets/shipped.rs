//! The shipped models the request targets run on, loaded once per fuzzing process: every
//! architecture (decoder-only, encoder-only classifier and tagger, encoder-decoder) and
//! the position encodings with their own limits (learned positions stop at max_len).
//! `with_engine` hands a target the page's engine (`tplay::engine::Engine`) with the model
//! loaded, so a request goes through exactly the boundary's code.

#![allow(dead_code)]

use std::cell::RefCell;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use tplay::checkpoint;
use tplay::engine::Engine;
use tplay::model::mask::{CellEdit, MaskRule};
use tplay::model::{AttnSite, HeadRef, Model};
use tplay::protocol::{MaskEdit, SamplingRequest, StrategyName, Switches};

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

thread_local! {
    /// One engine per shipped model, each with its model loaded (libFuzzer runs inputs on
    /// one thread).
    static ENGINES: RefCell<Vec<Engine>> = RefCell::new(
        FILES
            .iter()
            .map(|b| {
                let mut e = Engine::new();
                e.load(b).expect("a shipped model loads in the engine");
                e
            })
            .collect(),
    );
}

/// Run `f` on the engine that holds shipped model `i` (and that model).
pub fn with_engine<R>(i: u8, f: impl FnOnce(&mut Engine, &Model) -> R) -> R {
    let i = i as usize % FILES.len();
    ENGINES.with(|e| f(&mut e.borrow_mut()[i], model(i as u8)))
}

/// The page's run-time switches, as arbitrary as the fuzzer makes them: heads go to the
/// engine unchecked, which must refuse an out-of-range one itself.
#[derive(Arbitrary, Debug)]
pub struct ArbSwitches {
    causal: Option<bool>,
    padding_mask: bool,
    scale: bool,
    ablate: Vec<(u8, u8, u8)>,
    /// The mask editor's mask: (rule, its size) and painted (query, key, hidden) cells.
    mask: Option<((u8, u16), Vec<(u16, u16, bool)>)>,
}

impl ArbSwitches {
    pub fn switches(&self) -> Switches {
        let site = |x: u8| [AttnSite::EncoderSelf, AttnSite::DecoderSelf, AttnSite::Cross][x as usize % 3];
        Switches {
            causal: self.causal,
            padding_mask: self.padding_mask,
            scale: self.scale,
            ablate: self
                .ablate
                .iter()
                .map(|&(s, layer, head)| HeadRef { site: site(s), layer: layer as usize % 4, head: head as usize % 6 })
                .collect(),
            mask: self.mask.as_ref().map(|&((rule, n), ref cells)| MaskEdit {
                rule: match rule % 4 {
                    0 => MaskRule::None,
                    1 => MaskRule::Causal,
                    2 => MaskRule::PrefixLm { prefix: n as usize },
                    _ => MaskRule::SlidingWindow { window: n as usize },
                },
                cells: cells
                    .iter()
                    .map(|&(query, key, hidden)| CellEdit { query: query as usize, key: key as usize, hidden })
                    .collect(),
            }),
        }
    }
}

/// The page's decoding controls, unvalidated.
#[derive(Arbitrary, Debug)]
pub struct ArbSampling {
    strategy: u8,
    temperature: f32,
    top_k: u16,
    top_p: f32,
    beam_width: u8,
    seed: u64,
}

impl ArbSampling {
    pub fn sampling(&self) -> SamplingRequest {
        SamplingRequest {
            strategy: [StrategyName::Greedy, StrategyName::Sample, StrategyName::Beam][self.strategy as usize % 3],
            temperature: self.temperature,
            top_k: self.top_k as usize,
            top_p: self.top_p,
            beam_width: self.beam_width as usize,
            seed: self.seed,
        }
    }
}

//! The page's generate request, structured: prompt, source, switches, strategy (greedy,
//! sampling, beam search) with its controls, seed and length, on every shipped model that
//! generates. Mirrors the wasm `Engine::generate_start` / `generate_step`: the size budget,
//! then a generator stepped until it stops (at most 24 steps per input, to keep the
//! fuzzer fast). Nothing may panic; every chosen token is in the vocabulary.
#![no_main]

#[path = "shipped.rs"]
mod shipped;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tplay::backend::Backend;
use tplay::generate::sampling::Sampling;
use tplay::generate::{GenerateOptions, Generator, LengthPenalty, Strategy};
use tplay::limits;
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode};

#[derive(Arbitrary, Debug)]
struct Req {
    model: u8,
    prompt: Vec<u8>,
    src: Option<Vec<u8>>,
    padding_mask: bool,
    scale: bool,
    ablate: Vec<(u8, u8, u8)>,
    strategy: u8,
    temperature: f32,
    top_k: u16,
    top_p: f32,
    beam_width: u8,
    seed: u64,
    max_new_tokens: u16,
    trace: bool,
    use_cache: bool,
}

fuzz_target!(|req: Req| {
    let m = shipped::model(req.model);
    let prompt: Vec<u32> = req.prompt.iter().map(|&x| x as u32).collect();
    let src: Option<Vec<u32>> = req.src.as_ref().map(|s| s.iter().map(|&x| x as u32).collect());
    let beam = req.strategy % 3 == 2;
    if limits::check_generate_request(
        prompt.len(),
        src.as_ref().map(Vec::len),
        req.max_new_tokens as usize,
        beam.then_some(req.beam_width as usize),
        req.ablate.len(),
    )
    .is_err()
    {
        return;
    }
    let strategy = match req.strategy % 3 {
        0 => Strategy::Greedy,
        1 => Strategy::Sample(Sampling {
            temperature: req.temperature,
            top_k: (req.top_k > 0).then_some(req.top_k as usize),
            top_p: (req.top_p < 1.0).then_some(req.top_p),
        }),
        _ => Strategy::Beam {
            width: req.beam_width as usize,
            length_penalty: LengthPenalty::Gnmt { alpha: 0.6 },
        },
    };
    let site = |x: u8| [AttnSite::EncoderSelf, AttnSite::DecoderSelf, AttnSite::Cross][x as usize % 3];
    let forward = ForwardOptions {
        causal: Some(true),
        padding_mask: req.padding_mask,
        scale: req.scale,
        ablate: req
            .ablate
            .iter()
            .map(|&(s, layer, head)| HeadRef { site: site(s), layer: layer as usize % 4, head: head as usize % 6 })
            .collect(),
        mode: Mode::Eval,
        trace_attention: false,
        trace_hidden: false,
    };
    let opts = GenerateOptions {
        strategy,
        seed: req.seed,
        max_new_tokens: req.max_new_tokens as usize,
        use_cache: req.use_cache,
        top_candidates: 8,
        trace_attention: req.trace,
        forward,
    };
    let Ok(mut gen) = Generator::new(m, Backend::Cpu, prompt, src, opts) else {
        return;
    };
    let v = m.config.vocab_size as u32;
    for _ in 0..24 {
        match pollster::block_on(gen.step()) {
            Ok(Some(step)) => {
                assert!(step.token.is_none_or(|t| t < v));
                assert!(step.cache_len <= m.config.max_len);
            }
            Ok(None) | Err(_) => break,
        }
    }
    assert!(gen.tokens().iter().all(|&t| t < v));
});

//! The page's generate request (`tplay::protocol::GenerateStartRequest`, built from
//! arbitrary bytes: prompt, source, switches, strategy with its controls, seed, length,
//! tracing) sent to the page's engine (`Engine::generate_start`, then `generate_step` until
//! it stops, at most 24 steps per input to keep the fuzzer fast), on every shipped model.
//! Nothing may panic; every chosen token is in the vocabulary.
#![no_main]

#[path = "shipped.rs"]
mod shipped;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shipped::{with_engine, ArbSampling, ArbSwitches};
use tplay::protocol::GenerateStartRequest;

#[derive(Arbitrary, Debug)]
struct Req {
    model: u8,
    prompt: Vec<u8>,
    src: Option<Vec<u8>>,
    switches: ArbSwitches,
    sampling: ArbSampling,
    max_new_tokens: u16,
    trace: Option<bool>,
    use_cache: Option<bool>,
}

fuzz_target!(|req: Req| {
    let request = GenerateStartRequest {
        prompt: req.prompt.iter().map(|&x| x as u32).collect(),
        src: req.src.as_ref().map(|s| s.iter().map(|&x| x as u32).collect()),
        switches: req.switches.switches(),
        sampling: req.sampling.sampling(),
        max_new_tokens: req.max_new_tokens as usize,
        trace: req.trace,
        use_cache: req.use_cache,
    };
    with_engine(req.model, |engine, m| {
        if engine.generate_start(&request).is_err() {
            return;
        }
        let v = m.config.vocab_size as u32;
        for _ in 0..24 {
            match pollster::block_on(engine.generate_step()) {
                Ok(step) => {
                    assert!(step.step.token.is_none_or(|t| t < v));
                    assert!(step.step.cache_len <= m.config.max_len);
                    assert!(step.generated.iter().all(|&t| t < v));
                    if step.done {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    });
});

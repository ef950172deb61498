//! The page's forward request (`tplay::protocol::ForwardRequest`, built from arbitrary
//! bytes: batch rows, source rows, switches, heads to ablate, sampling controls, the q·k
//! inspector's request) sent to the page's engine (`tplay::engine::Engine::forward`) on
//! every shipped architecture, so the fuzzer runs exactly the boundary's code. Nothing may
//! panic; every probability the engine returns is finite and in [0, 1].
#![no_main]

#[path = "shipped.rs"]
mod shipped;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shipped::{with_engine, ArbSampling, ArbSwitches};
use tplay::protocol::ForwardRequest;

#[derive(Arbitrary, Debug)]
struct Req {
    model: u8,
    batch: Vec<Vec<u8>>,
    src: Option<Vec<Vec<u8>>>,
    switches: ArbSwitches,
    sampling: ArbSampling,
    qkv: Option<bool>,
    ffn: Option<bool>,
}

fn ids(rows: &[Vec<u8>]) -> Vec<Vec<u32>> {
    rows.iter().map(|r| r.iter().map(|&x| x as u32).collect()).collect()
}

fuzz_target!(|req: Req| {
    let request = ForwardRequest {
        batch: ids(&req.batch),
        src: req.src.as_deref().map(ids),
        switches: req.switches.switches(),
        sampling: req.sampling.sampling(),
        qkv: req.qkv,
        ffn: req.ffn,
        train: None,
    };
    with_engine(req.model, |engine, m| {
        let Ok(out) = pollster::block_on(engine.forward(&request)) else {
            return;
        };
        let unit = |p: &f32| p.is_finite() && (0.0..=1.0 + 1e-5).contains(p);
        for a in &out.attention {
            assert!(a.probs.data.0.iter().all(unit));
            assert!(a.entropy.data.0.iter().chain(&a.max_prob.data.0).all(|x| x.is_finite()));
        }
        // The FFN's hidden units come only when asked, one tensor per FFN sublayer, finite.
        if req.ffn != Some(true) {
            assert!(out.ffn.is_empty());
        }
        for f in &out.ffn {
            assert_eq!(f.hidden.data.0.len(), f.hidden.shape.iter().product::<usize>());
            assert!(f.hidden.data.0.iter().all(|x| x.is_finite()));
        }
        assert!(out.model_probs.0.iter().all(unit));
        assert!(out.next_probs.0.iter().all(unit));
        if let Some(c) = &out.class_probs {
            assert!(c.0.iter().all(unit));
        }
        let v = m.config.vocab_size as u32;
        assert!(out.predicted.iter().all(|&t| t < v.max(m.config.num_classes as u32)));
    });
});

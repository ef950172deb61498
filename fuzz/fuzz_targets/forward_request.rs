//! The page's forward request, structured: batch rows, source rows, switches, heads to
//! ablate and sampling controls, on every shipped architecture. Mirrors what the wasm
//! `Engine::forward` does with it: the size budget, the padded batch, the traced forward
//! pass (recorded when the q·k inspector asks), and the numbers derived from the trace.
//! Nothing may panic; every probability is finite and in [0, 1].
#![no_main]

#[path = "shipped.rs"]
mod shipped;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tplay::config::Arch;
use tplay::generate::sampling::{argmax, sampling_distribution, softmax, Sampling};
use tplay::limits;
use tplay::model::batch::Batch;
use tplay::model::inspect::{by_head, qk_gap, recorded_qkv, saturation, state_norms};
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode};

#[derive(Arbitrary, Debug)]
struct Req {
    model: u8,
    batch: Vec<Vec<u8>>,
    src: Option<Vec<Vec<u8>>>,
    causal: bool,
    padding_mask: bool,
    scale: bool,
    ablate: Vec<(u8, u8, u8)>,
    strategy: u8,
    temperature: f32,
    top_k: u16,
    top_p: f32,
    qkv: bool,
}

fn site(x: u8) -> AttnSite {
    [AttnSite::EncoderSelf, AttnSite::DecoderSelf, AttnSite::Cross][x as usize % 3]
}

fuzz_target!(|req: Req| {
    let m = shipped::model(req.model);
    let rows: Vec<Vec<u32>> = req.batch.iter().map(|r| r.iter().map(|&x| x as u32).collect()).collect();
    let src: Option<Vec<Vec<u32>>> = req
        .src
        .as_ref()
        .map(|s| s.iter().map(|r| r.iter().map(|&x| x as u32).collect()).collect());
    if rows.is_empty() {
        return;
    }
    if limits::check_forward_request(&m.config, &rows, src.as_deref(), req.ablate.len()).is_err() {
        return;
    }
    let pad = m.tokenizer.spec.pad;
    let Ok(batch) = Batch::padded(rows.clone(), pad) else {
        return;
    };
    let batch = match (src.clone(), m.config.arch) {
        (Some(s), Arch::EncoderDecoder) => match batch.with_padded_source(s, pad) {
            Ok(b) => b,
            Err(_) => return,
        },
        (None, Arch::EncoderDecoder) | (Some(_), _) => return,
        (None, _) => batch,
    };
    if m.check_batch(&batch).is_err() {
        return;
    }
    // Heads go to the core unchecked: it must refuse an out-of-range head itself.
    let ablate: Vec<HeadRef> = req
        .ablate
        .iter()
        .map(|&(s, layer, head)| HeadRef { site: site(s), layer: layer as usize % 4, head: head as usize % 6 })
        .collect();
    let opts = ForwardOptions {
        causal: Some(req.causal),
        padding_mask: req.padding_mask,
        scale: req.scale,
        ablate,
        mode: Mode::Eval,
        trace_attention: true,
        trace_hidden: true,
    };
    let (trace, acts) = if req.qkv {
        match m.forward_recorded(&batch, &opts) {
            Ok((t, a)) => (t, Some(a)),
            Err(_) => return,
        }
    } else {
        match m.forward(&batch, &opts) {
            Ok(t) => (t, None),
            Err(_) => return,
        }
    };
    let d = m.config.d_head();
    for a in &trace.attention {
        assert!(a.probs.data.iter().all(|p| p.is_finite() && (0.0..=1.0 + 1e-5).contains(p)));
        let real: Vec<usize> = match (a.site, &src) {
            (AttnSite::EncoderSelf, Some(s)) => s.iter().map(Vec::len).collect(),
            _ => rows.iter().map(Vec::len).collect(),
        };
        let (entropy, max_prob) = saturation(&a.probs, &real);
        assert!(entropy.iter().chain(&max_prob).all(|x| x.is_finite()));
        if let Some(c) = acts.as_ref().and_then(|acts| recorded_qkv(acts, a.site, a.layer)) {
            let [b, h, t, s] = [a.probs.shape[0], a.probs.shape[1], a.probs.shape[2], a.probs.shape[3]];
            let q = by_head(&c.q, b, t, h, d);
            let k = by_head(&c.k, b, s, h, d);
            let _ = by_head(&c.v, b, s, h, d);
            if a.site != AttnSite::Cross {
                let _ = qk_gap(&q, &k, b, h, t, d);
            }
        }
    }
    for h in &trace.hidden {
        let _ = state_norms(&h.states);
    }
    let sampling = match req.strategy % 3 {
        0 => Sampling { temperature: 0.0, top_k: None, top_p: None },
        1 => Sampling {
            temperature: req.temperature,
            top_k: (req.top_k > 0).then_some(req.top_k as usize),
            top_p: (req.top_p < 1.0).then_some(req.top_p),
        },
        _ => Sampling::default(),
    };
    if let Some(cl) = &trace.class_logits {
        let p = softmax(&cl.data[..cl.shape[1]]);
        assert!(p.iter().all(|x| x.is_finite()));
    } else {
        let v = m.config.vocab_size;
        let row0 = &trace.logits.data[..batch.len * v];
        let last = rows[0].len().saturating_sub(1);
        let at_last = &row0[last * v..(last + 1) * v];
        let _ = softmax(at_last);
        if let Ok(drawn) = sampling_distribution(at_last, &sampling) {
            assert!(drawn.iter().all(|x| x.is_finite() && *x >= 0.0));
        }
        for r in row0.chunks(v) {
            assert!((argmax(r).expect("finite logits") as usize) < v);
        }
    }
});

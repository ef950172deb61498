//! What the page's decoding views claim, through the engine the page runs: the KV cache
//! changes the cost and never the tokens, the beam tree's best finished hypothesis is the
//! generator's answer, serial generation costs grow linearly with the cache and
//! quadratically without it, and additive scoring costs as many multiply-adds as dot
//! products plus a tanh and an addition per dimension of every pair.

mod support;

use pollster::block_on;
use support::{default_switches, models_dir};
use tplay::config::Score;
use tplay::engine::Engine;
use tplay::generate::Hypothesis;
use tplay::protocol::{
    GenerateStartRequest, GenerateStep, ParallelRequest, SamplingRequest, ScoringRequest,
    StrategyName,
};

/// The engine with a shipped model loaded, and that model's `<bos>`.
fn engine(file: &str) -> (Engine, u32) {
    let bytes = std::fs::read(models_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut e = Engine::new();
    let bos = e.load(&bytes).unwrap().bos;
    (e, bos)
}

fn sampling(strategy: StrategyName) -> SamplingRequest {
    SamplingRequest {
        strategy,
        temperature: 1.0,
        top_k: 0,
        top_p: 1.0,
        beam_width: 3,
        seed: 4,
    }
}

/// Every step of one generation, to the end.
fn generate(
    e: &mut Engine,
    prompt: Vec<u32>,
    strategy: StrategyName,
    cache: bool,
) -> Vec<GenerateStep> {
    e.generate_start(&GenerateStartRequest {
        prompt,
        src: None,
        switches: default_switches(),
        sampling: sampling(strategy),
        max_new_tokens: 12,
        trace: Some(false),
        use_cache: Some(cache),
    })
    .unwrap();
    let mut steps = vec![];
    loop {
        let s = block_on(e.generate_step()).unwrap();
        let done = s.done;
        steps.push(s);
        if done {
            return steps;
        }
    }
}

/// `<bos>` and the tokens of `text`.
fn prompt(e: &Engine, bos: u32, text: &str) -> Vec<u32> {
    let mut ids = vec![bos];
    ids.extend(e.tokenize(text).unwrap().ids);
    ids
}

#[test]
fn without_the_kv_cache_the_tokens_are_the_same_and_the_cost_is_higher() {
    let (mut e, bos) = engine("grammar-alibi.safetensors");
    let p = prompt(&e, bos, "the cat");
    for strategy in [
        StrategyName::Greedy,
        StrategyName::Sample,
        StrategyName::Beam,
    ] {
        let on = generate(&mut e, p.clone(), strategy, true);
        let off = generate(&mut e, p.clone(), strategy, false);
        assert_eq!(
            on.last().unwrap().generated,
            off.last().unwrap().generated,
            "{strategy:?}"
        );
        assert_eq!(on.len(), off.len());
        let mut flops = (0u64, 0u64);
        for (i, (a, b)) in on.iter().zip(&off).enumerate() {
            assert_eq!(a.step.cache_len, b.step.cache_len);
            // With the cache, a step after the first runs only the new token; without it,
            // the whole sequence again (one row per hypothesis for beam search).
            if i > 0 {
                assert_eq!(a.step.fed, 1, "{strategy:?} step {i}");
                assert_eq!(b.step.fed, b.step.cache_len, "{strategy:?} step {i}");
                assert!(b.step.flops > a.step.flops, "{strategy:?} step {i}");
            }
            flops.0 += a.step.flops;
            flops.1 += b.step.flops;
        }
        eprintln!(
            "{strategy:?}: {} steps, {} FLOPs with the cache, {} without",
            on.len(),
            flops.0,
            flops.1
        );
        assert!(flops.1 > 2 * flops.0, "{flops:?}");
    }
}

#[test]
fn the_beam_trees_best_finished_hypothesis_is_the_generators_result() {
    let (mut e, bos) = engine("reverse.safetensors");
    let p = prompt(&e, bos, "dcba>");
    let steps = generate(&mut e, p, StrategyName::Beam, true);
    // The tree, as the page draws it: each step's live hypotheses point at their parent
    // in the previous step's live list; finished and pruned ones hang off the same.
    let mut finished: Vec<&Hypothesis> = vec![];
    let mut prev_live = 1; // the empty root
    let mut pruned_seen = 0;
    for s in &steps {
        let beam = s.step.beam.as_ref().expect("beam search reports its beam");
        for h in beam
            .live
            .iter()
            .chain(&beam.newly_finished)
            .chain(&beam.pruned)
        {
            assert!(h.parent.unwrap() < prev_live, "parent out of range");
        }
        // A cut-off branch is never more probable than a kept one.
        if let (Some(worst_kept), Some(best_cut)) = (beam.live.last(), beam.pruned.first()) {
            assert!(best_cut.log_prob <= worst_kept.log_prob);
        }
        pruned_seen += beam.pruned.len();
        finished.extend(&beam.newly_finished);
        prev_live = beam.live.len();
    }
    assert!(pruned_seen > 0, "no branch was ever cut off");
    let best = finished
        .iter()
        .max_by(|a, b| a.score.total_cmp(&b.score))
        .expect("a finished hypothesis");
    let last = steps.last().unwrap();
    assert_eq!(best.tokens, last.generated);
    assert_eq!(
        e.tokenize("abcd").unwrap().ids,
        last.generated[..4].to_vec(),
        "the reverse model reverses"
    );
}

#[test]
fn serial_generation_costs_grow_linearly_with_the_cache_and_quadratically_without() {
    let (e, bos) = engine("grammar-alibi.safetensors");
    let p = prompt(&e, bos, "the cat");
    let r = block_on(e.parallel(&ParallelRequest {
        prompt: p.clone(),
        length: 64,
        repeats: 3,
    }))
    .unwrap();
    assert_eq!(r.tokens.len(), 64);
    assert_eq!(r.tokens[..p.len()], p[..]);
    let x = &r.exponents;
    eprintln!("growth exponents: {x:?}");
    // Counted work: deterministic, so held to the plot's claim. (At this length the
    // projections and the FFN still dominate a cached step; by n ≈ 280 the attention over
    // the cache costs as much, and the cached total bends towards n².)
    assert!((x.cached_flops - 1.0).abs() < 0.2, "{}", x.cached_flops);
    assert!((x.uncached_flops - 2.0).abs() < 0.2, "{}", x.uncached_flops);
    assert!((x.cached_attention_flops - 1.0).abs() < 1e-9);
    assert!((x.uncached_attention_flops - 2.0).abs() < 0.2);
    // One teacher-forced pass over n tokens costs what n cached steps cost together.
    let n = *r.forward_lengths.last().unwrap();
    let cached_total: f64 = r.cached_step_flops[..n].iter().sum();
    assert_eq!(*r.forward_flops.last().unwrap(), cached_total);
    // The measured times are printed, not asserted (a test never asserts on the clock).
    assert!(r.cached_ms.iter().all(|t| t.is_finite() && *t >= 0.0));
    assert!(
        r.uncached_ms.windows(2).all(|w| w[0] <= w[1]),
        "times to n tokens grow"
    );
    // Bad requests are refused with a reason.
    let too_long = ParallelRequest {
        prompt: p,
        length: 100_000,
        repeats: 1,
    };
    let err = block_on(e.parallel(&too_long)).unwrap_err().to_string();
    assert!(err.contains("length"), "{err}");
}

#[test]
fn additive_scores_cost_as_many_multiply_adds_as_dot_products_plus_a_tanh_per_dimension() {
    let (e, _) = engine("reverse.safetensors");
    let r = block_on(e.scoring(&ScoringRequest {
        tokens: 32,
        repeats: 3,
    }))
    .unwrap();
    let scores: Vec<Score> = r.rows.iter().map(|x| x.score).collect();
    assert_eq!(scores, [Score::Dot, Score::ScaledDot, Score::Additive]);
    // Decoder-only, 2 layers, 32 tokens under the causal mask: 2 · 32·33/2 pairs, C = 32.
    assert_eq!(r.pairs, 2 * 32 * 33 / 2);
    for row in &r.rows {
        assert_eq!(row.multiply_adds, r.rows[0].multiply_adds);
        assert_eq!(row.score_multiply_adds, r.pairs * 32);
        let extra = if row.score == Score::Additive {
            r.pairs * 32
        } else {
            0
        };
        assert_eq!((row.additions, row.tanh), (extra, extra), "{:?}", row.score);
        assert_eq!(row.samples_ms.len(), 3);
        eprintln!("{:?}: {} ms", row.score, row.ms);
    }
}

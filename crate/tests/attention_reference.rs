//! The tuned attention (`attention_forward`, `mha_forward`: two query rows at a time, a
//! causal shortcut, f64 sums in a fixed lane order) computes what the plain reference
//! (`model::attention_reference`: the textbook formulas in f64, one key at a time)
//! computes, on every shape, score function, mask (rules, painted cells, padding), position
//! bias (ALiBi, Shaw relative, RoPE), query offset (a cached step), dropout and ablation.
//!
//! Tolerance: every score, probability, z and output within 1e-5 · max(1, |reference|);
//! masked scores −∞ on both sides, and a NaN anywhere fails.

mod support;

use proptest::prelude::*;
use proptest::sample::select;

use support::{max_diff, values};
use tplay::config::Score;
use tplay::model::attention::{attention_forward, mha_forward, AttnRecord, AttnSpec, Relative};
use tplay::model::attention_reference::{attention_reference, mha_reference};
use tplay::model::mask::{CellEdit, MaskRule, MaskSpec};
use tplay::model::position::alibi_slopes;
use tplay::model::AttentionParams;
use tplay::tensor::Tensor;

/// Relative to max(1, |reference|).
const TOL: f32 = 1e-5;

/// Shaw relative distances are clipped at ±K.
const K_MAX: usize = 2;

/// Every element of `got` is within TOL·max(1, |want|) of `want`; an infinity must be the
/// same infinity on both sides (a masked score), a NaN on either side fails.
fn assert_near(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if g.is_infinite() || w.is_infinite() {
            g == w
        } else {
            max_diff(&[g], &[w]) <= TOL * w.abs().max(1.0)
        };
        assert!(ok, "{what}[{i}]: tuned {g} vs reference {w}");
    }
}

/// One attention call: the shapes, the switches and the position encodings.
#[derive(Clone, Debug)]
struct Case {
    h: usize,
    d: usize,
    b: usize,
    t: usize,
    s: usize,
    q_offset: usize,
    score: Score,
    scale: bool,
    rule: MaskRule,
    cells: Vec<CellEdit>,
    key_pad: Option<Vec<bool>>,
    dropout: bool,
    alibi: bool,
    relative: bool,
    rope: bool,
    ablate: Vec<bool>,
    seed: u64,
}

fn rules() -> impl Strategy<Value = MaskRule> {
    prop_oneof![
        Just(MaskRule::None),
        Just(MaskRule::Causal),
        (1usize..5).prop_map(|prefix| MaskRule::PrefixLm { prefix }),
        (1usize..4).prop_map(|window| MaskRule::SlidingWindow { window }),
    ]
}

/// Self-attention (keys at positions 0..S, queries the last T of them, so `q_offset` =
/// S − T: T = S is a full pass, T = 1 a cached step) with any mask and position encoding,
/// or cross-attention (any S, no position bias, no mask but padding).
fn cases() -> impl Strategy<Value = Case> {
    (
        (
            1usize..4,
            1usize..4,
            1usize..3,
            1usize..6,
            0usize..4,
            any::<bool>(),
        ),
        (
            select(vec![Score::Dot, Score::ScaledDot, Score::Additive]),
            any::<bool>(),
            rules(),
            prop::collection::vec((0usize..9, 0usize..9, any::<bool>()), 0..4),
        ),
        (
            prop::option::of(prop::collection::vec(any::<bool>(), 9 * 2)),
            any::<bool>(),
            0usize..4,
            any::<bool>(),
            prop::collection::vec(any::<bool>(), 3),
            0u64..1000,
        ),
    )
        .prop_map(
            |(
                (h, half_d, b, t, more, cross),
                (score, scale, rule, cells),
                (pads, dropout, position, rope, ablate, seed),
            )| {
                let s = if cross { 1 + more + t % 3 } else { t + more };
                let q_offset = if cross { 0 } else { more };
                let self_attention = !cross;
                Case {
                    h,
                    d: 2 * half_d,
                    b,
                    t,
                    s,
                    q_offset,
                    score,
                    scale,
                    rule: if self_attention { rule } else { MaskRule::None },
                    cells: if self_attention {
                        cells
                            .into_iter()
                            .map(|(query, key, hidden)| CellEdit { query, key, hidden })
                            .collect()
                    } else {
                        vec![]
                    },
                    key_pad: pads.map(|p| p[..b * s].to_vec()),
                    dropout,
                    alibi: self_attention && position == 1,
                    relative: self_attention && position == 2,
                    rope: self_attention && rope,
                    ablate: ablate[..h].to_vec(),
                    seed,
                }
            },
        )
}

/// The tensors of a case: q, k, v (or xq, xkv), the relative tables, additive w, dropout
/// multipliers (0 or 1/(1 − 0.2)) and the ALiBi slopes.
struct Inputs {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    rel_k: Vec<f32>,
    rel_v: Vec<f32>,
    w: Vec<f32>,
    dropout: Vec<f32>,
    slopes: Vec<f32>,
    mask: MaskSpec,
}

fn inputs(c: &Case) -> Inputs {
    let width = c.h * c.d;
    let keep = values(c.b * c.h * c.t * c.s, c.seed + 7, 1.0);
    Inputs {
        q: values(c.b * c.t * width, c.seed, 1.0),
        k: values(c.b * c.s * width, c.seed + 1, 1.0),
        v: values(c.b * c.s * width, c.seed + 2, 1.0),
        rel_k: values((2 * K_MAX + 1) * c.d, c.seed + 3, 0.5),
        rel_v: values((2 * K_MAX + 1) * c.d, c.seed + 4, 0.5),
        w: values(c.h * c.d, c.seed + 5, 1.0),
        dropout: keep
            .iter()
            .map(|&x| if x > 0.6 { 0.0 } else { 1.25 })
            .collect(),
        slopes: alibi_slopes(c.h),
        mask: MaskSpec::new(c.rule, &c.cells, c.key_pad.is_some()),
    }
}

fn spec<'a>(c: &'a Case, x: &'a Inputs) -> AttnSpec<'a> {
    AttnSpec {
        n_heads: c.h,
        d_head: c.d,
        score: c.score,
        scale: c.scale,
        mask: &x.mask,
        q_offset: c.q_offset,
        rope: c.rope,
        alibi: c.alibi.then_some(x.slopes.as_slice()),
        relative: c.relative.then(|| Relative {
            rel_k: &x.rel_k,
            rel_v: &x.rel_v,
            max_distance: K_MAX,
        }),
        additive_v: Some(&x.w),
        ablate: &c.ablate,
    }
}

fn tensor(shape: Vec<usize>, data: Vec<f32>) -> Tensor {
    Tensor::new(shape, data).expect("shape and data agree")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// One sequence's scores, probabilities and z, for projected q, k, v (RoPE, which
    /// rotates q and k before this call, belongs to the test below).
    #[test]
    fn attention_forward_equals_the_plain_reference(case in cases()) {
        let c = Case { b: 1, rope: false, ..case };
        let x = inputs(&c);
        let spec = spec(&c, &x);
        let (width, hts) = (c.h * c.d, c.h * c.t * c.s);
        let (q, k, v) = (&x.q[..c.t * width], &x.k[..c.s * width], &x.v[..c.s * width]);
        let pad = c.key_pad.as_ref().map(|p| &p[..c.s]);
        let drop = c.dropout.then(|| &x.dropout[..hts]);
        let mut z = vec![0.0f32; c.t * width]; // (T, C)
        let mut scores = vec![0.0f32; hts]; // (H, T, S)
        let mut probs = vec![0.0f32; hts]; // (H, T, S)
        attention_forward(&mut z, &mut scores, &mut probs, q, k, v, pad, drop, &spec, c.t, c.s);
        let want = attention_reference(q, k, v, pad, drop, &spec, c.t, c.s);
        assert_near("scores", &scores, &want.scores);
        assert_near("probs", &probs, &want.probs);
        assert_near("z", &z, &want.z);
    }

    /// The whole sublayer over a batch: projections, RoPE, attention per sequence, W_O.
    #[test]
    fn mha_forward_equals_the_plain_reference(c in cases()) {
        let x = inputs(&c);
        let spec = spec(&c, &x);
        let width = c.h * c.d;
        let params = AttentionParams {
            in_proj_weight: tensor(vec![3 * width, width], values(3 * width * width, c.seed + 8, 0.5)),
            in_proj_bias: tensor(vec![3 * width], values(3 * width, c.seed + 9, 0.2)),
            out_proj_weight: tensor(vec![width, width], values(width * width, c.seed + 10, 0.5)),
            out_proj_bias: tensor(vec![width], values(width, c.seed + 11, 0.2)),
            additive_v: Some(tensor(vec![c.h, c.d], x.w.clone())),
            rel_k: Some(tensor(vec![2 * K_MAX + 1, c.d], x.rel_k.clone())),
            rel_v: Some(tensor(vec![2 * K_MAX + 1, c.d], x.rel_v.clone())),
        };
        // q and k of `inputs` serve as the sublayer's inputs xq (B, T, C), xkv (B, S, C).
        let (xq, xkv) = (&x.q, &x.k);
        let pad = c.key_pad.as_deref();
        let drop = c.dropout.then_some(x.dropout.as_slice());
        let mut out = vec![0.0f32; c.b * c.t * width]; // (B, T, C)
        let mut saved = AttnRecord::default();
        mha_forward(&mut out, &mut saved, xq, xkv, &params, pad, drop, &spec, c.b, c.t, c.s);
        let (want, heads) = mha_reference(xq, xkv, &params, pad, drop, &spec, c.b, c.t, c.s);
        let hts = c.h * c.t * c.s;
        for (seq, h) in heads.iter().enumerate() {
            assert_near("scores", &saved.scores[seq * hts..(seq + 1) * hts], &h.scores);
            assert_near("probs", &saved.probs[seq * hts..(seq + 1) * hts], &h.probs);
        }
        assert_near("out", &out, &want);
    }
}

#[test]
fn the_reference_hides_what_the_mask_hides_and_a_fully_masked_row_is_zeros() {
    // One head, D 2, three keys; query 0 under the causal rule sees key 0 only, and a
    // query whose every key is padding attends to nothing.
    let (t, s) = (2, 3);
    let q = [1.0, 0.0, 0.0, 1.0]; // (T, C)
    let k = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]; // (S, C)
    let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // (S, C)
    let causal = MaskSpec::new(MaskRule::Causal, &[], true);
    let spec = AttnSpec {
        n_heads: 1,
        d_head: 2,
        score: Score::Dot,
        scale: false,
        mask: &causal,
        q_offset: 1,
        rope: false,
        alibi: None,
        relative: None,
        additive_v: None,
        ablate: &[],
    };
    let all_pad = [true; 3];
    let r = attention_reference(&q, &k, &v, Some(&all_pad), None, &spec, t, s);
    assert!(r.scores.iter().all(|&x| x == f32::NEG_INFINITY));
    assert!(r.probs.iter().chain(&r.z).all(|&x| x == 0.0));
    let r = attention_reference(&q, &k, &v, None, None, &spec, t, s);
    // Query 0 sits at position 1: keys 0 and 1, scores q·k = 1 and 0, key 2 hidden.
    assert_eq!(&r.scores[..3], &[1.0, 0.0, f32::NEG_INFINITY]);
    let e = std::f64::consts::E;
    let p0 = (e / (e + 1.0)) as f32;
    assert!(max_diff(&r.probs[..3], &[p0, 1.0 - p0, 0.0]) < 1e-7);
    // Its z is the probability-weighted values of keys 0 and 1.
    let want_z = [p0 * 1.0 + (1.0 - p0) * 3.0, p0 * 2.0 + (1.0 - p0) * 4.0];
    assert!(max_diff(&r.z[..2], &want_z) < 1e-6);
    // Query 1 at position 2 sees all three keys.
    assert!(r.scores[3..].iter().all(|x| x.is_finite()));
}

//! The train-mode WGSL kernels around attention against the CPU functions they mirror:
//! the attention backward (softmax, weighted values, scores; every score function, every
//! mask kind with key padding and fully masked rows, ALiBi, Shaw tables, dropout on the
//! probabilities, head ablation, T = 1, T ≠ S, sizes that are not multiples of 16 or 64),
//! the RoPE backward, BatchNorm in train mode (forward, running statistics, backward) and
//! dropout (the CPU's seeded masks, bit for bit).
//!
//! Parity is measured as a RELATIVE error per tensor:
//!   rel(gpu, cpu) = max_i |gpu_i − cpu_i| / max(1, max_i |cpu_i|)
//! (the largest absolute difference, divided by the tensor's largest magnitude when that is
//! above 1), with NaN or an unshared infinity counting as infinite ([`max_diff`]). Every
//! kernel must stay within [`TOL`] = 1e-5; each test prints its worst value.
//!
//! Backward kernels ADD into their gradient outputs, as the CPU's backward functions do:
//! the tests start every gradient from random values, so a kernel that overwrote instead
//! of adding would fail.

mod support;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{gpu_or_skip, max_diff, values};
use tplay::backend::gpu::{
    dropout_key, rope_table, AttnDims, BatchNormGradArgs, BatchNormTrainArgs, DropoutArgs,
    GpuBuffer, GpuContext, LinearBackwardArgs, MatmulArgs, Recorder, Rows, ScoreArgs,
    ScoreGradArgs, ValueArgs, ValueGradArgs, MASKED,
};
use tplay::config::Score;
use tplay::model::attention::{attention_forward, mha_forward, AttnRecord, AttnSpec, Relative};
use tplay::model::dropout::dropout_mask;
use tplay::model::mask::{CellEdit, MaskRule, MaskSpec};
use tplay::model::norm::{batchnorm_running_update, batchnorm_train_forward};
use tplay::model::position::alibi_slopes;
use tplay::model::AttentionParams;
use tplay::tensor::Tensor;
use tplay::train::backward::attention::{attention_backward, mha_backward, AttnExtraGrads};
use tplay::train::backward::norm::batchnorm_train_backward;
use tplay::train::backward::position::rope_backward;

/// Largest relative difference allowed (see the header for the definition).
const TOL: f32 = 1e-5;

/// rel(gpu, cpu) = max|gpu − cpu| / max(1, max|cpu|).
fn rel(got: &[f32], want: &[f32]) -> f32 {
    let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    max_diff(got, want) / scale
}

/// The worst relative difference of each kernel (or gradient) seen by a test.
#[derive(Default)]
struct Worst(Vec<(&'static str, f32)>);

impl Worst {
    fn see(&mut self, what: &'static str, d: f32, case: &str) {
        assert!(
            d <= TOL,
            "{case}: {what} relative difference {d:e} > {TOL:e}"
        );
        match self.0.iter_mut().find(|(w, _)| *w == what) {
            Some((_, m)) => *m = m.max(d),
            None => self.0.push((what, d)),
        }
    }

    fn print(&self, test: &str) {
        for (what, d) in &self.0 {
            eprintln!("{test}: {what}: worst relative difference {d:e}");
        }
    }
}

/// Record with `f`, then read back the (offset, len, buffer) slices it names.
fn read<'b>(
    ctx: &GpuContext,
    f: impl FnOnce(&mut Recorder) -> Vec<(usize, usize, &'b GpuBuffer)>,
) -> Vec<Vec<f32>> {
    let mut rec = ctx.recorder().unwrap();
    let wanted = f(&mut rec);
    let slots: Vec<_> = wanted
        .iter()
        .map(|&(off, len, buf)| rec.read(buf, off, len).unwrap())
        .collect();
    let back = pollster::block_on(rec.finish()).unwrap();
    slots.into_iter().map(|s| back.f32(s).to_vec()).collect()
}

// ---------------------------------------------------------------------------------------
// Attention backward
// ---------------------------------------------------------------------------------------

/// One attention configuration: inputs, the CPU forward's scores and probabilities, and
/// the CPU backward's gradients.
struct Case {
    name: String,
    b: usize,
    h: usize,
    d: usize,
    t: usize,
    s: usize,
    pos0: usize,
    score: Score,
    scale: bool,
    rel: Option<usize>,
    alibi: bool,
    dropout: bool,
    ablate: Vec<bool>,
    /// (B·T, C)
    q: Vec<f32>,
    /// (B·S, 2C): k | v side by side, as in a fused projection
    kv: Vec<f32>,
    rel_k: Vec<f32>,
    rel_v: Vec<f32>,
    add_v: Vec<f32>,
    /// (B, H, T, S) 0 or 1/(1 − p)
    drop: Vec<f32>,
    /// (B·T, C) gradient of z
    dz: Vec<f32>,
    /// The starting values of every gradient (the kernels add to them):
    /// (B·T, C), (B·S, 2C) dk | dv, (2K+1, D), (2K+1, D), (H, D)
    dq0: Vec<f32>,
    dkv0: Vec<f32>,
    drel_k0: Vec<f32>,
    drel_v0: Vec<f32>,
    dadd0: Vec<f32>,
    /// CPU forward: (B, H, T, S) scores (−∞ masked) and probabilities
    scores: Vec<f32>,
    probs: Vec<f32>,
    /// CPU backward, starting from the values above
    dq: Vec<f32>,
    dkv: Vec<f32>,
    drel_k: Vec<f32>,
    drel_v: Vec<f32>,
    dadd: Vec<f32>,
}

type Shape = (usize, usize, usize, usize, usize, usize);

/// The forward tests' masks for a shape (none, causal, prefix-LM, sliding window, causal
/// with painted cells), all with key padding.
fn masks((_, _, _, t, s, pos0): Shape) -> Vec<MaskSpec> {
    let last = pos0 + t - 1;
    let cells = [
        CellEdit {
            query: pos0,
            key: 0,
            hidden: true,
        },
        CellEdit {
            query: pos0,
            key: s - 1,
            hidden: false,
        },
        CellEdit {
            query: last,
            key: last.min(s - 1) / 2,
            hidden: true,
        },
    ];
    vec![
        MaskSpec::new(MaskRule::None, &[], true),
        MaskSpec::new(MaskRule::Causal, &[], true),
        MaskSpec::new(MaskRule::PrefixLm { prefix: 3 }, &[], true),
        MaskSpec::new(MaskRule::SlidingWindow { window: 2 }, &[], true),
        MaskSpec::new(MaskRule::Causal, &cells, true),
    ]
}

impl Case {
    #[allow(clippy::too_many_arguments)]
    fn new(
        (b, h, d, t, s, pos0): Shape,
        (score, scale): (Score, bool),
        mask: &MaskSpec,
        rel: Option<usize>,
        alibi: bool,
        dropout: bool,
        ablate_first: bool,
        seed: u64,
    ) -> Case {
        let c = h * d;
        let kk = rel.unwrap_or(1);
        let table = (2 * kk + 1) * d;
        // Key padding: the last key of sequence 0 (when S > 1), and every key of sequence 1
        // (its queries attend to nothing: fully masked rows).
        let key_pad: Vec<bool> = (0..b * s)
            .map(|i| (i / s == 0 && s > 1 && i % s == s - 1) || i / s == 1)
            .collect();
        let p = 0.25f32;
        let drop: Vec<f32> = values(b * h * t * s, seed + 5, 1.0)
            .iter()
            .map(|&u| {
                if !dropout {
                    1.0
                } else if u < -0.5 {
                    0.0
                } else {
                    1.0 / (1.0 - p)
                }
            })
            .collect();
        let mut case = Case {
            name: format!(
                "B={b} H={h} D={d} T={t} S={s} pos0={pos0} {score:?} scale={scale} mask={}+{} cells rel={rel:?} alibi={alibi} dropout={dropout} ablate={ablate_first}",
                mask.rule.name(),
                mask.cells.len()
            ),
            b,
            h,
            d,
            t,
            s,
            pos0,
            score,
            scale,
            rel,
            alibi,
            dropout,
            ablate: (0..h).map(|i| ablate_first && i == 0).collect(),
            q: values(b * t * c, seed, 1.5),
            kv: values(b * s * 2 * c, seed + 1, 1.5),
            rel_k: values(table, seed + 2, 0.5),
            rel_v: values(table, seed + 3, 0.5),
            add_v: values(c, seed + 4, 1.0),
            drop,
            dz: values(b * t * c, seed + 6, 1.0),
            dq0: values(b * t * c, seed + 7, 0.5),
            dkv0: values(b * s * 2 * c, seed + 8, 0.5),
            drel_k0: values(table, seed + 9, 0.5),
            drel_v0: values(table, seed + 10, 0.5),
            dadd0: values(c, seed + 11, 0.5),
            scores: vec![0.0; b * h * t * s],
            probs: vec![0.0; b * h * t * s],
            dq: vec![],
            dkv: vec![],
            drel_k: vec![],
            drel_v: vec![],
            dadd: vec![],
        };
        case.run_cpu(mask, &key_pad);
        case
    }

    fn run_cpu(&mut self, mask: &MaskSpec, key_pad: &[bool]) {
        let (b, h, d, t, s) = (self.b, self.h, self.d, self.t, self.s);
        let c = h * d;
        let slopes = alibi_slopes(h);
        let spec = AttnSpec {
            n_heads: h,
            d_head: d,
            score: self.score,
            scale: self.scale,
            mask,
            q_offset: self.pos0,
            rope: false,
            alibi: self.alibi.then_some(&slopes[..]),
            relative: self.rel.map(|k| Relative {
                rel_k: &self.rel_k,
                rel_v: &self.rel_v,
                max_distance: k,
            }),
            additive_v: Some(&self.add_v),
            ablate: &self.ablate,
        };
        let hts = h * t * s;
        let mut z = vec![0.0f32; t * c]; // (T, C)
        let (mut dq, mut dkv) = (self.dq0.clone(), self.dkv0.clone());
        let (mut drel_k, mut drel_v) = (self.drel_k0.clone(), self.drel_v0.clone());
        let mut dadd = self.dadd0.clone();
        for seq in 0..b {
            let kv = &self.kv[seq * s * 2 * c..(seq + 1) * s * 2 * c];
            let k: Vec<f32> = kv.chunks(2 * c).flat_map(|r| r[..c].to_vec()).collect(); // (S, C)
            let v: Vec<f32> = kv.chunks(2 * c).flat_map(|r| r[c..].to_vec()).collect(); // (S, C)
            let range = seq * hts..(seq + 1) * hts;
            let drop = self.dropout.then(|| &self.drop[range.clone()]);
            attention_forward(
                &mut z,
                &mut self.scores[range.clone()],
                &mut self.probs[range.clone()],
                &self.q[seq * t * c..(seq + 1) * t * c],
                &k,
                &v,
                Some(&key_pad[seq * s..(seq + 1) * s]),
                drop,
                &spec,
                t,
                s,
            );
            let dkv_seq = &dkv[seq * s * 2 * c..(seq + 1) * s * 2 * c];
            let mut dk: Vec<f32> = dkv_seq
                .chunks(2 * c)
                .flat_map(|r| r[..c].to_vec())
                .collect();
            let mut dv: Vec<f32> = dkv_seq
                .chunks(2 * c)
                .flat_map(|r| r[c..].to_vec())
                .collect();
            let mut extra = AttnExtraGrads {
                rel_k: self.rel.map(|_| &mut drel_k[..]),
                rel_v: self.rel.map(|_| &mut drel_v[..]),
                additive_v: (self.score == Score::Additive).then_some(&mut dadd[..]),
            };
            attention_backward(
                &mut dq[seq * t * c..(seq + 1) * t * c],
                &mut dk,
                &mut dv,
                &mut extra,
                &self.dz[seq * t * c..(seq + 1) * t * c],
                &self.q[seq * t * c..(seq + 1) * t * c],
                &k,
                &v,
                &self.scores[range.clone()],
                &self.probs[range.clone()],
                drop,
                &spec,
                t,
                s,
            );
            for j in 0..s {
                let row = &mut dkv[(seq * s + j) * 2 * c..(seq * s + j + 1) * 2 * c];
                row[..c].copy_from_slice(&dk[j * c..(j + 1) * c]);
                row[c..].copy_from_slice(&dv[j * c..(j + 1) * c]);
            }
        }
        self.dq = dq;
        self.dkv = dkv;
        self.drel_k = drel_k;
        self.drel_v = drel_v;
        self.dadd = dadd;
    }

    fn dims(&self) -> AttnDims {
        AttnDims {
            batch: self.b,
            n_heads: self.h,
            t_len: self.t,
            s_len: self.s,
            d_head: self.d,
            pos0: self.pos0,
            kv_rows: self.s,
        }
    }

    fn additive(&self) -> bool {
        self.score == Score::Additive
    }
}

/// What the GPU's three attention-backward kernels give for a case, from the CPU
/// forward's scores and probabilities.
struct GpuGrads {
    dprobs: Vec<f32>,
    dscores: Vec<f32>,
    dq: Vec<f32>,
    dkv: Vec<f32>,
    drel_k: Vec<f32>,
    drel_v: Vec<f32>,
    dadd: Vec<f32>,
}

fn gpu_attention_backward(ctx: &GpuContext, case: &Case) -> GpuGrads {
    let c = case.h * case.d;
    let up = |what: &str, v: &[f32]| ctx.upload(what, v).unwrap();
    let scores: Vec<f32> = case
        .scores
        .iter()
        .map(|&v| if v == f32::NEG_INFINITY { MASKED } else { v })
        .collect();
    let (scores, probs, drop) = (
        up("scores", &scores),
        up("probs", &case.probs),
        up("drop", &case.drop),
    );
    let (q, kv, dz) = (up("q", &case.q), up("kv", &case.kv), up("dz", &case.dz));
    let (rel_k, rel_v, add_v) = (
        up("rel_k", &case.rel_k),
        up("rel_v", &case.rel_v),
        up("add_v", &case.add_v),
    );
    let (dq, dkv) = (up("dq", &case.dq0), up("dkv", &case.dkv0));
    let (drel_k, drel_v, dadd) = (
        up("drel_k", &case.drel_k0),
        up("drel_v", &case.drel_v0),
        up("dadd", &case.dadd0),
    );
    let flags: Vec<u32> = case.ablate.iter().map(|&a| a as u32).collect();
    let ablate = ctx.upload_u32("ablate", &flags).unwrap();
    let n = case.scores.len();
    let dprobs = ctx.zeros("dprobs", n).unwrap();
    let dscores = ctx.zeros("dscores", n).unwrap();
    let dims = case.dims();
    let rows = case.b * case.h * case.t;
    let alpha = if case.score == Score::ScaledDot && case.scale {
        1.0 / (case.d as f32).sqrt()
    } else {
        1.0
    };
    let out = read(ctx, |r| {
        r.attention_values_backward(&ValueGradArgs {
            dz: Rows::dense(&dz, c),
            probs: &probs,
            dropout: case.dropout.then_some(&drop),
            v: Rows {
                buf: &kv,
                stride: 2 * c,
                col: c,
            },
            rel_v: case.rel.map(|_| &rel_v),
            rel_max: case.rel.unwrap_or(0),
            scores: &scores,
            ablate: &ablate,
            dprobs: &dprobs,
            dv: Rows {
                buf: &dkv,
                stride: 2 * c,
                col: c,
            },
            drel_v: case.rel.map(|_| &drel_v),
            dims,
        })
        .unwrap();
        r.softmax_backward(&probs, &dprobs, &dscores, rows, case.s)
            .unwrap();
        r.attention_scores_backward(&ScoreGradArgs {
            dscores: &dscores,
            q: Rows::dense(&q, c),
            k: Rows {
                buf: &kv,
                stride: 2 * c,
                col: 0,
            },
            rel_k: case.rel.map(|_| &rel_k),
            rel_max: case.rel.unwrap_or(0),
            additive_v: case.additive().then_some(&add_v),
            alpha,
            dq: Rows::dense(&dq, c),
            dk: Rows {
                buf: &dkv,
                stride: 2 * c,
                col: 0,
            },
            drel_k: case.rel.map(|_| &drel_k),
            dadditive_v: case.additive().then_some(&dadd),
            dims,
        })
        .unwrap();
        vec![
            (0, n, &dprobs),
            (0, n, &dscores),
            (0, dq.len(), &dq),
            (0, dkv.len(), &dkv),
            (0, drel_k.len(), &drel_k),
            (0, drel_v.len(), &drel_v),
            (0, dadd.len(), &dadd),
        ]
    });
    let mut it = out.into_iter();
    let mut next = || it.next().unwrap();
    GpuGrads {
        dprobs: next(),
        dscores: next(),
        dq: next(),
        dkv: next(),
        drel_k: next(),
        drel_v: next(),
        dadd: next(),
    }
}

/// Every score function × position scheme × mask × shape, with dropout and ablation on
/// some: T = 1 with a query offset, T ≠ S (cross-attention shapes), sizes that are not
/// multiples of 16 or 64, several heads, fully masked rows (sequence 1 is all padding).
fn cases() -> Vec<Case> {
    let shapes: [Shape; 5] = [
        (2, 2, 4, 5, 5, 0),
        (2, 3, 3, 1, 7, 6),
        (3, 1, 8, 3, 9, 4),
        (2, 2, 2, 70, 70, 0),
        (2, 4, 4, 17, 13, 0),
    ];
    let scores = [
        (Score::ScaledDot, true),
        (Score::ScaledDot, false),
        (Score::Dot, true),
        (Score::Additive, true),
    ];
    let mut out = vec![];
    let mut seed = 5000;
    for &shape in &shapes {
        for &score in &scores {
            for (rel, alibi) in [
                (None, false),
                (Some(2), false),
                (Some(0), false),
                (None, true),
            ] {
                // Every mask kind with the plain score; none and causal with the others.
                let all = masks(shape);
                let kinds = if score == (Score::ScaledDot, true) {
                    all.len()
                } else {
                    2
                };
                for mask in all.iter().take(kinds) {
                    seed += 20;
                    let dropout = seed % 40 == 0;
                    let ablate = seed % 60 == 0 && shape.1 > 1;
                    out.push(Case::new(
                        shape, score, mask, rel, alibi, dropout, ablate, seed,
                    ));
                }
            }
        }
    }
    out
}

/// ds = p ⊙ (dp − Σ p·dp), row by row: the softmax line of `attention_backward`, written
/// out for the intermediate tensors the CPU keeps inside that function.
fn softmax_backward_reference(probs: &[f32], dprobs: &[f32], s: usize) -> Vec<f32> {
    let mut out = vec![0.0; probs.len()];
    for ((o, p), dp) in out.chunks_mut(s).zip(probs.chunks(s)).zip(dprobs.chunks(s)) {
        let dot: f32 = p.iter().zip(dp).map(|(a, b)| a * b).sum();
        for j in 0..s {
            o[j] = p[j] * (dp[j] - dot);
        }
    }
    out
}

#[test]
fn attention_backward_matches_the_cpu_for_every_score_mask_position_scheme_and_shape() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = Worst::default();
    let (mut fully_masked, mut dropped, mut ablated, mut additive, mut shaw) = (0, 0, 0, 0, 0);
    for case in cases() {
        let g = gpu_attention_backward(&ctx, &case);
        let name = &case.name;
        worst.see("dq (scores backward)", rel(&g.dq, &case.dq), name);
        worst.see(
            "dk | dv (scores and values backward)",
            rel(&g.dkv, &case.dkv),
            name,
        );
        if case.rel.is_some() {
            shaw += 1;
            worst.see("drel_k (Shaw keys)", rel(&g.drel_k, &case.drel_k), name);
            worst.see("drel_v (Shaw values)", rel(&g.drel_v, &case.drel_v), name);
        } else {
            assert_eq!(g.drel_k, case.drel_k0, "{name}: drel_k untouched");
        }
        if case.additive() {
            additive += 1;
            worst.see("dadditive_v", rel(&g.dadd, &case.dadd), name);
        } else {
            assert_eq!(g.dadd, case.dadd0, "{name}: dadditive_v untouched");
        }
        // The intermediate gradients: the softmax backward of the GPU's own dp against
        // the formula, and zeros where the CPU masked a key or ablated a head.
        let want_ds = softmax_backward_reference(&case.probs, &g.dprobs, case.s);
        worst.see(
            "dscores (softmax backward)",
            rel(&g.dscores, &want_ds),
            name,
        );
        for (e, &sc) in case.scores.iter().enumerate() {
            let h = (e / (case.t * case.s)) % case.h;
            if sc == f32::NEG_INFINITY || case.ablate[h] {
                assert_eq!(g.dprobs[e], 0.0, "{name}: dp of a masked/ablated entry");
                assert_eq!(g.dscores[e], 0.0, "{name}: ds of a masked/ablated entry");
            }
        }
        fully_masked += case
            .probs
            .chunks(case.s)
            .filter(|row| row.iter().all(|&p| p == 0.0))
            .count();
        dropped += case.dropout as usize;
        ablated += case.ablate.iter().any(|&a| a) as usize;
    }
    assert!(fully_masked > 0 && dropped > 0 && ablated > 0 && additive > 0 && shaw > 0);
    worst.print("attention_backward");
}

#[test]
fn attention_backward_is_deterministic_bit_for_bit() {
    // The relative tables are shared by every head and query; their gradients are summed
    // by one thread each in a fixed order (no float atomics), so two runs agree exactly.
    let Some(ctx) = gpu_or_skip() else { return };
    let shape = (2, 3, 4, 9, 9, 0);
    let mask = MaskSpec::new(MaskRule::Causal, &[], true);
    let case = Case::new(
        shape,
        (Score::Additive, true),
        &mask,
        Some(2),
        false,
        true,
        false,
        77,
    );
    let a = gpu_attention_backward(&ctx, &case);
    let b = gpu_attention_backward(&ctx, &case);
    assert_eq!(a.drel_k, b.drel_k);
    assert_eq!(a.drel_v, b.drel_v);
    assert_eq!(a.dadd, b.dadd);
    assert_eq!(a.dkv, b.dkv);
}

#[test]
fn shared_table_gradients_sum_past_the_llvmpipe_loop_limit() {
    // One thread of drel_k / drel_v sums over B·H·T·(the keys at its distance), one of
    // dadditive_v over B·T·S: with 30 sequences of 48 positions, 2 heads and K = 0 (every
    // key on table row 0) that is 138 240 and 69 120 iterations, past the 65 535 after which
    // llvmpipe ends a shader's loops; the launches split the sums over sequences.
    let Some(ctx) = gpu_or_skip() else { return };
    let mask = MaskSpec::new(MaskRule::None, &[], true);
    let shape = (30, 2, 2, 48, 48, 0);
    let case = Case::new(
        shape,
        (Score::Additive, true),
        &mask,
        Some(0),
        false,
        true,
        false,
        91,
    );
    let g = gpu_attention_backward(&ctx, &case);
    let mut worst = Worst::default();
    let name = &case.name;
    worst.see("dq", rel(&g.dq, &case.dq), name);
    worst.see("dk | dv", rel(&g.dkv, &case.dkv), name);
    worst.see("drel_k", rel(&g.drel_k, &case.drel_k), name);
    worst.see("drel_v", rel(&g.drel_v, &case.drel_v), name);
    worst.see("dadditive_v", rel(&g.dadd, &case.dadd), name);
    worst.print("long sums");
}

// ---------------------------------------------------------------------------------------
// RoPE backward
// ---------------------------------------------------------------------------------------

#[test]
fn rope_backward_matches_the_cpu_on_fused_query_key_gradients_and_leaves_values_alone() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = Worst::default();
    for &(b, t, h, d, pos0) in &[
        (1, 1, 1, 2, 0),
        (2, 5, 2, 4, 3),
        (1, 9, 3, 6, 0),
        (2, 1, 2, 8, 7),
        (3, 17, 4, 16, 0),
    ] {
        let c = h * d;
        let g = values(b * t * 3 * c, 90 + d as u64, 1.0); // (B·T, 3C) dq | dk | dv
        let part = |v: &[f32], off: usize| -> Vec<f32> {
            (0..b * t)
                .flat_map(|r| v[r * 3 * c + off..r * 3 * c + off + c].to_vec())
                .collect()
        }; // (B·T, C)
        let (mut dq, mut dk) = (part(&g, 0), part(&g, c));
        rope_backward(&mut dq, pos0, b, t, h, d);
        rope_backward(&mut dk, pos0, b, t, h, d);

        let rot = ctx.upload("rot", &rope_table(pos0 + t, d)).unwrap();
        let buf = ctx.upload("dqkv", &g).unwrap();
        let got = read(&ctx, |r| {
            r.rope_backward(&rot, Rows::dense(&buf, 3 * c), b * t, t, 2 * h, d, pos0)
                .unwrap();
            vec![(0, buf.len(), &buf)]
        })
        .remove(0);
        let name = format!("B={b} T={t} H={h} D={d} pos0={pos0}");
        worst.see("rope_backward dq", rel(&part(&got, 0), &dq), &name);
        worst.see("rope_backward dk", rel(&part(&got, c), &dk), &name);
        assert_eq!(
            part(&got, 2 * c),
            part(&g, 2 * c),
            "{name}: dv must not move"
        );
    }
    worst.print("rope_backward");
}

// ---------------------------------------------------------------------------------------
// BatchNorm in train mode
// ---------------------------------------------------------------------------------------

#[test]
fn batch_norm_train_forward_statistics_running_update_and_backward_match_the_cpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = Worst::default();
    for &(rows, c, update) in &[
        (2, 1, true),
        (3, 5, true),
        (1, 4, false),
        (64, 16, true),
        (130, 7, true),
        (17, 33, true),
        // Past batch_norm_backward.wgsl's SERIAL_ROWS: its sums take the tree instead.
        (33_000, 2, true),
    ] {
        let name = format!("R={rows} C={c} update={update}");
        // Features with an offset and different spreads, so μ and σ² matter.
        let x: Vec<f32> = values(rows * c, 300 + rows as u64, 1.0)
            .iter()
            .enumerate()
            .map(|(i, v)| 2.0 + (i % c) as f32 * 0.5 + v * (1.0 + (i % c) as f32 * 0.25))
            .collect(); // (R, C)
        let gamma = values(c, 301, 1.0);
        let beta = values(c, 302, 1.0);
        let (rm0, rv0) = (
            values(c, 303, 0.5),
            values(c, 304, 0.5)
                .iter()
                .map(|v| 1.0 + v)
                .collect::<Vec<_>>(),
        );
        let dy = values(rows * c, 305, 1.0);
        let (dx0, dg0, db0) = (
            values(rows * c, 306, 0.5),
            values(c, 307, 0.5),
            values(c, 308, 0.5),
        );

        let mut y = vec![0.0; rows * c];
        let (mut mean, mut var, mut rstd) = (vec![0.0; c], vec![0.0; c], vec![0.0; c]);
        batchnorm_train_forward(
            &mut y, &mut mean, &mut var, &mut rstd, &x, &gamma, &beta, rows, c,
        );
        let (mut rm, mut rv) = (rm0.clone(), rv0.clone());
        if update {
            batchnorm_running_update(&mut rm, &mut rv, &mean, &var, rows);
        }
        let (mut dx, mut dg, mut db) = (dx0.clone(), dg0.clone(), db0.clone());
        batchnorm_train_backward(
            &mut dx, &mut dg, &mut db, &dy, &x, &gamma, &mean, &rstd, rows, c,
        );

        let up = |what: &str, v: &[f32]| ctx.upload(what, v).unwrap();
        let (gx, gg, gb) = (up("x", &x), up("gamma", &gamma), up("beta", &beta));
        let (grm, grv) = (up("running_mean", &rm0), up("running_var", &rv0));
        let gy = ctx.zeros("y", rows * c).unwrap();
        let stats = ctx.zeros("stats", 3 * c).unwrap();
        let gdy = up("dy", &dy);
        let (gdx, gdg, gdb) = (up("dx", &dx0), up("dgamma", &dg0), up("dbeta", &db0));
        let out = read(&ctx, |r| {
            r.batch_norm_train(&BatchNormTrainArgs {
                x: &gx,
                gamma: &gg,
                beta: &gb,
                y: &gy,
                stats: &stats,
                running: update.then_some((&grm, &grv)),
                rows,
                c,
            })
            .unwrap();
            r.batch_norm_backward(&BatchNormGradArgs {
                dy: &gdy,
                x: &gx,
                gamma: &gg,
                stats: &stats,
                dx: &gdx,
                dgamma: &gdg,
                dbeta: &gdb,
                rows,
                c,
            })
            .unwrap();
            vec![
                (0, rows * c, &gy),
                (0, 3 * c, &stats),
                (0, c, &grm),
                (0, c, &grv),
                (0, rows * c, &gdx),
                (0, c, &gdg),
                (0, c, &gdb),
            ]
        });
        worst.see("batch_norm_train y", rel(&out[0], &y), &name);
        worst.see("batch_norm_train mean", rel(&out[1][..c], &mean), &name);
        worst.see("batch_norm_train var", rel(&out[1][c..2 * c], &var), &name);
        worst.see("batch_norm_train rstd", rel(&out[1][2 * c..], &rstd), &name);
        worst.see("batch_norm_train running_mean", rel(&out[2], &rm), &name);
        worst.see("batch_norm_train running_var", rel(&out[3], &rv), &name);
        worst.see("batch_norm_backward dx", rel(&out[4], &dx), &name);
        worst.see("batch_norm_backward dgamma", rel(&out[5], &dg), &name);
        worst.see("batch_norm_backward dbeta", rel(&out[6], &db), &name);
        if !update {
            assert_eq!(out[2], rm0, "{name}: running mean untouched");
            assert_eq!(out[3], rv0, "{name}: running var untouched");
        }
    }
    worst.print("batch_norm_train");
}

#[test]
fn batch_norm_train_refuses_a_running_update_from_one_row() {
    let Some(ctx) = gpu_or_skip() else { return };
    let b = ctx.zeros("b", 8).unwrap();
    let mut rec = ctx.recorder().unwrap();
    let err = rec
        .batch_norm_train(&BatchNormTrainArgs {
            x: &b,
            gamma: &b,
            beta: &b,
            y: &b,
            stats: &b,
            running: Some((&b, &b)),
            rows: 1,
            c: 2,
        })
        .unwrap_err();
    assert!(err.to_string().contains("two rows"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Dropout
// ---------------------------------------------------------------------------------------

/// The GPU's masks for `sizes` consecutive draws from `seed` (and the inputs they were
/// applied to), next to the CPU's `dropout_mask` draws from `ChaCha8Rng::seed_from_u64`.
#[test]
fn dropout_masks_equal_the_cpu_seeded_masks_bit_for_bit() {
    let Some(ctx) = gpu_or_skip() else { return };
    for (seed, p) in [
        (1u64, 0.1f32),
        (7, 0.25),
        (123_456_789, 0.5),
        (u64::MAX, 0.9),
    ] {
        // Several sites in one pass: the GPU starts each at the words drawn before it.
        let sizes = [1usize, 15, 64, 333, 1000];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let want: Vec<Vec<f32>> = sizes
            .iter()
            .map(|&n| dropout_mask(&mut rng, p, n))
            .collect();
        let key = dropout_key(seed);
        let masks: Vec<_> = sizes
            .iter()
            .map(|&n| ctx.zeros("mask", n).unwrap())
            .collect();
        let xs: Vec<Vec<f32>> = sizes
            .iter()
            .map(|&n| values(n, seed ^ n as u64, 2.0))
            .collect();
        let gx: Vec<_> = xs.iter().map(|x| ctx.upload("x", x).unwrap()).collect();
        let got = read(&ctx, |r| {
            let mut offset = 0u64;
            for (i, &n) in sizes.iter().enumerate() {
                r.dropout(&DropoutArgs {
                    key,
                    offset,
                    p,
                    n,
                    mask: &masks[i],
                    x: Some(&gx[i]),
                })
                .unwrap();
                offset += n as u64;
            }
            masks.iter().chain(&gx).map(|b| (0, b.len(), b)).collect()
        });
        for (i, &n) in sizes.iter().enumerate() {
            assert_eq!(got[i], want[i], "seed {seed} p {p}: site {i} mask");
            let applied: Vec<f32> = xs[i].iter().zip(&want[i]).map(|(x, m)| x * m).collect();
            assert_eq!(
                got[sizes.len() + i],
                applied,
                "seed {seed} p {p}: site {i} x·mask"
            );
            let kept = want[i].iter().filter(|&&m| m != 0.0).count();
            assert!(
                n < 300 || (kept > 0 && kept < n),
                "a real mask, not all or nothing"
            );
        }
    }
}

#[test]
fn dropout_masks_follow_the_stream_past_a_32_bit_word_position() {
    // The stream position is 64-bit on both sides: start a few words before 2³² and cross it.
    let Some(ctx) = gpu_or_skip() else { return };
    let (seed, p, n) = (42u64, 0.5f32, 100usize);
    let start = (1u64 << 32) - 37;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_word_pos(start as u128);
    let want = dropout_mask(&mut rng, p, n);
    let mask = ctx.zeros("mask", n).unwrap();
    let got = read(&ctx, |r| {
        r.dropout(&DropoutArgs {
            key: dropout_key(seed),
            offset: start,
            p,
            n,
            mask: &mask,
            x: None,
        })
        .unwrap();
        vec![(0, n, &mask)]
    })
    .remove(0);
    assert_eq!(got, want);
}

#[test]
fn dropout_backward_multiplies_the_gradient_by_the_saved_mask() {
    let Some(ctx) = gpu_or_skip() else { return };
    let n = 777;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let m = dropout_mask(&mut rng, 0.3, n);
    let g = values(n, 9, 1.0);
    let want: Vec<f32> = g.iter().zip(&m).map(|(a, b)| a * b).collect();
    let (gm, gg) = (
        ctx.upload("mask", &m).unwrap(),
        ctx.upload("dx", &g).unwrap(),
    );
    let got = read(&ctx, |r| {
        r.dropout_backward(&gm, &gg, n).unwrap();
        vec![(0, n, &gg)]
    })
    .remove(0);
    assert_eq!(got, want);
}

#[test]
fn dropout_refuses_a_probability_of_one() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mask = ctx.zeros("mask", 4).unwrap();
    let mut rec = ctx.recorder().unwrap();
    let err = rec
        .dropout(&DropoutArgs {
            key: dropout_key(1),
            offset: 0,
            p: 1.0,
            n: 4,
            mask: &mask,
            x: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("outside [0, 1)"), "{err}");
}

// ---------------------------------------------------------------------------------------
// A whole multi-head self-attention sublayer: forward and backward on the GPU, composed
// here from the forward kernels, the Linear backward and the kernels above, against the
// CPU's `mha_forward` and `mha_backward`.
// ---------------------------------------------------------------------------------------

/// One self-attention sublayer configuration.
struct Mha {
    b: usize,
    t: usize,
    h: usize,
    d: usize,
    score: Score,
    mask: MaskRule,
    rope: bool,
    rel: Option<usize>,
    alibi: bool,
    /// The drop probability on the attention probabilities (0: eval).
    p: f32,
    share_qk: bool,
    /// Sequence 1 is all padding (its queries attend to nothing).
    pad_seq1: bool,
}

fn tensor(shape: &[usize], seed: u64, amp: f32) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(shape.to_vec(), values(n, seed, amp)).unwrap()
}

/// The sublayer's output and every gradient, flattened in one order:
/// out, dx, dW_in, db_in, dW_O, db_O, drel_k, drel_v, dadditive_v.
type Sublayer = [Vec<f32>; 9];

fn mha_case(ctx: &GpuContext, m: &Mha, seed: u64) -> (Sublayer, Sublayer) {
    let (b, t, h, d) = (m.b, m.t, m.h, m.d);
    let c = h * d;
    let kk = m.rel.unwrap_or(1);
    let mut params = AttentionParams {
        in_proj_weight: tensor(&[3 * c, c], seed, 0.5),
        in_proj_bias: tensor(&[3 * c], seed + 1, 0.2),
        out_proj_weight: tensor(&[c, c], seed + 2, 0.5),
        out_proj_bias: tensor(&[c], seed + 3, 0.2),
        additive_v: (m.score == Score::Additive).then(|| tensor(&[h, d], seed + 4, 1.0)),
        rel_k: m.rel.map(|_| tensor(&[2 * kk + 1, d], seed + 5, 0.5)),
        rel_v: m.rel.map(|_| tensor(&[2 * kk + 1, d], seed + 6, 0.5)),
    };
    if m.share_qk {
        // forward: W_K ≡ W_Q, b_K ≡ b_Q (the K rows hold copies)
        let w = &mut params.in_proj_weight.data;
        let (wq, rest) = w.split_at_mut(c * c);
        rest[..c * c].copy_from_slice(wq);
        let bias = &mut params.in_proj_bias.data;
        let (bq, rest) = bias.split_at_mut(c);
        rest[..c].copy_from_slice(bq);
    }
    let x = values(b * t * c, seed + 7, 1.0); // (B·T, C)
    let dout = values(b * t * c, seed + 8, 1.0); // (B·T, C)
    let key_pad: Vec<bool> = (0..b * t).map(|i| m.pad_seq1 && i / t == 1).collect();
    let mask = MaskSpec::new(m.mask, &[], true);
    let slopes = alibi_slopes(h);
    let ablate = vec![false; h];
    let spec = AttnSpec {
        n_heads: h,
        d_head: d,
        score: m.score,
        scale: true,
        mask: &mask,
        q_offset: 0,
        rope: m.rope,
        alibi: m.alibi.then_some(&slopes[..]),
        relative: m.rel.map(|k| Relative {
            rel_k: &params.rel_k.as_ref().unwrap().data,
            rel_v: &params.rel_v.as_ref().unwrap().data,
            max_distance: k,
        }),
        additive_v: params.additive_v.as_ref().map(|w| &w.data[..]),
        ablate: &ablate,
    };
    // The dropout masks a train-mode pass draws for this sublayer: after an earlier site
    // of 37 draws, so the GPU starts at stream position 37.
    let (seed_drop, before) = (seed ^ 0xD0, 37u64);
    let n_probs = b * h * t * t;
    let cpu_mask = (m.p > 0.0).then(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed_drop);
        dropout_mask(&mut rng, m.p, before as usize);
        dropout_mask(&mut rng, m.p, n_probs)
    });

    // CPU: forward, then backward from dout.
    let mut out = vec![0.0; b * t * c];
    let mut saved = AttnRecord::default();
    mha_forward(
        &mut out,
        &mut saved,
        &x,
        &x,
        &params,
        Some(&key_pad),
        cpu_mask.as_deref(),
        &spec,
        b,
        t,
        t,
    );
    let zeros = |t: &Tensor| Tensor::zeros(&t.shape);
    let mut grads = AttentionParams {
        in_proj_weight: zeros(&params.in_proj_weight),
        in_proj_bias: zeros(&params.in_proj_bias),
        out_proj_weight: zeros(&params.out_proj_weight),
        out_proj_bias: zeros(&params.out_proj_bias),
        additive_v: params.additive_v.as_ref().map(zeros),
        rel_k: params.rel_k.as_ref().map(zeros),
        rel_v: params.rel_v.as_ref().map(zeros),
    };
    let (mut dxq, mut dxkv) = (vec![0.0; b * t * c], vec![0.0; b * t * c]);
    mha_backward(
        &mut dxq,
        &mut dxkv,
        &mut grads,
        &dout,
        &x,
        &x,
        &params,
        &saved,
        cpu_mask.as_deref(),
        &spec,
        m.share_qk,
        b,
        t,
        t,
    );
    let dx: Vec<f32> = dxq.iter().zip(&dxkv).map(|(a, b)| a + b).collect();
    let opt = |t: &Option<Tensor>| t.as_ref().map(|t| t.data.clone()).unwrap_or_default();
    let cpu: Sublayer = [
        out,
        dx,
        grads.in_proj_weight.data.clone(),
        grads.in_proj_bias.data.clone(),
        grads.out_proj_weight.data.clone(),
        grads.out_proj_bias.data.clone(),
        opt(&grads.rel_k),
        opt(&grads.rel_v),
        opt(&grads.additive_v),
    ];

    // GPU: the same forward and backward, one submission.
    let up = |what: &str, v: &[f32]| ctx.upload(what, v).unwrap();
    let table = (2 * kk + 1) * d;
    let gx = up("x", &x);
    let (w_in, b_in) = (
        up("in_proj_weight", &params.in_proj_weight.data),
        up("in_proj_bias", &params.in_proj_bias.data),
    );
    let (w_o, b_o) = (
        up("out_proj_weight", &params.out_proj_weight.data),
        up("out_proj_bias", &params.out_proj_bias.data),
    );
    let rel_k = up("rel_k", &opt(&params.rel_k));
    let rel_v = up("rel_v", &opt(&params.rel_v));
    let add_v = up("additive_v", &opt(&params.additive_v));
    let gslopes = up("slopes", &slopes);
    let rot = up("rot", &rope_table(t, d));
    let toks: Vec<u32> = key_pad.iter().map(|&p| if p { 0 } else { 5 }).collect();
    let toks = ctx.upload_u32("key tokens", &toks).unwrap();
    let gablate = ctx.upload_u32("ablate", &vec![0; h]).unwrap();
    let z0 = |what: &str, n: usize| ctx.zeros(what, n).unwrap();
    let (qkv, scores, probs, ptilde, dmask, z, gout) = (
        z0("qkv", b * t * 3 * c),
        z0("scores", n_probs),
        z0("probs", n_probs),
        z0("dropped probs", n_probs),
        z0("dropout mask", n_probs),
        z0("z", b * t * c),
        z0("out", b * t * c),
    );
    let gdout = up("dout", &dout);
    let (dz, dqkv, dprobs, dscores, gdx) = (
        z0("dz", b * t * c),
        z0("dqkv", b * t * 3 * c),
        z0("dprobs", n_probs),
        z0("dscores", n_probs),
        z0("dx", b * t * c),
    );
    let (dw_in, db_in, dw_o, db_o) = (
        z0("dW_in", 3 * c * c),
        z0("db_in", 3 * c),
        z0("dW_O", c * c),
        z0("db_O", c),
    );
    let (drel_k, drel_v, dadd) = (z0("drel_k", table), z0("drel_v", table), z0("dadd", c));
    let dims = AttnDims {
        batch: b,
        n_heads: h,
        t_len: t,
        s_len: t,
        d_head: d,
        pos0: 0,
        kv_rows: t,
    };
    let cols = |buf, col| Rows {
        buf,
        stride: 3 * c,
        col,
    };
    let additive = m.score == Score::Additive;
    let got = read(ctx, |r| {
        // forward: q | k | v = x·W_inᵀ + b_in, RoPE on q and k
        r.matmul(&MatmulArgs::linear(
            &gx,
            &w_in,
            Some(&b_in),
            &qkv,
            (b * t, c, 3 * c),
        ))
        .unwrap();
        if m.rope {
            r.rope(&rot, Rows::dense(&qkv, 3 * c), b * t, t, 2 * h, d, 0)
                .unwrap();
        }
        // forward: scores, softmax, dropout on the probabilities, weighted values
        r.attention_scores(&ScoreArgs {
            q: cols(&qkv, 0),
            k: cols(&qkv, c),
            key_tokens: &toks,
            rel_k: m.rel.map(|_| &rel_k),
            rel_max: m.rel.unwrap_or(0),
            alibi_slopes: m.alibi.then_some(&gslopes),
            additive_v: additive.then_some(&add_v),
            divisor: if m.score == Score::ScaledDot {
                (d as f32).sqrt()
            } else {
                1.0
            },
            mask: &mask,
            cells: None,
            pad_id: 0,
            out: &scores,
            dims,
        })
        .unwrap();
        r.softmax(&scores, &probs, b * h * t, t).unwrap();
        r.softmax(&scores, &ptilde, b * h * t, t).unwrap();
        if m.p > 0.0 {
            r.dropout(&DropoutArgs {
                key: dropout_key(seed_drop),
                offset: before,
                p: m.p,
                n: n_probs,
                mask: &dmask,
                x: Some(&ptilde),
            })
            .unwrap();
        }
        r.attention_values(&ValueArgs {
            probs: &ptilde,
            v: cols(&qkv, 2 * c),
            rel_v: m.rel.map(|_| &rel_v),
            rel_max: m.rel.unwrap_or(0),
            ablate: &gablate,
            out: &z,
            dims,
        })
        .unwrap();
        r.matmul(&MatmulArgs::linear(
            &z,
            &w_o,
            Some(&b_o),
            &gout,
            (b * t, c, c),
        ))
        .unwrap();

        // backward: out = z·W_Oᵀ + b_O
        r.linear_backward(&LinearBackwardArgs::dense(
            &gdout,
            &z,
            &w_o,
            Some(&dz),
            &dw_o,
            Some(&db_o),
            (b * t, c, c),
        ))
        .unwrap();
        // backward: attention (values, softmax, scores)
        r.attention_values_backward(&ValueGradArgs {
            dz: Rows::dense(&dz, c),
            probs: &probs,
            dropout: (m.p > 0.0).then_some(&dmask),
            v: cols(&qkv, 2 * c),
            rel_v: m.rel.map(|_| &rel_v),
            rel_max: m.rel.unwrap_or(0),
            scores: &scores,
            ablate: &gablate,
            dprobs: &dprobs,
            dv: cols(&dqkv, 2 * c),
            drel_v: m.rel.map(|_| &drel_v),
            dims,
        })
        .unwrap();
        r.softmax_backward(&probs, &dprobs, &dscores, b * h * t, t)
            .unwrap();
        r.attention_scores_backward(&ScoreGradArgs {
            dscores: &dscores,
            q: cols(&qkv, 0),
            k: cols(&qkv, c),
            rel_k: m.rel.map(|_| &rel_k),
            rel_max: m.rel.unwrap_or(0),
            additive_v: additive.then_some(&add_v),
            alpha: if m.score == Score::ScaledDot {
                1.0 / (d as f32).sqrt()
            } else {
                1.0
            },
            dq: cols(&dqkv, 0),
            dk: cols(&dqkv, c),
            drel_k: m.rel.map(|_| &drel_k),
            dadditive_v: additive.then_some(&dadd),
            dims,
        })
        .unwrap();
        // backward: RoPE on q and k
        if m.rope {
            r.rope_backward(&rot, Rows::dense(&dqkv, 3 * c), b * t, t, 2 * h, d, 0)
                .unwrap();
        }
        // backward: the three projections. With share_qk the K block's weight and bias
        // gradients land on the Q rows (W_K ≡ W_Q), as `mha_backward` adds them there.
        for (blk, grad_blk) in [(0, 0), (1, if m.share_qk { 0 } else { 1 }), (2, 2)] {
            r.linear_backward(&LinearBackwardArgs {
                dout: cols(&dqkv, blk * c),
                inp: Rows::dense(&gx, c),
                weight: &w_in,
                w_offset: blk * c * c,
                dinp: Some(Rows::dense(&gdx, c)),
                dweight: &dw_in,
                dw_offset: grad_blk * c * c,
                dbias: Some(&db_in),
                db_offset: grad_blk * c,
                n: b * t,
                c_in: c,
                c_out: c,
            })
            .unwrap();
        }
        let mut want = vec![
            (0, gout.len(), &gout),
            (0, gdx.len(), &gdx),
            (0, dw_in.len(), &dw_in),
            (0, db_in.len(), &db_in),
            (0, dw_o.len(), &dw_o),
            (0, db_o.len(), &db_o),
        ];
        let rel_len = if m.rel.is_some() { table } else { 0 };
        want.push((0, rel_len, &drel_k));
        want.push((0, rel_len, &drel_v));
        want.push((0, if additive { c } else { 0 }, &dadd));
        want
    });
    let gpu: Sublayer = got.try_into().unwrap();
    (gpu, cpu)
}

#[test]
fn multi_head_attention_sublayer_forward_and_backward_on_the_gpu_equal_mha_backward() {
    let Some(ctx) = gpu_or_skip() else { return };
    let names = [
        "out",
        "dx",
        "dW_in",
        "db_in",
        "dW_O",
        "db_O",
        "drel_k",
        "drel_v",
        "dadditive_v",
    ];
    let configs = [
        // causal decoder self-attention: RoPE, dropout, W_K ≡ W_Q
        Mha {
            b: 2,
            t: 7,
            h: 2,
            d: 4,
            score: Score::ScaledDot,
            mask: MaskRule::Causal,
            rope: true,
            rel: None,
            alibi: false,
            p: 0.2,
            share_qk: true,
            pad_seq1: false,
        },
        // encoder self-attention: additive scores, Shaw tables, dropout, a padded sequence
        Mha {
            b: 2,
            t: 5,
            h: 2,
            d: 3,
            score: Score::Additive,
            mask: MaskRule::None,
            rope: false,
            rel: Some(2),
            alibi: false,
            p: 0.3,
            share_qk: false,
            pad_seq1: true,
        },
        // ALiBi with dot scores, more heads and a length off 16
        Mha {
            b: 3,
            t: 17,
            h: 4,
            d: 4,
            score: Score::Dot,
            mask: MaskRule::Causal,
            rope: false,
            rel: None,
            alibi: true,
            p: 0.0,
            share_qk: false,
            pad_seq1: false,
        },
        // one position
        Mha {
            b: 2,
            t: 1,
            h: 3,
            d: 2,
            score: Score::ScaledDot,
            mask: MaskRule::Causal,
            rope: true,
            rel: Some(1),
            alibi: false,
            p: 0.5,
            share_qk: true,
            pad_seq1: false,
        },
    ];
    let mut worst = Worst::default();
    for (i, m) in configs.iter().enumerate() {
        let (gpu, cpu) = mha_case(&ctx, m, 9000 + 100 * i as u64);
        let case = format!(
            "B={} T={} H={} D={} {:?} {} rope={} rel={:?} alibi={} p={} share_qk={}",
            m.b,
            m.t,
            m.h,
            m.d,
            m.score,
            m.mask.name(),
            m.rope,
            m.rel,
            m.alibi,
            m.p,
            m.share_qk
        );
        for ((name, g), c) in names.iter().zip(&gpu).zip(&cpu) {
            worst.see(name, rel(g, c), &case);
        }
        if m.share_qk {
            let c = m.h * m.d;
            assert!(
                gpu[2][c * c..2 * c * c].iter().all(|&v| v == 0.0),
                "{case}: W_K rows"
            );
        }
    }
    worst.print("mha sublayer");
}

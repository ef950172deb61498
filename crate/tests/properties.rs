//! Properties of the forward pass that must hold for any weights and any input, each one
//! body run on the CPU and on the GPU (`name::cpu`, `name::gpu`): the causal mask hides the
//! future (residual path included), padding content never reaches real positions, a model
//! without positions is permutation-equivariant, fully masked attention rows give zeros,
//! eval mode is deterministic while train-mode dropout depends on the seed, and only
//! BatchNorm in train mode couples the sequences of a batch. The FFN is position-wise (the
//! CPU op).

mod support;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{TestCaseError, TestRunner};

use support::{assert_differ, model, Device};
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::ffn::{ffn_forward, FfnRecord};
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Mode, Model, Trace};

const PAD: u32 = 0;
/// Ids of ordinary tokens in the test vocabulary (specials are 0..4).
const FIRST_WORD: u32 = 4;

/// The vocabulary size of `support::tokenizer()`.
const V: u32 = 14;

/// `support::config` with max_len 16, a final norm whatever the placement, no dropout.
fn config(arch: Arch, pos: PosEncoding, norm: Norm) -> ModelConfig {
    let cfg = ModelConfig {
        max_len: 16,
        final_norm: true,
        dropout: 0.0,
        ..support::config(arch, pos, norm, Score::ScaledDot)
    };
    cfg.validate().expect("test configs are valid");
    cfg
}

fn run(dev: &Device, m: &Model, batch: &Batch, opts: &ForwardOptions) -> Trace {
    dev.forward(m, batch, opts).expect("valid input runs")
}

/// Run `property` on 32 inputs drawn from `inputs` (and shrink a failing one).
fn check<S: Strategy>(inputs: S, property: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let mut runner = TestRunner::new(ProptestConfig::with_cases(32));
    if let Err(e) = runner.run(&inputs, property) {
        panic!("{e}");
    }
}

/// Logits of sequence `b`, position `t` (V).
fn logits_at(tr: &Trace, b: usize, t: usize) -> &[f32] {
    let (tt, v) = (tr.logits.shape[1], tr.logits.shape[2]);
    &tr.logits.data[(b * tt + t) * v..(b * tt + t + 1) * v]
}

/// Every logit of positions before `k` of sequence 0 is the same in both traces, bit for
/// bit.
fn earlier_logits_unchanged(a: &Trace, b: &Trace, k: usize) -> Result<(), TestCaseError> {
    for t in 0..k {
        prop_assert_eq!(
            logits_at(a, 0, t),
            logits_at(b, 0, t),
            "position {} of {}",
            t,
            k
        );
    }
    Ok(())
}

fn words(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(FIRST_WORD..V, len)
}

fn norms() -> impl Strategy<Value = Norm> {
    select(vec![Norm::PostLn, Norm::PreLn, Norm::BatchNorm, Norm::None])
}

// Changing the token at position k (to any token, pad included) leaves every logit
// of positions < k bit-identical: neither attention nor the residual stream carries
// the future backwards.
backend_tests!(
    causal_mask_keeps_earlier_logits_bit_identical_when_a_future_token_changes,
    |dev| {
        check(
            (
                select(PosEncoding::ALL.to_vec()),
                norms(),
                words(2..12),
                0.0f64..1.0,
                0..V,
                0u64..1000,
            ),
            |(pos, norm, tokens, k_frac, new_token, seed)| {
                let m = model(config(Arch::DecoderOnly, pos, norm), seed);
                let k = 1 + ((tokens.len() - 1) as f64 * k_frac) as usize; // 1 ≤ k < T
                let mut changed = tokens.clone();
                changed[k] = new_token;
                let opts = ForwardOptions::default();
                let a = run(dev, &m, &Batch::single(&tokens).unwrap(), &opts);
                let b = run(dev, &m, &Batch::single(&changed).unwrap(), &opts);
                earlier_logits_unchanged(&a, &b, k)
            },
        );
    }
);

// The same for the decoder of an encoder-decoder model (the source stays fixed).
backend_tests!(
    causal_decoder_of_encoder_decoder_keeps_earlier_logits_bit_identical,
    |dev| {
        check(
            (
                select(PosEncoding::ALL.to_vec()),
                norms(),
                words(2..10),
                words(1..8),
                0.0f64..1.0,
                0..V,
                0u64..1000,
            ),
            |(pos, norm, tokens, src, k_frac, new_token, seed)| {
                let m = model(config(Arch::EncoderDecoder, pos, norm), seed);
                let k = 1 + ((tokens.len() - 1) as f64 * k_frac) as usize;
                let mut changed = tokens.clone();
                changed[k] = new_token;
                let opts = ForwardOptions::default();
                let batch = |t: &[u32]| {
                    Batch::single(t)
                        .unwrap()
                        .with_source(vec![src.clone()])
                        .unwrap()
                };
                let a = run(dev, &m, &batch(&tokens), &opts);
                let b = run(dev, &m, &batch(&changed), &opts);
                earlier_logits_unchanged(&a, &b, k)
            },
        );
    }
);

// With the padding mask, what the pad positions hold (here: the pad token's embedding
// row, and so every hidden state at pad positions) does not change a single bit of
// the real positions' logits, for encoders and decoders.
backend_tests!(padding_content_does_not_change_real_outputs, |dev| {
    check(
        (
            select(vec![Arch::EncoderOnly, Arch::DecoderOnly]),
            select(PosEncoding::ALL.to_vec()),
            select(vec![Norm::PostLn, Norm::PreLn, Norm::None]),
            words(3..10),
            1usize..3,
            prop::collection::vec(-3.0f32..3.0, 16),
            0u64..1000,
        ),
        |(arch, pos, norm, long, short_len, new_pad_row, seed)| {
            let mut m = model(config(arch, pos, norm), seed);
            let short = long[..short_len].to_vec();
            let batch = Batch::padded(vec![long.clone(), short], PAD).unwrap();
            let opts = ForwardOptions::default();
            let a = run(dev, &m, &batch, &opts);
            m.embed.data[..16].copy_from_slice(&new_pad_row); // row PAD = 0 of (V, C)
            let b = run(dev, &m, &batch, &opts);
            for t in 0..long.len() {
                prop_assert_eq!(
                    logits_at(&a, 0, t),
                    logits_at(&b, 0, t),
                    "full row, position {}",
                    t
                );
            }
            for t in 0..short_len {
                prop_assert_eq!(
                    logits_at(&a, 1, t),
                    logits_at(&b, 1, t),
                    "padded row, position {}",
                    t
                );
            }
            // Without the padding mask the pads are ordinary tokens and do leak (encoders see
            // them from every position).
            if arch == Arch::EncoderOnly {
                let off = ForwardOptions {
                    padding_mask: false,
                    ..ForwardOptions::default()
                };
                let c = run(dev, &m, &batch, &off);
                m.embed.data[..16].iter_mut().for_each(|x| *x += 1.0);
                let d = run(dev, &m, &batch, &off);
                prop_assert_ne!(logits_at(&c, 1, 0), logits_at(&d, 1, 0));
            }
            Ok(())
        },
    );
});

// Without any position encoding, an encoder (no causal mask) is permutation-
// equivariant: permuting the input tokens permutes the output rows.
backend_tests!(
    encoder_without_positions_is_permutation_equivariant,
    |dev| {
        check(
            (
                select(vec![Norm::PostLn, Norm::PreLn, Norm::None]),
                Just((0..7usize).collect::<Vec<_>>()).prop_shuffle(),
                words(7..8),
                0u64..1000,
            ),
            |(norm, perm, tokens, seed)| {
                let m = model(config(Arch::EncoderOnly, PosEncoding::None, norm), seed);
                let permuted: Vec<u32> = perm.iter().map(|&i| tokens[i]).collect();
                let opts = ForwardOptions::default();
                let a = run(dev, &m, &Batch::single(&tokens).unwrap(), &opts);
                let b = run(dev, &m, &Batch::single(&permuted).unwrap(), &opts);
                for (t, &src) in perm.iter().enumerate() {
                    for (x, y) in logits_at(&b, 0, t).iter().zip(logits_at(&a, 0, src)) {
                        prop_assert!(
                            (x - y).abs() <= 1e-5,
                            "position {} ← {}: {} vs {}",
                            t,
                            src,
                            x,
                            y
                        );
                    }
                }
                Ok(())
            },
        );
    }
);

// Queries whose every key is masked (a pad at position 0 under the causal mask, or a
// sequence made only of pads) get all-zero attention and the model stays finite.
backend_tests!(fully_masked_attention_rows_give_zeros_never_nan, |dev| {
    check(
        (
            select(vec![
                Arch::EncoderOnly,
                Arch::DecoderOnly,
                Arch::EncoderDecoder,
            ]),
            select(PosEncoding::ALL.to_vec()),
            select(vec![Score::ScaledDot, Score::Dot, Score::Additive]),
            prop::collection::vec(prop_oneof![Just(PAD), FIRST_WORD..V], 1..8),
            any::<bool>(),
            0u64..1000,
        ),
        |(arch, pos, score, tokens, all_pad_src, seed)| {
            let mut cfg = config(arch, pos, Norm::PreLn);
            cfg.score = score;
            let m = model(cfg, seed);
            let mut first = tokens.clone();
            first[0] = PAD;
            let pads = vec![PAD; tokens.len()];
            let mut batch = Batch::new(vec![first, pads.clone()]).unwrap();
            if arch == Arch::EncoderDecoder {
                let src = if all_pad_src {
                    pads.clone()
                } else {
                    tokens.clone()
                };
                batch = batch.with_source(vec![src, pads]).unwrap();
            }
            let opts = ForwardOptions {
                trace_attention: true,
                ..ForwardOptions::default()
            };
            let tr = run(dev, &m, &batch, &opts);
            prop_assert!(tr.logits.data.iter().all(|x| x.is_finite()));
            for att in &tr.attention {
                let s = att.probs.shape[3];
                for (row, scores) in att.probs.data.chunks(s).zip(att.scores.data.chunks(s)) {
                    if scores.iter().all(|&x| x == f32::NEG_INFINITY) {
                        prop_assert!(row.iter().all(|&p| p == 0.0), "{:?}", row);
                    } else {
                        let sum: f32 = row.iter().sum();
                        prop_assert!((sum - 1.0).abs() < 1e-5, "row sums to {}", sum);
                    }
                }
            }
            // Sequence 1 is all pads: every one of its self-attention rows is fully masked.
            let first_self = &tr.attention[0];
            let half = first_self.probs.data.len() / 2;
            prop_assert!(first_self.probs.data[half..].iter().all(|&p| p == 0.0));
            Ok(())
        },
    );
});

// Eval mode is deterministic; train mode with dropout repeats itself for one seed and
// differs between seeds.
backend_tests!(
    eval_is_deterministic_and_train_dropout_depends_on_the_seed,
    |dev| {
        check(
            (
                select(vec![
                    Arch::EncoderOnly,
                    Arch::DecoderOnly,
                    Arch::EncoderDecoder,
                ]),
                words(3..8),
                0u64..1000,
                0u64..1_000_000,
                0u64..1_000_000,
            ),
            |(arch, tokens, seed, s1, s2)| {
                prop_assume!(s1 != s2);
                let mut cfg = config(arch, PosEncoding::Sinusoidal, Norm::PreLn);
                cfg.dropout = 0.2;
                let m = model(cfg, seed);
                let mut batch = Batch::single(&tokens).unwrap();
                if arch == Arch::EncoderDecoder {
                    batch = batch.with_source(vec![tokens.clone()]).unwrap();
                }
                let eval = ForwardOptions::default();
                prop_assert_eq!(run(dev, &m, &batch, &eval), run(dev, &m, &batch, &eval));
                let train = |seed| ForwardOptions {
                    mode: Mode::Train { seed },
                    ..ForwardOptions::default()
                };
                let a = run(dev, &m, &batch, &train(s1));
                prop_assert_eq!(&a, &run(dev, &m, &batch, &train(s1)));
                let b = run(dev, &m, &batch, &train(s2));
                assert_differ("two dropout seeds", &a.logits.data, &b.logits.data, 1e-4);
                let e = run(dev, &m, &batch, &eval);
                assert_differ("train against eval", &a.logits.data, &e.logits.data, 1e-4);
                Ok(())
            },
        );
    }
);

// In train mode BatchNorm normalises with statistics of the whole batch, so another
// sequence changes this one's output; LayerNorm (and BatchNorm in eval mode) never
// lets one sequence see another.
backend_tests!(
    only_batchnorm_in_train_mode_lets_another_sequence_change_this_one,
    |dev| {
        check(
            (
                select(vec![Arch::EncoderOnly, Arch::DecoderOnly]),
                words(4..5),
                words(4..5),
                words(4..5),
                0u64..1000,
            ),
            |(arch, this, other, other2, seed)| {
                prop_assume!(other != other2);
                let train = ForwardOptions {
                    mode: Mode::Train { seed: 9 },
                    ..ForwardOptions::default()
                };
                let eval = ForwardOptions::default();
                let pair = |o: &Vec<u32>| Batch::new(vec![this.clone(), o.clone()]).unwrap();
                let seq0 = |tr: &Trace| tr.logits.data[..tr.logits.numel() / 2].to_vec();

                let bn = model(config(arch, PosEncoding::Sinusoidal, Norm::BatchNorm), seed);
                let a = run(dev, &bn, &pair(&other), &train);
                let b = run(dev, &bn, &pair(&other2), &train);
                assert_differ("BatchNorm train: sequence 0", &seq0(&a), &seq0(&b), 1e-6);
                prop_assert_eq!(
                    seq0(&run(dev, &bn, &pair(&other), &eval)),
                    seq0(&run(dev, &bn, &pair(&other2), &eval))
                );

                for norm in [Norm::PostLn, Norm::PreLn] {
                    let ln = model(config(arch, PosEncoding::Sinusoidal, norm), seed);
                    prop_assert_eq!(
                        seq0(&run(dev, &ln, &pair(&other), &train)),
                        seq0(&run(dev, &ln, &pair(&other2), &train))
                    );
                }
                Ok(())
            },
        );
    }
);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The FFN is position-wise: replacing every other row of its input leaves this row's
    /// output bit-identical.
    #[test]
    fn ffn_output_of_a_position_depends_only_on_that_position(
        rows in prop::collection::vec(-2.0f32..2.0, 5 * 8),
        others in prop::collection::vec(-2.0f32..2.0, 5 * 8),
        keep in 0usize..5,
        w in prop::collection::vec(-1.0f32..1.0, 2 * 12 * 8 + 12 + 8),
        gelu in any::<bool>(),
    ) {
        let (n, c, f) = (5, 8, 12);
        let (w1, rest) = w.split_at(f * c); // (F, C)
        let (w2, rest) = rest.split_at(c * f); // (C, F)
        let (b1, b2) = rest.split_at(f); // (F), (C)
        let act = if gelu { Activation::Gelu } else { Activation::Relu };
        let ffn = |inp: &[f32]| {
            let mut out = vec![0.0f32; n * c]; // (N, C)
            ffn_forward(&mut out, &mut FfnRecord::default(), inp, w1, b1, w2, b2, act, None, n, c, f);
            out
        };
        let mut mixed = others.clone();
        mixed[keep * c..(keep + 1) * c].copy_from_slice(&rows[keep * c..(keep + 1) * c]);
        let a = ffn(&rows);
        let b = ffn(&mixed);
        prop_assert_eq!(&a[keep * c..(keep + 1) * c], &b[keep * c..(keep + 1) * c]);
    }
}

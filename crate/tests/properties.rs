//! Properties of the CPU forward pass that must hold for any weights and any input:
//! the causal mask hides the future (residual path included), padding content never
//! reaches real positions, a model without positions is permutation-equivariant, the FFN
//! is position-wise, fully masked attention rows give zeros, eval mode is deterministic
//! while train-mode dropout depends on the seed, and only BatchNorm in train mode couples
//! the sequences of a batch.

mod support;

use proptest::prelude::*;
use proptest::sample::select;

use support::{assert_differ, model};
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

fn run(m: &Model, batch: &Batch, opts: &ForwardOptions) -> Trace {
    m.forward(batch, opts).expect("valid input runs")
}

/// Logits of sequence `b`, position `t` (V).
fn logits_at(tr: &Trace, b: usize, t: usize) -> &[f32] {
    let (tt, v) = (tr.logits.shape[1], tr.logits.shape[2]);
    &tr.logits.data[(b * tt + t) * v..(b * tt + t + 1) * v]
}

fn words(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(FIRST_WORD..V, len)
}

fn norms() -> impl Strategy<Value = Norm> {
    select(vec![Norm::PostLn, Norm::PreLn, Norm::BatchNorm, Norm::None])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Changing the token at position k (to any token, pad included) leaves every logit
    /// of positions < k bit-identical: neither attention nor the residual stream carries
    /// the future backwards.
    #[test]
    fn causal_mask_keeps_earlier_logits_bit_identical_when_a_future_token_changes(
        pos in select(PosEncoding::ALL.to_vec()),
        norm in norms(),
        tokens in words(2..12),
        k_frac in 0.0f64..1.0,
        new_token in 0..V,
        seed in 0u64..1000,
    ) {
        let m = model(config(Arch::DecoderOnly, pos, norm), seed);
        let k = 1 + ((tokens.len() - 1) as f64 * k_frac) as usize; // 1 ≤ k < T
        let mut changed = tokens.clone();
        changed[k] = new_token;
        let opts = ForwardOptions::default();
        let a = run(&m, &Batch::single(&tokens).unwrap(), &opts);
        let b = run(&m, &Batch::single(&changed).unwrap(), &opts);
        for t in 0..k {
            prop_assert_eq!(logits_at(&a, 0, t), logits_at(&b, 0, t), "position {} of {}", t, k);
        }
    }

    /// The same for the decoder of an encoder-decoder model (the source stays fixed).
    #[test]
    fn causal_decoder_of_encoder_decoder_keeps_earlier_logits_bit_identical(
        pos in select(PosEncoding::ALL.to_vec()),
        norm in norms(),
        tokens in words(2..10),
        src in words(1..8),
        k_frac in 0.0f64..1.0,
        new_token in 0..V,
        seed in 0u64..1000,
    ) {
        let m = model(config(Arch::EncoderDecoder, pos, norm), seed);
        let k = 1 + ((tokens.len() - 1) as f64 * k_frac) as usize;
        let mut changed = tokens.clone();
        changed[k] = new_token;
        let opts = ForwardOptions::default();
        let batch = |t: &[u32]| Batch::single(t).unwrap().with_source(vec![src.clone()]).unwrap();
        let a = run(&m, &batch(&tokens), &opts);
        let b = run(&m, &batch(&changed), &opts);
        for t in 0..k {
            prop_assert_eq!(logits_at(&a, 0, t), logits_at(&b, 0, t), "position {} of {}", t, k);
        }
    }

    /// With the padding mask, what the pad positions hold (here: the pad token's embedding
    /// row, and so every hidden state at pad positions) does not change a single bit of
    /// the real positions' logits, for encoders and decoders.
    #[test]
    fn padding_content_does_not_change_real_outputs(
        arch in select(vec![Arch::EncoderOnly, Arch::DecoderOnly]),
        pos in select(PosEncoding::ALL.to_vec()),
        norm in select(vec![Norm::PostLn, Norm::PreLn, Norm::None]),
        long in words(3..10),
        short_len in 1usize..3,
        new_pad_row in prop::collection::vec(-3.0f32..3.0, 16),
        seed in 0u64..1000,
    ) {
        let mut m = model(config(arch, pos, norm), seed);
        let short = long[..short_len].to_vec();
        let batch = Batch::padded(vec![long.clone(), short], PAD).unwrap();
        let opts = ForwardOptions::default();
        let a = run(&m, &batch, &opts);
        m.embed.data[..16].copy_from_slice(&new_pad_row); // row PAD = 0 of (V, C)
        let b = run(&m, &batch, &opts);
        for t in 0..long.len() {
            prop_assert_eq!(logits_at(&a, 0, t), logits_at(&b, 0, t), "full row, position {}", t);
        }
        for t in 0..short_len {
            prop_assert_eq!(logits_at(&a, 1, t), logits_at(&b, 1, t), "padded row, position {}", t);
        }
        // Without the padding mask the pads are ordinary tokens and do leak (encoders see
        // them from every position).
        if arch == Arch::EncoderOnly {
            let off = ForwardOptions { padding_mask: false, ..ForwardOptions::default() };
            let c = run(&m, &batch, &off);
            m.embed.data[..16].iter_mut().for_each(|x| *x += 1.0);
            let d = run(&m, &batch, &off);
            prop_assert_ne!(logits_at(&c, 1, 0), logits_at(&d, 1, 0));
        }
    }

    /// Without any position encoding, an encoder (no causal mask) is permutation-
    /// equivariant: permuting the input tokens permutes the output rows.
    #[test]
    fn encoder_without_positions_is_permutation_equivariant(
        norm in select(vec![Norm::PostLn, Norm::PreLn, Norm::None]),
        perm in Just((0..7usize).collect::<Vec<_>>()).prop_shuffle(),
        tokens in words(7..8),
        seed in 0u64..1000,
    ) {
        let m = model(config(Arch::EncoderOnly, PosEncoding::None, norm), seed);
        let permuted: Vec<u32> = perm.iter().map(|&i| tokens[i]).collect();
        let opts = ForwardOptions::default();
        let a = run(&m, &Batch::single(&tokens).unwrap(), &opts);
        let b = run(&m, &Batch::single(&permuted).unwrap(), &opts);
        for (t, &src) in perm.iter().enumerate() {
            for (x, y) in logits_at(&b, 0, t).iter().zip(logits_at(&a, 0, src)) {
                prop_assert!((x - y).abs() <= 1e-5, "position {} ← {}: {} vs {}", t, src, x, y);
            }
        }
    }

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

    /// Queries whose every key is masked (a pad at position 0 under the causal mask, or a
    /// sequence made only of pads) get all-zero attention and the model stays finite.
    #[test]
    fn fully_masked_attention_rows_give_zeros_never_nan(
        arch in select(vec![Arch::EncoderOnly, Arch::DecoderOnly, Arch::EncoderDecoder]),
        pos in select(PosEncoding::ALL.to_vec()),
        score in select(vec![Score::ScaledDot, Score::Dot, Score::Additive]),
        tokens in prop::collection::vec(prop_oneof![Just(PAD), FIRST_WORD..V], 1..8),
        all_pad_src in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let mut cfg = config(arch, pos, Norm::PreLn);
        cfg.score = score;
        let m = model(cfg, seed);
        let mut first = tokens.clone();
        first[0] = PAD;
        let pads = vec![PAD; tokens.len()];
        let mut batch = Batch::new(vec![first, pads.clone()]).unwrap();
        if arch == Arch::EncoderDecoder {
            let src = if all_pad_src { pads.clone() } else { tokens.clone() };
            batch = batch.with_source(vec![src, pads]).unwrap();
        }
        let opts = ForwardOptions { trace_attention: true, ..ForwardOptions::default() };
        let tr = run(&m, &batch, &opts);
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
    }

    /// Eval mode is deterministic; train mode with dropout repeats itself for one seed and
    /// differs between seeds.
    #[test]
    fn eval_is_deterministic_and_train_dropout_depends_on_the_seed(
        arch in select(vec![Arch::EncoderOnly, Arch::DecoderOnly, Arch::EncoderDecoder]),
        tokens in words(3..8),
        seed in 0u64..1000,
        s1 in 0u64..1_000_000,
        s2 in 0u64..1_000_000,
    ) {
        prop_assume!(s1 != s2);
        let mut cfg = config(arch, PosEncoding::Sinusoidal, Norm::PreLn);
        cfg.dropout = 0.2;
        let m = model(cfg, seed);
        let mut batch = Batch::single(&tokens).unwrap();
        if arch == Arch::EncoderDecoder {
            batch = batch.with_source(vec![tokens.clone()]).unwrap();
        }
        let eval = ForwardOptions::default();
        prop_assert_eq!(run(&m, &batch, &eval), run(&m, &batch, &eval));
        let train = |seed| ForwardOptions { mode: Mode::Train { seed }, ..ForwardOptions::default() };
        let a = run(&m, &batch, &train(s1));
        prop_assert_eq!(&a, &run(&m, &batch, &train(s1)));
        let b = run(&m, &batch, &train(s2));
        assert_differ("two dropout seeds", &a.logits.data, &b.logits.data, 1e-4);
        let e = run(&m, &batch, &eval);
        assert_differ("train against eval", &a.logits.data, &e.logits.data, 1e-4);
    }

    /// In train mode BatchNorm normalises with statistics of the whole batch, so another
    /// sequence changes this one's output; LayerNorm (and BatchNorm in eval mode) never
    /// lets one sequence see another.
    #[test]
    fn only_batchnorm_in_train_mode_lets_another_sequence_change_this_one(
        arch in select(vec![Arch::EncoderOnly, Arch::DecoderOnly]),
        this in words(4..5),
        other in words(4..5),
        other2 in words(4..5),
        seed in 0u64..1000,
    ) {
        prop_assume!(other != other2);
        let train = ForwardOptions { mode: Mode::Train { seed: 9 }, ..ForwardOptions::default() };
        let eval = ForwardOptions::default();
        let pair = |o: &Vec<u32>| Batch::new(vec![this.clone(), o.clone()]).unwrap();
        let seq0 = |tr: &Trace| tr.logits.data[..tr.logits.numel() / 2].to_vec();

        let bn = model(config(arch, PosEncoding::Sinusoidal, Norm::BatchNorm), seed);
        let a = run(&bn, &pair(&other), &train);
        let b = run(&bn, &pair(&other2), &train);
        assert_differ("BatchNorm train: sequence 0", &seq0(&a), &seq0(&b), 1e-6);
        prop_assert_eq!(seq0(&run(&bn, &pair(&other), &eval)), seq0(&run(&bn, &pair(&other2), &eval)));

        for norm in [Norm::PostLn, Norm::PreLn] {
            let ln = model(config(arch, PosEncoding::Sinusoidal, norm), seed);
            prop_assert_eq!(seq0(&run(&ln, &pair(&other), &train)), seq0(&run(&ln, &pair(&other2), &train)));
        }
    }
}

//! The decoding strategies on hand-written distributions: greedy, temperature, top-k,
//! top-p (ties, p = 1), their order, and seeded draws.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tplay::generate::sampling::{
    argmax, check_logits, draw, log_softmax, sampling_distribution, softmax_with_temperature,
    top_k_filter, top_p_filter, Sampling,
};

fn ln(p: &[f64]) -> Vec<f32> {
    p.iter().map(|&x| x.ln() as f32).collect()
}

fn kept(probs: &[f64]) -> Vec<usize> {
    (0..probs.len()).filter(|&i| probs[i] > 0.0).collect()
}

#[test]
fn argmax_takes_the_lowest_id_among_ties() {
    assert_eq!(argmax(&[0.0, 3.0, 1.0, 3.0]).unwrap(), 1);
    assert_eq!(argmax(&[f32::NEG_INFINITY, -1.0]).unwrap(), 1);
}

#[test]
fn nan_logits_are_an_error_naming_the_token() {
    let e = argmax(&[0.0, f32::NAN]).unwrap_err().to_string();
    assert!(e.contains("token 1"), "{e}");
    assert!(check_logits(&[f32::NEG_INFINITY; 3]).is_err());
    assert!(check_logits(&[]).is_err());
}

#[test]
fn softmax_of_known_logits() {
    // ln 1, ln 2, ln 5 → 1/8, 2/8, 5/8
    let p = softmax_with_temperature(&ln(&[1.0, 2.0, 5.0]), 1.0);
    for (a, b) in p.iter().zip([0.125, 0.25, 0.625]) {
        assert!((a - b).abs() < 1e-7, "{p:?}");
    }
    // τ = 2 takes square roots before normalising: 1, √2, √5.
    let p = softmax_with_temperature(&ln(&[1.0, 2.0, 5.0]), 2.0);
    let z = 1.0 + 2f64.sqrt() + 5f64.sqrt();
    for (a, b) in p.iter().zip([1.0 / z, 2f64.sqrt() / z, 5f64.sqrt() / z]) {
        assert!((a - b).abs() < 1e-7, "{p:?}");
    }
}

#[test]
fn log_softmax_is_log_of_softmax() {
    let l = [0.3f32, -1.2, 2.5, 0.0];
    let lp = log_softmax(&l);
    let p = softmax_with_temperature(&l, 1.0);
    for (a, b) in lp.iter().zip(&p) {
        assert!((a - b.ln()).abs() < 1e-12);
    }
}

#[test]
fn tiny_temperature_is_one_hot_on_the_argmax() {
    let l = [1.0f32, 1.001, 0.5];
    let p = softmax_with_temperature(&l, 1e-30);
    assert_eq!(p, vec![0.0, 1.0, 0.0]);
}

#[test]
fn top_k_keeps_k_tokens_with_ties_to_the_lower_id() {
    let mut p = vec![0.1, 0.3, 0.3, 0.3];
    top_k_filter(&mut p, 2);
    assert_eq!(kept(&p), vec![1, 2]);
    assert!((p[1] - 0.5).abs() < 1e-12 && (p[2] - 0.5).abs() < 1e-12);
}

#[test]
fn top_p_keeps_the_smallest_prefix_reaching_p() {
    // 0.5 alone < 0.8; 0.5 + 0.3 reaches 0.8: two tokens.
    let mut p = vec![0.2, 0.5, 0.3];
    top_p_filter(&mut p, 0.8);
    assert_eq!(kept(&p), vec![1, 2]);
    assert!((p[1] - 0.625).abs() < 1e-12 && (p[2] - 0.375).abs() < 1e-12);
    // Just above 0.8 needs the third.
    let mut p = vec![0.2, 0.5, 0.3];
    top_p_filter(&mut p, 0.81);
    assert_eq!(kept(&p), vec![0, 1, 2]);
    // A p below the top token's mass keeps that token alone.
    let mut p = vec![0.2, 0.5, 0.3];
    top_p_filter(&mut p, 0.1);
    assert_eq!(kept(&p), vec![1]);
}

#[test]
fn top_p_ties_are_taken_towards_the_lower_id() {
    let mut p = vec![0.25; 4];
    top_p_filter(&mut p, 0.5);
    assert_eq!(kept(&p), vec![0, 1]);
    let mut p = vec![0.1, 0.3, 0.3, 0.3];
    top_p_filter(&mut p, 0.35);
    assert_eq!(kept(&p), vec![1, 2]);
}

#[test]
fn top_p_of_one_keeps_every_possible_token_and_no_impossible_one() {
    let mut p = vec![0.1, 0.0, 0.2, 0.7];
    top_p_filter(&mut p, 1.0);
    assert_eq!(kept(&p), vec![0, 2, 3]);
    // Ten tokens of 0.1 do not sum to exactly 1.0 in floating point; all ten stay.
    let mut p = vec![0.1; 10];
    top_p_filter(&mut p, 1.0);
    assert_eq!(kept(&p).len(), 10);
}

#[test]
fn filters_apply_temperature_then_top_k_then_top_p() {
    // Model probabilities 0.4, 0.3, 0.2, 0.1. Top-k 3 → 4/9, 3/9, 2/9; top-p 0.7 then
    // needs 4/9 + 3/9 = 7/9 ≥ 0.7: tokens 0 and 1, renormalised to 4/7, 3/7.
    let l = ln(&[0.4, 0.3, 0.2, 0.1]);
    let s = Sampling {
        temperature: 1.0,
        top_k: Some(3),
        top_p: Some(0.7),
    };
    let p = sampling_distribution(&l, &s).unwrap();
    assert_eq!(kept(&p), vec![0, 1]);
    assert!((p[0] - 4.0 / 7.0).abs() < 1e-6 && (p[1] - 3.0 / 7.0).abs() < 1e-6);
    // The order matters: top-p 0.5 on the model's distribution keeps 0.4 + 0.3 (two
    // tokens), but after top-k 2 token 0 alone has 4/7 ≥ 0.5.
    let s = Sampling {
        temperature: 1.0,
        top_k: None,
        top_p: Some(0.5),
    };
    assert_eq!(kept(&sampling_distribution(&l, &s).unwrap()), vec![0, 1]);
    let s = Sampling {
        temperature: 1.0,
        top_k: Some(2),
        top_p: Some(0.5),
    };
    assert_eq!(kept(&sampling_distribution(&l, &s).unwrap()), vec![0]);
}

#[test]
fn draw_follows_the_cumulative_distribution() {
    // Empirical frequencies of 20 000 draws match the distribution to 1.5 %.
    let probs = [0.0, 0.5, 0.2, 0.0, 0.3];
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut counts = [0usize; 5];
    for _ in 0..20_000 {
        counts[draw(&probs, &mut rng) as usize] += 1;
    }
    assert_eq!((counts[0], counts[3]), (0, 0));
    for i in [1, 2, 4] {
        let f = counts[i] as f64 / 20_000.0;
        assert!((f - probs[i]).abs() < 0.015, "{counts:?}");
    }
}

#[test]
fn invalid_knobs_are_named() {
    let bad = |s: Sampling| s.validate().unwrap_err().to_string();
    let base = Sampling::default();
    assert!(bad(Sampling {
        temperature: -1.0,
        ..base
    })
    .contains("temperature"));
    assert!(bad(Sampling {
        temperature: f32::NAN,
        ..base
    })
    .contains("temperature"));
    assert!(bad(Sampling {
        top_k: Some(0),
        ..base
    })
    .contains("top_k"));
    assert!(bad(Sampling {
        top_p: Some(0.0),
        ..base
    })
    .contains("top_p"));
    assert!(bad(Sampling {
        top_p: Some(1.5),
        ..base
    })
    .contains("top_p"));
}

/// Logits with ties, −∞ and a spread of magnitudes, from a seed.
fn tied_logits(seed: u64, v: usize) -> Vec<f32> {
    use rand::RngExt;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..v)
        .map(|_| match rng.random_range(0..10) {
            0 => f32::NEG_INFINITY,
            1..=3 => 1.5, // many equal logits, so equal probabilities
            _ => rng.random_range(-20.0f32..20.0),
        })
        .collect()
}

/// 200 seeded [`tied_logits`] of 1 to 60 tokens, each with at least one finite logit.
fn tied_cases() -> impl Iterator<Item = (u64, Vec<f32>)> {
    (0..200)
        .map(|seed| (seed, tied_logits(seed, 1 + (seed as usize % 60))))
        .filter(|(_, l)| l.iter().any(|&x| x != f32::NEG_INFINITY))
}

#[test]
fn one_pass_softmax_and_normaliser_equal_softmax_and_log_softmax_bit_for_bit() {
    use tplay::generate::sampling::softmax_and_lse;
    for (seed, l) in tied_cases() {
        let (p, lse) = softmax_and_lse(&l);
        // The references: the tempered softmax at τ = 1 and log_softmax, each with its
        // own exponentials.
        let want_p: Vec<f32> = softmax_with_temperature(&l, 1.0)
            .iter()
            .map(|&p| p as f32)
            .collect();
        let want_log = log_softmax(&l);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&p), bits(&want_p), "seed {seed}");
        for (i, &x) in l.iter().enumerate() {
            assert_eq!(
                (x as f64 - lse).to_bits(),
                want_log[i].to_bits(),
                "seed {seed} token {i}"
            );
        }
    }
}

#[test]
fn the_first_k_ranked_ids_equal_the_full_ranking_cut_to_k_ties_included() {
    use tplay::generate::sampling::{rank, top_ranked};
    for (seed, l) in tied_cases() {
        // Probabilities as f32 then f64, as the candidate list ranks them: equal logits
        // give exactly equal probabilities, and −∞ gives 0.
        let probs: Vec<f64> = tplay::generate::sampling::softmax(&l)
            .iter()
            .map(|&p| p as f64)
            .collect();
        let all = rank(&probs);
        for k in [0, 1, 3, 5, l.len(), l.len() + 2] {
            let want: Vec<usize> = all.iter().copied().take(k).collect();
            assert_eq!(top_ranked(&probs, k), want, "seed {seed} k {k}");
        }
    }
    assert_eq!(top_ranked(&[0.25, 0.5, 0.25, 0.5], 3), vec![1, 3, 0]);
}

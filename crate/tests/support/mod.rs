//! What the integration tests share (each test file says `mod support;`): small
//! tokenizers, configs and models, the NaN-aware comparisons, the GPU device with its skip
//! rule, one test body per backend ([`device`], `backend_tests!`), and the PyTorch
//! forward fixtures with one comparison body that every backend runs
//! ([`fixtures::every_forward_fixture_matches_pytorch`]).

#![allow(dead_code)]

pub mod cli;
pub mod device;
pub mod fixtures;
pub mod generation;
pub mod steps;

#[allow(unused_imports)]
pub use device::{gpu_forward, gpu_prefill, Cache, Device};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tplay::backend::gpu::GpuContext;
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::{HeadParams, Model};
use tplay::protocol::{SamplingRequest, StrategyName, Switches};
use tplay::Tokenizer;

/// Largest |a − b|: the project's one comparison ([`tplay::tensor::max_abs_diff`]), where a
/// NaN on either side or an unshared infinity is an infinite difference.
pub use tplay::tensor::max_abs_diff as max_diff;

/// Largest |a − b| of two results whose every number must be finite: a NaN or an infinity
/// on either side (even the same infinity on both) is an infinite difference, so
/// `finite_diff(a, b) <= tol` fails on it. Traced scores, where −∞ marks a masked entry on
/// both sides, are compared with [`max_diff`] instead.
pub fn finite_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "compared results differ in length");
    if a.iter().chain(b).any(|x| !x.is_finite()) {
        return f32::INFINITY;
    }
    max_diff(a, b)
}

/// `a` and `b` agree within `tol` everywhere and are finite everywhere.
pub fn assert_close(what: &str, a: &[f32], b: &[f32], tol: f32) {
    let d = finite_diff(a, b);
    assert!(d <= tol, "{what}: differ by {d:e} (allowed {tol:e})");
}

/// `a` and `b` are finite everywhere and differ somewhere by more than `min`: a change
/// shows. A NaN must not pass for a difference, so a non-finite value fails here too.
/// Returns the largest difference.
pub fn assert_differ(what: &str, a: &[f32], b: &[f32], min: f32) -> f32 {
    assert_eq!(
        a.len(),
        b.len(),
        "{what}: compared results differ in length"
    );
    if let Some(i) = a.iter().chain(b).position(|x| !x.is_finite()) {
        panic!("{what}: non-finite value at flat index {i} of the two results");
    }
    let d = max_diff(a, b);
    assert!(
        d > min,
        "{what}: differ by only {d:e} (want more than {min:e})"
    );
    d
}

/// The shipped models, `models/`.
pub fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
}

/// The message of an `Error::Input`; anything else fails the test.
pub fn input_error<T: std::fmt::Debug>(r: tplay::Result<T>) -> String {
    match r {
        Err(tplay::Error::Input(m)) => m,
        other => panic!("expected an input error, got {other:?}"),
    }
}

/// The page's default switches: causal mask, padding mask, √D, nothing ablated, no
/// explicit mask.
pub fn default_switches() -> Switches {
    Switches {
        causal: Some(true),
        padding_mask: true,
        scale: true,
        ablate: vec![],
        mask: None,
    }
}

/// Greedy decoding, as a forward or generate request asks for it (`seed` unused by greedy,
/// kept for requests that compare seeds).
pub fn greedy(seed: u64) -> SamplingRequest {
    SamplingRequest {
        strategy: StrategyName::Greedy,
        temperature: 1.0,
        top_k: 0,
        top_p: 1.0,
        beam_width: 1,
        seed,
    }
}

/// A character-level tokenizer over the first `n` letters (`n` + 4 tokens with the
/// specials).
pub fn letters(n: usize) -> Tokenizer {
    let alphabet: String = ('a'..='z').take(n).collect();
    assert_eq!(alphabet.len(), n, "at most 26 letters");
    Tokenizer::char_level(&alphabet)
}

/// The tokenizer most tests use: ten letters, 14 tokens.
pub fn tokenizer() -> Tokenizer {
    letters(10)
}

/// The nano preset of each architecture.
pub fn nano_preset(arch: Arch) -> &'static str {
    match arch {
        Arch::DecoderOnly => "gpt-nano",
        Arch::EncoderOnly => "encoder-nano",
        Arch::EncoderDecoder => "seq2seq-nano",
    }
}

/// A small validated config over [`tokenizer`]'s 14 tokens: C 16, 4 heads, F 32, two
/// layers per stack, GELU, max_len 12, dropout 0.1, a final norm with pre-LN.
pub fn config(arch: Arch, pos: PosEncoding, norm: Norm, score: Score) -> ModelConfig {
    let (n_layers, n_enc, n_dec) = match arch {
        Arch::EncoderDecoder => (0, 2, 2),
        _ => (2, 0, 0),
    };
    let cfg = ModelConfig {
        arch,
        vocab_size: tokenizer().vocab_size(),
        d_model: 16,
        n_heads: 4,
        d_ff: 32,
        max_len: 12,
        n_layers,
        n_encoder_layers: n_enc,
        n_decoder_layers: n_dec,
        pos_encoding: pos,
        relative_max_distance: 3,
        norm,
        final_norm: norm == Norm::PreLn,
        activation: Activation::Gelu,
        score,
        share_qk: false,
        scale_embeddings: true,
        residual: true,
        dropout: 0.1,
        tie_embeddings: false,
        num_classes: 0,
    };
    cfg.validate().expect("test configs are valid");
    cfg
}

/// A small config of `arch` over [`letters`]`(12)`: C 16, 2 heads, F 32, max_len 16,
/// the nano preset's decoder layers and one encoder layer, relative distances clipped at 3
/// so that test lengths go past the clipping.
pub fn two_head_config(arch: Arch, pos: PosEncoding) -> ModelConfig {
    let cfg = ModelConfig {
        d_model: 16,
        n_heads: 2,
        d_ff: 32,
        max_len: 16,
        n_encoder_layers: if arch == Arch::EncoderDecoder { 1 } else { 0 },
        pos_encoding: pos,
        relative_max_distance: 3,
        ..ModelConfig::preset(nano_preset(arch), letters(12).vocab_size()).unwrap()
    };
    cfg.validate().expect("test configs are valid");
    cfg
}

/// Two prompts of four tokens for a [`two_head_config`] model (the second with a padding
/// token inside, which the padding mask hides from later positions), and for an
/// encoder-decoder model two sources (the second right-padded).
pub fn padded_prompts(m: &Model) -> (Vec<Vec<u32>>, Option<Vec<Vec<u32>>>) {
    let (bos, pad) = (m.tokenizer.spec.bos, m.tokenizer.spec.pad);
    let prompts = vec![vec![bos, 5, 7, 4], vec![bos, pad, 9, 6]];
    let src = (m.config.arch == Arch::EncoderDecoder)
        .then(|| vec![vec![5, 9, 4, 12, 7], vec![6, 8, 11, pad, pad]]);
    (prompts, src)
}

/// The tokens fed at decoding step `k` to `b` sequences, one each.
pub fn step_tokens(k: usize, b: usize) -> Vec<u32> {
    (0..b).map(|i| 4 + ((k * 5 + i * 3) % 11) as u32).collect()
}

/// A model of `cfg` over [`tokenizer`], weights from `seed`.
pub fn model(cfg: ModelConfig, seed: u64) -> Model {
    Model::init(cfg, tokenizer(), seed)
}

/// Push `<eos>` far down (its LM-head bias to −30) so that generations run through their
/// whole budget. The model must have an LM head with a bias.
pub fn eos_unlikely(mut m: Model) -> Model {
    let eos = m.tokenizer.spec.eos as usize;
    match &mut m.head {
        HeadParams::Lm {
            bias: Some(bias), ..
        } => bias.data[eos] = -30.0,
        _ => panic!("test models have an LM head with a bias"),
    }
    m
}

/// An encoder-decoder `m` with separate source and target embeddings (`src_embed.weight`,
/// `tgt_embed.weight`): the target table is `m`'s, the source table new values from `seed`.
pub fn with_separate_embeddings(mut m: Model, seed: u64) -> Model {
    m.separate_embeddings()
        .expect("separate embeddings need an encoder-decoder");
    let src = m.src_embed.as_mut().expect("a source table");
    src.data = values(src.numel(), seed, 0.5);
    m
}

/// Every number of a (step, row, value) nest, in order.
pub fn flat(x: &[Vec<Vec<f32>>]) -> Vec<f32> {
    x.iter().flatten().flatten().copied().collect()
}

/// The shared GPU context, or `None` (after printing "skipped: no GPU adapter") when there
/// is no adapter. With `TPLAY_REQUIRE_GPU=1` (which `cargo xtask test` sets unless run with
/// `--no-gpu`) a missing adapter fails the test instead.
pub fn gpu_or_skip() -> Option<GpuContext> {
    static CTX: OnceLock<Result<GpuContext, String>> = OnceLock::new();
    let got =
        CTX.get_or_init(|| pollster::block_on(GpuContext::request()).map_err(|e| e.to_string()));
    match got {
        Ok(ctx) => Some(ctx.clone()),
        Err(why) => {
            if std::env::var("TPLAY_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("TPLAY_REQUIRE_GPU=1 but the GPU backend cannot start: {why}");
            }
            eprintln!("skipped: no GPU adapter ({why})");
            None
        }
    }
}

/// Deterministic values in [-amp, amp]: a small xorshift generator, so every test sees the
/// same numbers on every run.
pub fn values(n: usize, seed: u64, amp: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let unit = (s >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            (unit * 2.0 - 1.0) * amp
        })
        .collect()
}

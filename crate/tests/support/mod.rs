//! What the integration tests share (each test file says `mod support;`): small
//! tokenizers, configs and models, the project's one NaN-aware comparison, the GPU device
//! with its skip rule, and the PyTorch forward fixtures with one comparison body that
//! every backend runs ([`fixtures::every_forward_fixture_matches_pytorch`]).

#![allow(dead_code)]

pub mod fixtures;

use std::sync::OnceLock;

use tplay::backend::gpu::GpuContext;
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::{HeadParams, Model};
use tplay::Tokenizer;

/// Largest |a − b|: the project's one comparison ([`tplay::tensor::max_abs_diff`]), where a
/// NaN on either side or an unshared infinity is an infinite difference.
pub use tplay::tensor::max_abs_diff as max_diff;

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

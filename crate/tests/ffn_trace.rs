//! The FFN's hidden units in the forward trace (`ForwardOptions::trace_ffn`, the overview's
//! live FFN strip): on the CPU each traced tensor is `act(x·W₁ᵀ + b₁)` of that sublayer's
//! input, computed here independently from the checkpoint's tensors; tracing changes no
//! logit; the GPU pass traces the same numbers as the CPU; the engine sends them only when
//! asked.

mod support;

use pollster::block_on;
use support::{config, default_switches, gpu_forward, gpu_or_skip, max_diff, model};
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::engine::Engine;
use tplay::model::forward::{Activations, Batch, SublayerKind};
use tplay::model::{AttnSite, ForwardOptions, Mode, Model, Trace};
use tplay::protocol::ForwardRequest;

/// The models the trace is checked on: a pre-LN decoder (GELU), a post-LN encoder-decoder
/// (ReLU), an encoder-only model with BatchNorm (ReLU) and a decoder without norms (GELU).
fn models() -> Vec<(&'static str, Model)> {
    let with = |mut cfg: ModelConfig, act: Activation| {
        cfg.activation = act;
        cfg.validate().unwrap();
        cfg
    };
    vec![
        (
            "pre-LN decoder",
            model(
                with(
                    config(
                        Arch::DecoderOnly,
                        PosEncoding::Sinusoidal,
                        Norm::PreLn,
                        Score::ScaledDot,
                    ),
                    Activation::Gelu,
                ),
                3,
            ),
        ),
        (
            "post-LN encoder-decoder",
            model(
                with(
                    config(
                        Arch::EncoderDecoder,
                        PosEncoding::Learned,
                        Norm::PostLn,
                        Score::ScaledDot,
                    ),
                    Activation::Relu,
                ),
                5,
            ),
        ),
        (
            "BatchNorm encoder",
            model(
                with(
                    config(
                        Arch::EncoderOnly,
                        PosEncoding::Rope,
                        Norm::BatchNorm,
                        Score::ScaledDot,
                    ),
                    Activation::Relu,
                ),
                7,
            ),
        ),
        (
            "decoder without norms",
            model(
                with(
                    config(
                        Arch::DecoderOnly,
                        PosEncoding::Alibi,
                        Norm::None,
                        Score::ScaledDot,
                    ),
                    Activation::Gelu,
                ),
                9,
            ),
        ),
    ]
}

/// Two sequences of five tokens (the second padded), with sources for an encoder-decoder.
fn batch(m: &Model) -> Batch {
    let (bos, pad) = (m.tokenizer.spec.bos, m.tokenizer.spec.pad);
    let b = Batch::new(vec![vec![bos, 5, 7, 4, 9], vec![bos, 6, 8, pad, pad]]).unwrap();
    if m.config.arch == Arch::EncoderDecoder {
        b.with_source(vec![vec![5, 9, 4, 12, 7, 6], vec![6, 8, 11, 4, pad, pad]])
            .unwrap()
    } else {
        b
    }
}

fn traced() -> ForwardOptions {
    ForwardOptions {
        trace_ffn: true,
        ..ForwardOptions::default()
    }
}

/// The stacks in the order they run, with their checkpoint prefix and layer count.
fn stacks(m: &Model) -> Vec<(AttnSite, &'static str, usize)> {
    let cfg = &m.config;
    match cfg.arch {
        Arch::DecoderOnly => vec![(AttnSite::DecoderSelf, "decoder", cfg.decoder_layers())],
        Arch::EncoderOnly => vec![(AttnSite::EncoderSelf, "encoder", cfg.encoder_layers())],
        Arch::EncoderDecoder => vec![
            (AttnSite::EncoderSelf, "encoder", cfg.encoder_layers()),
            (AttnSite::DecoderSelf, "decoder", cfg.decoder_layers()),
        ],
    }
}

/// `act(x·W₁ᵀ + b₁)` of (N, C) rows, in f64 from the checkpoint tensors `{prefix}.linear1.*`.
fn hidden_by_hand(m: &Model, prefix: &str, x: &[f32]) -> Vec<f32> {
    let w = m.param(&format!("{prefix}.linear1.weight")).unwrap(); // (F, C)
    let bias = m.param(&format!("{prefix}.linear1.bias")).unwrap(); // (F)
    let (f, c) = (w.shape[0], w.shape[1]);
    assert_eq!((f, c), (m.config.d_ff, m.config.d_model));
    let mut out = vec![];
    for row in x.chunks(c) {
        for j in 0..f {
            let mut z = bias.data[j] as f64;
            for (k, &xv) in row.iter().enumerate() {
                z += xv as f64 * w.data[j * c + k] as f64;
            }
            out.push(match m.config.activation {
                Activation::Relu => z.max(0.0),
                Activation::Gelu => 0.5 * z * (1.0 + libm::erf(z / std::f64::consts::SQRT_2)),
                Activation::GeluTanh => {
                    let u = (2.0 / std::f64::consts::PI).sqrt() * (z + 0.044715 * z * z * z);
                    0.5 * z * (1.0 + u.tanh())
                }
            } as f32);
        }
    }
    out
}

/// The recorded input of the FFN sublayer of layer `li` of a stack.
fn ffn_input(acts: &Activations, site: AttnSite, li: usize) -> Vec<f32> {
    let stack = match site {
        AttnSite::EncoderSelf => acts.encoder.as_ref(),
        _ => acts.decoder.as_ref(),
    }
    .unwrap();
    let sub = stack.layers[li]
        .iter()
        .find(|s| s.kind == SublayerKind::Ffn)
        .unwrap();
    sub.sub_input.clone()
}

#[test]
fn each_traced_ffn_is_the_activation_of_its_input_by_the_checkpoint_weights() {
    for (what, m) in models() {
        let batch = batch(&m);
        let (trace, acts) = m.forward_recorded(&batch, &traced()).unwrap();
        let want: Vec<(AttnSite, usize, &str)> = stacks(&m)
            .into_iter()
            .flat_map(|(site, name, l)| (0..l).map(move |li| (site, li, name)))
            .collect();
        let got: Vec<(AttnSite, usize)> = trace.ffn.iter().map(|f| (f.stack, f.layer)).collect();
        assert_eq!(
            got,
            want.iter().map(|w| (w.0, w.1)).collect::<Vec<_>>(),
            "{what}: one FFN trace per layer, in the order the stacks run"
        );
        let mut firsts = vec![];
        for (f, (site, li, name)) in trace.ffn.iter().zip(&want) {
            let t = match site {
                AttnSite::EncoderSelf if m.config.arch == Arch::EncoderDecoder => batch.src_len,
                _ => batch.len,
            };
            assert_eq!(
                f.hidden.shape,
                vec![batch.batch, t, m.config.d_ff],
                "{what} {name} layer {li}: (B, T, F)"
            );
            let x = ffn_input(&acts, *site, *li);
            let by_hand = hidden_by_hand(&m, &format!("{name}.layers.{li}"), &x);
            let d = max_diff(&f.hidden.data, &by_hand);
            assert!(d <= 1e-5, "{what} {name} layer {li}: differs by {d}");
            if m.config.activation == Activation::Relu {
                assert!(
                    f.hidden.data.contains(&0.0) && f.hidden.data.iter().any(|&v| v > 0.0),
                    "{what} {name} layer {li}: ReLU leaves zeros and positives"
                );
            }
            firsts.push((site, f.hidden.data.clone()));
        }
        assert!(
            firsts
                .windows(2)
                .filter(|w| w[0].0 == w[1].0)
                .all(|w| max_diff(&w[0].1, &w[1].1) > 1e-3),
            "{what}: each layer traces its own FFN"
        );
    }
}

#[test]
fn tracing_the_ffn_changes_no_logit_and_is_off_by_default() {
    for (what, m) in models() {
        let batch = batch(&m);
        let plain = m.forward(&batch, &ForwardOptions::default()).unwrap();
        assert!(plain.ffn.is_empty(), "{what}: no FFN trace unless asked");
        let with = m.forward(&batch, &traced()).unwrap();
        assert_eq!(plain.logits, with.logits, "{what}: logits unchanged");
        assert_eq!(plain.class_logits, with.class_logits, "{what}");
    }
}

#[test]
fn a_train_mode_trace_holds_the_hidden_units_after_dropout() {
    let (what, m) = models().swap_remove(0);
    assert!(m.config.dropout > 0.0, "the test model trains with dropout");
    let batch = batch(&m);
    let opts = ForwardOptions {
        mode: Mode::Train { seed: 4 },
        ..traced()
    };
    let (trace, acts) = m.forward_recorded(&batch, &opts).unwrap();
    let f = &trace.ffn[0];
    let x = ffn_input(&acts, f.stack, 0);
    let by_hand = hidden_by_hand(&m, "decoder.layers.0", &x);
    let dec = acts.decoder.as_ref().unwrap();
    let sub = dec.layers[0]
        .iter()
        .find(|s| s.kind == SublayerKind::Ffn)
        .unwrap();
    let mask = sub
        .ffn_dropout
        .as_ref()
        .expect("a dropout mask on the hidden units");
    let dropped: Vec<f32> = by_hand.iter().zip(mask).map(|(h, k)| h * k).collect();
    let d = max_diff(&f.hidden.data, &dropped);
    assert!(d <= 1e-5, "{what}: differs by {d}");
    assert!(mask.contains(&0.0), "{what}: some units dropped");
}

fn close_traces(what: &str, cpu: &Trace, gpu: &Trace, tol: f32) {
    assert_eq!(cpu.ffn.len(), gpu.ffn.len(), "{what}: as many FFN traces");
    for (c, g) in cpu.ffn.iter().zip(&gpu.ffn) {
        assert_eq!((c.stack, c.layer), (g.stack, g.layer), "{what}");
        assert_eq!(c.hidden.shape, g.hidden.shape, "{what}");
        let d = max_diff(&c.hidden.data, &g.hidden.data);
        assert!(
            d <= tol,
            "{what} {} layer {}: GPU differs from the CPU by {d}",
            c.stack.name(),
            c.layer
        );
    }
}

#[test]
fn the_gpu_traces_the_same_ffn_hidden_units_as_the_cpu() {
    let Some(ctx) = gpu_or_skip() else {
        return;
    };
    for (what, m) in models() {
        let batch = batch(&m);
        let cpu = m.forward(&batch, &traced()).unwrap();
        let gpu = gpu_forward(&ctx, &m, &batch, &traced()).unwrap();
        close_traces(what, &cpu, &gpu, 1e-4);
        let plain = gpu_forward(&ctx, &m, &batch, &ForwardOptions::default()).unwrap();
        assert!(
            plain.ffn.is_empty(),
            "{what}: the GPU traces no FFN unless asked"
        );
    }
    // Train mode: the GPU draws the CPU's dropout masks.
    let (what, m) = models().swap_remove(0);
    let opts = ForwardOptions {
        mode: Mode::Train { seed: 4 },
        ..traced()
    };
    let batch = batch(&m);
    let cpu = m.forward(&batch, &opts).unwrap();
    let gpu = gpu_forward(&ctx, &m, &batch, &opts).unwrap();
    close_traces(what, &cpu, &gpu, 1e-4);
}

fn request(batch: Vec<Vec<u32>>, ffn: Option<bool>) -> ForwardRequest {
    ForwardRequest {
        batch,
        src: None,
        switches: default_switches(),
        sampling: support::greedy(1),
        qkv: None,
        ffn,
        train: None,
    }
}

#[test]
fn the_engine_sends_the_ffn_hidden_units_only_when_asked() {
    let (what, m) = models().swap_remove(0);
    let mut e = Engine::new();
    e.load(&tplay::checkpoint::save(&m).unwrap()).unwrap();
    let row = vec![m.tokenizer.spec.bos, 5, 7, 4];
    let asked = block_on(e.forward(&request(vec![row.clone()], Some(true)))).unwrap();
    let core = m
        .forward(&Batch::new(vec![row.clone()]).unwrap(), &traced())
        .unwrap();
    assert_eq!(asked.ffn.len(), core.ffn.len(), "{what}");
    for (v, c) in asked.ffn.iter().zip(&core.ffn) {
        assert_eq!((v.stack, v.layer), (c.stack, c.layer));
        assert_eq!(v.hidden.shape, c.hidden.shape);
        assert_eq!(v.hidden.data.0, c.hidden.data, "{what}: the core's numbers");
    }
    let not = block_on(e.forward(&request(vec![row], None))).unwrap();
    assert!(not.ffn.is_empty(), "{what}: nothing unless asked");
}

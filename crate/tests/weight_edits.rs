//! Weights edited by hand through the engine (`Engine::set_weights` and its siblings): an
//! edit changes the logits as a hand computation and the CPU reference predict, restoring
//! gives bit-identical logits, the edited model exports as a checkpoint that loads back to
//! the same forward pass, the GPU sees the edit, and bad requests are refused with a
//! message while nothing changes.

mod support;

use pollster::block_on;
use support::{
    assert_close, assert_differ, default_switches, eos_unlikely, gpu_or_skip, input_error,
};
use tplay::backend::Backend;
use tplay::config::ModelConfig;
use tplay::engine::Engine;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Model};
use tplay::protocol::{
    ForwardRequest, GenerateStartRequest, WeightRestoreRequest, WeightSelection, WeightSetRequest,
};
use tplay::Tokenizer;

fn trained_model(preset: &str, edit: impl FnOnce(&mut ModelConfig)) -> Model {
    let tok = Tokenizer::char_level("abcdefgh");
    let mut cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
    edit(&mut cfg);
    cfg.validate().unwrap();
    eos_unlikely(Model::init(cfg, tok, 11))
}

fn engine_of(m: &Model) -> Engine {
    let mut e = Engine::new();
    e.load(&tplay::checkpoint::save(m).unwrap()).unwrap();
    e
}

const PROMPT: [u32; 6] = [1, 4, 5, 6, 7, 5];

fn request(batch: Vec<Vec<u32>>) -> ForwardRequest {
    ForwardRequest {
        batch,
        src: None,
        switches: default_switches(),
        sampling: support::greedy(1),
        qkv: None,
        ffn: None,
        train: None,
    }
}

/// The engine's logits for PROMPT, (T·V) flat.
fn logits(e: &mut Engine) -> Vec<f32> {
    block_on(e.forward(&request(vec![PROMPT.to_vec()])))
        .unwrap()
        .logits
        .data
        .0
}

/// The CPU reference's logits of `m` for PROMPT under the causal mask.
fn reference_logits(m: &Model) -> Vec<f32> {
    let batch = Batch::single(&PROMPT).unwrap();
    let opts = ForwardOptions {
        causal: Some(true),
        ..ForwardOptions::default()
    };
    m.forward(&batch, &opts).unwrap().logits.data
}

fn set(e: &mut Engine, name: &str, start: usize, stride: Option<usize>, values: Vec<f32>) {
    e.set_weights(&WeightSetRequest {
        name: name.into(),
        start: Some(start),
        stride,
        values,
    })
    .unwrap();
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn editing_an_lm_head_bias_moves_that_tokens_logit_by_the_edit_at_every_position_and_no_other() {
    let m = trained_model("gpt-pico", |_| {});
    let v = m.config.vocab_size;
    let mut e = engine_of(&m);
    let before = logits(&mut e);
    let tok = 6;
    let b0 = e
        .read_weights(&WeightSelection {
            name: "lm_head.bias".into(),
            start: Some(tok),
            count: Some(1),
            stride: None,
        })
        .unwrap()
        .values
        .0[0];
    let delta = 0.75f32;
    set(&mut e, "lm_head.bias", tok, None, vec![b0 + delta]);
    let after = logits(&mut e);
    for (i, (a, b)) in after.iter().zip(&before).enumerate() {
        if i % v == tok {
            // logit = h·w + b: the bias goes in last, so the logit moves by the bias's own change.
            let moved = ((b0 + delta) - b0) as f64;
            assert!(
                ((*a - *b) as f64 - moved).abs() < 1e-5,
                "position {}: moved {} not {moved}",
                i / v,
                a - b
            );
        } else {
            assert_eq!(a.to_bits(), b.to_bits(), "logit {i} of another token moved");
        }
    }
}

#[test]
fn editing_a_token_embedding_changes_no_position_before_that_token_and_equals_the_cpu_reference() {
    let m = trained_model("gpt-pico", |_| {});
    let (v, c) = (m.config.vocab_size, m.config.d_model);
    let mut e = engine_of(&m);
    let before = logits(&mut e);
    // Token 6 first appears at position 3 of PROMPT.
    let tok = 6usize;
    let first = PROMPT.iter().position(|&t| t as usize == tok).unwrap();
    let new_row: Vec<f32> = (0..c).map(|i| ((i as f32) * 0.37).sin()).collect();
    set(&mut e, "embed.weight", tok * c, None, new_row.clone());
    let after = logits(&mut e);
    // Under the causal mask, positions before the token never see its embedding.
    assert_eq!(
        bits(&after[..first * v]),
        bits(&before[..first * v]),
        "positions before the token"
    );
    assert_differ(
        "positions from the token on",
        &after[first * v..],
        &before[first * v..],
        1e-4,
    );
    // The CPU reference on a model edited the same way predicts every logit.
    let mut edited = m.clone();
    edited.embed.data[tok * c..(tok + 1) * c].copy_from_slice(&new_row);
    assert_eq!(
        bits(&after),
        bits(&reference_logits(&edited)),
        "the edited model's CPU pass"
    );
    // The edit is listed: the tensor, how many values, where.
    let edits = e.weight_edits().unwrap();
    assert_eq!(edits.edits.len(), 1);
    assert_eq!(edits.edits[0].name, "embed.weight");
    let changed = new_row
        .iter()
        .zip(&m.embed.data[tok * c..(tok + 1) * c])
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(edits.edits[0].changed, changed);
    assert!(edits.edits[0].indices.iter().all(|&i| i / c == tok));
}

#[test]
fn restoring_a_cell_a_tensor_or_everything_gives_bit_identical_logits() {
    let m = trained_model("gpt-pico", |_| {});
    let c = m.config.d_model;
    let f = m.config.d_ff;
    let mut e = engine_of(&m);
    let before = logits(&mut e);
    let w1 = "decoder.layers.0.linear1.weight";
    let w2 = "decoder.layers.0.linear2.weight";
    // An FFN unit: its input row of W1 and its output column of W2 (stride F).
    set(&mut e, w1, 3 * c, None, vec![0.9; c]);
    set(&mut e, w2, 3, Some(f), vec![-0.8; c]);
    set(
        &mut e,
        "decoder.layers.0.self_attn.in_proj_bias",
        2,
        None,
        vec![1.5],
    );
    assert_differ("edited", &logits(&mut e), &before, 1e-4);
    let col = e
        .read_weights(&WeightSelection {
            name: w2.into(),
            start: Some(3),
            count: Some(c),
            stride: Some(f),
        })
        .unwrap();
    assert!(col.values.0.iter().all(|&x| x == -0.8));
    assert_eq!(col.indices, (0..c).map(|r| r * f + 3).collect::<Vec<_>>());
    let want: Vec<f32> = (0..c)
        .map(|r| m.decoder.as_ref().unwrap().layers[0].linear2_weight.data[r * f + 3])
        .collect();
    assert_eq!(
        bits(&col.trained.0),
        bits(&want),
        "the trained values come with the read"
    );
    assert_eq!(e.weight_edits().unwrap().edits.len(), 3);

    // One cell back: the tensor is still edited elsewhere.
    e.restore_weights(&WeightRestoreRequest {
        name: Some("decoder.layers.0.self_attn.in_proj_bias".into()),
        start: Some(2),
        count: Some(1),
        stride: None,
    })
    .unwrap();
    // One tensor back, then the last one by its selection.
    e.restore_weights(&WeightRestoreRequest {
        name: Some(w1.into()),
        ..WeightRestoreRequest::default()
    })
    .unwrap();
    let left = e.weight_edits().unwrap();
    assert_eq!(
        left.edits
            .iter()
            .map(|x| x.name.as_str())
            .collect::<Vec<_>>(),
        vec![w2]
    );
    e.restore_weights(&WeightRestoreRequest {
        name: Some(w2.into()),
        start: Some(3),
        count: Some(c),
        stride: Some(f),
    })
    .unwrap();
    assert_eq!(e.weight_edits().unwrap().changed, 0);
    assert_eq!(
        bits(&logits(&mut e)),
        bits(&before),
        "every edit restored cell by cell"
    );

    // Everything back at once.
    set(&mut e, "embed.weight", 0, None, vec![3.0; 2 * c]);
    set(&mut e, "lm_head.weight", 5, None, vec![-2.0]);
    assert_eq!(e.weight_edits().unwrap().edits.len(), 2);
    e.restore_weights(&WeightRestoreRequest::default()).unwrap();
    assert_eq!(e.weight_edits().unwrap().changed, 0);
    assert_eq!(bits(&logits(&mut e)), bits(&before), "restore all");
}

#[test]
fn the_edited_model_exports_as_a_checkpoint_that_loads_back_to_the_same_forward_pass() {
    let m = trained_model("gpt-pico", |_| {});
    let c = m.config.d_model;
    let mut e = engine_of(&m);
    // Unedited, the export is the loaded checkpoint byte for byte.
    assert_eq!(
        e.export_model().unwrap(),
        tplay::checkpoint::save(&m).unwrap()
    );
    set(&mut e, "embed.weight", 5 * c, None, vec![0.25; c]);
    set(
        &mut e,
        "decoder.layers.0.norm2.weight",
        0,
        None,
        vec![2.0, -1.0],
    );
    let edited = logits(&mut e);
    let bytes = e.export_model().unwrap();
    let mut back = Engine::new();
    let info = back.load(&bytes).unwrap();
    assert_eq!(info.params, m.param_count());
    assert_eq!(bits(&logits(&mut back)), bits(&edited), "export → load");
    // The loaded export is a fresh model: nothing edited in it.
    assert_eq!(back.weight_edits().unwrap().changed, 0);
    // And the `tplay` checkpoint reader sees the edited values.
    let m2 = tplay::checkpoint::load(&bytes).unwrap();
    assert_eq!(m2.embed.data[5 * c..6 * c], vec![0.25; c][..]);
}

#[test]
fn bad_names_indices_and_values_are_refused_and_nothing_changes() {
    let m = trained_model("gpt-pico", |_| {});
    let n_embed = m.embed.numel();
    let mut e = engine_of(&m);
    let before = logits(&mut e);
    let try_set =
        |e: &mut Engine, name: &str, start: usize, stride: Option<usize>, values: Vec<f32>| {
            input_error(e.set_weights(&WeightSetRequest {
                name: name.into(),
                start: Some(start),
                stride,
                values,
            }))
        };
    let msg = try_set(
        &mut e,
        "decoder.layers.9.linear1.weight",
        0,
        None,
        vec![1.0],
    );
    assert!(
        msg.contains("no tensor named `decoder.layers.9.linear1.weight`")
            && msg.contains("embed.weight"),
        "{msg}"
    );
    let msg = try_set(&mut e, "embed.weight", n_embed, None, vec![1.0]);
    assert!(
        msg.contains(&format!("index {n_embed} is outside")),
        "{msg}"
    );
    let msg = try_set(&mut e, "embed.weight", n_embed - 1, None, vec![1.0, 2.0]);
    assert!(
        msg.contains(&format!("index {n_embed} is outside")),
        "{msg}"
    );
    let msg = try_set(&mut e, "embed.weight", 0, Some(0), vec![1.0]);
    assert!(msg.contains("stride must be at least 1"), "{msg}");
    let msg = try_set(&mut e, "embed.weight", 0, None, vec![0.5, f32::NAN]);
    assert!(
        msg.contains("value NaN (number 1 of the request) is not a finite number"),
        "{msg}"
    );
    let msg = try_set(&mut e, "embed.weight", 0, None, vec![f32::INFINITY]);
    assert!(msg.contains("not a finite number"), "{msg}");
    let msg = input_error(e.read_weights(&WeightSelection {
        name: "embed.weight".into(),
        start: Some(0),
        count: Some(0),
        stride: None,
    }));
    assert!(msg.contains("count must be at least 1"), "{msg}");
    let msg = input_error(e.restore_weights(&WeightRestoreRequest {
        start: Some(1),
        ..WeightRestoreRequest::default()
    }));
    assert!(msg.contains("needs the tensor's name"), "{msg}");
    // Nothing of it reached the model.
    assert_eq!(e.weight_edits().unwrap().changed, 0);
    assert_eq!(bits(&logits(&mut e)), bits(&before));
    // Without a model, a clear error too.
    let empty = Engine::new();
    let msg = input_error(empty.weight_edits());
    assert!(msg.contains("no model is loaded"), "{msg}");
}

#[test]
fn a_model_sharing_w_q_and_w_k_keeps_them_equal_and_refuses_a_w_k_edit() {
    let m = trained_model("gpt-pico", |c| c.share_qk = true);
    let c = m.config.d_model;
    let name = "decoder.layers.0.self_attn.in_proj_weight";
    let mut e = engine_of(&m);
    set(&mut e, name, 2 * c, None, vec![0.5; c]);
    let k_row = e
        .read_weights(&WeightSelection {
            name: name.into(),
            start: Some(c * c + 2 * c),
            count: Some(c),
            stride: None,
        })
        .unwrap();
    assert_eq!(k_row.values.0, vec![0.5; c], "W_K row 2 follows W_Q row 2");
    let msg = input_error(e.set_weights(&WeightSetRequest {
        name: name.into(),
        start: Some(c * c),
        stride: None,
        values: vec![1.0],
    }));
    assert!(msg.contains("shares W_K with W_Q"), "{msg}");
}

#[test]
fn a_generation_after_an_edit_draws_from_the_edited_model() {
    let m = trained_model("gpt-pico", |_| {});
    let c = m.config.d_model;
    let mut e = engine_of(&m);
    let start = GenerateStartRequest {
        prompt: vec![1, 4, 5],
        src: None,
        switches: default_switches(),
        sampling: request(vec![]).sampling,
        max_new_tokens: 6,
        trace: Some(false),
        use_cache: None,
    };
    e.generate_start(&start).unwrap();
    block_on(e.generate_step()).unwrap();
    set(&mut e, "embed.weight", 4 * c, None, vec![1.0; c]);
    // The generation drawing from the old weights is gone; a new one starts from the edit.
    assert!(input_error(block_on(e.generate_step())).contains("no generation is running"));
    e.generate_start(&start).unwrap();
    let mut got = vec![];
    loop {
        let s = block_on(e.generate_step()).unwrap();
        if s.done {
            got = s.generated;
            break;
        }
    }
    let mut edited = m.clone();
    edited.embed.data[4 * c..5 * c].fill(1.0);
    let opts = GenerateOptions {
        strategy: Strategy::Greedy,
        seed: 1,
        max_new_tokens: 6,
        ..GenerateOptions::default()
    };
    let mut g = Generator::new(&edited, Backend::Cpu, vec![1, 4, 5], None, opts).unwrap();
    let want = block_on(g.run_to_end()).unwrap().tokens;
    assert_eq!(got, want);
}

#[test]
fn the_gpu_backend_sees_an_edit_and_agrees_with_the_cpu_after_it() {
    let Some(ctx) = gpu_or_skip() else { return };
    for preset in ["gpt-pico", "gpt-nano"] {
        let m = trained_model(preset, |cfg| {
            cfg.pos_encoding = tplay::config::PosEncoding::Learned
        });
        let c = m.config.d_model;
        let mut cpu = engine_of(&m);
        let mut gpu = engine_of(&m);
        gpu.use_backend(Backend::Gpu(ctx.clone()));
        let before = logits(&mut gpu); // places the trained model on the device
        for e in [&mut cpu, &mut gpu] {
            set(e, "embed.weight", 5 * c, None, vec![0.6; c]);
            set(e, "pos_embed.weight", 2 * c, None, vec![-0.4; c]);
            set(
                e,
                "decoder.layers.0.self_attn.in_proj_weight",
                3 * c,
                None,
                vec![0.3; c],
            );
        }
        let (a, b) = (logits(&mut cpu), logits(&mut gpu));
        assert_close(
            &format!("{preset}: GPU vs CPU after the edit"),
            &b,
            &a,
            1e-4,
        );
        assert_differ(
            &format!("{preset}: the GPU's logits moved"),
            &b,
            &before,
            1e-3,
        );
        let r = block_on(gpu.forward(&request(vec![PROMPT.to_vec()]))).unwrap();
        assert_eq!(
            r.backend,
            tplay::protocol::BackendName::Webgpu,
            "{preset}: still on the GPU"
        );
        gpu.restore_weights(&WeightRestoreRequest::default())
            .unwrap();
        assert_close(
            &format!("{preset}: restored on the GPU"),
            &logits(&mut gpu),
            &before,
            1e-6,
        );
    }
}

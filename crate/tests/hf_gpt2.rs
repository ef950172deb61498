//! Hugging Face GPT-2 folders against the numbers `transformers` and `tokenizers` gave for
//! them (`tests/fixtures/gpt2/make.py`): logits of `GPT2LMHeadModel` (CPU within 1e-5, GPU
//! within 1e-4), the BPE's ids and tokens, greedy generation; with and without the
//! `transformer.` prefix, tied and untied heads; hostile folders get clear errors.

mod support;

use std::path::{Path, PathBuf};

use pollster::block_on;
use serde_json::Value;
use support::cli::{fails_with, tplay_ok};
use support::{gpu_forward, gpu_or_skip};
use tplay::backend::Backend;
use tplay::generate::{GenerateOptions, Generator, Strategy};
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, Model};

const VARIANTS: [&str; 4] = [
    "prefix_tied",
    "bare_tied",
    "prefix_untied",
    "prefix_tied_head_kept",
];

fn root() -> PathBuf {
    support::fixtures::dir().join("gpt2")
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn load(name: &str) -> Model {
    tplay::checkpoint::load_file(&root().join(name)).unwrap()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Worst |ours − transformers| over every logit of every sequence of `name`.
fn logits_diff(name: &str, run: &dyn Fn(&Model, &Batch) -> Vec<f32>) -> f32 {
    let model = load(name);
    let exp = json(&root().join(name).join("expected.json"));
    let mut worst = 0.0f32;
    for s in exp["sequences"].as_array().unwrap() {
        let tokens = ids(&s["tokens"]);
        let want = floats(&s["logits"]);
        assert_eq!(want.len(), tokens.len() * model.config.vocab_size);
        let got = run(&model, &Batch::single(&tokens).unwrap());
        worst = worst.max(max_diff(&got, &want));
    }
    worst
}

#[test]
fn every_variant_matches_transformers_logits_on_the_cpu() {
    for name in VARIANTS {
        let d = logits_diff(name, &|m, b| {
            m.forward(b, &ForwardOptions::default())
                .unwrap()
                .logits
                .data
        });
        eprintln!("{name}: CPU max |Δlogit| = {d:e}");
        assert!(d <= 1e-5, "{name}: {d}");
    }
}

#[test]
fn every_variant_matches_transformers_logits_on_the_gpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    for name in VARIANTS {
        let d = logits_diff(name, &|m, b| {
            gpu_forward(&ctx, m, b, &ForwardOptions::default())
                .unwrap()
                .logits
                .data
        });
        eprintln!("{name}: GPU max |Δlogit| = {d:e}");
        assert!(d <= 1e-4, "{name}: {d}");
    }
}

#[test]
fn the_cli_forward_prints_the_same_logits() {
    let dir = root().join("bare_tied");
    let exp = json(&dir.join("expected.json"));
    let s = &exp["sequences"][1];
    let tokens: Vec<String> = ids(&s["tokens"]).iter().map(|t| t.to_string()).collect();
    let out = tplay_ok(&[
        "forward",
        "--model",
        dir.to_str().unwrap(),
        "--tokens",
        &tokens.join(","),
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<f32> = v["logits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(floats)
        .collect();
    let d = max_diff(&got, &floats(&s["logits"]));
    assert!(d <= 1e-5, "{d}");
}

#[test]
fn tokenize_gives_the_tokenizers_librarys_ids_and_tokens() {
    let cases = json(&root().join("tokenizer/cases.json"));
    // tokenizer.json and the vocab.json + merges.txt pair
    let models = [load("prefix_tied"), load("bare_tied")];
    for c in cases["cases"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        let want = ids(&c["ids"]);
        for m in &models {
            let got = m.tokenizer.encode(text);
            assert_eq!(got.ids, want, "{text:?}");
            assert!(got.unknown.is_empty());
            let tokens: Vec<&str> = got
                .ids
                .iter()
                .map(|&i| m.tokenizer.token(i).unwrap())
                .collect();
            let want_tokens: Vec<&str> = c["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            assert_eq!(tokens, want_tokens, "{text:?}");
            assert_eq!(m.tokenizer.decode(&got.ids), text, "decode {text:?}");
        }
    }
    // The CLI, on texts in four scripts.
    for i in [0usize, 2, 4, 5] {
        let c = &cases["cases"][i];
        let out = tplay_ok(&[
            "tokenize",
            "--model",
            root().join("bare_tied").to_str().unwrap(),
            "--text",
            c["text"].as_str().unwrap(),
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ids"], c["ids"], "{}", c["text"]);
        assert_eq!(v["tokens"], c["tokens"], "{}", c["text"]);
    }
}

#[test]
fn the_special_token_written_in_text_is_one_token() {
    let m = load("prefix_tied");
    let eot = m.tokenizer.spec.eos;
    let e = m.tokenizer.encode("The cat<|endoftext|>The cat");
    let plain = m.tokenizer.encode("The cat").ids;
    let mut want = plain.clone();
    want.push(eot);
    want.extend(&plain);
    assert_eq!(e.ids, want);
}

fn greedy(model: &Model, backend: Backend, prompt: &[u32], n: usize, cache: bool) -> Vec<u32> {
    let opts = GenerateOptions {
        strategy: Strategy::Greedy,
        max_new_tokens: n,
        use_cache: cache,
        ..GenerateOptions::default()
    };
    let mut g = Generator::new(model, backend, prompt.to_vec(), None, opts).unwrap();
    while block_on(g.step()).unwrap().is_some() {}
    let s = g.summary();
    [s.prompt, s.tokens].concat()
}

#[test]
fn greedy_generation_matches_transformers() {
    let gpu = gpu_or_skip();
    for name in VARIANTS {
        let model = load(name);
        let exp = json(&root().join(name).join("expected.json"));
        for g in exp["generate"].as_array().unwrap() {
            let prompt = ids(&g["prompt"]);
            let n = g["max_new_tokens"].as_u64().unwrap() as usize;
            let want = ids(&g["output"]);
            for cache in [true, false] {
                let got = greedy(&model, Backend::Cpu, &prompt, n, cache);
                assert_eq!(got, want, "{name} CPU cache {cache}");
            }
            if let Some(ctx) = &gpu {
                let got = greedy(&model, Backend::Gpu(ctx.clone()), &prompt, n, true);
                assert_eq!(got, want, "{name} GPU");
            }
        }
    }
    // The CLI: `--prompt` is encoded and put after <|endoftext|>, as the fixture's prompts.
    let dir = root().join("prefix_untied");
    let exp = json(&dir.join("expected.json"));
    let g = &exp["generate"][0];
    let model = load("prefix_untied");
    let prompt = ids(&g["prompt"]);
    let text = model.tokenizer.decode(&prompt[1..]);
    let out = tplay_ok(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--prompt",
        &text,
        "--strategy",
        "greedy",
        "--max-tokens",
        "12",
        "--json",
    ]);
    let last = String::from_utf8(out.stdout).unwrap();
    let summary: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    let got = [ids(&summary["prompt"]), ids(&summary["tokens"])].concat();
    assert_eq!(got, ids(&g["output"]));
}

#[test]
fn a_loaded_folder_saves_as_a_checkpoint_and_gives_the_same_logits() {
    let m = load("prefix_untied");
    let bytes = tplay::checkpoint::save(&m).unwrap();
    let back = tplay::checkpoint::load(&bytes).unwrap();
    assert_eq!(back.config, m.config);
    assert_eq!(back.tokenizer.spec, m.tokenizer.spec);
    let b = Batch::single(&[5, 77, 300, 2]).unwrap();
    let o = ForwardOptions::default();
    assert_eq!(
        back.forward(&b, &o).unwrap().logits,
        m.forward(&b, &o).unwrap().logits
    );
}

/// A copy of a fixture folder in a fresh temporary directory, changed by `edit`.
fn hostile(from: &str, tag: &str, edit: impl FnOnce(&Path)) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tplay-hf-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(root().join(from)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    edit(&dir);
    dir
}

fn load_err(dir: &Path) -> String {
    let e = tplay::checkpoint::load_file(dir).unwrap_err().to_string();
    std::fs::remove_dir_all(dir).unwrap();
    e
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut Value)) {
    let mut cfg = json(&dir.join("config.json"));
    f(&mut cfg);
    std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
}

/// Rewrite model.safetensors with `f` applied to its (name, shape, f32 data) list.
fn edit_tensors(dir: &Path, f: impl FnOnce(&mut Vec<(String, Vec<usize>, Vec<u8>)>)) {
    use safetensors::tensor::{Dtype, TensorView};
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut list: Vec<(String, Vec<usize>, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec()))
        .collect();
    f(&mut list);
    let views: Vec<(String, TensorView)> = list
        .iter()
        .map(|(n, s, d)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, s.clone(), d).unwrap(),
            )
        })
        .collect();
    let out = safetensors::serialize(views, None).unwrap();
    std::fs::write(dir.join("model.safetensors"), out).unwrap();
}

#[test]
fn hostile_folders_get_clear_errors() {
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "a config asking for 10⁹ parameters",
            hostile("prefix_tied", "huge", |d| {
                edit_config(d, |c| {
                    c["n_embd"] = 4096.into();
                    c["n_inner"] = 16384.into();
                    c["n_layer"] = 64.into();
                    c["n_head"] = 64.into();
                })
            }),
            "parameter count",
        ),
        (
            "a width above the limit",
            hostile("prefix_tied", "wide", |d| {
                edit_config(d, |c| c["n_embd"] = 1_000_000_000u64.into())
            }),
            "d_model: 1000000000 is above the limit",
        ),
        (
            "a negative field",
            hostile("prefix_tied", "neg", |d| {
                edit_config(d, |c| c["n_layer"] = (-1).into())
            }),
            "`n_layer` must be a non-negative integer",
        ),
        (
            "another family",
            hostile("prefix_tied", "llama", |d| {
                edit_config(d, |c| c["model_type"] = "llama".into())
            }),
            "model_type `llama` is not supported",
        ),
        (
            "an epsilon the core does not use",
            hostile("prefix_tied", "eps", |d| {
                edit_config(d, |c| c["layer_norm_epsilon"] = 1e-6.into())
            }),
            "layer_norm_epsilon",
        ),
        (
            "a truncated model.safetensors",
            hostile("prefix_tied", "trunc", |d| {
                let p = d.join("model.safetensors");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 2]).unwrap();
            }),
            "not a safetensors file",
        ),
        (
            "a wrong shape",
            hostile("prefix_tied", "shape", |d| {
                edit_tensors(d, |l| {
                    let t = l
                        .iter_mut()
                        .find(|t| t.0 == "transformer.h.1.mlp.c_fc.weight")
                        .unwrap();
                    t.1 = vec![t.1[1], t.1[0]];
                })
            }),
            "tensor `transformer.h.1.mlp.c_fc.weight` has shape [128, 32], expected [32, 128]",
        ),
        (
            "a missing tensor",
            hostile("bare_tied", "missing", |d| {
                edit_tensors(d, |l| l.retain(|t| t.0 != "h.0.ln_2.bias"))
            }),
            "missing tensor `h.0.ln_2.bias`",
        ),
        (
            "an untied head missing",
            hostile("prefix_untied", "nohead", |d| {
                edit_tensors(d, |l| l.retain(|t| t.0 != "lm_head.weight"))
            }),
            "missing tensor `lm_head.weight`",
        ),
        (
            "a stray tensor",
            hostile("bare_tied", "extra", |d| {
                edit_tensors(d, |l| {
                    l.push(("h.0.attn.rotary".into(), vec![1], vec![0; 4]))
                })
            }),
            "unexpected tensor `h.0.attn.rotary`",
        ),
        (
            "no tokenizer",
            hostile("bare_tied", "notok", |d| {
                std::fs::remove_file(d.join("merges.txt")).unwrap()
            }),
            "no tokenizer",
        ),
        (
            "more merges than a vocabulary may have",
            hostile("bare_tied", "merges", |d| {
                let lines = "Ġ a\n".repeat(70_000);
                std::fs::write(d.join("merges.txt"), format!("#version: 0.2\n{lines}")).unwrap();
            }),
            "tokenizer merges: 70000 is above the limit",
        ),
        (
            "a merge of unknown symbols",
            hostile("bare_tied", "badmerge", |d| {
                std::fs::write(d.join("merges.txt"), "#version: 0.2\nĠ zz\n").unwrap();
            }),
            "uses \"zz\", which is not in the vocabulary",
        ),
        (
            "a vocabulary of another size",
            hostile("prefix_tied", "vocab", |d| {
                edit_config(d, |c| c["vocab_size"] = 600.into())
            }),
            "the tokenizer has 512 tokens but config.json's vocab_size is 600",
        ),
        (
            "a tokenizer.json that is not one",
            hostile("prefix_tied", "tokjson", |d| {
                std::fs::write(
                    d.join("tokenizer.json"),
                    "{\"model\": {\"type\": \"WordPiece\"}}",
                )
                .unwrap();
            }),
            "tokenizer.json",
        ),
    ];
    for (what, dir, needle) in cases {
        let e = load_err(&dir);
        assert!(e.contains(needle), "{what}: {e}");
    }
}

#[test]
fn the_cli_refuses_a_hostile_folder_in_one_line() {
    let dir = hostile("prefix_tied", "cli", |d| {
        edit_config(d, |c| c["n_layer"] = 1_000_000.into())
    });
    fails_with(
        &[
            "forward",
            "--model",
            dir.to_str().unwrap(),
            "--tokens",
            "1,2",
        ],
        "n_layers: 1000000 is above the limit",
    );
    fails_with(
        &["tokenize", "--model", dir.to_str().unwrap(), "--text", "hi"],
        "n_layers",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Byte-level BPE loses nothing: any text (any script, control characters, lone
    /// combining marks, the special token written out) decodes back to itself.
    #[test]
    fn any_text_round_trips_through_the_bpe(text in "\\PC{0,40}|[ \\t\\n猫😀a'<|>endoftext]{0,40}") {
        static MODEL: std::sync::OnceLock<Model> = std::sync::OnceLock::new();
        let m = MODEL.get_or_init(|| load("prefix_tied"));
        let enc = m.tokenizer.encode(&text);
        proptest::prop_assert!(enc.unknown.is_empty());
        proptest::prop_assert!(enc.ids.iter().all(|&id| (id as usize) < m.tokenizer.vocab_size()));
        proptest::prop_assert_eq!(m.tokenizer.decode(&enc.ids), text);
    }
}

//! What the page asks of a Hugging Face folder besides its logits: the check of its
//! `config.json` before the weights are fetched (the parameter count the loaded model then
//! has, hostile configs refused), the same load from the files' bytes as from the folder,
//! and the tokenizer's step-by-step trace against the `tokenizers` library's ids.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use tplay::engine::Engine;
use tplay::hf::HfFiles;

fn root() -> PathBuf {
    support::fixtures::dir().join("gpt2")
}

fn read(dir: &str, name: &str) -> Vec<u8> {
    std::fs::read(root().join(dir).join(name)).unwrap()
}

#[test]
fn the_config_check_states_the_parameters_the_loaded_model_has() {
    for dir in ["prefix_tied", "prefix_untied", "bare_tied"] {
        let check = tplay::hf::check_config(&read(dir, "config.json")).unwrap();
        let model = tplay::checkpoint::load_file(&root().join(dir)).unwrap();
        assert_eq!(check.model_type, "gpt2");
        assert_eq!(check.params, model.param_count(), "{dir}");
        assert_eq!(check.f32_bytes, 4 * model.param_count(), "{dir}");
        assert_eq!(check.d_model, model.config.d_model);
        assert_eq!(check.n_heads, model.config.n_heads);
        assert_eq!(check.n_layers, model.config.decoder_layers());
        assert_eq!(check.vocab_size, model.config.vocab_size);
        assert_eq!(check.max_len, model.config.max_len);
    }
}

#[test]
fn gpt2_small_passes_the_check_and_gpt2_medium_is_refused_by_its_size() {
    // GPT-2 small's and medium's configs as Hugging Face ships them (the fields that matter).
    let small = r#"{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,
        "n_positions":1024,"vocab_size":50257,"activation_function":"gelu_new",
        "layer_norm_epsilon":1e-05}"#;
    let c = tplay::hf::check_config(small.as_bytes()).unwrap();
    // 124,439,808: the figure the GPT-2 paper's family is known by (tied head).
    assert_eq!(c.params, 124_439_808);
    let medium = small
        .replace("\"n_embd\":768", "\"n_embd\":1024")
        .replace("\"n_layer\":12", "\"n_layer\":24")
        .replace("\"n_head\":12", "\"n_head\":16");
    let e = tplay::hf::check_config(medium.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("parameter count"), "{e}");
    assert!(e.contains("354873425"), "{e}");
    for (bad, says) in [
        ("not json", "not JSON"),
        (r#"{"n_embd":768}"#, "model_type"),
        (r#"{"model_type":"llama"}"#, "not supported"),
        (
            r#"{"model_type":"gpt2","n_embd":1000000000}"#,
            "above the limit",
        ),
    ] {
        let e = tplay::hf::check_config(bad.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn the_engine_loads_the_files_bytes_as_the_cli_loads_the_folder() {
    let mut eng = Engine::new();
    let tok = read("prefix_tied", "tokenizer.json");
    let files = HfFiles {
        config_json: &read("prefix_tied", "config.json"),
        model_safetensors: &read("prefix_tied", "model.safetensors"),
        tokenizer_json: Some(&tok),
        vocab_json: None,
        merges_txt: None,
    };
    let info = eng.load_hf(&files).unwrap();
    let model = tplay::checkpoint::load_file(&root().join("prefix_tied")).unwrap();
    assert_eq!(info.params, model.param_count());
    assert_eq!(info.vocab, model.tokenizer.spec.tokens);
    // A truncated weights file is refused and the model loaded before stays.
    let weights = read("prefix_tied", "model.safetensors");
    let cut = HfFiles {
        model_safetensors: &weights[..weights.len() / 2],
        ..files
    };
    assert!(eng.load_hf(&cut).is_err());
    assert_eq!(eng.tokenize("The cat").unwrap().ids, {
        model.tokenizer.encode("The cat").ids
    });
}

#[test]
fn the_trace_ends_in_the_librarys_tokens_and_every_step_spells_the_piece() {
    let cases: Value = serde_json::from_slice(&read("tokenizer", "cases.json")).unwrap();
    for dir in ["prefix_tied", "bare_tied"] {
        let model = tplay::checkpoint::load_file(&root().join(dir)).unwrap();
        let bytes_of = |t: &tplay::protocol::TokenizeTrace, id: u32| {
            t.symbols
                .iter()
                .find(|s| s.id == id)
                .unwrap_or_else(|| panic!("id {id} has no symbol"))
                .bytes
                .clone()
        };
        for c in cases["cases"].as_array().unwrap() {
            let text = c["text"].as_str().unwrap();
            let t = model.tokenizer.trace(text).unwrap();
            let last: Vec<u32> = t
                .pieces
                .iter()
                .flat_map(|p| p.steps.last().unwrap().clone())
                .collect();
            let want: Vec<u32> = c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(last, want, "{dir} {text:?}");
            let joined: String = t.pieces.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(joined, text);
            for p in t.pieces.iter().filter(|p| !p.special) {
                assert_eq!(p.steps[0].len(), p.text.len(), "one symbol per byte");
                assert_eq!(p.merges.len() + 1, p.steps.len());
                for (i, step) in p.steps.iter().enumerate() {
                    let spelled: Vec<u8> = step.iter().flat_map(|&id| bytes_of(&t, id)).collect();
                    assert_eq!(spelled, p.text.as_bytes(), "{text:?} step {i}");
                    if i > 0 {
                        // Each merge makes its id and shortens the piece.
                        assert!(step.len() < p.steps[i - 1].len());
                        assert!(step.contains(&p.merges[i - 1].1));
                    }
                }
            }
        }
    }
}

#[test]
fn a_character_tokenizer_traces_one_step_per_token_and_long_text_is_refused() {
    let model =
        tplay::checkpoint::load_file(&support::models_dir().join("reverse.safetensors")).unwrap();
    let t = model.tokenizer.trace("abc").unwrap();
    assert_eq!(t.pieces.len(), 3);
    assert!(t
        .pieces
        .iter()
        .all(|p| p.steps.len() == 1 && p.merges.is_empty()));
    let ids: Vec<u32> = t.pieces.iter().map(|p| p.steps[0][0]).collect();
    assert_eq!(ids, model.tokenizer.encode("abc").ids);
    let e = model
        .tokenizer
        .trace(&"a".repeat(5000))
        .unwrap_err()
        .to_string();
    assert!(e.contains("4096"), "{e}");
}

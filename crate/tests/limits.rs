//! Hostile checkpoints: a file whose config or tokenizer asks for more than the size budget
//! (`tplay::limits`) is refused with the field and the limit named, before anything is
//! allocated for it — in the library and in `tplay info` (which once died with "capacity
//! overflow" inside `checkpoint::load`).

mod support;

use std::collections::HashMap;

use safetensors::tensor::{Dtype, TensorView};
use serde_json::Value;
use support::cli::tplay;
use tplay::model::Model;
use tplay::{checkpoint, ModelConfig, Tokenizer};

/// A real small checkpoint whose metadata entries are edited after the fact.
fn checkpoint_with(edit: impl Fn(&mut Value, &mut Value)) -> Vec<u8> {
    let tok = Tokenizer::char_level("abcdefgh");
    let model = Model::init(
        ModelConfig::preset("gpt-pico", tok.vocab_size()).unwrap(),
        tok,
        1,
    );
    let mut config: Value = serde_json::from_str(&model.config.to_json()).unwrap();
    let mut tokenizer: Value = serde_json::from_str(&model.tokenizer.to_json()).unwrap();
    edit(&mut config, &mut tokenizer);
    let bytes = 1.0f32.to_le_bytes().repeat(4);
    let view = TensorView::new(Dtype::F32, vec![2, 2], &bytes).unwrap();
    let meta = HashMap::from([
        ("config".to_string(), config.to_string()),
        ("tokenizer".to_string(), tokenizer.to_string()),
    ]);
    safetensors::serialize([("embed.weight", view)], Some(meta)).unwrap()
}

fn load_err(bytes: &[u8]) -> String {
    checkpoint::load(bytes).unwrap_err().to_string()
}

#[test]
fn a_config_with_d_model_of_2_to_the_30_is_refused_before_any_allocation() {
    let bytes = checkpoint_with(|c, _| c["d_model"] = 1_073_741_824u64.into());
    assert_eq!(
        load_err(&bytes),
        "invalid config: d_model: 1073741824 is above the limit of 4096"
    );
}

#[test]
fn every_size_field_of_a_config_is_held_to_its_limit() {
    for (field, value, limit) in [
        ("vocab_size", 1u64 << 40, "65536"),
        ("n_heads", 1 << 20, "64"),
        ("d_ff", u64::MAX, "16384"),
        ("max_len", 1 << 33, "4096"),
        ("n_layers", 100_000, "64"),
        ("relative_max_distance", 1 << 31, "4096"),
    ] {
        let bytes = checkpoint_with(|c, _| c[field] = value.into());
        let e = load_err(&bytes);
        assert_eq!(
            e,
            format!("invalid config: {field}: {value} is above the limit of {limit}"),
        );
    }
}

#[test]
fn fields_within_limits_that_add_up_to_too_many_parameters_are_refused() {
    let bytes = checkpoint_with(|c, _| {
        c["d_model"] = 4096.into();
        c["n_heads"] = 64.into();
        c["d_ff"] = 16384.into();
        c["n_layers"] = 64.into();
    });
    let e = load_err(&bytes);
    assert!(e.contains("parameter count"), "{e}");
    assert!(e.contains("above the limit of 167772160"), "{e}");
}

#[test]
fn a_tokenizer_with_too_many_or_too_long_tokens_is_refused() {
    let bytes = checkpoint_with(|_, t| {
        t["tokens"] = (0..70_000).map(|i| Value::from(i.to_string())).collect();
    });
    assert_eq!(
        load_err(&bytes),
        "bad checkpoint: tokenizer tokens: 70000 is above the limit of 65536"
    );
    let bytes = checkpoint_with(|_, t| t["tokens"][5] = "x".repeat(1000).into());
    assert_eq!(
        load_err(&bytes),
        "bad checkpoint: tokenizer token 5: 1000 bytes is above the limit of 256"
    );
}

#[test]
fn a_header_length_that_points_past_the_file_is_not_a_checkpoint() {
    let mut bytes = checkpoint_with(|_, _| {});
    bytes[..8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let e = load_err(&bytes);
    assert!(
        e.starts_with("bad checkpoint: not a safetensors file"),
        "{e}"
    );
}

#[test]
fn tplay_info_on_a_huge_d_model_exits_with_one_line_naming_the_field() {
    let bytes = checkpoint_with(|c, _| c["d_model"] = 1_073_741_824u64.into());
    let path = std::env::temp_dir().join(format!("tplay-huge-{}.safetensors", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let out = tplay(&["info", "--model", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("d_model: 1073741824 is above the limit of 4096"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

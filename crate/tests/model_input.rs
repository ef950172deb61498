//! The core owns the model's input rules: where `<bos>` goes for each architecture, the
//! causal default when a request leaves it out, and the backend status the page words.

mod support;

use pollster::block_on;
use tplay::config::{Arch, Norm, PosEncoding, Score};
use tplay::engine::Engine;
use tplay::protocol::{BackendName, BackendStatus, ForwardRequest, ModelInputRequest, Switches};

fn engine(arch: Arch, classes: usize) -> Engine {
    let mut cfg = support::config(arch, PosEncoding::Sinusoidal, Norm::PreLn, Score::ScaledDot);
    cfg.num_classes = classes;
    let m = support::model(cfg, 3);
    let mut e = Engine::new();
    e.load(&tplay::checkpoint::save(&m).unwrap()).unwrap();
    e
}

fn request(rows: Vec<Vec<u32>>, generated: Vec<u32>) -> ModelInputRequest {
    ModelInputRequest { rows, generated }
}

const BOS: u32 = 1;

#[test]
fn a_decoder_reads_bos_then_each_row_and_row_zero_continues_with_the_generated_tokens() {
    let e = engine(Arch::DecoderOnly, 0);
    let r = e
        .model_input(&request(vec![vec![5, 6], vec![7]], vec![8, 9]))
        .unwrap();
    assert_eq!(r.batch, vec![vec![BOS, 5, 6, 8, 9], vec![BOS, 7]]);
    assert_eq!(r.src, None);
    assert_eq!(r.prompt, Some(vec![BOS, 5, 6]));
    assert_eq!(r.prompt_len, Some(3));
    assert!(!r.input_is_source);
    assert_eq!(r.sequence.tokens, vec![BOS, 5, 6]);
}

#[test]
fn a_classifier_reads_bos_first_a_tagger_reads_the_words_alone_and_neither_generates() {
    let classifier = engine(Arch::EncoderOnly, 3)
        .model_input(&request(vec![vec![5, 6]], vec![]))
        .unwrap();
    assert_eq!(classifier.batch, vec![vec![BOS, 5, 6]]);
    assert_eq!(classifier.prompt, None);
    let tagger = engine(Arch::EncoderOnly, 0)
        .model_input(&request(vec![vec![5, 6]], vec![]))
        .unwrap();
    assert_eq!(tagger.batch, vec![vec![5, 6]]);
    assert_eq!((tagger.prompt, tagger.prompt_len), (None, None));
}

#[test]
fn an_encoder_decoder_reads_row_zero_as_its_source_and_bos_then_the_generated_tokens() {
    let r = engine(Arch::EncoderDecoder, 0)
        .model_input(&request(vec![vec![5, 6, 7]], vec![9]))
        .unwrap();
    assert_eq!(r.batch, vec![vec![BOS, 9]]);
    assert_eq!(r.src, Some(vec![vec![5, 6, 7]]));
    assert_eq!(
        (r.prompt, r.prompt_src),
        (Some(vec![BOS]), Some(vec![5, 6, 7]))
    );
    assert!(r.input_is_source);
    assert_eq!(r.sequence.src, Some(vec![5, 6, 7]));
}

#[test]
fn input_without_rows_or_beyond_the_limits_is_refused_with_the_reason() {
    let e = engine(Arch::DecoderOnly, 0);
    let err = e.model_input(&request(vec![], vec![])).unwrap_err();
    assert!(err.to_string().contains("no rows"), "{err}");
    let err = e
        .model_input(&request(vec![vec![5]; 9], vec![]))
        .unwrap_err();
    assert!(err.to_string().contains("at most 8 rows"), "{err}");
    let err = Engine::new()
        .model_input(&request(vec![vec![5]], vec![]))
        .unwrap_err();
    assert!(err.to_string().contains("no model is loaded"), "{err}");
}

#[test]
fn the_causal_default_is_the_models_rule_when_the_request_leaves_it_out() {
    for (arch, default) in [(Arch::DecoderOnly, true), (Arch::EncoderOnly, false)] {
        let mut e = engine(arch, 0);
        let info = e
            .load(
                &tplay::checkpoint::save(&support::model(
                    support::config(arch, PosEncoding::Sinusoidal, Norm::PreLn, Score::ScaledDot),
                    3,
                ))
                .unwrap(),
            )
            .unwrap();
        assert_eq!(info.causal_default, default, "{arch:?}");
        let mut run = |causal: Option<bool>| {
            let req = ForwardRequest {
                batch: vec![vec![BOS, 5, 6, 7]],
                src: None,
                switches: Switches {
                    causal,
                    padding_mask: true,
                    scale: true,
                    ablate: vec![],
                    mask: None,
                },
                sampling: support::greedy(0),
                qkv: None,
                ffn: None,
                train: None,
            };
            block_on(e.forward(&req)).unwrap().logits
        };
        assert_eq!(run(None), run(Some(default)), "{arch:?}");
        assert_ne!(run(None), run(Some(!default)), "{arch:?}");
    }
}

#[test]
fn choosing_the_cpu_is_the_status_cpu_chosen_and_an_engine_starts_on_the_cpu() {
    let mut e = engine(Arch::DecoderOnly, 0);
    assert_eq!(e.backend_status(), &BackendStatus::Starting);
    let s = block_on(e.select_backend(BackendName::Cpu, None, false));
    assert_eq!(s, BackendStatus::CpuChosen);
    assert_eq!(
        (e.backend(), s.name()),
        (BackendName::Cpu, BackendName::Cpu)
    );
    // On the CPU a recheck measures nothing and keeps the status.
    assert_eq!(block_on(e.recheck_backend(None)), BackendStatus::CpuChosen);
}

#[test]
fn the_backend_status_crosses_tagged_by_kind() {
    let s = BackendStatus::CpuDisagrees {
        adapter: "a".into(),
        max_abs_diff: None,
    };
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        serde_json::json!({ "kind": "cpu_disagrees", "adapter": "a", "max_abs_diff": null })
    );
}

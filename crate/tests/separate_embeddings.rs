//! An encoder-decoder checkpoint may keep separate source and target embeddings
//! (`src_embed.weight`, `tgt_embed.weight`; ../shared/DESIGN.md §3). The encoder reads the
//! source table and the decoder (and a tied LM head) the target table; one training step
//! sends each table the gradient of its own side; `tplay info` describes such a file. The
//! KV cache, the GPU pass and finite-difference gradients of such models are tested in
//! cache.rs, gpu_forward.rs and gradcheck.rs.

mod support;

use std::process::Command;

use support::{config, model, with_separate_embeddings};
use tplay::config::{Arch, Norm, PosEncoding, Score};
use tplay::model::forward::Batch;
use tplay::model::{AttnSite, ForwardOptions, Model, Trace};
use tplay::tasks::TrainBatch;
use tplay::train::optim::{Adam, AdamConfig};
use tplay::train::train_step;

fn traced(m: &Model) -> Trace {
    let batch = Batch::new(vec![vec![1, 5, 8, 6], vec![1, 9, 4, 0]])
        .unwrap()
        .with_source(vec![vec![9, 4, 7, 5], vec![6, 10, 0, 0]])
        .unwrap();
    let opts = ForwardOptions {
        trace_hidden: true,
        ..ForwardOptions::default()
    };
    m.forward(&batch, &opts).unwrap()
}

fn states(tr: &Trace, site: AttnSite) -> &[tplay::tensor::Tensor] {
    &tr.hidden
        .iter()
        .find(|h| h.stack == site)
        .expect("both stacks are traced")
        .states
}

#[test]
fn the_encoder_reads_the_source_table_and_the_decoder_the_target_table() {
    for tie in [false, true] {
        let cfg = tplay::config::ModelConfig {
            tie_embeddings: tie,
            ..config(
                Arch::EncoderDecoder,
                PosEncoding::Learned,
                Norm::PreLn,
                Score::ScaledDot,
            )
        };
        let one = model(cfg, 3);
        let two = with_separate_embeddings(one.clone(), 30);
        // The same model with the source table as its only table.
        let mut source_only = one.clone();
        source_only.embed = two.src_embed.clone().unwrap();
        let (t_one, t_two, t_src) = (traced(&one), traced(&two), traced(&source_only));
        // Bit for bit: every encoder state is the source-table model's, the decoder's
        // embedded input is the one-table model's.
        assert_eq!(
            states(&t_two, AttnSite::EncoderSelf),
            states(&t_src, AttnSite::EncoderSelf),
            "tied {tie}: the encoder embeds the source with src_embed"
        );
        assert_eq!(
            states(&t_two, AttnSite::DecoderSelf)[0],
            states(&t_one, AttnSite::DecoderSelf)[0],
            "tied {tie}: the decoder embeds the target with tgt_embed"
        );
        assert_ne!(
            t_two.logits, t_one.logits,
            "tied {tie}: another source table, other logits"
        );
        // Both tables equal to the one table: the one-table model's numbers, bit for bit.
        let mut same = one.clone();
        same.separate_embeddings().unwrap();
        same.src_embed = Some(one.embed.clone());
        assert_eq!(traced(&same).logits, t_one.logits, "tied {tie}");
    }
}

#[test]
fn a_training_step_moves_each_table_only_where_its_own_side_used_a_token() {
    let cfg = config(
        Arch::EncoderDecoder,
        PosEncoding::Sinusoidal,
        Norm::PreLn,
        Score::ScaledDot,
    );
    let mut m = with_separate_embeddings(model(cfg, 4), 40);
    let before = m.clone();
    // Source ids 4..8, target ids 9..13 (and <bos>): the two sides share no letter.
    let tb = TrainBatch {
        b: 1,
        t: 4,
        s: 4,
        tokens: vec![1, 9, 10, 11],
        src: vec![4, 5, 6, 7],
        targets: vec![9, 10, 11, 12],
        labels: vec![],
    };
    let opts = ForwardOptions::default();
    let mut adam = Adam::new(&m, AdamConfig::default());
    train_step(&mut m, &mut adam, &tb, &opts, 0.0, 1e-2, None).unwrap();
    let c = m.config.d_model;
    let moved = |a: &tplay::tensor::Tensor, b: &tplay::tensor::Tensor, id: usize| {
        a.data[id * c..(id + 1) * c] != b.data[id * c..(id + 1) * c]
    };
    let (src0, src1) = (
        before.src_embed.as_ref().unwrap(),
        m.src_embed.as_ref().unwrap(),
    );
    for id in 0..m.config.vocab_size {
        let in_src = tb.src.contains(&(id as u32));
        let in_tgt = tb.tokens.contains(&(id as u32));
        assert_eq!(moved(src0, src1, id), in_src, "src_embed row {id}");
        assert_eq!(
            moved(&before.embed, &m.embed, id),
            in_tgt,
            "tgt_embed row {id}"
        );
    }
}

#[test]
fn tplay_info_describes_a_checkpoint_with_separate_embeddings() {
    let cfg = config(
        Arch::EncoderDecoder,
        PosEncoding::Sinusoidal,
        Norm::PreLn,
        Score::ScaledDot,
    );
    let m = with_separate_embeddings(model(cfg, 5), 50);
    let dir = std::env::temp_dir().join(format!("tplay-separate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("separate.safetensors");
    tplay::checkpoint::save_file(&m, &path).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tplay"))
        .args(["info", "--model", path.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = info["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"src_embed.weight") && names.contains(&"tgt_embed.weight"));
    assert!(!names.contains(&"embed.weight"));
    assert_eq!(
        info["parameters"].as_u64().unwrap() as usize,
        m.param_count()
    );
}

#[test]
fn the_pages_engine_loads_a_checkpoint_with_separate_embeddings_and_runs_it() {
    use tplay::engine::Engine;
    use tplay::protocol::ForwardRequest;
    let cfg = config(
        Arch::EncoderDecoder,
        PosEncoding::Sinusoidal,
        Norm::PreLn,
        Score::ScaledDot,
    );
    let m = with_separate_embeddings(model(cfg, 7), 70);
    let mut engine = Engine::new();
    let info = engine
        .load(&tplay::checkpoint::save(&m).unwrap())
        .expect("the engine accepts src_embed.weight + tgt_embed.weight");
    assert_eq!(info.arch, Arch::EncoderDecoder);
    let req = ForwardRequest {
        batch: vec![vec![1, 5, 8, 6]],
        src: Some(vec![vec![9, 4, 7, 5]]),
        switches: support::default_switches(),
        sampling: support::greedy(0),
        qkv: None,
        ffn: None,
        train: None,
    };
    let out = pollster::block_on(engine.forward(&req)).unwrap();
    let want = traced_with(&m, &[vec![1, 5, 8, 6]], &[vec![9, 4, 7, 5]]);
    assert_eq!(
        out.logits.data.0, want.logits.data,
        "the engine runs the model's own numbers"
    );
}

fn traced_with(m: &Model, rows: &[Vec<u32>], src: &[Vec<u32>]) -> Trace {
    let batch = Batch::new(rows.to_vec())
        .unwrap()
        .with_source(src.to_vec())
        .unwrap();
    m.forward(&batch, &ForwardOptions::default()).unwrap()
}

//! The own-text task (`tasks::text`): its vocabulary and split, that a run on it is the same
//! run every time, every text it refuses and why, the lab's settings that carry the text, and
//! `tplay train --task text --text-file` end to end (a Chinese text included).

mod support;

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::cli::command as tplay;
use tplay::protocol::RunSettings;
use tplay::tasks::text::{TextTask, MAX_TEXT_BYTES, MAX_TEXT_VOCAB};
use tplay::tasks::{build, Split, Task, TaskOptions};
use tplay::train::{evaluate, RunSpec, Trainer};

/// A short text in two scripts, built here (not by the code under test).
fn sample_text() -> String {
    (0..30)
        .map(|i| format!("line {i}: the cat sat on the mat. 猫坐在垫子上。\n"))
        .collect()
}

fn text_spec(text: &str, seed: u64) -> RunSpec {
    RunSpec {
        task: "text".into(),
        seed,
        steps: 8,
        batch: 4,
        len: Some(24),
        text: Some(Arc::from(text)),
        ..RunSpec::default()
    }
}

fn refusal(text: &str) -> String {
    match TextTask::new(text, 64) {
        Ok(_) => panic!("{text:.40?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_vocabulary_is_the_texts_characters_and_the_last_tenth_is_held_out() {
    let text = sample_text();
    let chars: Vec<char> = text.chars().collect();
    let task = TextTask::new(&text, 24).unwrap();
    let mut distinct: Vec<char> = vec![];
    for &c in &chars {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let tok = task.tokenizer();
    assert_eq!(tok.vocab_size(), distinct.len() + 4);
    for c in &distinct {
        assert!(tok.id(&c.to_string()).is_some(), "{c:?} has no token");
    }
    let held = chars.len() / 10;
    assert_eq!(task.sizes(), (chars.len() - held, held));
    let tail: String = chars[chars.len() - held..].iter().collect();
    assert_eq!(tok.decode(task.part(Split::HeldOut)), tail);
    // Held-out windows come from the tail only, train windows from the head only.
    let head: String = chars[..chars.len() - held].iter().collect();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..100 {
        let h = task.sample(Split::HeldOut, &mut rng);
        assert!(tail.contains(&tok.decode(&h.targets)));
        let t = task.sample(Split::Train, &mut rng);
        assert!(head.contains(&tok.decode(&t.targets)));
        assert_eq!(t.targets.len(), 24);
    }
}

#[test]
fn the_same_seed_trains_the_same_run_and_another_seed_another() {
    let text = sample_text();
    let losses = |seed: u64| -> Vec<f32> {
        let spec = text_spec(&text, seed);
        let task = spec.task().unwrap();
        let cfg = spec.model_config(task.as_ref()).unwrap();
        let mut t = Trainer::new(task.as_ref(), cfg, spec.train_options().unwrap()).unwrap();
        (0..8).map(|_| t.train_step().unwrap().loss).collect()
    };
    let a = losses(2);
    assert_eq!(a, losses(2));
    assert_ne!(a, losses(3));
    // The evaluation: per-character loss and next-character accuracy on held-out windows.
    let spec = text_spec(&text, 2);
    let task = spec.task().unwrap();
    let cfg = spec.model_config(task.as_ref()).unwrap();
    let t = Trainer::new(task.as_ref(), cfg, spec.train_options().unwrap()).unwrap();
    let r = evaluate(&t.model, task.as_ref(), 20, 1).unwrap();
    assert_eq!(r.metric, "next_char_accuracy");
    assert!(r.held_out_loss.is_finite() && r.held_out_loss > 0.0);
    assert_eq!(r.samples.len(), 3);
    // Samples continue prompts from the held-out text and never draw a special token.
    let chars: Vec<char> = text.chars().collect();
    let tail: String = chars[chars.len() - chars.len() / 10..].iter().collect();
    for line in &r.samples {
        let (prompt, _) = line.split_once(" → ").unwrap();
        assert!(!prompt.is_empty() && tail.contains(prompt), "{line}");
        for special in ["<pad>", "<bos>", "<eos>", "<unk>"] {
            assert!(!line.contains(special), "{line}");
        }
    }
    assert_eq!(r, evaluate(&t.model, task.as_ref(), 20, 1).unwrap());
}

#[test]
fn texts_that_cannot_be_learned_are_refused_with_the_reason() {
    assert!(refusal("").contains("empty"));
    assert!(refusal("   \n ").contains("empty"));
    assert!(refusal(&"啊".repeat(50)).contains("repeats one character"));
    assert!(refusal("short text").contains("too short"));
    let big = "ab".repeat(MAX_TEXT_BYTES / 2 + 1);
    assert!(refusal(&big).contains("1 MiB"));
    // More different characters than a model may have (CJK ideographs from U+4E00).
    let many: String = (0..MAX_TEXT_VOCAB as u32)
        .map(|i| char::from_u32(0x4e00 + i).unwrap())
        .collect();
    let e = refusal(&many);
    assert!(e.contains("different characters"), "{e}");
    // The task needs its text, and no other task takes one.
    let e = build("text", &TaskOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--text-file"), "{e}");
    let opts = TaskOptions {
        text: Some(Arc::from("some text")),
        ..TaskOptions::default()
    };
    let e = build("copy", &opts).err().unwrap().to_string();
    assert!(e.contains("text: task 'copy'"), "{e}");
}

#[test]
fn the_labs_settings_carry_the_text_and_refuse_a_run_without_it() {
    let d = RunSettings::defaults("text").unwrap();
    assert_eq!(d.settings.text, None, "defaults hold no text");
    assert_eq!(d.metric_name, "next_char_accuracy");
    let e = d.settings.to_spec().unwrap_err().to_string();
    assert!(e.contains("text: task 'text'"), "{e}");
    let mut s = d.settings.clone();
    s.text = Some(sample_text());
    s.len = Some(24);
    let spec = s.to_spec().unwrap();
    assert_eq!(spec.text.as_deref(), Some(sample_text().as_str()));
    let i = spec.args().iter().position(|a| a == "--text-file").unwrap();
    assert_eq!(spec.args()[i + 1], "text.txt");
    assert_eq!(RunSettings::from_spec(&spec, s.eval_every).unwrap(), s);
    // JSON without the field (older saved runs) reads as no text; with it, round-trips.
    let json = serde_json::to_value(&s).unwrap();
    let back: RunSettings = serde_json::from_value(json).unwrap();
    assert_eq!(back, s);
    // The text counts in what the run needs: kept with its record, held while it trains.
    let with = tplay::train::footprint::RunFootprint::of(&s).unwrap();
    let mut shorter = s.clone();
    let half: String = sample_text()
        .chars()
        .take(sample_text().chars().count() / 2)
        .collect();
    shorter.text = Some(half.clone());
    let less = tplay::train::footprint::RunFootprint::of(&shorter).unwrap();
    assert_eq!(
        with.params, less.params,
        "the same characters, the same model"
    );
    let cut = (sample_text().len() - half.len()) as u64;
    assert_eq!(with.storage_bytes - less.storage_bytes, cut);
    assert!(with.memory_bytes > less.memory_bytes);
    let mut other = RunSettings::defaults("copy").unwrap().settings;
    assert!(!serde_json::to_string(&other).unwrap().contains("\"text\""));
    other.text = Some("a text".into());
    let e = other.to_spec().unwrap_err().to_string();
    assert!(e.contains("text: task 'copy'"), "{e}");
}

#[test]
fn tplay_train_learns_a_text_file_and_refuses_a_file_that_is_not_utf8() {
    let dir = std::env::temp_dir().join(format!("tplay-text-task-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("text.txt");
    std::fs::write(&file, sample_text()).unwrap();
    let out = dir.join("m.safetensors");
    let run = tplay()
        .args(["train", "--task", "text", "--text-file"])
        .arg(&file)
        .args([
            "--steps", "20", "--batch", "8", "--len", "24", "--seed", "1",
        ])
        .args(["--eval-examples", "40", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "tplay train failed: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["eval"]["metric"], "next_char_accuracy");
    assert_eq!(report["eval"]["samples"].as_array().unwrap().len(), 3);
    let loss = report["eval"]["held_out_loss"].as_f64().unwrap();
    let task = TextTask::new(&sample_text(), 24).unwrap();
    let v = task.tokenizer().vocab_size();
    assert!(
        loss < (v as f64).ln(),
        "held-out loss {loss} is not below a uniform guess"
    );
    // The checkpoint's tokenizer is the text's characters: it spells the text.
    let model = tplay::checkpoint::load_file(&out).unwrap();
    assert_eq!(model.tokenizer.spec, task.tokenizer().spec);
    assert!(model.tokenizer.encode("猫坐在垫子上").unknown.is_empty());

    let bad = dir.join("latin1.txt");
    std::fs::write(&bad, [b'c', b'a', b'f', 0xe9, b' ', b'o', b'k']).unwrap();
    let run = tplay()
        .args(["train", "--task", "text", "--text-file"])
        .arg(&bad)
        .args(["--steps", "1", "--out"])
        .arg(dir.join("x.safetensors"))
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("not UTF-8"), "{stderr}");
    let run = tplay()
        .args(["train", "--task", "text", "--steps", "1", "--out"])
        .arg(dir.join("y.safetensors"))
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("--text-file"));
    std::fs::remove_dir_all(&dir).ok();
}

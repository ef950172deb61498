//! `tplay train` end to end: a short run writes a loadable checkpoint, a JSON-lines log
//! and its evaluation as JSON on stdout; bad arguments exit non-zero with one line.

mod support;

use support::cli::command as tplay;

#[test]
fn short_training_run_writes_checkpoint_log_and_evaluation() {
    let dir = std::env::temp_dir().join(format!("tplay-train-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("copy.safetensors");
    let log = dir.join("log.jsonl");
    let run = tplay()
        .args([
            "train", "--task", "copy", "--preset", "gpt-pico", "--seed", "3",
        ])
        .args([
            "--steps",
            "12",
            "--batch",
            "8",
            "--len",
            "3",
            "--eval-examples",
            "20",
        ])
        .args(["--pos-encoding", "rope", "--warmup", "5"])
        .arg("--out")
        .arg(&out)
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "tplay train failed: {stderr}");
    assert!(stderr.contains("step 12/12"), "no progress line: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["task"], "copy");
    assert_eq!(report["eval"]["metric"], "exact_match");
    assert_eq!(report["eval"]["n"], 20);
    let acc = report["eval"]["accuracy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&acc));

    let model = tplay::checkpoint::load_file(&out).unwrap();
    assert_eq!(model.config.pos_encoding, tplay::config::PosEncoding::Rope);
    assert_eq!(model.config.n_layers, 1, "gpt-pico has one layer");
    assert_eq!(
        report["parameters"].as_u64(),
        Some(model.param_count() as u64)
    );

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps: Vec<u64> = lines
        .iter()
        .filter(|l| l.get("loss").is_some())
        .map(|l| l["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, (1..=12).collect::<Vec<_>>());
    assert!(lines.last().unwrap().get("eval").is_some());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_arguments_exit_nonzero_with_a_one_line_reason() {
    let dir = std::env::temp_dir();
    let cases: &[(&[&str], &str)] = &[
        (&["--task", "parity"], "parity"),
        (
            &["--task", "copy", "--pos-encoding", "xpos"],
            "--pos-encoding",
        ),
        (&["--task", "translate", "--preset", "gpt-nano"], "--preset"),
        (&["--task", "copy", "--steps", "0"], "--steps"),
        (&["--task", "copy", "--heads", "5"], "n_heads"),
    ];
    for (args, needle) in cases {
        let run = tplay()
            .arg("train")
            .args(*args)
            .arg("--out")
            .arg(dir.join("never-written.safetensors"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{args:?} succeeded");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

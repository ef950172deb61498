//! Scoring a model on a task's held-out split, with the task's own metric.
//!
//! Decoding here is plain batched greedy (or, for the grammar, sampled) generation by full
//! recomputation: every step reruns the forward pass over the whole prefix. It is simple
//! and obviously right, which is what an evaluation needs; the playground's generation
//! module adds the KV cache.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::config::Arch;
use crate::error::{Error, Result};
use crate::model::forward::Batch;
use crate::model::{ForwardOptions, Model};
use crate::tasks::{held_out_examples, Example, Metric, Task, TrainBatch};

use super::loss::cross_entropy_forward;
use super::step::to_batch;

/// The result of an evaluation, printed as JSON by `tplay train`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalReport {
    pub task: String,
    /// `exact_match`, `token_accuracy`, `class_accuracy` or `grammatical`.
    pub metric: &'static str,
    /// Share of successes, in [0, 1].
    pub accuracy: f64,
    /// Examples (or sampled sentences) scored.
    pub n: usize,
    /// Mean cross-entropy (no smoothing) on held-out examples.
    pub held_out_loss: f64,
    /// A few inputs with what the model produced, for people.
    pub samples: Vec<String>,
}

impl EvalReport {
    /// The samples a text run shows in the lab (continuations of held-out prompts); none for
    /// the other tasks, whose samples are for the command line.
    pub fn text_samples(self) -> Vec<String> {
        if self.metric == Metric::NextCharAccuracy.name() {
            self.samples
        } else {
            vec![]
        }
    }
}

/// The model must fit the task: same vocabulary, the architecture the task is made for.
pub fn check_fit(model: &Model, task: &dyn Task) -> Result<()> {
    if model.tokenizer.spec != task.tokenizer().spec {
        return Err(Error::Input(format!(
            "the model's vocabulary is not the vocabulary of task '{}'",
            task.name()
        )));
    }
    if model.config.arch != task.arch() {
        return Err(Error::Input(format!(
            "task '{}' needs an {:?} model, this one is {:?}",
            task.name(),
            task.arch(),
            model.config.arch
        )));
    }
    if model.config.num_classes != task.num_classes() {
        return Err(Error::Input(format!(
            "task '{}' has {} classes, the model has {}",
            task.name(),
            task.num_classes(),
            model.config.num_classes
        )));
    }
    Ok(())
}

/// Score `model` on `n` held-out examples of `task` drawn with `seed` (the grammar: `n`
/// sampled sentences).
pub fn evaluate(model: &Model, task: &dyn Task, n: usize, seed: u64) -> Result<EvalReport> {
    check_fit(model, task)?;
    let examples = held_out_examples(task, n, seed);
    let held_out_loss = mean_loss(model, &examples)?;
    let tok = &model.tokenizer;
    let (accuracy, samples) = match task.metric() {
        Metric::ExactMatch => {
            let outputs = greedy_answers(model, &examples)?;
            let mut right = 0;
            let mut samples = vec![];
            for (ex, out) in examples.iter().zip(&outputs) {
                let mut want = ex.tokens[ex.prompt_len..].to_vec();
                want.push(tok.spec.eos);
                if *out == want {
                    right += 1;
                }
                if samples.len() < 5 {
                    let input = if ex.src.is_empty() {
                        tok.decode(&ex.tokens[1..ex.prompt_len])
                    } else {
                        tok.decode(&ex.src)
                    };
                    samples.push(format!("{input} → {}", tok.decode(out)));
                }
            }
            (right as f64 / n.max(1) as f64, samples)
        }
        Metric::TokenAccuracy => {
            let (right, total, samples) = token_accuracy(model, &examples)?;
            (right as f64 / total.max(1) as f64, samples)
        }
        Metric::NextCharAccuracy => {
            let (right, total, _) = token_accuracy(model, &examples)?;
            let samples = text_samples(model, task, seed)?;
            (right as f64 / total.max(1) as f64, samples)
        }
        Metric::ClassAccuracy => {
            let preds = classify(model, &examples)?;
            let right = preds
                .iter()
                .zip(&examples)
                .filter(|(p, e)| Some(**p) == e.label)
                .count();
            let names = task.class_names();
            let samples = examples
                .iter()
                .zip(&preds)
                .take(5)
                .map(|(e, &p)| {
                    let name = names.get(p as usize).copied().unwrap_or("?");
                    format!("{} → {name}", tok.decode(&e.tokens[1..]))
                })
                .collect();
            (right as f64 / n.max(1) as f64, samples)
        }
        Metric::Grammatical => {
            let len = task.max_tokens().min(model.config.max_len);
            let end = task.sentence_end();
            let stop = model.tokenizer.id(&end.to_string());
            let texts = sample_texts(model, &[], n, len, stop, seed)?;
            let mut good = 0;
            for t in &texts {
                let first = first_sentence(t, end);
                if first.is_some_and(|s| task.accepts(s) == Some(true)) {
                    good += 1;
                }
            }
            let samples = texts
                .iter()
                .take(5)
                .map(|t| first_sentence(t, end).unwrap_or(t).to_string())
                .collect();
            (good as f64 / n.max(1) as f64, samples)
        }
    };
    Ok(EvalReport {
        task: task.name().to_string(),
        metric: task.metric().name(),
        accuracy,
        n,
        held_out_loss,
        samples,
    })
}

/// Text task: three continuations sampled (temperature 1, seeded, never a special token:
/// the text has none) from the task's prompts, each `prompt → continuation`, as long as the
/// model's window.
fn text_samples(model: &Model, task: &dyn Task, seed: u64) -> Result<Vec<String>> {
    use crate::tasks::text::SAMPLE_PROMPT_CHARS;
    let len = task.max_tokens().min(model.config.max_len);
    let tok = &model.tokenizer;
    let specials = [tok.spec.pad, tok.spec.bos, tok.spec.eos, tok.spec.unk];
    let mut out = vec![];
    for (i, prompt) in task.prompts(3, SAMPLE_PROMPT_CHARS).iter().enumerate() {
        let seed = seed.wrapping_add(i as u64);
        let text = sample_rows(model, prompt, 1, len, None, seed, &specials)?;
        let whole = text.into_iter().next().unwrap_or_default();
        let head = tok.decode(prompt);
        let rest = whole.strip_prefix(head.as_str()).unwrap_or(&whole);
        out.push(format!("{head} → {rest}"));
    }
    Ok(out)
}

/// The text up to and including the first `end` ("." or "。"), if there is one.
pub fn first_sentence(text: &str, end: char) -> Option<&str> {
    text.find(end).map(|i| &text[..i + end.len_utf8()])
}

fn eval_opts() -> ForwardOptions {
    ForwardOptions::default()
}

/// Mean cross-entropy of the model on examples (teacher forcing, no label smoothing),
/// over every scored position (LM) or example (classifier). Batches of 64.
pub fn mean_loss(model: &Model, examples: &[Example]) -> Result<f64> {
    let pad = model.tokenizer.spec.pad;
    let (mut total, mut count) = (0.0f64, 0usize);
    for chunk in examples.chunks(64) {
        let tb = TrainBatch::collate(chunk, pad);
        let trace = model.forward(&to_batch(&tb), &eval_opts())?;
        let (logits, targets, v, ignore) = match &trace.class_logits {
            Some(cl) => (&cl.data, &tb.labels, model.config.num_classes, None),
            None => (
                &trace.logits.data,
                &tb.targets,
                model.config.vocab_size,
                Some(pad),
            ),
        };
        let rows = targets.len();
        let mut probs = vec![0.0f32; rows * v]; // (rows, V)
        let (loss, k) = cross_entropy_forward(&mut probs, logits, targets, ignore, 0.0, rows, v);
        total += loss as f64 * k as f64;
        count += k;
    }
    Ok(total / count.max(1) as f64)
}

/// Index of the largest value (the first one on ties).
pub fn argmax(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in row.iter().enumerate() {
        if x > row[best] {
            best = i;
        }
    }
    best
}

/// Greedy answers of generated tasks, all examples decoded together: each row's prompt
/// (and source) is given, then the arg-max token is appended until `<eos>` or the answer
/// has two tokens more than expected. Right padding is harmless: under the causal mask a
/// row's last real position never sees the pads after it. Returns each row's generated
/// tokens, `<eos>` included when produced.
///
/// Where the model can keep a KV cache (a causal decoder in eval mode), the examples are
/// decoded with it, grouped by prompt and source length: the prompt runs through the model
/// once and each answer token costs one step over one position, where a recompute costs a
/// pass over every position for every token. A cached step equals a recompute bit for bit
/// (`crate::model::cache`), so the answers are the same
/// (`cached_greedy_answers_equal_the_recomputed_ones` in crate/tests/train_models.rs); a model that cannot
/// cache is recomputed.
pub fn greedy_answers(model: &Model, examples: &[Example]) -> Result<Vec<Vec<u32>>> {
    let opts = eval_opts();
    if examples
        .iter()
        .all(|e| model.check_cacheable(&opts, e.prompt_len).is_ok())
    {
        return greedy_answers_cached(model, examples);
    }
    greedy_answers_recomputed(model, examples)
}

/// [`greedy_answers`] by recomputing every position for every generated token, 128
/// examples at a time (the reference the cached decoding is tested against).
pub fn greedy_answers_recomputed(model: &Model, examples: &[Example]) -> Result<Vec<Vec<u32>>> {
    let mut out = vec![];
    for chunk in examples.chunks(128) {
        out.extend(greedy_chunk(model, chunk)?);
    }
    Ok(out)
}

/// [`greedy_answers`] with the KV cache: the examples with one prompt length and one
/// source length decoded together, 128 at a time.
fn greedy_answers_cached(model: &Model, examples: &[Example]) -> Result<Vec<Vec<u32>>> {
    let mut groups: std::collections::BTreeMap<(usize, usize), Vec<usize>> = Default::default();
    for (i, e) in examples.iter().enumerate() {
        groups
            .entry((e.prompt_len, e.src.len()))
            .or_default()
            .push(i);
    }
    let mut out = vec![vec![]; examples.len()];
    for idx in groups.values() {
        for part in idx.chunks(128) {
            let chunk: Vec<&Example> = part.iter().map(|&i| &examples[i]).collect();
            for (&i, answer) in part.iter().zip(greedy_chunk_cached(model, &chunk)?) {
                out[i] = answer;
            }
        }
    }
    Ok(out)
}

/// Each example's prompt, and the length at which its greedy answer stops if no `<eos>`
/// came: two tokens past the expected answer, within the model's context.
fn prompts_and_limits<'a>(
    examples: impl Iterator<Item = &'a Example>,
    max_len: usize,
) -> (Vec<Vec<u32>>, Vec<usize>) {
    examples
        .map(|e| {
            (
                e.tokens[..e.prompt_len].to_vec(),
                (e.tokens.len() + 2).min(max_len),
            )
        })
        .unzip()
}

/// Examples of one prompt length (and one source length) decoded together with the KV
/// cache. A row that has finished is fed its last token again until every row has (its
/// answer no longer grows), so the batch keeps one length.
fn greedy_chunk_cached(model: &Model, examples: &[&Example]) -> Result<Vec<Vec<u32>>> {
    let tok = &model.tokenizer.spec;
    let v = model.config.vocab_size;
    let max_len = model.config.max_len;
    let opts = eval_opts();
    let (prompts, limits) = prompts_and_limits(examples.iter().copied(), max_len);
    let mut batch = Batch::padded(prompts, tok.pad)?;
    if examples.iter().any(|e| !e.src.is_empty()) {
        batch = batch.with_source(examples.iter().map(|e| e.src.clone()).collect())?;
    }
    let (mut cache, trace) = model.prefill(&batch, &opts)?;
    let t = batch.len;
    let mut len = t; // every row's length so far
    let mut last: Vec<u32> = (0..examples.len())
        .map(|i| argmax(&trace.logits.data[(i * t + t - 1) * v..(i * t + t) * v]) as u32) // (V)
        .collect();
    let mut answers = vec![vec![]; examples.len()];
    let mut done = vec![false; examples.len()];
    loop {
        len += 1;
        for i in 0..examples.len() {
            if !done[i] {
                answers[i].push(last[i]);
                done[i] = last[i] == tok.eos || len >= limits[i];
            }
        }
        if done.iter().all(|&d| d) {
            return Ok(answers);
        }
        let step = model.decode_step(&mut cache, &last, &opts)?;
        for (i, next) in last.iter_mut().enumerate() {
            if !done[i] {
                *next = argmax(&step.logits.data[i * v..(i + 1) * v]) as u32; // (V)
            }
        }
    }
}

fn greedy_chunk(model: &Model, examples: &[Example]) -> Result<Vec<Vec<u32>>> {
    let tok = &model.tokenizer.spec;
    let v = model.config.vocab_size;
    let max_len = model.config.max_len;
    let (mut rows, limits) = prompts_and_limits(examples.iter(), max_len);
    let mut done = vec![false; rows.len()];
    let mut answers = vec![vec![]; rows.len()];
    let src = examples
        .iter()
        .any(|e| !e.src.is_empty())
        .then(|| examples.iter().map(|e| e.src.clone()).collect::<Vec<_>>());
    while done.iter().any(|d| !d) {
        let mut batch = Batch::padded(rows.clone(), tok.pad)?;
        if let Some(s) = &src {
            batch = batch.with_padded_source(s.clone(), tok.pad)?;
        }
        let trace = model.forward(&batch, &eval_opts())?;
        let t = batch.len;
        for (i, row) in rows.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            let last = row.len() - 1;
            let logits = &trace.logits.data[(i * t + last) * v..(i * t + last + 1) * v]; // (V)
            let next = argmax(logits) as u32;
            answers[i].push(next);
            row.push(next);
            if next == tok.eos || row.len() >= limits[i] {
                done[i] = true;
            }
        }
    }
    Ok(answers)
}

/// Tagging: (right, scored, samples) over every scored position of the examples.
fn token_accuracy(model: &Model, examples: &[Example]) -> Result<(usize, usize, Vec<String>)> {
    let tok = &model.tokenizer;
    let pad = tok.spec.pad;
    let v = model.config.vocab_size;
    let (mut right, mut total, mut samples) = (0, 0, vec![]);
    for chunk in examples.chunks(64) {
        let tb = TrainBatch::collate(chunk, pad);
        let trace = model.forward(&to_batch(&tb), &eval_opts())?;
        for (i, ex) in chunk.iter().enumerate() {
            let mut pred = vec![];
            for (p, &y) in ex.targets.iter().enumerate() {
                let row = &trace.logits.data[(i * tb.t + p) * v..(i * tb.t + p + 1) * v]; // (V)
                let guess = argmax(row) as u32;
                pred.push(guess);
                if y != pad {
                    total += 1;
                    right += usize::from(guess == y);
                }
            }
            if samples.len() < 5 {
                samples.push(format!(
                    "{} → {}",
                    tok.decode(&ex.tokens),
                    tok.decode(&pred)
                ));
            }
        }
    }
    Ok((right, total, samples))
}

/// Classification: the arg-max class of every example.
pub fn classify(model: &Model, examples: &[Example]) -> Result<Vec<u32>> {
    let pad = model.tokenizer.spec.pad;
    let n = model.config.num_classes;
    let mut out = vec![];
    for chunk in examples.chunks(64) {
        let tb = TrainBatch::collate(chunk, pad);
        let trace = model.forward(&to_batch(&tb), &eval_opts())?;
        let cl = trace
            .class_logits
            .ok_or_else(|| Error::Input("this model is not a classifier".into()))?;
        out.extend(cl.data.chunks_exact(n).map(|r| argmax(r) as u32));
    }
    Ok(out)
}

/// Sample `n` continuations of `<bos>` + `prompt` at temperature 1 (draws from a ChaCha8
/// generator seeded with `seed`), `len` tokens long in all, or shorter once every row has
/// produced `stop`; returns the texts after `<bos>`, prompt included. Decoder-only models.
pub fn sample_texts(
    model: &Model,
    prompt: &[u32],
    n: usize,
    len: usize,
    stop: Option<u32>,
    seed: u64,
) -> Result<Vec<String>> {
    sample_rows(model, prompt, n, len, stop, seed, &[])
}

/// [`sample_texts`], never drawing the ids in `banned` (their probability is taken as 0).
fn sample_rows(
    model: &Model,
    prompt: &[u32],
    n: usize,
    len: usize,
    stop: Option<u32>,
    seed: u64,
    banned: &[u32],
) -> Result<Vec<String>> {
    if model.config.arch != Arch::DecoderOnly {
        return Err(Error::Input(
            "sampling text needs a decoder-only model".into(),
        ));
    }
    let tok = &model.tokenizer;
    let v = model.config.vocab_size;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut start = vec![tok.spec.bos];
    start.extend_from_slice(prompt);
    let mut rows = vec![start; n];
    let mut probs = vec![0.0f32; v]; // (V)
    let stopped =
        |rows: &[Vec<u32>]| stop.is_some_and(|s| rows.iter().all(|r| r[1..].contains(&s)));
    while rows.first().is_some_and(|r| r.len() < len) && !stopped(&rows) {
        let batch = Batch::new(rows.clone())?;
        let trace = model.forward(&batch, &eval_opts())?;
        let t = batch.len;
        for (i, row) in rows.iter_mut().enumerate() {
            let logits = &trace.logits.data[(i * t + t - 1) * v..(i * t + t) * v]; // (V)
            let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for (c, (p, &l)) in probs.iter_mut().zip(logits).enumerate() {
                *p = if banned.contains(&(c as u32)) {
                    0.0
                } else {
                    (l - max).exp()
                };
                sum += *p;
            }
            let mut u = rng.random::<f32>() * sum;
            let mut next = v - 1;
            for (c, &p) in probs.iter().enumerate() {
                if u < p {
                    next = c;
                    break;
                }
                u -= p;
            }
            row.push(next as u32);
        }
    }
    Ok(rows.iter().map(|r| tok.decode(&r[1..])).collect())
}

/// Teacher-forced next-token statistics of a decoder-only LM on examples of one length,
/// per position: (mean loss, accuracy) over the positions in `[from, to)`.
pub fn lm_stats_by_position(
    model: &Model,
    examples: &[Example],
    ranges: &[(usize, usize)],
) -> Result<Vec<(f64, f64)>> {
    let pad = model.tokenizer.spec.pad;
    let v = model.config.vocab_size;
    let mut acc = vec![(0.0f64, 0usize, 0usize); ranges.len()]; // (loss sum, right, count)
    for chunk in examples.chunks(32) {
        let tb = TrainBatch::collate(chunk, pad);
        let trace = model.forward(&to_batch(&tb), &eval_opts())?;
        for b in 0..tb.b {
            for p in 0..tb.t {
                let y = tb.targets[b * tb.t + p];
                if y == pad {
                    continue;
                }
                let row = &trace.logits.data[(b * tb.t + p) * v..(b * tb.t + p + 1) * v]; // (V)
                let mut probs = vec![0.0f32; v]; // (V)
                let (loss, _) = cross_entropy_forward(&mut probs, row, &[y], None, 0.0, 1, v);
                for (k, &(from, to)) in ranges.iter().enumerate() {
                    if (from..to).contains(&p) {
                        acc[k].0 += loss as f64;
                        acc[k].1 += usize::from(argmax(row) as u32 == y);
                        acc[k].2 += 1;
                    }
                }
            }
        }
    }
    Ok(acc
        .into_iter()
        .map(|(l, r, c)| (l / c.max(1) as f64, r as f64 / c.max(1) as f64))
        .collect())
}

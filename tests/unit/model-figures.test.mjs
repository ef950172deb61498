// The figures written about the shipped models agree with the models. The model list shows
// each model's description (models/manifest.json, the training CLI's text, translated in
// www/src/i18n/models.ts), and some give sizes in words: "2 layers, 4 heads, d_model 32",
// "2 + 2 layers", "dropout 0.1", "the 2017 layout". models/README.md gives every model's
// parameter count, held-out accuracy and the Chinese vocabularies' sizes. Each figure is
// compared here with the model's own configuration (the `config` JSON in its safetensors
// header, which the engine reads) or with the manifest the training CLI wrote.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSync, readFileSync, readSync, closeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const models = join(root, 'models');
const MANIFEST = JSON.parse(readFileSync(join(models, 'manifest.json'), 'utf8'));

/** A safetensors file's configuration: the `config` JSON of its header's metadata. */
function config(file) {
  const fd = openSync(join(models, file), 'r');
  try {
    const len = Buffer.alloc(8);
    readSync(fd, len, 0, 8, 0);
    const n = Number(len.readBigUInt64LE(0));
    const head = Buffer.alloc(n);
    readSync(fd, head, 0, n, 8);
    return JSON.parse(JSON.parse(head.toString('utf8')).__metadata__.config);
  } finally {
    closeSync(fd);
  }
}

/** The figures a description states, each as [what, value]. */
export function statedFigures(text) {
  const out = [];
  const pair = /\((\d+) \+ (\d+) layers/.exec(text);
  if (pair) out.push(['n_encoder_layers', Number(pair[1])], ['n_decoder_layers', Number(pair[2])]);
  else for (const m of text.matchAll(/\b(\d+) layers\b/g)) out.push(['n_layers', Number(m[1])]);
  for (const m of text.matchAll(/\b(\d+) heads\b/g)) out.push(['n_heads', Number(m[1])]);
  for (const m of text.matchAll(/\bd_model (\d+)\b/g)) out.push(['d_model', Number(m[1])]);
  for (const m of text.matchAll(/\bdropout (\d+(?:\.\d+)?)\b/g)) out.push(['dropout', Number(m[1])]);
  if (/\bthe 2017 layout\b/.test(text)) out.push(['norm', 'post_ln']);
  return out;
}

test('the_reader_of_figures_finds_each_kind_in_a_sample', () => {
  assert.deepEqual(statedFigures('A GPT (2 layers, 4 heads, d_model 32) trained with dropout 0.1.'), [
    ['n_layers', 2],
    ['n_heads', 4],
    ['d_model', 32],
    ['dropout', 0.1],
  ]);
  assert.deepEqual(statedFigures('An encoder-decoder (3 + 2 layers, the 2017 layout)'), [
    ['n_encoder_layers', 3],
    ['n_decoder_layers', 2],
    ['norm', 'post_ln'],
  ]);
});

test('every_figure_a_models_title_or_description_states_is_the_models_own', () => {
  let stated = 0;
  const wrong = [];
  for (const m of MANIFEST) {
    const c = config(m.file);
    for (const text of [m.title, m.description, m.variant ?? '']) {
      for (const [key, value] of statedFigures(text)) {
        stated++;
        if (c[key] !== value) wrong.push(`${m.file}: says ${key} ${value}, the model has ${c[key]}`);
      }
    }
  }
  // The descriptions of the first model of each family give its sizes: a scan that read none proves nothing.
  assert.ok(stated >= 12, `only ${stated} figures found`);
  assert.deepEqual(wrong, []);
});

test('models_readme_gives_each_models_parameters_and_held_out_accuracy_as_the_manifest', () => {
  const readme = readFileSync(join(models, 'README.md'), 'utf8');
  const rows = new Map();
  for (const line of readme.split('\n')) {
    const m = /^\| `([\w.-]+\.safetensors)` \| [^|]+ \| [^|]+ \| [^|]+ \| (\d+) \| [^|]+ \| \w+ (\d+(?:\.\d+)?)% /.exec(line);
    if (m) rows.set(m[1], { params: Number(m[2]), accuracy: Number(m[3]) });
  }
  assert.deepEqual([...rows.keys()].sort(), MANIFEST.map((m) => m.file).sort(), 'one row per shipped model');
  for (const m of MANIFEST) {
    const r = rows.get(m.file);
    assert.equal(r.params, m.params, `${m.file}: parameters`);
    assert.equal(r.accuracy, Math.round(m.held_out_accuracy * 1000) / 10, `${m.file}: held-out accuracy`);
  }
});

test('models_readme_gives_the_chinese_vocabularies_sizes_as_the_models_have_them', () => {
  const readme = readFileSync(join(models, 'README.md'), 'utf8');
  const m = /the vocabularies are a little larger \((\d+), (\d+) and (\d+) tokens\)/.exec(readme);
  assert.ok(m, 'the sentence naming the Chinese vocabularies');
  const sizes = ['zh-grammar-sinusoidal.safetensors', 'zh-numerals.safetensors', 'zh-sentiment.safetensors'].map((f) => config(f).vocab_size);
  assert.deepEqual(m.slice(1).map(Number), sizes);
  // The Chinese grammar siblings share one vocabulary.
  for (const f of ['zh-grammar-alibi', 'zh-grammar-learned', 'zh-grammar-none']) assert.equal(config(`${f}.safetensors`).vocab_size, sizes[0], f);
});

// Property tests of the run-settings link parser (www/src/lab/url.ts) with fast-check: a
// link is untrusted text, so any string parses without throwing; valid settings survive
// format → parse unchanged; a hostile value is never applied, only reported.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const fc = require('fast-check');
const { transformWithOxc } = await import(require.resolve('vite'));

const source = join(root, 'www/src/lab/url.ts');
const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
// The module's only import, @lit/localize, by its file URL (a data: URL has no node_modules).
const localize = pathToFileURL(require.resolve('@lit/localize')).href;
const url = await import(`data:text/javascript;base64,${Buffer.from(code.replace(/(['"])@lit\/localize\1/g, JSON.stringify(localize))).toString('base64')}`);
const { RUN_KEYS, formatRunQuery, parseRunQuery, MAX_QUERY } = url;

const RUNS = Number(process.env.TPLAY_PROPERTY_RUNS ?? 2000);
const int = (min, max) => fc.integer({ min, max });
/** Reals that print exactly as a link writes them (a few decimals). */
const dec = (min, max, places = 4) => fc.integer({ min: Math.ceil(min * 10 ** places), max: Math.floor(max * 10 ** places) }).map((n) => n / 10 ** places);

const VALID = {
  task: fc.constantFrom('copy', 'reverse', 'sort', 'add', 'grammar', 'translate', 'sentiment', 'tagging', 'zh-grammar', 'zh-numerals', 'zh-sentiment'),
  arch: fc.constantFrom(null, 'encoder_only', 'decoder_only', 'encoder_decoder'),
  d_model: int(1, 4096),
  n_heads: int(1, 64),
  n_layers: int(1, 64),
  d_ff: int(1, 16384),
  activation: fc.constantFrom('relu', 'gelu'),
  pos_encoding: fc.constantFrom('none', 'sinusoidal', 'learned', 'relative', 'rope', 'alibi'),
  norm: fc.constantFrom('post_ln', 'pre_ln', 'batch_norm', 'none'),
  final_norm: fc.boolean(),
  residual: fc.boolean(),
  scale_embeddings: fc.boolean(),
  score: fc.constantFrom('scaled_dot', 'dot', 'additive'),
  share_qk: fc.boolean(),
  dropout: dec(0, 0.9999),
  label_smoothing: dec(0, 0.9999),
  batch: int(1, 1024),
  steps: int(1, 1_000_000),
  seed: int(0, 2 ** 40),
  len: fc.option(int(1, 4096), { nil: null }),
  adam_beta1: dec(0, 0.9999),
  adam_beta2: dec(0, 0.9999),
  adam_eps: fc.constantFrom(1e-9, 1e-8, 0.001, 1),
  lr: fc.oneof(
    fc.record({ kind: fc.constant('noam'), factor: dec(0.0001, 1000), warmup: int(1, 1_000_000) }, { noNullPrototype: true }),
    fc.record({ kind: fc.constant('constant'), value: dec(0.0001, 1) }, { noNullPrototype: true }),
  ),
  clip: dec(0, 1000),
  cooldown: dec(0, 1),
  eval_every: int(0, 1_000_000),
  backend: fc.constantFrom('auto', 'webgpu', 'cpu'),
};

test('every_run_setting_has_a_generator_here', () => {
  assert.deepEqual(Object.keys(VALID).sort(), [...RUN_KEYS].sort());
});

test('valid_settings_survive_format_then_parse', () => {
  fc.assert(
    fc.property(fc.record(VALID, { noNullPrototype: true }), (s) => {
      const p = parseRunQuery(formatRunQuery(s));
      assert.deepEqual(p.notes, []);
      assert.deepEqual(p.settings, s);
    }),
    { numRuns: RUNS },
  );
});

test('any_text_parses_without_throwing_and_only_known_keys_come_out', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (t) => {
      const p = parseRunQuery(t);
      for (const k of Object.keys(p.settings)) assert.ok(RUN_KEYS.includes(k), k);
    }),
    { numRuns: RUNS },
  );
});

test('hostile_values_are_reported_and_never_applied', () => {
  const HOSTILE = ['<script>window.__pwned=1</script>', 'NaN', 'Infinity', '-1', '1e309', '0x10', '9'.repeat(60), '__proto__', 'noam:1:0', 'constant:2', 'constant:-1', '\u0000\u202e'];
  for (const key of RUN_KEYS) {
    for (const v of HOSTILE) {
      const p = parseRunQuery(`${key}=${encodeURIComponent(v)}`);
      assert.equal(Object.keys(p.settings).length, 0, `${key}=${v} was applied`);
      assert.equal(p.notes.length, 1, `${key}=${v}`);
      assert.ok(!/[\u0000-\u001f]/.test(p.notes[0]));
    }
  }
  const p = parseRunQuery('__proto__=1&constructor=2&task=reverse');
  assert.deepEqual(p.settings, { task: 'reverse' });
  assert.equal(p.notes.length, 2);
  assert.equal(Object.getPrototypeOf(p.settings), Object.prototype);
  assert.equal(parseRunQuery('task=copy&task=sort').settings.task, 'copy');
  assert.equal(parseRunQuery(`task=copy&${'x'.repeat(MAX_QUERY)}`).notes.length, 1);
});

test('a_link_writes_only_what_differs_from_the_defaults', () => {
  const base = { task: 'reverse', arch: null, d_model: 32, n_heads: 4, n_layers: 2, d_ff: 64, activation: 'gelu', pos_encoding: 'sinusoidal', norm: 'pre_ln', final_norm: true, residual: true, scale_embeddings: true, score: 'scaled_dot', share_qk: false, dropout: 0, label_smoothing: 0, batch: 32, steps: 3000, seed: 1, len: null, adam_beta1: 0.9, adam_beta2: 0.98, adam_eps: 1e-9, lr: { kind: 'noam', factor: 1, warmup: 200 }, clip: 1, eval_every: 500 };
  assert.equal(formatRunQuery({ ...base, residual: false, n_layers: 6 }, base), 'task=reverse&n_layers=6&residual=0');
  assert.equal(formatRunQuery({ ...base, lr: { kind: 'noam', factor: 1, warmup: 4000 } }, base), 'task=reverse&lr=noam%3A1%3A4000');
});

test('links_from_before_the_backend_setting_still_load_and_settings_without_it_write_no_backend', () => {
  const old = 'task=reverse&n_layers=6&residual=0';
  const p = parseRunQuery(old);
  assert.deepEqual(p.notes, []);
  assert.deepEqual(p.settings, { task: 'reverse', n_layers: 6, residual: false });
  // A run saved before the setting existed has none: its link leaves it out.
  const saved = { task: 'reverse', n_layers: 6 };
  assert.equal(formatRunQuery(saved), 'task=reverse&n_layers=6');
  assert.equal(formatRunQuery({ ...saved, backend: 'cpu' }, { ...saved, backend: 'auto' }), 'task=reverse&backend=cpu');
  assert.deepEqual(parseRunQuery('backend=webgpu').settings, { backend: 'webgpu' });
  assert.equal(parseRunQuery('backend=gpu').notes.length, 1);
});

test('a_link_carries_the_cooldown_share_and_refuses_one_outside_0_to_1', () => {
  const p = parseRunQuery('task=reverse&steps=1000&cooldown=0.4');
  assert.deepEqual(p.notes, []);
  assert.deepEqual(p.settings, { task: 'reverse', steps: 1000, cooldown: 0.4 });
  for (const bad of ['1.5', '-0.1', 'x', '400']) {
    const q = parseRunQuery(`cooldown=${bad}`);
    assert.deepEqual(q.settings, {}, bad);
    assert.equal(q.notes.length, 1, bad);
    assert.match(q.notes[0], /cooldown/);
  }
  // A link written from settings with a cooldown names it; settings saved before it existed do not.
  assert.equal(formatRunQuery({ task: 'reverse', cooldown: 0.4 }, { task: 'reverse', cooldown: 0 }), 'task=reverse&cooldown=0.4');
  assert.equal(formatRunQuery({ task: 'reverse', steps: 60 }), 'task=reverse&steps=60');
});

// The lab's legend labels (www/src/lab-view/labels.ts): runs are named by the fields on
// which their settings differ, in words, and runs with different settings never share a
// label. labels.ts is TypeScript: Vite's own transform (oxc) strips its types for node.

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

const source = join(root, 'www/src/lab-view/labels.ts');
const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
// The module's only import, @lit/localize, by its file URL (a data: URL has no node_modules).
const localize = pathToFileURL(require.resolve('@lit/localize')).href;
const { differenceLabels, differingFields } = await import(`data:text/javascript;base64,${Buffer.from(code.replace(/(['"])@lit\/localize\1/g, JSON.stringify(localize))).toString('base64')}`);

/** A complete run setting, written out by hand (the reverse task's small model). */
const BASE = Object.freeze({
  task: 'reverse',
  arch: null,
  d_model: 32,
  n_heads: 4,
  n_layers: 2,
  d_ff: 128,
  activation: 'relu',
  pos_encoding: 'sinusoidal',
  norm: 'post_ln',
  final_norm: false,
  residual: true,
  scale_embeddings: true,
  score: 'scaled_dot',
  share_qk: false,
  dropout: 0,
  label_smoothing: 0,
  batch: 32,
  steps: 300,
  seed: 1,
  len: null,
  adam_beta1: 0.9,
  adam_beta2: 0.98,
  adam_eps: 1e-9,
  lr: { kind: 'noam', factor: 1, warmup: 400 },
  clip: 1,
  eval_every: 50,
});
const run = (patch) => ({ ...BASE, ...patch });

test('post_ln_against_pre_ln_is_labelled_by_the_norm_alone', () => {
  assert.deepEqual(differenceLabels([run({ norm: 'post_ln' }), run({ norm: 'pre_ln' })]), ['post-LN', 'pre-LN']);
});

test('a_warmup_change_is_labelled_by_the_warmup_alone', () => {
  const a = run({ lr: { kind: 'noam', factor: 1, warmup: 400 } });
  const b = run({ lr: { kind: 'noam', factor: 1, warmup: 4000 } });
  assert.deepEqual(differenceLabels([a, b]), ['warmup 400', 'warmup 4000']);
  assert.deepEqual(differingFields([a, b]), ['lr.warmup']);
});

test('six_layers_with_and_without_the_residual_name_only_the_residual', () => {
  const labels = differenceLabels([run({ n_layers: 6, residual: false }), run({ n_layers: 6, residual: true })]);
  assert.deepEqual(labels, ['no residual', 'residual']);
});

test('three_runs_name_every_field_that_differs_among_them_in_a_fixed_order', () => {
  const runs = [
    run({}),
    run({ norm: 'pre_ln' }),
    run({ seed: 2, lr: { kind: 'noam', factor: 1, warmup: 4000 } }),
  ];
  assert.deepEqual(differingFields(runs), ['norm', 'lr.warmup', 'seed']);
  assert.deepEqual(differenceLabels(runs), [
    'post-LN, warmup 400, seed 1',
    'pre-LN, warmup 400, seed 1',
    'post-LN, warmup 4000, seed 2',
  ]);
});

test('a_constant_rate_against_noam_names_the_schedule_and_leaves_out_the_warmup_it_lacks', () => {
  const runs = [run({}), run({ lr: { kind: 'constant', value: 0.001 } })];
  assert.deepEqual(differenceLabels(runs), ['Noam schedule', 'constant lr 0.001']);
  // Two Noam runs with another warmup beside a constant one: the warmup names the Noam runs only.
  const three = [...runs, run({ lr: { kind: 'noam', factor: 1, warmup: 4000 } })];
  assert.deepEqual(differenceLabels(three), ['Noam schedule, warmup 400', 'constant lr 0.001', 'Noam schedule, warmup 4000']);
});

test('switches_are_named_both_ways', () => {
  const on = run({ scale_embeddings: true, share_qk: true, final_norm: true });
  const off = run({ scale_embeddings: false, share_qk: false, final_norm: false });
  assert.deepEqual(differenceLabels([on, off]), [
    'final norm, W_Q = W_K, embeddings ×√d_model',
    'no final norm, separate W_Q and W_K, embeddings unscaled',
  ]);
  assert.deepEqual(differenceLabels([run({ score: 'additive' }), run({ score: 'dot' }), run({ pos_encoding: 'alibi' })]), [
    'sinusoidal positions, additive',
    'sinusoidal positions, dot (unscaled)',
    'ALiBi, scaled dot',
  ]);
});

test('values_kept_as_f32_are_written_as_typed', () => {
  // 0.9, 0.95 and 0.98 as f32, widened back to double by the core's JSON: β₂ is 0.98 in
  // both runs (typed in one, read back from the core in the other), so only β₁ differs.
  const runs = [run({ adam_beta1: Math.fround(0.9) }), run({ adam_beta1: Math.fround(0.95), adam_beta2: Math.fround(0.98) })];
  assert.deepEqual(differenceLabels(runs), ['β₁ 0.9', 'β₁ 0.95']);
});

test('a_lone_run_and_runs_with_equal_settings_are_named_by_their_task_and_numbered', () => {
  assert.deepEqual(differenceLabels([run({})]), ['reverse']);
  assert.deepEqual(differenceLabels([run({}), run({}), run({})]), ['reverse', 'reverse (2)', 'reverse (3)']);
  assert.deepEqual(differenceLabels([]), []);
});

// Any runs: the label set is exactly the differing fields' words, and runs whose settings
// differ never share a label.
const settings = fc.record({
  task: fc.constantFrom('copy', 'reverse', 'sort'),
  arch: fc.constantFrom(null, 'decoder_only', 'encoder_decoder'),
  d_model: fc.constantFrom(16, 32, 64),
  n_layers: fc.integer({ min: 1, max: 8 }),
  norm: fc.constantFrom('post_ln', 'pre_ln', 'batch_norm', 'none'),
  residual: fc.boolean(),
  pos_encoding: fc.constantFrom('none', 'sinusoidal', 'learned', 'relative', 'rope', 'alibi'),
  // Settings are f32 in the core: labels tell values apart to seven significant digits.
  dropout: fc.integer({ min: 0, max: 900 }).map((k) => k / 1000),
  seed: fc.integer({ min: 0, max: 5 }),
  len: fc.constantFrom(null, 4, 8),
  lr: fc.oneof(
    fc.record({ kind: fc.constant('noam'), factor: fc.constantFrom(0.5, 1, 2), warmup: fc.constantFrom(100, 400, 4000) }),
    fc.record({ kind: fc.constant('constant'), value: fc.integer({ min: 1, max: 1e6 }).map((k) => k * 1e-6) }),
  ),
});

test('runs_with_different_settings_never_share_a_label', () => {
  fc.assert(
    fc.property(fc.array(settings, { minLength: 1, maxLength: 6 }), (runs) => {
      const labels = differenceLabels(runs);
      assert.equal(labels.length, runs.length);
      assert.equal(new Set(labels).size, labels.length, `labels repeat: ${JSON.stringify(labels)}`);
      for (let i = 0; i < runs.length; i++) {
        for (let j = 0; j < runs.length; j++) {
          if (i !== j && JSON.stringify(runs[i]) !== JSON.stringify(runs[j])) assert.notEqual(labels[i], labels[j].replace(/ \(\d+\)$/, ''));
        }
      }
    }),
    { numRuns: Number(process.env.TPLAY_PROPERTY_RUNS ?? 2000) },
  );
});

test('a_field_on_which_all_runs_agree_is_never_named', () => {
  fc.assert(
    fc.property(fc.array(settings, { minLength: 2, maxLength: 5 }), (runs) => {
      const keys = differingFields(runs);
      const labels = differenceLabels(runs).join(' | ');
      // Every run shares the batch and the d_ff of BASE-less settings: never in a label.
      assert.ok(!keys.includes('batch') && !keys.includes('d_ff'));
      if (new Set(runs.map((r) => r.norm)).size === 1) assert.ok(!keys.includes('norm'));
      if (new Set(runs.map((r) => r.residual)).size === 1) assert.doesNotMatch(labels, /residual/);
    }),
    { numRuns: 500 },
  );
});

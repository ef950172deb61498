// A run's curves as columns (www/src/lab/points.ts): whatever points a run reports — any
// number of per-layer entries, a count that changes mid-run, NaN and infinite values from a
// diverged run, evaluations on some steps — read back exactly as they were pushed, as
// objects, through the by-index readers and after IndexedDB's structured clone of the stored
// form; dropping the steps after a saved one keeps exactly the steps up to it.
// points.ts is TypeScript: Vite's own transform (oxc) strips its types for node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const fc = require('fast-check');
const { transformWithOxc } = await import(require.resolve('vite'));

const source = join(root, 'www/src/lab/points.ts');
const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
const { PointLog } = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);

const value = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, -0));
const evalPoint = fc.record({ loss: fc.double({ noNaN: true }), metric: fc.double({ min: 0, max: 1, noNaN: true }), metric_name: fc.constantFrom('exact_match', 'accuracy') }).map((e) => ({ ...e })); // plain objects, as the core's are
/** A run's points: increasing steps, per-layer arrays of any length up to 6. */
const run = fc
  .array(
    fc.record({
      loss: value,
      lr: value,
      grad_norm: value,
      elapsed_ms: fc.double({ min: 0, max: 1e9, noNaN: true }),
      eval: fc.option(evalPoint, { freq: 4 }),
      residual_norms: fc.array(value, { maxLength: 6 }),
      grad_norms: fc.array(value, { maxLength: 6 }),
    }),
    { maxLength: 300 },
  )
  // The health watch's update ratios and attention entropy (measured every few steps) are
  // not kept per row: a point reads back with them empty.
  .map((ps) => ps.map((p, i) => ({ step: i + 1, ...p, update_ratios: [], attn_entropy: [] })));

/** Deep equality that tells -0 from 0 and NaN equals NaN (Object.is). */
const same = (a, b) => assert.deepStrictEqual(a, b);

test('every_point_reads_back_exactly_as_pushed_as_objects_and_by_index', () => {
  fc.assert(
    fc.property(run, (points) => {
      const log = PointLog.fromPoints(points);
      assert.equal(log.length, points.length);
      same(log.toArray(), points);
      points.forEach((p, i) => {
        assert.ok(Object.is(log.step(i), p.step) && Object.is(log.loss(i), p.loss) && Object.is(log.lr(i), p.lr) && Object.is(log.gradNorm(i), p.grad_norm));
        for (let l = 0; l < 7; l++) {
          assert.ok(Object.is(log.residual(i, l), p.residual_norms[l] ?? null));
          assert.ok(Object.is(log.layerGrad(i, l), p.grad_norms[l] ?? null));
        }
        same(log.evalAt(i), p.eval);
      });
      same(
        log.evalRows(),
        points.flatMap((p, i) => (p.eval ? [i] : [])),
      );
      same(log.lastEval(), [...points].reverse().find((p) => p.eval)?.eval ?? null);
    }),
    { numRuns: 200 },
  );
});

test('the_stored_form_survives_structured_clone_and_loads_back_equal', () => {
  fc.assert(
    fc.property(run, (points) => {
      const stored = structuredClone(PointLog.fromPoints(points).stored());
      const back = PointLog.fromStored(stored);
      assert.ok(back);
      same(back.toArray(), points);
      // A log read back keeps growing like any other.
      const more = { step: points.length + 1, loss: 1, lr: 2, grad_norm: 3, elapsed_ms: 4, eval: null, residual_norms: [5, 6, 7, 8, 9, 10, 11], grad_norms: [], update_ratios: [], attn_entropy: [] };
      back.push(more);
      same(back.toArray(), [...points, more]);
    }),
    { numRuns: 200 },
  );
});

test('dropping_the_steps_after_a_saved_step_keeps_exactly_those_up_to_it', () => {
  fc.assert(
    fc.property(run, fc.nat(320), (points, keep) => {
      const log = PointLog.fromPoints(points);
      const dropped = log.truncateAfter(keep);
      const want = points.filter((p) => p.step <= keep);
      assert.equal(dropped, points.length - want.length);
      same(log.toArray(), want);
      same(log.lastEval(), [...want].reverse().find((p) => p.eval)?.eval ?? null);
    }),
    { numRuns: 200 },
  );
});

test('a_stored_form_that_does_not_add_up_is_refused', () => {
  const good = PointLog.fromPoints([{ step: 1, loss: 1, lr: 1, grad_norm: 1, elapsed_ms: 1, eval: null, residual_norms: [1, 2], grad_norms: [3, 4] }]).stored();
  assert.ok(PointLog.fromStored(good));
  for (const bad of [
    null,
    'points',
    { ...good, cols: [...good.cols] },
    { ...good, length: 2 },
    { ...good, layers: -1 },
    { ...good, evals: 'none' },
    { ...good, cols: Float64Array.from(good.cols, (v, i) => (i === 5 ? 3 : v)) },
    { ...good, cols: Float64Array.from(good.cols, (v, i) => (i === 6 ? 0.5 : v)) },
  ])
    assert.equal(PointLog.fromStored(bad), null, JSON.stringify(bad));
});

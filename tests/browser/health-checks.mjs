// What the lab's health tests share (lab-health.test.mjs on the CPU, lab-gpu.test.mjs on
// WebGPU): a run given a NaN in a chosen layer by the test hook, and the checks of how it
// stopped.

import assert from 'node:assert/strict';

/** Train, pause after the first chunk, put a NaN into layer `layer` (from 0), resume; the run as it ended. */
export function nanRunInPage(p, settings, layer) {
  return p.evaluate(
    async ({ settings, layer }) => {
      const el = document.querySelector('transformer-playground');
      const h = el.train(settings);
      const paused = await new Promise((ok) => h.addEventListener('progress', () => ok(h.pause()), { once: true }));
      await paused;
      const run = () => el.runs.find((r) => r.id === h.id);
      const at = run().points.length;
      const kind = run().backend.kind;
      const set = await el.testOnlyNanAtLayer(h.id, layer);
      await h.resume();
      const why = await h.done.then(
        () => null,
        (e) => e.message,
      );
      return { id: h.id, at, kind, set, why, run: JSON.parse(JSON.stringify(run())) };
    },
    { settings, layer },
  );
}

/** The checks both backends share: stopped at the next step, layer 2 named, cause and fix said. */
export function assertStoppedAtLayer2(got) {
  assert.equal(got.set, true, 'the hook found layer 2');
  assert.ok(got.at >= 1, `paused after ${got.at} steps`);
  assert.equal(got.run.status, 'failed');
  const stop = got.run.alarms.filter((a) => a.stopped);
  assert.equal(stop.length, 1, JSON.stringify(got.run.alarms));
  const a = stop[0];
  assert.equal(a.kind, 'non_finite');
  assert.equal(a.step, got.at + 1, 'the step after the NaN went in');
  assert.equal(a.layer, 2);
  assert.equal(a.op, 'ffn_linear1');
  assert.match(a.param, /layers\.1\.linear1\.weight$/);
  // The curve ends at the step before; nothing after it was reported.
  assert.equal(got.run.points.at(-1).step, got.at);
  assert.ok(got.run.points.every((p) => Number.isFinite(p.loss)));
  assert.match(got.why, new RegExp(`Step ${got.at + 1}: the feed-forward network’s first linear layer in layer 2 gave NaN`));
  assert.match(got.why, /Likely cause: /);
  assert.match(got.why, /Try: lower the learning-rate factor/);
}


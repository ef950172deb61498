// The generation loop (www/src/state/generation.ts) against a fake engine and host: with a
// pause between tokens every step is followed by its own refresh of the views before the
// next step is asked for; at full speed (no pause) the steps do not wait for the views, the
// refreshes never overlap, there are fewer of them than steps, and the last one sees the
// last token before playback counts as ended. Bundled for node with rolldown.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const { rolldown } = require('rolldown');

const bundle = await rolldown({ input: join(root, 'www/src/state/generation.ts'), cwd: join(root, 'www'), logLevel: 'silent' });
const { output } = await bundle.generate({ format: 'esm' });
const { GenerationRunner } = await import(`data:text/javascript;base64,${Buffer.from(output[0].code).toString('base64')}`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A runner on a fake engine that answers `tokens` steps, each after `stepMs`, and a host
 * whose refresh takes `refreshMs` and records what it saw. `log` keeps the order of events.
 */
function rig({ tokens, pause, stepMs = 1, refreshMs = 30, max = tokens, engineMs = 0.1 }) {
  const log = [];
  let n = 0;
  let refreshing = 0;
  // Like the engine's worker: one request at a time, in the order they came, and an error
  // for a step asked for after the last.
  let queue = Promise.resolve();
  const engine = {
    waiting: 0,
    mostWaiting: 0,
    pastEnd: 0,
    call(op) {
      engine.waiting += 1;
      engine.mostWaiting = Math.max(engine.mostWaiting, engine.waiting);
      const answer = queue.then(async () => {
        engine.waiting -= 1;
        if (op === 'generateStart') return { recompute: null };
        if (op !== 'generateStep') throw new Error(`unexpected ${op}`);
        if (n >= tokens) {
          engine.pastEnd += 1;
          throw new Error('generation has already stopped: start it again');
        }
        await sleep(stepMs);
        n += 1;
        log.push(['step', n]);
        const generated = Array.from({ length: n }, (_, i) => i + 4);
        return { step: { index: n - 1, token: n + 3, wall_ms: engineMs, flops: 2, fed: 1, attention: [], beam: null, draw: null }, generated, done: n >= tokens };
      });
      queue = answer.catch(() => {});
      return answer;
    },
  };
  const seen = { refreshes: [], overlaps: 0, changed: 0 };
  const runner = new GenerationRunner({
    engine: () => engine,
    request: () => ({ prompt: [1, 2, 3], max_new_tokens: max }),
    pauseMs: () => pause,
    changed: () => (seen.changed += 1),
    afterStep: async () => {
      if (refreshing) seen.overlaps += 1;
      refreshing += 1;
      const at = runner.generated.length;
      log.push(['refresh', at]);
      await sleep(refreshMs);
      seen.refreshes.push(at);
      refreshing -= 1;
    },
    failed: (e) => {
      throw e;
    },
  });
  return { runner, log, seen, engine };
}

test('with_a_pause_every_step_is_refreshed_before_the_next_step_runs', async () => {
  const { runner, log, seen } = rig({ tokens: 6, pause: 5 });
  await runner.start(true);
  assert.equal(runner.generated.length, 6);
  assert.deepEqual(seen.refreshes, [1, 2, 3, 4, 5, 6]);
  // Strictly alternating: step k, then its refresh, then step k + 1.
  assert.deepEqual(
    log,
    [1, 2, 3, 4, 5, 6].flatMap((k) => [
      ['step', k],
      ['refresh', k],
    ]),
  );
  assert.equal(runner.playing, false);
});

test('at_full_speed_steps_do_not_wait_for_the_views_and_the_last_token_is_drawn_before_the_end', async () => {
  const { runner, log, seen } = rig({ tokens: 40, pause: 0, stepMs: 2, refreshMs: 30 });
  await runner.start(true);
  assert.equal(runner.generated.length, 40);
  assert.equal(seen.overlaps, 0, 'two refreshes never run at once');
  assert.ok(seen.refreshes.length >= 1 && seen.refreshes.length < 40, `fewer refreshes than steps: ${seen.refreshes.length}`);
  assert.equal(seen.refreshes.at(-1), 40, 'the last refresh saw the last token, and it ended before playback did');
  // Steps ran while a refresh was in flight: some step comes between a refresh's start and the next event of that refresh.
  const firstRefresh = log.findIndex(([k]) => k === 'refresh');
  assert.ok(log.slice(firstRefresh + 1).some(([k]) => k === 'step'), 'steps go on while the views refresh');
  // Each refresh sees a later token than the one before it.
  for (let i = 1; i < seen.refreshes.length; i++) assert.ok(seen.refreshes[i] > seen.refreshes[i - 1], seen.refreshes.join(','));
  assert.equal(runner.playing, false);
});

test('a_pause_at_full_speed_still_draws_the_token_it_stopped_on', async () => {
  const { runner, seen } = rig({ tokens: 400, pause: 0, stepMs: 1, refreshMs: 20 });
  const done = runner.start(true);
  await sleep(60);
  runner.pause();
  await done;
  await sleep(40);
  const at = runner.generated.length;
  assert.ok(at > 0 && at < 400, `paused part-way: ${at}`);
  assert.equal(seen.refreshes.at(-1), at, 'the last refresh is of the token it stopped on');
  assert.equal(seen.overlaps, 0);
});

test('at_full_speed_steps_wait_in_the_engine_queue_and_the_answers_past_the_end_are_dropped', async () => {
  // The model stops (an end token) at 10 of at most 40: the steps asked for after it fail, unseen.
  const { runner, seen, engine } = rig({ tokens: 10, max: 40, pause: 0, stepMs: 2, refreshMs: 30 });
  await runner.start(true);
  assert.equal(runner.generated.length, 10);
  assert.equal(runner.done, true);
  assert.ok(engine.mostWaiting >= 2, `more than one step waited in the queue: ${engine.mostWaiting}`);
  assert.ok(engine.pastEnd >= 1, 'some steps were asked for past the end (and their errors dropped)');
  assert.equal(seen.refreshes.at(-1), 10);
  // With a pause, one step at a time; at the step limit, none past it.
  const slow = rig({ tokens: 5, pause: 3 });
  await slow.runner.start(true);
  assert.equal(slow.engine.mostWaiting, 1);
  const capped = rig({ tokens: 12, pause: 0, stepMs: 1 });
  await capped.runner.start(true);
  assert.equal(capped.runner.generated.length, 12);
  assert.equal(capped.engine.pastEnd, 0, 'no step asked for past max_new_tokens');
  // A model whose step takes longer than a frame is asked one step at a time once its
  // step time is known (two while it is not), so a pause stops where it is pressed.
  const large = rig({ tokens: 8, pause: 0, stepMs: 1, engineMs: 40 });
  await large.runner.start(true);
  assert.equal(large.runner.generated.length, 8);
  assert.ok(large.engine.mostWaiting <= 2, `at most two asked ahead: ${large.engine.mostWaiting}`);
});

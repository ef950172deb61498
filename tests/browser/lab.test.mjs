// The lab view (`views=lab`) in headless Chromium, under the page's Content-Security-Policy:
// - two runs overlaid are labelled by how their settings differ ("post-LN" / "pre-LN"), and
//   every plot draws exactly the runs' points (the loss, the metric, the rate used and the
//   Noam curve planned for it, the gradient norm, the per-layer norms), with hover values;
// - the lab's own buttons drive a run: train → pause → step once → resume → stop;
// - a bad file, picked or dropped, shows the loader's own message and changes nothing; a
//   good one becomes the page's model;
// - "use this run" makes the run the page's model and shows its settings; "train again
//   with one change" fills the form with the run's settings; hide, rename and delete;
// - the plots are drawn in the dark palette when the page is dark.
// Runs are short (a few dozen steps). Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { artifacts, dist, launch, open, openLab as openEmptyLab, root, serve, shot } from './harness.mjs';

const require = createRequire(join(root, 'www/package.json'));
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let server;
let plain;
let browser;
before(async () => {
  server = await serve(dist, { csp: true });
  // axe-core adds style elements of its own, which the page's policy refuses: it checks the
  // lab on a server without the policy.
  plain = await serve(dist);
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await plain?.close();
  // Everything above, uPlot included, ran under the page's policy without one violation.
  assert.deepEqual(server?.cspReports ?? [], []);
});

/** Open the lab alone, with no runs kept from an earlier test, and its form filled in. */
function openLab(media, url = server.url) {
  return openEmptyLab(browser.context, url, { media });
}

/** Train in the page through the scripting API and wait for the end; the runs' ids. */
function trainAll(page, list) {
  return page.evaluate(async (list) => {
    const el = document.querySelector('transformer-playground');
    const hs = list.map((s) => el.train(s));
    await Promise.all(hs.map((h) => h.done));
    return hs.map((h) => h.id);
  }, list);
}

/** The lab has drawn what the element reports (its table lists the same runs and steps). */
async function labCaughtUp(page) {
  await page.waitForFunction(() => {
    const el = document.querySelector('transformer-playground');
    const lab = el.shadowRoot.querySelector('tp-lab');
    const rows = [...lab.shadowRoot.querySelectorAll('tbody tr[data-run]')];
    return (
      rows.length === el.runs.length &&
      el.runs.every((r) => {
        const row = lab.shadowRoot.querySelector(`tr[data-run="${r.id}"]`);
        const last = r.points[r.points.length - 1];
        return row && row.dataset.status === r.status && row.classList.contains('hidden') === r.hidden && row.querySelectorAll('td')[4].textContent.trim().startsWith(`${last ? last.step : 0} /`);
      })
    );
  });
}

/** Each plot's drawn lines: { plot: [{ label, points }] }. */
function drawn(page) {
  return page.evaluate(() => {
    const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
    const out = {};
    for (const p of lab.shadowRoot.querySelectorAll('tp-lab-plot')) out[p.dataset.plot] = p.drawn();
    return out;
  });
}

/** What each plot must draw for these runs and labels, from the runs' own points. */
function expected(runs, labels) {
  const e = { loss: [], metric: [], lr: [], grad: [], residual: [], 'layer-grad': [] };
  runs.forEach((r, i) => {
    const L = labels[i];
    const pts = r.points;
    const evals = pts.filter((p) => p.eval);
    e.loss.push({ label: `${L} · training`, points: pts.map((p) => [p.step, p.loss]) });
    e.loss.push({ label: `${L} · held-out`, points: evals.map((p) => [p.step, p.eval.loss]) });
    e.metric.push({ label: L, points: evals.map((p) => [p.step, 100 * p.eval.metric]) });
    e.lr.push({ label: `${L} · used`, points: pts.map((p) => [p.step, p.lr]) });
    e.grad.push({ label: L, points: pts.map((p) => [p.step, p.grad_norm]) });
    const layers = pts[pts.length - 1].residual_norms.length;
    for (let l = 0; l < layers; l++) e.residual.push({ label: `${L} L${l + 1}`, points: pts.map((p) => [p.step, p.residual_norms[l]]) });
    for (let l = 0; l < pts[pts.length - 1].grad_norms.length; l++) e['layer-grad'].push({ label: `${L} L${l + 1}`, points: pts.map((p) => [p.step, p.grad_norms[l]]) });
  });
  return e;
}

/** Every plot draws the runs' points exactly; the rate plot's planned Noam curve is the rate each step used. */
function assertPlotsDrawRuns(d, runs, labels) {
  const want = expected(runs, labels);
  for (const plot of ['loss', 'metric', 'grad', 'residual', 'layer-grad']) assert.deepEqual(d[plot], want[plot], `the ${plot} plot draws the runs' points`);
  runs.forEach((r, i) => {
    const used = d.lr.find((l) => l.label === `${labels[i]} · used`);
    assert.deepEqual(used, want.lr[i], 'the rate each step used');
    const planned = d.lr.find((l) => l.label === `${labels[i]} · planned`);
    assert.ok(planned && planned.points.length > 0, 'the planned curve is drawn');
    assert.equal(planned.points[planned.points.length - 1][0], r.settings.steps, 'the planned curve runs to the last step');
    const byStep = new Map(r.points.map((p) => [p.step, p.lr]));
    let compared = 0;
    for (const [x, y] of planned.points) {
      if (!byStep.has(x)) continue;
      compared++;
      assert.ok(Math.abs(y - byStep.get(x)) <= 1e-6 * Math.abs(byStep.get(x)), `step ${x}: planned ${y}, used ${byStep.get(x)}`);
    }
    const taken = planned.points.filter(([x]) => x <= r.points[r.points.length - 1].step).length;
    assert.ok(compared > 0 && compared === taken, `the planned curve meets the used rate at every step taken (${compared} of ${taken})`);
    const now = d.lr.find((l) => l.label === `${labels[i]} · now`);
    const last = r.points[r.points.length - 1];
    assert.deepEqual(now.points, [[last.step, last.lr]], 'the current step is marked');
  });
}

describe('the lab', () => {
  test('two_runs_overlaid_are_labelled_by_their_difference_and_the_plots_draw_their_points', async () => {
    const { page, errors } = await openLab();
    const base = { task: 'reverse', n_layers: 2, steps: 24, eval_every: 8, seed: 3 };
    await trainAll(page, [
      { ...base, norm: 'post_ln' },
      { ...base, norm: 'pre_ln' },
    ]);
    await labCaughtUp(page);
    const runs = await page.evaluate(() => JSON.parse(JSON.stringify(document.querySelector('transformer-playground').runs)));
    assert.equal(runs.length, 2);
    assert.deepEqual(
      runs.map((r) => r.status),
      ['done', 'done'],
    );
    assert.deepEqual(
      runs.map((r) => r.points.length),
      [24, 24],
    );
    // Each run is named by its norm alone, in the order of the element's runs.
    const want = runs.map((r) => ({ post_ln: 'post-LN', pre_ln: 'pre-LN' })[r.settings.norm]);
    assert.deepEqual([...want].sort(), ['post-LN', 'pre-LN']);
    const labels = await page.locator('tp-lab td[data-label]').allTextContents();
    assert.deepEqual(labels, want, 'the table names the runs by their one difference');
    const d = await drawn(page);
    assert.deepEqual(
      d.loss.map((l) => l.label),
      want.flatMap((w) => [`${w} · training`, `${w} · held-out`]),
      'the legend names the runs by their difference',
    );
    assertPlotsDrawRuns(d, runs, want);
    assert.equal(d.residual.length, 4, 'two layers per run');

    // Hover: the legend shows the values under the pointer.
    const plot = page.locator('tp-lab-plot[data-plot="loss"] .u-over');
    await plot.scrollIntoViewIfNeeded();
    await page.waitForTimeout(100);
    const box = await plot.boundingBox();
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.5);
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5, { steps: 4 });
    await page.waitForTimeout(200);
    const hover = await page.evaluate(() => {
      const p = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').shadowRoot.querySelector('tp-lab-plot[data-plot="loss"]');
      const u = p.uplot;
      const idx = u.cursor.idx;
      const cells = [...p.shadowRoot.querySelectorAll('.u-legend .u-series')].map((r) => r.querySelector('.u-value')?.textContent ?? '');
      return { idx, x: u.data[0][idx], y: u.data[1][idx], cells };
    });
    assert.ok(hover.idx !== null && hover.idx >= 0, 'the pointer picks a step');
    assert.equal(hover.cells[0], String(Math.round(hover.x)), 'the legend shows the step under the pointer');
    assert.equal(hover.cells[1], String(Number(hover.y.toPrecision(4))), 'and the training loss there');
    await shot(page, 'lab-two-runs');

    // Each plot saves as SVG (its canvas as an image, its title and legend as text) and PNG.
    const lossPlot = page.locator('tp-lab-plot[data-plot="loss"]');
    const [svgFile] = await Promise.all([page.waitForEvent('download'), lossPlot.getByRole('button', { name: /as an SVG picture/ }).click()]);
    assert.match(svgFile.suggestedFilename(), /^lab-loss.*\.svg$/);
    const svg = readFileSync(await svgFile.path(), 'utf8');
    assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
    assert.ok(svg.includes('<img src="data:image/png;base64,'), 'the canvas is in the picture');
    assert.ok(svg.includes('post-LN · training') && svg.includes('pre-LN · held-out'), 'with its legend');
    assert.ok(!svg.includes('>SVG<') && !svg.includes('>PNG<'), 'without the buttons');
    writeFileSync(join(artifacts, 'lab-loss-plot.svg'), svg);
    const [pngFile] = await Promise.all([page.waitForEvent('download'), lossPlot.getByRole('button', { name: /as a PNG picture/ }).click()]);
    const png = readFileSync(await pngFile.path());
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    writeFileSync(join(artifacts, 'lab-loss-plot.png'), png);
    await page.locator('tp-lab').screenshot({ path: join(artifacts, 'lab-view.png') });

    // Hide the pre-LN run: a lone run is named by its task; show it again.
    await page.locator('tp-lab tr[data-run]').nth(1).getByRole('button', { name: 'hide' }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').runs[1].hidden);
    await labCaughtUp(page);
    assert.deepEqual(
      (await drawn(page)).loss.map((l) => l.label),
      ['reverse · training', 'reverse · held-out'],
    );
    await page.locator('tp-lab tr[data-run]').nth(1).getByRole('button', { name: 'show' }).click();
    await page.waitForFunction(() => !document.querySelector('transformer-playground').runs[1].hidden);

    // Rename from the table.
    await page.locator('tp-lab tr[data-run]').nth(0).getByRole('button', { name: 'rename' }).click();
    const input = page.locator('tp-lab tr[data-run] input[type="text"]');
    await input.fill('the 2017 layout');
    await input.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').runs[0].name === 'the 2017 layout');
    await page.locator('tp-lab tr[data-run] [data-name]', { hasText: 'the 2017 layout' }).waitFor();

    // Delete the second run.
    await page.locator('tp-lab tr[data-run]').nth(1).getByRole('button', { name: /^delete / }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').runs.length === 1);
    await labCaughtUp(page);
    assert.equal(await page.locator('tp-lab tr[data-run]').count(), 1);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_lab_buttons_drive_a_run_train_pause_step_once_resume_stop', async () => {
    const { page, errors } = await openLab();
    const steps = page.locator('tp-lab #f-steps');
    await steps.fill('3000');
    await steps.dispatchEvent('change');
    const every = page.locator('tp-lab #f-eval_every');
    await every.fill('10');
    await every.dispatchEvent('change');
    const btn = (a) => page.locator(`tp-lab button[data-action="${a}"]`);
    const run = () => page.evaluate(() => JSON.parse(JSON.stringify(document.querySelector('transformer-playground').runs.at(-1) ?? null)));
    /**
     * Wait until the newest run is in this state with at least this many steps (or exactly,
     * with `exact`), and the lab says no action on it is under way (a pause or a stop takes
     * effect once the chunk of steps in flight is in).
     */
    const waitRun = (status, steps, exact = false) =>
      page.waitForFunction(
        ({ status, steps, exact }) => {
          const el = document.querySelector('transformer-playground');
          const r = el.runs.at(-1);
          const row = r && el.shadowRoot.querySelector('tp-lab').shadowRoot.querySelector(`tr[data-run="${r.id}"]`);
          return r && row && row.dataset.busy === '' && row.dataset.status === status && r.status === status && (exact ? r.points.length === steps : r.points.length >= steps);
        },
        { status, steps, exact },
      );

    await btn('train').click();
    await waitRun('running', 3);
    assert.equal((await run()).settings.steps, 3000, "the form set the run's steps");
    await labCaughtUp(page);
    assert.ok(await btn('pause').isEnabled());

    await btn('pause').click();
    await waitRun('paused', 0);
    const n = (await run()).points.length;
    await page.waitForTimeout(400);
    assert.equal((await run()).points.length, n, 'a paused run takes no steps');
    await labCaughtUp(page);
    assert.ok(await btn('resume').isEnabled());
    assert.ok(!(await btn('pause').isEnabled()));

    await btn('step').click();
    await waitRun('paused', n + 1, true);
    await page.waitForTimeout(300);
    const stepped = await run();
    assert.equal(stepped.points.length, n + 1, 'step once takes exactly one step');
    assert.equal(stepped.status, 'paused', 'and the run stays paused');

    await btn('resume').click();
    await waitRun('running', n + 4);

    await btn('stop').click();
    await waitRun('stopped', 0);
    const m = (await run()).points.length;
    await page.waitForTimeout(400);
    const stopped = await run();
    assert.equal(stopped.points.length, m, 'a stopped run takes no more steps');
    assert.ok(m < 3000, `it stopped early (${m} steps)`);
    await labCaughtUp(page);
    assert.ok(!(await btn('resume').isEnabled()) && !(await btn('step').isEnabled()), 'a stopped run cannot be driven');
    const d = await drawn(page);
    assertPlotsDrawRuns(d, [stopped], ['reverse']);
    await shot(page, 'lab-controls');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_bad_file_shows_the_loaders_message_and_changes_nothing_and_a_good_one_becomes_the_model', async () => {
    const { page, errors } = await openLab();
    await trainAll(page, [{ task: 'reverse', steps: 8, eval_every: 4 }]);
    await labCaughtUp(page);
    const before = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return JSON.stringify({ info: el.info, model: el.st.model, custom: el.customModel, runs: el.runs.map((r) => [r.id, r.points.length]) });
    });
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24));
    const loaderSays = (bytes) =>
      page.evaluate(async (b) => {
        try {
          await document.querySelector('transformer-playground').loadCheckpoint(new Uint8Array(b));
          return null;
        } catch (e) {
          return e.message;
        }
      }, [...bytes]);
    const randomMsg = await loaderSays(random);
    assert.ok(randomMsg, 'random bytes are refused');

    // By the file picker.
    await page.locator('tp-lab input[data-import]').setInputFiles({ name: 'random.safetensors', mimeType: 'application/octet-stream', buffer: random });
    const alert = page.locator('tp-lab [data-error]');
    await alert.waitFor();
    assert.equal((await alert.textContent()).trim(), `random.safetensors was not loaded: ${randomMsg}`);

    // By drag and drop: the first bytes of a real checkpoint.
    const real = readFileSync(join(dist, 'models/reverse.safetensors'));
    const truncated = real.subarray(0, 100);
    const truncMsg = await loaderSays(truncated);
    assert.ok(truncMsg && truncMsg !== randomMsg, 'a truncated file gets its own message');
    const drop = (bytes, name) =>
      page.evaluate(
        ({ b, name }) => {
          const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
          const dt = new DataTransfer();
          dt.items.add(new File([new Uint8Array(b)], name));
          const target = lab.shadowRoot.querySelector('section.lab');
          target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true, composed: true }));
          target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true, composed: true }));
        },
        { b: [...bytes], name },
      );
    await drop(truncated, 'cut.safetensors');
    await page.locator('tp-lab [data-error]', { hasText: 'cut.safetensors' }).waitFor();
    assert.equal((await alert.textContent()).trim(), `cut.safetensors was not loaded: ${truncMsg}`);
    await shot(page, 'lab-bad-file');
    const afterBad = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return JSON.stringify({ info: el.info, model: el.st.model, custom: el.customModel, runs: el.runs.map((r) => [r.id, r.points.length]) });
    });
    assert.equal(afterBad, before, 'the model and the runs are as they were');

    // A good file, dropped: it becomes the page's model and the message goes.
    await drop(real, 'reverse.safetensors');
    await page.locator('tp-lab [data-used]', { hasText: 'reverse.safetensors' }).waitFor();
    assert.equal(await alert.count(), 0);
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    const shipped = await page.evaluate(async () => {
      const { EngineClient } = await import('./playground.js');
      const c = new EngineClient();
      const i = await c.call('load', { url: new URL('models/reverse.safetensors', location.href).href });
      c.terminate();
      return i;
    });
    assert.deepEqual(info, shipped, 'the page runs the dropped checkpoint');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('use_this_run_makes_it_the_model_and_train_again_fills_the_form_with_its_settings', async () => {
    const { page, errors } = await openLab();
    const [id] = await trainAll(page, [{ task: 'reverse', n_layers: 3, d_model: 24, n_heads: 2, pos_encoding: 'rope', steps: 12, eval_every: 6 }]);
    await labCaughtUp(page);
    await page.locator(`tp-lab tr[data-run="${id}"] button[data-use]`).click();
    await page.locator('tp-lab [data-used]').waitFor();
    const info = await page.evaluate(() => document.querySelector('transformer-playground').info);
    assert.equal(info.d_model, 24);
    assert.equal(info.n_heads, 2);
    assert.equal(info.decoder_layers, 3);
    assert.equal(info.pos_encoding, 'rope');
    // The run's buttons download its weights (a safetensors file: a little-endian header
    // length, then the header's JSON) and its curves (a header row and one row per step).
    const row = page.locator(`tp-lab tr[data-run="${id}"]`);
    const [st] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: '.safetensors' }).click()]);
    assert.match(st.suggestedFilename(), /\.safetensors$/);
    const bytes = readFileSync(await st.path());
    const headerLen = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8'));
    assert.ok(header.__metadata__ && Object.keys(header).length > 5, 'a safetensors file with tensors and metadata');
    const [csv] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'CSV' }).click()]);
    assert.match(csv.suggestedFilename(), /\.csv$/);
    const lines = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1 + 12, 'a header and twelve steps');
    assert.match(lines[0], /^step,loss,/);
    const used = await page.locator('tp-lab [data-used]').textContent();
    assert.match(used, /RoPE/, 'the settings of the run in use are shown');
    assert.match(used, /24 heads|d_model 24/);

    await page.locator(`tp-lab tr[data-run="${id}"] button[data-again]`).click();
    await page.locator('tp-lab [data-from]').waitFor();
    const form = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form);
    const run = await page.evaluate((id) => document.querySelector('transformer-playground').runs.find((r) => r.id === id).settings, id);
    // The same settings, each number as the core keeps it (f32) and the form writes it.
    const same = (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-6 * Math.abs(b) : a && typeof a === 'object' ? Object.keys(b).every((k) => same(a[k], b[k])) && Object.keys(a).length === Object.keys(b).length : a === b);
    assert.ok(same(form, run), `the form holds the run's settings: ${JSON.stringify(form)} against ${JSON.stringify(run)}`);
    assert.equal(await page.locator('tp-lab #f-pos_encoding').inputValue(), 'rope');
    // One change and train: the two runs are told apart by that change alone.
    await page.locator('tp-lab #f-pos_encoding').selectOption('alibi');
    await page.locator('tp-lab button[data-action="train"]').click();
    await page.waitForFunction(() => {
      const runs = document.querySelector('transformer-playground').runs;
      return runs.length === 2 && runs[1].status === 'done';
    });
    await labCaughtUp(page);
    assert.deepEqual(await page.locator('tp-lab td[data-label]').allTextContents(), ['RoPE', 'ALiBi']);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_experiment_preset_trains_its_runs_side_by_side_labelled_by_the_one_change', async () => {
    const { page, errors } = await openLab();
    await page.locator('tp-lab #preset').selectOption('residual-6');
    await page.locator('tp-lab button[data-action="train-preset"]').click();
    await page.waitForFunction(() => {
      const runs = document.querySelector('transformer-playground').runs;
      return runs.length === 2 && runs.every((r) => r.points.length >= 2);
    });
    await labCaughtUp(page);
    const runs = await page.evaluate(() => document.querySelector('transformer-playground').runs.map((r) => ({ residual: r.settings.residual, layers: r.settings.n_layers, steps: r.settings.steps })));
    assert.deepEqual(
      runs.map((r) => r.layers),
      [6, 6],
    );
    assert.deepEqual(runs.map((r) => r.residual).sort(), [false, true]);
    assert.deepEqual(
      await page.locator('tp-lab td[data-label]').allTextContents(),
      runs.map((r) => (r.residual ? 'residual' : 'no residual')),
    );
    await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await Promise.all(el.runs.map((r) => el.lab.stop(r.id)));
    });
    await page.waitForFunction(() => document.querySelector('transformer-playground').runs.every((r) => r.status === 'stopped' || r.status === 'done'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_run_kept_from_before_a_reload_is_driven_by_the_same_buttons', async () => {
    const { page, errors } = await openLab();
    const id = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const h = el.train({ task: 'reverse', steps: 3000, eval_every: 0 });
      await new Promise((ok) => h.addEventListener('progress', () => el.runs.find((r) => r.id === h.id).points.length >= 5 && ok()));
      await h.pause();
      return h.id;
    });
    const steps = await page.evaluate((id) => document.querySelector('transformer-playground').runs.find((r) => r.id === id).points.length, id);
    await page.reload();
    await page.waitForFunction(() => customElements.get('tp-lab') && document.querySelector('transformer-playground')?.shadowRoot?.querySelector('tp-lab')?.form);
    await page.evaluate(() => document.querySelector('transformer-playground').runsRestored);
    await page.locator(`tp-lab tr[data-run="${id}"][data-status="paused"]`).waitFor();
    const btn = (a) => page.locator(`tp-lab button[data-action="${a}"]`);
    assert.ok(await btn('resume').isEnabled(), 'a run kept paused can be resumed');
    await btn('step').click();
    await page.waitForFunction(({ id, n }) => document.querySelector('transformer-playground').runs.find((r) => r.id === id).points.length === n + 1, { id, n: steps });
    await btn('resume').click();
    await page.waitForFunction(({ id, n }) => document.querySelector('transformer-playground').runs.find((r) => r.id === id).points.length >= n + 5, { id, n: steps });
    await page.locator(`tp-lab tr[data-run="${id}"][data-status="running"][data-busy=""]`).waitFor();
    await btn('stop').click();
    await page.locator(`tp-lab tr[data-run="${id}"][data-status="stopped"]`).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_link_fills_the_form_with_its_run_settings_and_the_lab_copies_a_link_to_its_own', async () => {
    const run = 'task=sort&n_layers=3&residual=0&lr=noam%3A2%3A400&bogus=1';
    const { page, errors } = await open(browser.context, server.url, `play=0&views=lab&train=${encodeURIComponent(run)}`);
    await page.waitForFunction(() => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      return lab?.form?.task === 'sort';
    });
    const form = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form);
    assert.equal(form.n_layers, 3);
    assert.equal(form.residual, false);
    assert.deepEqual(form.lr, { kind: 'noam', factor: 2, warmup: 400 });
    assert.equal(await page.locator('tp-lab #f-n_layers').inputValue(), '3');
    const notes = await page.locator('tp-lab [data-link-notes]').textContent();
    assert.match(notes, /bogus/, 'the unknown key is named');
    // The lab's own link: the same settings in a new page.
    await page.locator('tp-lab #f-d_model').fill('48');
    await page.locator('tp-lab #f-d_model').dispatchEvent('change');
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
    await page.locator('tp-lab button[data-action="link"]').click();
    await page.locator('tp-lab .said', { hasText: 'link' }).waitFor();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(link, /views=lab/);
    const again = await browser.context.newPage();
    await again.goto(link);
    await again.waitForFunction(() => document.querySelector('transformer-playground')?.shadowRoot?.querySelector('tp-lab')?.form?.d_model === 48);
    const copied = await again.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form);
    assert.deepEqual({ ...copied }, { ...form, d_model: 48 }, 'the link carries every setting of the form');
    assert.deepEqual(errors, []);
    await again.close();
    await page.close();
  });

  test('the_plots_follow_the_dark_theme_and_the_lab_passes_axe', async () => {
    const { page, errors } = await openLab({ colorScheme: 'dark' }, plain.url);
    await trainAll(page, [
      { task: 'reverse', steps: 16, eval_every: 8, residual: true },
      { task: 'reverse', steps: 16, eval_every: 8, residual: false },
    ]);
    await labCaughtUp(page);
    const pal = await page.evaluate(() => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      const p = lab.shadowRoot.querySelector('tp-lab-plot[data-plot="loss"]');
      const cs = getComputedStyle(p);
      return { drawn: p.palette, fg: cs.getPropertyValue('--tp-fg').trim(), muted: cs.getPropertyValue('--tp-muted').trim() };
    });
    assert.equal(pal.fg, '#e6e8eb', 'the page is dark');
    assert.deepEqual(pal.drawn, { fg: pal.fg, muted: pal.muted, line: pal.drawn.line }, 'the canvas was drawn in the dark palette');
    const want = await page.evaluate(() => document.querySelector('transformer-playground').runs.map((r) => (r.settings.residual ? 'residual' : 'no residual')));
    assert.deepEqual(await page.locator('tp-lab td[data-label]').allTextContents(), want);
    await shot(page, 'lab-dark');
    // The reader switches to light: the plots are drawn again in the light palette.
    await page.evaluate(() => document.querySelector('transformer-playground').store.setTheme('light'));
    await page.waitForFunction(() => {
      const p = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').shadowRoot.querySelector('tp-lab-plot[data-plot="loss"]');
      return p.palette?.fg === '#1c1f24';
    });
    await page.evaluate(AXE);
    const v = await page.evaluate(async () => {
      const res = await window.axe.run(document, { resultTypes: ['violations'] });
      return res.violations.filter((x) => x.impact === 'serious' || x.impact === 'critical').map((x) => `${x.id}: ${x.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    assert.deepEqual(v, [], 'no serious or critical axe violations');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

// The lab's own-text task in headless Chromium (www/README.md, "The lab": task `text`):
// - an empty text, a text of one repeated character, a text with too many different
//   characters, a file over the size limit and a file that is not UTF-8 each get a clear
//   message; no run starts and the text box keeps what it had;
// - a pasted text (English and Chinese) trains from the form: held-out loss, next-character
//   accuracy and samples written from held-out prompts are shown;
// - its steps equal `tplay train --task text --text-file …` with the run's own flags (loss per
//   step within 1e-5 relative, and the final held-out loss and accuracy);
// - the run, its text included, is back after a reload; the text is not in the link;
// - "use" makes it the playground's model: the vocabulary is the text's characters and the
//   playground starts from the held-out text and generates from it.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH_ALLOWED, englishLeft, launch, open, openLab, root, serve, shot } from './harness.mjs';

function tplayBin() {
  const candidates = [process.env.TPLAY_BIN, join(root, 'target/debug/tplay'), join(root, 'target/release/tplay')].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `no tplay binary (build it with cargo build -p tplay, or set TPLAY_BIN); looked at ${candidates.join(', ')}`);
  return bin;
}

// A small text in two scripts; repeated so that the model has something to learn in a few steps.
const TEXT = Array.from(
  { length: 12 },
  (_, i) => `The cat sat on mat ${i % 4}. 猫坐在垫子上，狗在门外叫。The dog ran after the cat, and the cat ran up a tree.\n`,
).join('');
const chars = Array.from(TEXT);
const DISTINCT = new Set(chars).size;
const HELD = Math.floor(chars.length / 10);

const runsNow = (page) => page.evaluate(() => document.querySelector('transformer-playground').runs.map((r) => JSON.parse(JSON.stringify(r))));

let server;
let browser;
let page;
let errors;
let run;

describe('the lab trains on your own text', () => {
  before(async () => {
    server = await serve();
    browser = await launch();
    ({ page, errors } = await openLab(browser.context, server.url));
    await page.locator('tp-lab #f-task').selectOption('text');
    await page.locator('tp-lab #f-text').waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('bad text and bad files get a clear message and start nothing', async () => {
    const box = page.locator('tp-lab #f-text');
    const problem = page.locator('tp-lab [data-text-problem]');
    const train = page.locator('tp-lab button[data-action="train"]');
    // Empty: the run is refused with the reason.
    await box.fill('');
    await train.click();
    await page.locator('tp-lab [data-error]', { hasText: 'empty' }).waitFor();
    // One repeated character.
    await box.fill('a'.repeat(40));
    await problem.filter({ hasText: 'repeats one character' }).waitFor();
    await train.click();
    await page.locator('tp-lab [data-error]', { hasText: 'repeats one character' }).waitFor();
    // More different characters than a text model may have (CJK ideographs from U+4E00).
    const many = Array.from({ length: 8200 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('');
    await box.fill(many);
    await problem.filter({ hasText: 'different characters' }).waitFor();
    // The engine refuses such a text too, with its own message, when the API is used.
    const api = await page.evaluate(async (many) => {
      try {
        await document.querySelector('transformer-playground').train({ task: 'text', text: many, steps: 1 }).started;
        return 'started';
      } catch (e) {
        return e.message;
      }
    }, many);
    assert.match(api, /text: .*different characters/);
    // A good text, then files that cannot be used: the box keeps the good text.
    await box.fill(TEXT);
    await page.locator('tp-lab [data-text-stats]').waitFor();
    const file = page.locator('tp-lab input[data-text-file]');
    await file.setInputFiles({ name: 'latin1.txt', mimeType: 'text/plain', buffer: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe]) });
    await page.locator('tp-lab [data-text-note]', { hasText: 'not UTF-8' }).waitFor();
    await file.setInputFiles({ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc((1 << 20) + 1, 0x61) });
    await page.locator('tp-lab [data-text-note]', { hasText: 'more than' }).waitFor();
    assert.equal(await box.inputValue(), TEXT);
    assert.equal((await runsNow(page)).length, 0, 'no run started');
    // A good file is read into the box.
    await file.setInputFiles({ name: 'good.txt', mimeType: 'text/plain', buffer: Buffer.from(TEXT, 'utf8') });
    await page.locator('tp-lab [data-text-note]', { hasText: 'good.txt' }).waitFor();
    assert.equal(await box.inputValue(), TEXT);
    const stats = await page.locator('tp-lab [data-text-stats]').getAttribute('data-text-stats');
    assert.equal(stats, `${chars.length}:${DISTINCT}:${chars.length - HELD}:${HELD}`);
  });

  test('a pasted text trains from the form, with held-out numbers and samples, and equals tplay train', async () => {
    for (const [f, v] of [
      ['steps', '30'],
      ['batch', '8'],
      ['seed', '3'],
      ['eval_every', '10'],
    ]) {
      await page.locator(`tp-lab #f-${f}`).fill(v);
      await page.locator(`tp-lab #f-${f}`).dispatchEvent('change');
    }
    // The link names the task, never the text.
    const link = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').formLink);
    assert.match(link, /task=text/);
    assert.ok(!link.includes('text=') && !link.includes(encodeURIComponent('猫')), link);
    const t0 = Date.now();
    await page.locator('tp-lab button[data-action="train"]').click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').runs.some((r) => r.status === 'done'), null, { timeout: 60000 });
    const wall = (Date.now() - t0) / 1000;
    [run] = await runsNow(page);
    assert.equal(run.settings.text, TEXT);
    assert.equal(run.points.length, 30);
    const evals = run.points.filter((p) => p.eval);
    assert.deepEqual(
      evals.map((p) => p.step),
      [10, 20, 30],
    );
    const last = evals.at(-1).eval;
    assert.equal(last.metric_name, 'next_char_accuracy');
    assert.ok(last.loss < Math.log(DISTINCT + 4), `held-out loss ${last.loss} is not below a uniform guess`);
    assert.equal(last.samples.length, 3);
    for (const line of last.samples) assert.ok(!/<(pad|bos|eos|unk)>/.test(line), `a special token in a sample: ${line}`);
    await page.locator('tp-lab [data-text-samples] li[data-sample]').nth(2).waitFor();
    const plotted = await page.evaluate(() => {
      const lab = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      return lab.shadowRoot.querySelector('tp-lab-plot[data-plot="metric"]').getAttribute('heading');
    });
    assert.match(plotted, /next-character accuracy/);
    console.log(
      `# text run: ${chars.length} characters (${DISTINCT} different), 30 steps of batch 8 in ${wall.toFixed(1)} s (${run.steps_per_s.toFixed(1)} steps/s); held-out ${last.loss.toFixed(3)} nats/char (${(last.loss / Math.LN2).toFixed(3)} bits), next-char accuracy ${(100 * last.metric).toFixed(1)} %`,
    );
    await shot(page, 'lab-text-run');
    // The run's text exports as the file tplay train reads.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(`tp-lab tr[data-run="${run.id}"] button[data-export-text]`).click()]);
    assert.equal(readFileSync(await dl.path(), 'utf8'), TEXT);

    // The same run on the command line: --text-file names the run's text.
    const dir = mkdtempSync(join(tmpdir(), 'tplay-text-'));
    try {
      const file = join(dir, 'text.txt');
      writeFileSync(file, TEXT, 'utf8');
      const i = run.command.indexOf('--text-file');
      assert.ok(i >= 0, `the run's command names its text: ${run.command.join(' ')}`);
      const args = [...run.command];
      args[i + 1] = file;
      const log = join(dir, 'log.jsonl');
      execFileSync(tplayBin(), ['train', ...args, '--eval-every', '10', '--out', join(dir, 'm.safetensors'), '--log', log], { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] });
      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const native = lines.filter((l) => l.loss !== undefined);
      assert.equal(native.length, 30);
      let worst = 0;
      for (let k = 0; k < 30; k++) {
        assert.equal(run.points[k].step, native[k].step);
        worst = Math.max(worst, Math.abs(run.points[k].loss - native[k].loss) / Math.abs(native[k].loss));
      }
      const finalEval = lines.filter((l) => l.eval).at(-1).eval;
      const heldDiff = Math.abs(finalEval.held_out_loss - last.loss) / finalEval.held_out_loss;
      console.log(`# page vs tplay train on the text: largest relative loss difference ${worst.toExponential(2)}, final held-out loss ${heldDiff.toExponential(2)}`);
      assert.ok(worst <= 1e-5, `relative loss difference ${worst}`);
      assert.ok(heldDiff <= 1e-5, `held-out loss: page ${last.loss}, tplay ${finalEval.held_out_loss}`);
      assert.ok(Math.abs(finalEval.accuracy - last.metric) <= 0.002, `accuracy: page ${last.metric}, tplay ${finalEval.accuracy}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the run and its text are back after a reload, and it becomes the playground model', async () => {
    assert.ok(run, 'needs the trained run');
    await page.reload();
    await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.ready;
      await el.runsRestored;
    });
    const [back] = await runsNow(page);
    assert.equal(back.id, run.id);
    assert.equal(back.settings.text, TEXT);
    assert.equal(back.points.length, 30);
    assert.equal(back.points.at(-1).eval.samples.length, 3);
    const info = await page.evaluate((id) => document.querySelector('transformer-playground').useRun(id), run.id);
    // The model's vocabulary: the four specials, then the text's characters in order of appearance.
    assert.deepEqual(info.vocab.slice(4), [...new Set(chars)]);
    const prompt = chars.slice(chars.length - HELD, chars.length - HELD + 24).join('');
    const out = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const start = el.store.st.text;
      await el.store.patch({ max: 12 });
      await el.store.gen.start(true);
      const t0 = performance.now();
      while (!el.done && performance.now() - t0 < 30000) await new Promise((ok) => setTimeout(ok, 50));
      return { start, generated: el.generated.length, custom: el.customModel, error: el.error };
    });
    assert.equal(out.start, prompt);
    assert.equal(out.error, '');
    assert.ok(out.generated >= 1, `generated ${out.generated} tokens`);
    assert.equal(out.custom, run.name);
    assert.deepEqual(errors, []);
  });

  test('in Chinese: the text box, its refusals and a run’s numbers are in Chinese', async () => {
    const zh = await open(browser.context, server.url, 'play=0&views=lab&lang=zh-Hans');
    const p = zh.page;
    await p.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.form != null, null, { timeout: 60000 });
    // Runs are named in the page's language when they start: the English page's run goes.
    await p.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.runsRestored;
      for (const r of [...el.runs]) await el.deleteRun(r.id);
    });
    await p.locator('tp-lab #f-task').selectOption('text');
    await p.locator('tp-lab #f-text').fill('啊'.repeat(30));
    await p.locator('tp-lab [data-text-problem]', { hasText: '重复' }).waitFor();
    await p.locator('tp-lab #f-text').fill(TEXT);
    for (const [f, v] of [
      ['steps', '10'],
      ['eval_every', '5'],
    ]) {
      await p.locator(`tp-lab #f-${f}`).fill(v);
      await p.locator(`tp-lab #f-${f}`).dispatchEvent('change');
    }
    await p.locator('tp-lab button[data-action="train"]').click();
    await p.locator('tp-lab [data-text-samples] li[data-sample]').nth(2).waitFor({ timeout: 60000 });
    await p.locator('tp-lab [data-text-eval]', { hasText: '奈特' }).waitFor();
    // UTF-8 is a name; `text` is the task's identifier, which the plots' legends and the
    // table's labels show as they show every task's.
    const left = await englishLeft(p, new Set([...ENGLISH_ALLOWED, 'UTF', 'text']));
    assert.deepEqual(left, []);
    assert.deepEqual(zh.errors, []);
    await p.locator('tp-lab [data-text-task]').screenshot({ path: join(root, 'tests/browser/artifacts/lab-text-zh.png') });
    await p.close();
  });
});

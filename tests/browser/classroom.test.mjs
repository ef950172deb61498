// A class without a server, in headless Chromium under the page's Content-Security-Policy:
// the teacher page composes a three-lesson assignment in Chinese (refusing a lock that blocks
// a lesson first), a student opens it, types a name, does each experiment through the page's
// controls, answers (one answer wrong on purpose), trains the assigned lab run and gets a
// completion code; a second student on the same browser profile starts afresh while the
// first one's answers stay; the teacher reads the code into the class table (and refuses an
// edited one); the worksheet prints; axe finds nothing serious on the teacher page in either
// language; the teacher's hostile instruction is drawn as text. Apart from the class: the
// answer key of a head-ablation, a model-choice and a lab lesson against the test's own
// numbers from the engine, and a truncated and a wrong-version code refused with their reason.
// One browser, one page per role. Screenshots land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { artifacts, launch, root, serve } from './harness.mjs';

const require = createRequire(join(root, 'www/package.json'));
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const P = 'transformer-playground';
const T = 'tp-teacher';
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> Answer in full sentences.';
const LESSONS = ['causal-mask', 'scaled-dot', 'padding-mask'];
const TRAIN = 'task=copy&steps=20&batch=4&eval_every=10';

let server;
let browser;
let teacher;
let student;
let link = '';
let code = '';
const errors = [];

before(async () => {
  server = await serve(undefined, { csp: true });
  browser = await launch({ webgpu: false });
  teacher = await browser.context.newPage();
  teacher.on('pageerror', (e) => errors.push(`teacher: ${e}`));
});
after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(server?.cspReports ?? [], []);
  assert.deepEqual(errors, []);
});

function until(page, fn, arg, timeout = 60000) {
  return page.waitForFunction(fn, arg, { timeout, polling: 100 });
}

const lessonRoot = () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot;

/** The right option of the open lesson, worked out in the test from the engine's numbers (as lessons.test.mjs does); null while they are not there. */
const RIGHT = {
  'causal-mask': () => {
    const s = document.querySelector('transformer-playground').store;
    if (!s.previous || !s.lastForward || s.previous === s.lastForward) return null;
    return s.lastForward.model_probs.some((p, i) => p !== s.previous.model_probs[i]) ? 0 : 1;
  },
  'scaled-dot': () => {
    const s = document.querySelector('transformer-playground').store;
    if (!s.previous || s.previous === s.lastForward) return null;
    const tr = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-saturation')?.shadowRoot.querySelector('tr[data-mean-entropy]');
    if (!tr || !tr.dataset.beforeMeanEntropy) return null;
    const [now, was] = [Number(tr.dataset.meanEntropy), Number(tr.dataset.beforeMeanEntropy)];
    return now < was ? 0 : now > was ? 1 : 2;
  },
  'padding-mask': () => {
    const el = document.querySelector('transformer-playground');
    const f = el.lastForward;
    if (!f || (el.store.previous && el.store.previous === el.store.lastForward)) return null;
    const pad = el.info.pad;
    for (const t of f.attention) {
      const [B, H, T, S] = t.probs.shape;
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++)
          for (let i = 0; i < T; i++) for (let j = 0; j < S; j++) if (f.tokens[b][i] !== pad && f.tokens[b][j] === pad && t.probs.data[((b * H + h) * T + i) * S + j] > 0) return 0;
    }
    return 2;
  },
};
const READY = {
  'causal-mask': () => document.querySelector('transformer-playground').lastForward !== null,
  'scaled-dot': () => !!document.querySelector('transformer-playground').shadowRoot.querySelector('tp-saturation')?.shadowRoot?.querySelector('tr[data-mean-entropy]'),
  'padding-mask': () => document.querySelector('transformer-playground').lastForward?.tokens.length > 1,
};
const SWITCH = { 'causal-mask': 'causal', 'scaled-dot': 'scale', 'padding-mask': 'pad' };

async function ready(page) {
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  await page.evaluate(() => document.querySelector('transformer-playground').ready);
}

/** Do lesson `id`'s experiment and answer it: right, or (wrong = true) the next option round. Returns [right option, given]. */
async function doLesson(page, id, wrong) {
  await until(page, (id) => document.querySelector('transformer-playground').st.lesson === id, id);
  // The lesson's views have measured the setting as it opens (the "before" of the experiment).
  await until(page, READY[id], undefined, 60000);
  await page.locator(`${P} tp-controls input[data-setting="${SWITCH[id]}"]`).uncheck();
  await until(page, () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-answer]')?.dataset.answer === 'open', undefined, 120000);
  // Wrapped: option 0 is falsy, and waitForFunction waits for a truthy value.
  const right = (await until(page, `(() => { const v = (${RIGHT[id]})(); return v === null ? null : { v }; })()`, undefined, 60000).then((h) => h.jsonValue())).v;
  const n = await page.locator(`${P} tp-lesson [data-answer] [data-option]`).count();
  const given = wrong ? (right + 1) % n : right;
  await page.locator(`${P} tp-lesson [data-answer] [data-option="${given}"]`).check();
  await page.locator(`${P} tp-lesson [data-answer] [data-check]`).click();
  await until(page, (v) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('.verdict')?.dataset.verdict === v, wrong ? 'wrong' : 'right');
  return [right, given];
}

const given = {};


/** A completion code made here, byte by byte as the format says (version, length, assignment, name, lessons, runs, CRC-32, base32 after TP), not by the page's encoder. */
function testCode({ version = 1, assignment, student, lessons }) {
  const name = [...new TextEncoder().encode(student)];
  const body = [version, 0, 0, (assignment >>> 24) & 255, (assignment >>> 16) & 255, (assignment >>> 8) & 255, assignment & 255, name.length, ...name, lessons, ...Array(lessons).fill(0), 0];
  body[1] = (body.length + 4) >> 8;
  body[2] = (body.length + 4) & 255;
  let c = 0xffffffff;
  for (const b of body) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  c = (c ^ 0xffffffff) >>> 0;
  const bytes = [...body, c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255];
  const A = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let out = 'TP';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += A[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += A[(acc << (5 - bits)) & 31];
  return out;
}

// The answer key beyond one switch, on a page of its own (these cases need nothing of the class above).
const KEYED = ['heads', 'residual', 'head-dim'];
let keyPage;
async function keyTeacher() {
  if (keyPage) return keyPage;
  keyPage = await browser.context.newPage();
  keyPage.on('pageerror', (e) => errors.push(`key teacher: ${e}`));
  await keyPage.goto(`${server.url}teacher.html#lesson=${KEYED[0]}&lessons=${KEYED.join(',')}&ui=en`);
  await until(keyPage, () => document.querySelector('tp-teacher')?.shadowRoot?.querySelector('button[data-measure]'));
  return keyPage;
}

/** A playground page of the test's own on `hash`, once its first forward pass is drawn. */
async function ownPlayground(hash) {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(`own playground: ${e}`));
  await page.goto(`${server.url}index.html#${hash}`);
  await ready(page);
  await until(page, () => document.querySelector('transformer-playground').lastForward !== null);
  return page;
}

describe('the answer key beyond one switch', () => {
  test('a head switched off and a sibling model loaded: the key names the answer the engine gives', { timeout: 30000 }, async () => {
    const page = await keyTeacher();
    await page.locator(`${T} button[data-measure]`).click();
    // The test's own answers, from the engine's numbers on playgrounds of its own.
    // Heads: the lesson's model and views; the head 0 of the shown layer switched off; what the formerly likeliest character's probability did.
    const h = await ownPlayground('model=grammar-sinusoidal.safetensors&views=attention,output&play=0');
    const heads = await h.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      const before = el.lastForward;
      const was = Array.from(before.model_probs);
      await el.store.toggleHead({ site: el.store.site, layer: el.st.layer, head: 0 });
      while (el.lastForward === before) await new Promise((r) => setTimeout(r, 50));
      const now = el.lastForward.model_probs;
      const top = was.indexOf(Math.max(...was));
      return now[top] > was[top] ? 0 : now[top] < was[top] ? 1 : 2;
    });
    await h.close();
    // Residual: the lesson's model, then the sibling without residual connections; the mean norm of the stream, input against last layer.
    const r = await ownPlayground('model=reverse.safetensors&views=hidden&play=0');
    const residual = await r.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      await el.store.patch({ model: 'reverse-no-residual.safetensors' });
      const f = el.lastForward;
      const n = f.hidden[f.hidden.length - 1].norms;
      const [L1, , T] = n.shape;
      const mean = (l) => Array.from(n.data.slice(l * n.shape[1] * T, l * n.shape[1] * T + T)).reduce((a, b) => a + b, 0) / T;
      return mean(L1 - 1) >= mean(0) ? 0 : 1;
    });
    await r.close();
    await until(page, (n) => document.querySelector('tp-teacher').shadowRoot.querySelectorAll('[data-expect]').length === n && !document.querySelector('tp-teacher').measuring, KEYED.length, 25000);
    const key = await page.evaluate(() => Object.fromEntries([...document.querySelector('tp-teacher').shadowRoot.querySelectorAll('[data-expect]')].map((p) => [p.dataset.expect, p.textContent])));
    for (const [id, right] of [['heads', heads], ['residual', residual]]) {
      const options = await page.evaluate((id) => [...document.querySelector('tp-teacher').shadowRoot.querySelectorAll(`[data-key="${id}"] li`)].map((li) => li.textContent.trim()), id);
      assert.ok(key[id].includes(options[right]), `${id}: key “${key[id]}”, the engine's answer “${options[right]}”`);
      for (const [i, o] of options.entries()) if (i !== right) assert.ok(!key[id].includes(o), `${id}: the key names “${o}” too`);
    }
    // The lab lesson needs minutes of training: left to the students' pages, saying what its check compares.
    assert.match(key['head-dim'], /students’ pages/);
    assert.match(key['head-dim'], /held-out loss/);
  });

  test('a truncated code and a code of another format version are refused with their reason', async () => {
    const page = await keyTeacher();
    const id = await page.evaluate(() => document.querySelector('tp-teacher').assignment.id);
    const good = testCode({ assignment: id, student: 'Seat 7', lessons: KEYED.length });
    const truncated = good.slice(0, -6);
    const v2 = testCode({ version: 2, assignment: id, student: 'Seat 8', lessons: KEYED.length });
    await page.locator(`${T} textarea[data-codes]`).fill(`${good}\n${truncated}\n${v2}`);
    await page.locator(`${T} button[data-read-codes]`).click();
    const t = await page.evaluate(() => {
      const r = document.querySelector('tp-teacher').shadowRoot;
      return { rows: [...r.querySelectorAll('tr[data-row]')].map((tr) => tr.dataset.row), why: [...r.querySelectorAll('[data-rejected] [data-why]')].map((x) => x.textContent) };
    });
    // The whole code is read (so the two below are refused for what was done to them, nothing else).
    assert.deepEqual(t.rows, ['Seat 7']);
    assert.equal(t.why.length, 2);
    assert.match(t.why[0], /Incomplete: characters are missing/);
    assert.match(t.why[1], /another version of the playground \(format 2\)/);
  });
  test('a student name that is markup or a formula is drawn as text, and the CSV does not make it a formula', async () => {
    const page = await keyTeacher();
    const id = await page.evaluate(() => document.querySelector('tp-teacher').assignment.id);
    const markup = '<img src=x onerror=window.__pwned=3>';
    const formula = '=HYPERLINK("http://x","y")';
    await page.locator(`${T} textarea[data-codes]`).fill([markup, formula].map((student) => testCode({ assignment: id, student, lessons: KEYED.length })).join('\n'));
    await page.locator(`${T} button[data-read-codes]`).click();
    const t = await page.evaluate(() => {
      const r = document.querySelector('tp-teacher').shadowRoot;
      return {
        names: [...r.querySelectorAll('tr[data-row] th')].map((th) => th.textContent.trim()),
        injected: r.querySelectorAll('table img, table script').length,
        pwned: window.__pwned ?? null,
        csv: decodeURIComponent(r.querySelector('a[data-csv]').getAttribute('href').split(',').slice(1).join(',')),
      };
    });
    assert.ok(t.names.includes(markup), `the name as typed, as text: ${JSON.stringify(t.names)}`);
    assert.ok(t.names.includes(formula));
    assert.equal(t.injected, 0);
    assert.equal(t.pwned, null);
    const lines = t.csv.replace(/^\ufeff/, '').split('\r\n');
    assert.ok(lines.some((l) => l.startsWith(`"'=HYPERLINK(""http://x"",""y"")"`)), `the formula is quoted and prefixed: ${lines.join(' | ')}`);
    assert.ok(!lines.some((l) => l.startsWith('=')), 'no line starts a formula');
  });
});

describe('a class without a server', () => {
  test('the teacher composes a three-lesson assignment in Chinese, and a lock that blocks a lesson is refused', async () => {
    await teacher.goto(`${server.url}teacher.html`);
    await until(teacher, () => document.querySelector('tp-teacher')?.shadowRoot?.querySelector('select[data-teacher="lesson"]'));
    await teacher.locator(`${T} select[data-teacher="lesson"]`).selectOption(LESSONS[0]);
    await teacher.locator(`${T} [data-teacher="lessons"] summary`).click();
    for (const id of LESSONS.slice(1)) await teacher.locator(`${T} input[data-pick="${id}"]`).check();
    assert.deepEqual(await teacher.locator(`${T} ol[data-teacher="order"] li`).evaluateAll((li) => li.map((x) => x.dataset.order)), LESSONS);
    await teacher.locator(`${T} select[data-teacher="student-lang"]`).selectOption('zh-Hans');
    await teacher.locator(`${T} input[data-teacher="train"]`).fill(TRAIN);
    await teacher.locator(`${T} textarea[data-teacher="note"]`).fill(HOSTILE);
    await teacher.locator(`${T} input[data-teacher="example"]`).fill('the cat sat');
    // Served from 127.0.0.1: the page says students cannot open that.
    assert.equal(await teacher.locator(`${T} [data-warn-local]`).count(), 1);
    // It names the command that prints the address to use, and shows one on this page's port.
    assert.match(await teacher.locator(`${T} [data-warn-local]`).textContent(), /cargo xtask serve --lan/);
    assert.equal(await teacher.locator(`${T} [data-warn-local] [data-lan-example]`).textContent(), `http://192.168.1.20:${new URL(server.url).port}/`);
    // The computer's network address typed instead: no warning, and the link leads there.
    const base = teacher.locator(`${T} input[data-teacher="base"]`);
    const own = await base.inputValue();
    await base.fill('http://192.168.1.20:8000/');
    assert.equal(await teacher.locator(`${T} [data-warn-local]`).count(), 0);
    assert.match(await teacher.locator(`${T} textarea[data-teacher="link"]`).inputValue(), /^http:\/\/192\.168\.1\.20:8000\/#lesson=/);
    await base.fill(own);
    assert.equal(await teacher.locator(`${T} [data-warn-local]`).count(), 1);
    // Locking the scale switch blocks "scaled-dot": refused, and no link is made.
    await teacher.locator(`${T} input[data-allow="scale"]`).uncheck();
    assert.equal(await teacher.locator(`${T} [data-refuse-lock="scaled-dot"]`).count(), 1);
    assert.equal(await teacher.locator(`${T} textarea[data-teacher="link"]`).inputValue(), '');
    assert.equal(await teacher.locator(`${T} canvas[data-teacher="qr"]`).count(), 0);
    await teacher.locator(`${T} input[data-allow="scale"]`).check();
    assert.equal(await teacher.locator(`${T} [data-refuse-lock]`).count(), 0);
    link = await teacher.locator(`${T} textarea[data-teacher="link"]`).inputValue();
    const h = new URLSearchParams(new URL(link).hash.slice(1));
    assert.equal(h.get('lesson'), LESSONS[0]);
    assert.equal(h.get('lessons'), LESSONS.join(','));
    assert.equal(h.get('lang'), 'zh-Hans');
    assert.equal(h.get('train'), TRAIN);
    assert.equal(h.get('note'), HOSTILE);
    await teacher.screenshot({ path: join(artifacts, 'classroom-teacher.png'), fullPage: true });
  });

  test('the link opens on the assignment’s lessons in Chinese, with the instruction drawn as text', async () => {
    student = await browser.context.newPage();
    student.on('pageerror', (e) => errors.push(`student: ${e}`));
    await student.goto(link);
    await ready(student);
    const s = await student.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      const a = el.shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('tp-assignment').shadowRoot;
      return {
        lang: document.documentElement.lang,
        el: el.getAttribute('lang'),
        lesson: el.st.lesson,
        assigned: [...a.querySelectorAll('[data-assigned]')].map((li) => li.dataset.assigned),
        note: a.querySelector('[data-note]')?.textContent ?? '',
        injected: a.querySelectorAll('[data-note] img, [data-note] script').length,
        pwned: window.__pwned ?? null,
        title: el.shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('h2').textContent,
      };
    });
    assert.equal(s.lesson, LESSONS[0]);
    assert.equal(s.el, 'zh-Hans');
    assert.deepEqual(s.assigned, LESSONS);
    assert.match(s.title, /[\u4e00-\u9fff]/);
    assert.ok(s.note.includes(HOSTILE), 'the instruction is shown, as text');
    assert.equal(s.injected, 0);
    assert.equal(s.pwned, null);
  });

  test('a student answers the three lessons, trains the lab run and gets a completion code', { timeout: 300000 }, async () => {
    await student.locator(`${P} tp-assignment input[data-student-name]`).fill('Ana 12');
    await Promise.all([student.waitForEvent('load'), student.locator(`${P} tp-assignment form[data-student-form] button`).click()]);
    await ready(student);
    assert.equal(await student.locator(`${P} tp-assignment [data-student-shown]`).textContent(), 'Ana 12');
    for (const [i, id] of LESSONS.entries()) {
      given[id] = await doLesson(student, id, id === 'scaled-dot');
      if (i < LESSONS.length - 1) await student.locator(`${P} tp-lesson [data-tour="next"]`).click();
    }
    // The assigned run (copy, a few steps), through the scripting API.
    const run = await student.evaluate(async (train) => {
      const el = document.querySelector('transformer-playground');
      const q = Object.fromEntries(new URLSearchParams(train));
      const h = el.train({ task: q.task, steps: Number(q.steps), batch: Number(q.batch), eval_every: Number(q.eval_every) });
      await h.done;
      const r = el.runs.find((x) => x.id === h.id);
      const e = r.log.lastEval();
      return { metric: e.metric, loss: e.loss, steps: r.log.step(r.log.length - 1) };
    }, TRAIN);
    await until(student, (m) => {
      const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('tp-assignment').shadowRoot;
      return c.querySelector('[data-completion-code]') && !c.querySelector('[data-run-missing]');
    });
    // The panel reads the runs again every second: the code of the finished run.
    await student.waitForTimeout(1200);
    code = await student.locator(`${P} tp-assignment [data-completion-code]`).textContent();
    given.run = run;
    assert.match(code, /^TP[0-9A-Z]+$/);
    const qr = await student.evaluate(() => Number(document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('tp-assignment').shadowRoot.querySelector('canvas[data-completion-qr]').dataset.modules));
    console.log(`completion code: ${code.length} characters, QR ${qr}×${qr} modules`);
    assert.ok(qr >= 21 && qr <= 41, `QR of ${qr} modules`);
    await student.screenshot({ path: join(artifacts, 'classroom-student.png') });
    // The QR code as a phone would photograph it off the screen (as drawn, scaled by the page).
    given.qrPhoto = await student.locator(`${P} tp-assignment canvas[data-completion-qr]`).screenshot();
  });

  test('a second student on the same browser starts afresh; the first one’s answers stay', async () => {
    await Promise.all([student.waitForEvent('load'), student.locator(`${P} tp-assignment [data-student-new]`).click()]);
    await ready(student);
    await student.locator(`${P} tp-assignment input[data-student-name]`).fill('Bo 7');
    await Promise.all([student.waitForEvent('load'), student.locator(`${P} tp-assignment form[data-student-form] button`).click()]);
    await ready(student);
    const s = await student.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      const a = el.shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('tp-assignment').shadowRoot;
      return {
        marks: [...a.querySelectorAll('[data-mark]')].map((m) => m.dataset.mark),
        runs: el.runs.length,
        ana: JSON.parse(localStorage.getItem(`tplay-lessons@${encodeURIComponent('Ana 12')}`) ?? 'null'),
        step: el.shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('.try').dataset.step,
      };
    });
    assert.deepEqual(s.marks, ['open', 'open', 'open']);
    assert.equal(s.runs, 0, 'the first student’s run is not the second one’s');
    assert.equal(s.step, 'todo');
    assert.deepEqual(Object.keys(s.ana.answers).sort(), [...LESSONS].sort());
    // Reset asks first; "keep" keeps.
    await student.locator(`${P} tp-assignment [data-student-reset]`).click();
    await student.locator(`${P} tp-assignment [data-student-reset-no]`).click();
    assert.ok(await student.evaluate(() => localStorage.getItem(`tplay-lessons@${encodeURIComponent('Ana 12')}`) !== null));
    // "Erase them" erases the student working now, and no one else: Bo's answer goes, Ana's answers and lab run stay.
    const kept = () =>
      student.evaluate(async () => {
        const keys = await new Promise((ok, no) => {
          const rq = indexedDB.open('tplay-lab');
          rq.onerror = () => no(rq.error);
          rq.onsuccess = () => {
            const db = rq.result;
            const k = db.transaction('runs').objectStore('runs').getAllKeys();
            k.onsuccess = () => {
              db.close();
              ok(k.result.map(String));
            };
            k.onerror = () => no(k.error);
          };
        });
        return {
          ana: localStorage.getItem(`tplay-lessons@${encodeURIComponent('Ana 12')}`),
          bo: localStorage.getItem(`tplay-lessons@${encodeURIComponent('Bo 7')}`),
          anaRuns: keys.filter((k) => k.startsWith(`@${encodeURIComponent('Ana 12')}/`)).length,
        };
      });
    await student.evaluate(() => localStorage.setItem(`tplay-lessons@${encodeURIComponent('Bo 7')}`, JSON.stringify({ done: [], last: 'causal-mask', answers: { 'causal-mask': { answer: '1', right: false, tries: 1 } } })));
    const was = await kept();
    assert.ok(was.anaRuns > 0, 'Ana’s run is kept in IndexedDB under her name');
    await student.locator(`${P} tp-assignment [data-student-reset]`).click();
    await Promise.all([student.waitForEvent('load'), student.locator(`${P} tp-assignment [data-student-reset-yes]`).click()]);
    await ready(student);
    const now = await kept();
    // (The page writes Bo's key again as it reopens, with the lesson open and no answer.)
    assert.deepEqual(JSON.parse(now.bo ?? '{}').answers ?? {}, {}, 'Bo’s answers are erased');
    assert.equal(now.ana, was.ana, 'Ana’s answers are untouched');
    assert.equal(now.anaRuns, was.anaRuns, 'Ana’s lab run is untouched');
  });

  test('the teacher reads the code into the class table, and refuses an edited one', async () => {
    // First the QR photo alone: the same student's row.
    await teacher.locator(`${T} input[data-qr-file]`).setInputFiles({ name: 'ana.png', mimeType: 'image/png', buffer: given.qrPhoto });
    await until(teacher, () => document.querySelector('tp-teacher').shadowRoot.querySelectorAll('tr[data-row]').length === 1);
    assert.equal(await teacher.locator(`${T} tr[data-row]`).getAttribute('data-row'), 'Ana 12');
    assert.equal(await teacher.locator(`${T} [data-rejected]`).count(), 0);
    // One character of the answers changed: the checksum no longer matches.
    const i = code.length - 12;
    const edited = code.slice(0, i) + (code[i] === 'A' ? 'B' : 'A') + code.slice(i + 1);
    await teacher.locator(`${T} textarea[data-codes]`).fill(`${code}\n${edited}\nTPXYZ`);
    await teacher.locator(`${T} button[data-read-codes]`).click();
    const t = await teacher.evaluate(() => {
      const r = document.querySelector('tp-teacher').shadowRoot;
      return {
        rows: [...r.querySelectorAll('tr[data-row]')].map((tr) => ({
          student: tr.dataset.row,
          right: [...tr.querySelectorAll('td[data-lesson]')].map((td) => [td.dataset.lesson, td.dataset.right, td.querySelector('code')?.textContent]),
          run: tr.querySelector('td[data-run]').textContent,
        })),
        why: [...r.querySelectorAll('[data-rejected] [data-why]')].map((x) => x.textContent),
        csv: decodeURIComponent(r.querySelector('a[data-csv]').getAttribute('href').split(',').slice(1).join(',')),
      };
    });
    assert.equal(t.rows.length, 1);
    assert.equal(t.rows[0].student, 'Ana 12');
    assert.deepEqual(
      t.rows[0].right.map(([id, r]) => [id, r]),
      LESSONS.map((id) => [id, given[id][0] === given[id][1] ? 'yes' : 'no']),
    );
    assert.deepEqual(t.rows[0].right.map(([id]) => id), LESSONS);
    assert.equal(t.rows[0].right[1][1], 'no', 'the wrong answer is marked wrong');
    assert.ok(t.rows[0].run.includes(given.run.metric.toFixed(4)), `${t.rows[0].run} has metric ${given.run.metric}`);
    assert.ok(t.rows[0].run.includes(String(given.run.steps)));
    assert.equal(t.why.length, 2);
    assert.match(t.why[0], /校验|checksum|edited|mistyped|修改/);
    assert.match(t.csv, /^\ufeff?student,/);
    assert.ok(t.csv.includes('Ana 12'));
    await teacher.screenshot({ path: join(artifacts, 'classroom-table.png'), fullPage: true });
    // Another assignment (another instruction): the same code is refused, with that reason.
    const note = await teacher.locator(`${T} textarea[data-teacher="note"]`).inputValue();
    await teacher.locator(`${T} textarea[data-teacher="note"]`).fill(`${note} (2)`);
    await teacher.locator(`${T} textarea[data-codes]`).fill(code);
    await teacher.locator(`${T} button[data-read-codes]`).click();
    assert.match(await teacher.locator(`${T} [data-rejected] [data-why]`).textContent(), /another assignment|另一份作业/);
    await teacher.locator(`${T} textarea[data-teacher="note"]`).fill(note);
  });

  test('the answer key is measured by the engine, and agrees with the students’ pages', { timeout: 180000 }, async () => {
    await teacher.locator(`${T} button[data-measure]`).click();
    await until(teacher, () => document.querySelectorAll('tp-teacher').length && document.querySelector('tp-teacher').shadowRoot.querySelectorAll('[data-expect]').length === 3 && !document.querySelector('tp-teacher').measuring, undefined, 150000);
    const key = await teacher.evaluate(() => Object.fromEntries([...document.querySelector('tp-teacher').shadowRoot.querySelectorAll('[data-expect]')].map((p) => [p.dataset.expect, p.textContent])));
    // The option the student's page judged right (worked out by the test from the engine's numbers) is the one the key names.
    for (const id of LESSONS) {
      const options = await teacher.evaluate((id) => [...document.querySelector('tp-teacher').shadowRoot.querySelectorAll(`[data-key="${id}"] li`)].map((li) => li.textContent.trim()), id);
      assert.ok(key[id].includes(options[given[id][0]]), `${id}: key “${key[id]}”, right option “${options[given[id][0]]}”`);
    }
  });

  test('the worksheet prints', async () => {
    await teacher.emulateMedia({ media: 'print' });
    await teacher.screenshot({ path: join(artifacts, 'classroom-worksheet.png'), fullPage: true });
    const shown = await teacher.evaluate(() => {
      const r = document.querySelector('tp-teacher').shadowRoot;
      return { sheet: getComputedStyle(r.querySelector('[data-worksheet]')).display, screen: getComputedStyle(r.querySelector('.screen')).display, sections: r.querySelectorAll('[data-worksheet] section').length };
    });
    assert.deepEqual(shown, { sheet: 'block', screen: 'none', sections: 3 });
    // The PDF as the browser prints it (print media: a PDF made under screen media would be the whole teacher page).
    const pdf = await teacher.pdf({ format: 'A4', path: join(artifacts, 'classroom-worksheet.pdf') });
    await teacher.emulateMedia({ media: 'screen' });
    const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;
    console.log(`worksheet PDF: ${pdf.length} bytes, ${pages} pages (artifacts/classroom-worksheet.pdf)`);
    assert.ok(pdf.length > 1000 && pdf.subarray(0, 5).toString() === '%PDF-', `a PDF of ${pdf.length} bytes`);
    // Three lessons with their blanks fill two A4 pages; the whole teacher page (forms, table, key) fills five.
    assert.ok(pages >= 1 && pages <= 3, `the worksheet alone: ${pages} pages`);
  });

  for (const lang of ['en', 'zh-Hans']) {
    test(`axe finds nothing on the teacher page, and it fits a phone (${lang})`, async () => {
      await teacher.locator(`${T} select[data-teacher="ui-lang"]`).selectOption(lang);
      await until(teacher, (lang) => document.documentElement.lang === lang && (lang === 'en') !== /[\u4e00-\u9fff]/.test(document.querySelector('tp-teacher').shadowRoot.querySelector('h1').textContent), lang);
      await teacher.evaluate(AXE);
      // Every violation, whatever its impact (the class table and the answer key are drawn by now).
      const bad = await teacher.evaluate(async () => {
        const res = await window.axe.run(document, { resultTypes: ['violations'] });
        return res.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' >> ')) }));
      });
      assert.deepEqual(bad, []);
      // A phone's width: nothing wider than the screen (the lesson titles in the selects are long in English).
      await teacher.setViewportSize({ width: 390, height: 844 });
      try {
        const w = await teacher.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(w <= 390, `the teacher page is ${w} px wide on a 390 px screen`);
        await teacher.screenshot({ path: join(artifacts, `classroom-teacher-390-${lang}.png`), fullPage: true });
      } finally {
        await teacher.setViewportSize({ width: 1280, height: 900 });
      }
    });
  }
});

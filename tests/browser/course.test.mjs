// The course in headless Chromium, under the page's Content-Security-Policy: the lessons for
// the seed notes' questions (www/src/lessons/seed-lessons.ts) each opened by its link in
// English and in Simplified Chinese, its experiment done through the page's own controls
// as a learner would, and the step observed as done by the page, then answered wrong and
// right (in Chinese with no English word left on the page after either); the table of contents in
// the seed's order, grouped by its parts; every lesson naming the seed question it answers
// (www/src/lessons/course.ts). Screenshots of two lessons land in artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, englishLeft, launch, open, serve } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve(undefined, { csp: true });
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
  assert.deepEqual(server?.cspReports ?? [], []);
});

const P = 'transformer-playground';

/** The whole course, in the seed's order: the big picture, Q/K/V → scaled dot → heads, …, the recap. */
const COURSE = [
  ['big-picture', ['new-token']],
  ['attention', ['qkv', 'shared-qk', 'scaled-dot', 'dot-vs-additive', 'padding-mask']],
  ['heads', ['heads', 'head-dim']],
  ['blocks', ['block-anatomy', 'attention-sites', 'causal-mask']],
  ['parallel', ['parallel', 'kv-cache', 'time']],
  ['positions', ['embedding-scale', 'order', 'extrapolation', 'positions']],
  ['norms', ['residual', 'norms', 'pre-post-ln', 'batch-norm', 'residual-and-norm']],
  ['ffn', ['ffn']],
  ['training', ['noam-adam', 'dropout-where', 'dropout', 'no-leak']],
  ['architectures', ['architectures', 'which-architecture']],
  ['generation', ['decoding']],
  ['conclusions', ['recap']],
];
const ORDER = COURSE.flatMap(([, ids]) => ids);

/** The lesson panel's state, read in the page. */
function lesson(page) {
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    const l = el.shadowRoot.querySelector('tp-lesson')?.shadowRoot;
    return {
      st: el.st,
      step: l?.querySelector('.try')?.dataset.step ?? null,
      title: l?.querySelector('h2')?.textContent ?? null,
      question: l?.querySelector('[data-seed-question]')?.textContent.trim() ?? '',
      notice: l?.querySelector('[data-notice]')?.textContent ?? '',
      progress: JSON.parse(localStorage.getItem('tplay-lessons') ?? 'null'),
    };
  });
}

function until(page, fn, arg, timeout = 60000) {
  return page.waitForFunction(fn, arg, { timeout, polling: 100 });
}

/**
 * The lesson's check decided on the page now: the right option's index or the expected
 * number, from the engine's numbers on the loaded model (null while they are not measured).
 */
function decided(page) {
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    const l = el.shadowRoot.querySelector('tp-lesson').lesson;
    const ctx = { st: el.store.st, store: el.store, view: (tag) => el.shadowRoot.querySelector(tag), changed: () => false };
    const c = l.check;
    return c.kind === 'choice' ? { kind: c.kind, value: c.right(ctx), options: c.options().length } : { kind: c.kind, value: c.expected(ctx) };
  });
}

const isDone = () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('.try')?.dataset.step === 'done';

/** Choose an option of the n-th model select of the settings (0: model, 1: position encoding, 2: design). */
async function pick(page, n, file) {
  await page.locator(`${P} tp-controls select[data-setting="model"]`).nth(n).selectOption(file);
}

/** Wait until a shown view's element has a property set (a measured result). */
function viewHas(page, tag, prop) {
  return until(
    page,
    ([tag, prop]) => {
      const v = document.querySelector('transformer-playground').shadowRoot.querySelector(tag);
      return v && v[prop] !== null && v[prop] !== undefined;
    },
    [tag, prop],
    120000,
  );
}

/** Each new lesson's experiment, done through the page's controls. */
const EXPERIMENTS = {
  'new-token': async (page) => page.locator(`${P} tp-generation .buttons button`).nth(1).click(),
  'shared-qk': async (page) => pick(page, 0, 'grammar-sinusoidal.safetensors'),
  'head-dim': async (page, lang) => {
    // The lab comes into view (it loads when seen) with the experiment the lesson links to chosen.
    await page.locator(`${P} tp-lab`).scrollIntoViewIfNeeded();
    await until(page, () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.form?.task === 'sort');
    const lab = await page.evaluate(() => {
      const l = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab');
      return { preset: l.shadowRoot.querySelector('select#preset').value, heads: l.form.n_heads, d: l.form.d_model };
    });
    assert.deepEqual({ preset: lab.preset, heads: lab.heads }, { preset: 'heads', heads: 1 }, 'the lab opens on the one-head run of the heads experiment');
    if (lang === 'zh-Hans') {
      // Both runs with one press, as the lesson asks.
      await page.locator(`${P} tp-lab [data-action="train-preset"]`).click();
      return;
    }
    // The other way the lesson names: the form's run, then the same run with four heads.
    await page.locator(`${P} tp-lab button[data-action="train"]`).click();
    await page.locator(`${P} tp-lab [data-field="n_heads"] input`).fill('4');
    await page.locator(`${P} tp-lab [data-field="n_heads"] input`).dispatchEvent('change');
    await page.locator(`${P} tp-lab button[data-action="train"]`).click();
    // A short run with four heads finishes first, but it differs in more than the heads: no comparison.
    await page.evaluate(() => document.querySelector('transformer-playground').train({ task: 'sort', n_heads: 4, steps: 10, eval_every: 10 }).done);
    await page.waitForTimeout(1200);
    const now = await page.evaluate(() => {
      const el = document.querySelector('transformer-playground');
      return { step: el.shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('.try')?.dataset.step, pending: el.runs.filter((r) => r.settings.steps > 10 && r.status !== 'done').length };
    });
    assert.ok(now.pending > 0, 'the runs of the experiment are still training');
    assert.equal(now.step, 'todo', 'before both runs have finished (a finished pair that differs in more than the heads aside) the lesson is not done');
    assert.equal((await decided(page)).value, null, 'nothing to judge an answer against before both runs');
  },
  'block-anatomy': async (page) => {
    await until(page, () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-architecture')?.shadowRoot.querySelector('g.blk[data-kind="norm"]'));
    await page.locator(`${P} tp-architecture g.blk[data-kind="norm"]`).first().click();
  },
  'residual-and-norm': async (page) => pick(page, 2, 'reverse-no-residual.safetensors'),
  'batch-norm': async (page) => page.locator(`${P} tp-controls input[data-setting="mode"][value="train"]`).check(),
  'dropout-where': async (page) => {
    await viewHas(page, 'tp-dropout', 'data');
    await page.locator(`${P} tp-dropout tbody tr button`).nth(1).click();
  },
  // In Chinese the lesson starts on the Chinese grammar model (www/src/lessons/zh-presets.ts): the number model is the Chinese numerals one.
  'which-architecture': async (page, lang) => pick(page, 0, lang === 'zh-Hans' ? 'zh-numerals.safetensors' : 'translate.safetensors'),
  recap: async (page) => page.locator(`${P} tp-generation .buttons button.play`).click(),
};

/** Read a value of the page's store (a function of the store). */
function store(page, fn) {
  return page.evaluate(`(${fn})(document.querySelector('transformer-playground').store)`);
}

/**
 * After the experiment: what the engine says, and the right answer to the lesson's question
 * worked out here from the engine's own numbers (the store, the view's data, the drawn
 * table), never from the lesson's code: `{ choice }` (an option's index) or `{ number }`.
 * The lesson's own check, decided on the page, must agree with it.
 */
const AFTER = {
  'new-token': async (page) => {
    const s = await store(page, (s) => ({ n: s.gen.generated.length, strategy: s.st.strategy, token: s.gen.step.step.token, best: s.gen.step.step.candidates[0].id }));
    assert.equal(s.n, 1);
    // Greedy keeps the most likely token: the engine's candidates are sorted, most likely first.
    assert.equal(s.strategy, 'greedy');
    assert.equal(s.token, s.best);
    // Options: 0 the most likely token, 1 a less likely one.
    const right = { choice: s.token === s.best ? 0 : 1 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 2 });
    return right;
  },
  'shared-qk': async (page) => {
    const gaps = await store(page, (s) => Array.from(s.trace.qk_gap.data));
    assert.ok(gaps.some((g) => g > 0), `separate W_Q and W_K: some |q − k| is not 0 (${gaps})`);
    // Options: 0 every |q − k| is still 0, 1 queries and keys differ.
    const right = { choice: gaps.every((g) => g === 0) ? 0 : 1 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 2 });
    return right;
  },
  'head-dim': async (page, t) => {
    // The lab's two finished runs of the experiment, as the element lists them: the held-out loss the core measured at the end of each.
    const pair = await headRuns(page);
    for (const [h, r] of [[1, pair.one], [4, pair.four]])
      t.diagnostic(`${h} head(s), d_model ${r.d}: held-out loss ${r.loss.toFixed(3)}, metric ${(100 * r.metric).toFixed(1)} %, ${r.steps} steps in ${(r.ms / 1000).toFixed(1)} s`);
    assert.equal(pair.one.d, pair.four.d, 'the same d_model');
    assert.deepEqual(pair.one.rest, pair.four.rest, 'every other setting the same');
    assert.ok(Number.isFinite(pair.one.loss) && Number.isFinite(pair.four.loss));
    // Options: 0 the run with one head, 1 the run with four heads.
    const right = { choice: pair.one.loss < pair.four.loss ? 0 : 1 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 2 });
    return right;
  },
  'block-anatomy': async (page) => {
    assert.equal(await page.locator(`${P} tp-architecture .open[data-open="norm"]`).count(), 1, 'the norm opened on its live numbers');
    // A decoder-only layer: self-attention and the FFN, each with its residual add drawn.
    const adds = await page.locator(`${P} tp-architecture g.blk[data-adds="true"][data-layer="0"]`).count();
    assert.equal(adds, 2);
    assert.deepEqual(await decided(page), { kind: 'number', value: adds });
    return { number: adds };
  },
  'residual-and-norm': async (page) => {
    const plan = await store(page, (s) => s.plan);
    assert.ok(plan.stacks.every((s) => s.sublayers.every((x) => !x.residual)));
    const norms = await page.locator(`${P} tp-architecture g.blk[data-kind="norm"]`).count();
    assert.ok(norms > 0, 'the diagram still draws norms');
    // Options: 0 the norms are still there, 1 they went with the residuals.
    const right = { choice: norms > 0 ? 0 : 1 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 2 });
    return right;
  },
  'batch-norm': async (page) => {
    // The norms view measures once it is on screen, as the learner scrolls to it.
    await page.locator(`${P} tp-norms`).scrollIntoViewIfNeeded();
    await viewHas(page, 'tp-norms', 'data');
    const m = await page.evaluate(() => {
      const d = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-norms').data.models[0];
      return { norm: d.norm, train: d.train_identical, evalSame: d.eval_identical };
    });
    assert.deepEqual(m, { norm: 'batch_norm', train: false, evalSame: true });
    // Options: 0 train mode only, 1 eval mode only, 2 both, 3 neither moves.
    const trainMoves = !m.train;
    const evalMoves = !m.evalSame;
    const right = { choice: trainMoves ? (evalMoves ? 2 : 0) : evalMoves ? 1 : 3 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 4 });
    return right;
  },
  'dropout-where': async (page) => {
    const rows = await page.locator(`${P} tp-dropout tbody tr`).count();
    const paper = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-dropout').data.sites.filter((s) => s.in_paper).length);
    assert.ok(rows > paper && paper > 0, `${paper} of ${rows} places from the paper`);
    assert.deepEqual(await decided(page), { kind: 'number', value: paper });
    return { number: paper };
  },
  'which-architecture': async (page) => {
    const arch = await page.evaluate(() => document.querySelector('transformer-playground').info.arch);
    assert.equal(arch, 'encoder_decoder');
    // Options: 0 continues a text (decoder-only), 1 labels its input (encoder-only), 2 turns one sequence into another.
    const right = { choice: { decoder_only: 0, encoder_only: 1, encoder_decoder: 2 }[arch] };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 3 });
    return right;
  },
  recap: async (page) => {
    const kinds = await store(page, (s) => s.lastForward.masks.filter((m) => m.site === 'decoder_self').map((m) => m.rule.kind));
    assert.deepEqual(kinds, ['causal']);
    // Options: 0 the causal mask hid every later position, 1 attention read the whole text.
    const right = { choice: kinds[0] === 'causal' ? 0 : 1 };
    assert.deepEqual(await decided(page), { kind: 'choice', value: right.choice, options: 2 });
    return right;
  },
};

/** Once the answer is right, what to notice quotes the engine's counts (checked in English, where its words are known). */
const NOTICE = {
  'head-dim': async (page) => {
    const { one, four } = await headRuns(page);
    const notice = (await lesson(page)).notice;
    assert.ok(notice.includes(`d_model = ${one.d}. With 1 head the held-out loss ended at ${one.loss.toFixed(3)}`), notice);
    assert.ok(notice.includes(`with 4 heads of ${one.d / 4} dimensions, at ${four.loss.toFixed(3)}`), notice);
    assert.ok(notice.includes(four.loss < one.loss ? 'cut into slices did better' : 'single wide head did at least as well'), notice);
  },
  'dropout-where': async (page) => {
    const rows = await page.locator(`${P} tp-dropout tbody tr`).count();
    const paper = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-dropout').data.sites.filter((s) => s.in_paper).length);
    assert.match((await lesson(page)).notice, new RegExp(`dropout in ${rows} places, ${paper} of them`));
  },
};

/**
 * The latest finished runs with one and with four heads in the lab (the element's list of
 * runs): d_model, every other setting, and the held-out loss of each run's last evaluation.
 */
function headRuns(page) {
  return page.evaluate(() => {
    const runs = document.querySelector('transformer-playground').runs.filter((r) => r.status === 'done').sort((a, b) => b.created_at - a.created_at);
    const of = (h) => {
      const r = runs.find((x) => x.settings.n_heads === h && x.settings.steps > 10);
      const { n_heads, ...rest } = r.settings;
      const e = r.log.lastEval();
      return { d: r.settings.d_model, rest: JSON.stringify(Object.entries(rest).sort()), loss: e.loss, metric: e.metric, steps: r.settings.steps, ms: r.elapsed_ms };
    };
    return { one: of(1), four: of(4) };
  });
}

/** Forget the lab's runs, from a page without the lab (the browser context, and so its stored runs, is shared by the tests). */
async function forgetRuns() {
  const { page } = await open(browser.context, server.url, 'views=controls&play=0');
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.runsRestored;
    for (const r of el.runs) await el.deleteRun(r.id);
  });
  await page.close();
}

/** The lesson's answer box and verdict, and the progress kept for lesson `id`. */
function answerState(page, id) {
  return page.evaluate((id) => {
    const root = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot;
    const p = JSON.parse(localStorage.getItem('tplay-lessons') ?? 'null');
    return {
      box: root.querySelector('[data-answer]')?.dataset.answer ?? null,
      options: root.querySelectorAll('[data-answer] [data-option]').length,
      verdict: root.querySelector('[data-verdict]')?.dataset.verdict ?? null,
      hint: root.querySelector('[data-hint]')?.textContent ?? '',
      notice: root.querySelector('[data-notice]')?.textContent ?? null,
      done: !!p?.done?.includes(id),
      answer: p?.answers?.[id] ?? null,
    };
  }, id);
}

/** Commit an answer through the answer box, as a learner would: an option chosen, or a number typed. */
async function giveAnswer(page, a) {
  const box = page.locator(`${P} tp-lesson [data-answer]`);
  if ('choice' in a) await box.locator(`[data-option="${a.choice}"]`).check();
  else await box.locator('[data-answer-input]').fill(String(a.number));
  await box.locator('[data-check]').click();
}

const answerIs = (v) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-answer]')?.dataset.answer === v;
const verdictIs = (v) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson').shadowRoot.querySelector('[data-verdict]')?.dataset.verdict === v;

const NEW = Object.keys(EXPERIMENTS);
const SHOTS = ['new-token', 'block-anatomy'];

describe('the course follows the seed notes', () => {
  test('the_table_of_contents_lists_every_lesson_in_the_seed_order_grouped_by_its_parts', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lesson=new-token');
    await page.locator(`${P} tp-lesson [data-tour="toc"]`).click();
    const toc = await page.evaluate(async () => {
      const l = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson');
      await l.updateComplete;
      return [...l.shadowRoot.querySelectorAll('div.toc .part')].map((p) => [
        p.dataset.part,
        p.querySelector('h3')?.textContent.trim() ?? '',
        [...p.querySelectorAll('ol.toc li')].map((li) => li.dataset.lesson),
      ]);
    });
    assert.deepEqual(
      toc.map(([part, , ids]) => [part, ids]),
      COURSE,
    );
    assert.ok(toc.every(([, title]) => title.length > 3), 'every part has a title');
    // Previous / next walk the same order: from the first lesson to the second and back.
    assert.equal(await page.locator(`${P} tp-lesson [data-tour="prev"]`).isDisabled(), true);
    await page.locator(`${P} tp-lesson [data-tour="next"]`).click();
    await until(page, (id) => document.querySelector('transformer-playground').st.lesson === id, ORDER[1]);
    const count = await page.locator(`${P} tp-lesson .count`).textContent();
    assert.match(count, new RegExp(`\\b2\\b.*\\b${ORDER.length}\\b`), count);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('start_the_course_without_progress_opens_the_big_picture_first', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0');
    await page.evaluate(() => localStorage.removeItem('tplay-lessons'));
    await page.locator(`${P} .bar button[data-tour="start"]`).click();
    await until(page, (id) => document.querySelector('transformer-playground').st.lesson === id, ORDER[0]);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_lesson_link_followed_while_the_page_rewrites_its_own_link_is_not_lost', async () => {
    // The page keeps its link up to date with history.replaceState (after a model loads, say).
    // When that write lands between the learner's following a link and the hashchange event,
    // the link followed is still the one that opens.
    const { page, errors } = await open(browser.context, server.url, 'lesson=new-token');
    await page.evaluate(() => {
      const was = location.hash;
      location.hash = 'lesson=shared-qk';
      history.replaceState(null, '', `${location.pathname}${location.search}${was}`);
    });
    await until(page, () => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson')?.shadowRoot?.querySelector('section')?.dataset.lesson === 'shared-qk', undefined, 10000);
    assert.match(await page.evaluate(() => location.hash), /lesson=shared-qk/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  for (const lang of ['en', 'zh-Hans']) {
    test(`every_lesson_names_the_seed_question_it_answers (${lang})`, async () => {
      const { page, errors } = await open(browser.context, server.url, `lesson=new-token&lang=${lang}`);
      const seen = new Map();
      for (const id of ORDER) {
        await page.evaluate(([id, lang]) => (location.hash = `lesson=${id}&lang=${lang}`), [id, lang]);
        await until(page, (id) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson')?.shadowRoot?.querySelector('section')?.dataset.lesson === id, id);
        const q = (await lesson(page)).question;
        assert.ok(q.length > 10, `${id}: the lesson names its seed question`);
        if (lang === 'zh-Hans') assert.match(q, /[\u4e00-\u9fff]/, `${id}: the question is in Chinese: ${q}`);
        assert.ok(!seen.has(q), `${id} asks the same question as ${seen.get(q)}`);
        seen.set(q, id);
      }
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('the lessons for the seed’s open questions, in both languages', () => {
  for (const lang of ['en', 'zh-Hans']) {
    for (const id of NEW) {
      test(`${id} (${lang}): the step completes when the learner does the experiment`, async (t) => {
        // The lab's runs are kept in the shared context's storage: forget those of another test before the lesson can see them.
        if (id === 'head-dim') await forgetRuns();
        const { page, errors } = await open(browser.context, server.url, `lesson=${id}&lang=${lang}`);
        try {
          // The browser context is shared: forget what another test answered.
          await page.evaluate(() => localStorage.removeItem('tplay-lessons'));
          const before = await lesson(page);
          assert.equal(before.st.lesson, id);
          assert.ok(before.title && before.title.length > 3);
          if (lang === 'zh-Hans') {
            assert.match(before.title, /[\u4e00-\u9fff]/, 'the lesson title is in Chinese');
            assert.match(before.question, /[\u4e00-\u9fff]/, 'the seed question is in Chinese');
          }
          // Let the lesson's twice-a-second check run on the preset: opening is not doing.
          await page.waitForTimeout(1500);
          assert.equal((await lesson(page)).step, 'todo', 'the step must not be done before the experiment');
          await EXPERIMENTS[id](page, lang);
          await until(page, isDone, undefined, 120000);
          // The experiment alone does not finish the lesson: its question waits for an answer.
          let a = await answerState(page, id);
          assert.ok(['open', 'measuring'].includes(a.box), `the answer box appears once the experiment is done (${a.box})`);
          assert.equal(a.notice, null, 'what to notice waits for the answer');
          assert.equal(a.done, false, 'the lesson is not done before the answer');
          // The right answer, from the engine's numbers (the views it needs measured, as the learner reads them) …
          const right = await AFTER[id](page, t);
          // … and the page has measured what the answer is judged against.
          await until(page, answerIs, 'open', 120000);
          a = await answerState(page, id);
          // A wrong answer first: another option, or a number far from the engine's.
          const wrong = 'choice' in right ? { choice: (right.choice + 1) % a.options } : { number: right.number === 0 ? 1 : right.number * 3 + 1 };
          await giveAnswer(page, wrong);
          await until(page, verdictIs, 'wrong');
          a = await answerState(page, id);
          assert.ok(a.hint.length > 10, `a wrong answer gets a hint: ${a.hint}`);
          if (lang === 'zh-Hans') assert.match(a.hint, /[\u4e00-\u9fff]/, 'the hint is in Chinese');
          assert.equal(a.notice, null, 'no notice after a wrong answer');
          assert.equal(a.done, false, 'a wrong answer does not finish the lesson');
          assert.deepEqual({ right: a.answer?.right, tries: a.answer?.tries }, { right: false, tries: 1 });
          // In Chinese the hint, and everything the experiment changed on the page, is Chinese.
          const english = lang === 'zh-Hans' ? (await englishLeft(page)).map((l) => `after a wrong answer — ${l}`) : [];
          // Then the right one.
          await giveAnswer(page, right);
          await until(page, verdictIs, 'right');
          a = await answerState(page, id);
          assert.equal(a.box, 'right');
          assert.ok(a.done, 'the progress keeps the lesson as done');
          assert.deepEqual({ right: a.answer?.right, tries: a.answer?.tries }, { right: true, tries: 2 }, 'the progress keeps the answer');
          if (lang === 'en') await NOTICE[id]?.(page);
          const after = await lesson(page);
          assert.ok(after.notice.length > 20, 'what to notice appears once the answer is right');
          if (lang === 'zh-Hans') assert.match(after.notice, /[\u4e00-\u9fff]/, 'the notice is in Chinese');
          assert.doesNotMatch(after.notice, /undefined|NaN/);
          // … and so is what to notice, with the engine's numbers in it.
          if (lang === 'zh-Hans') english.push(...(await englishLeft(page)).map((l) => `after the right answer — ${l}`));
          assert.deepEqual(english, [], 'no English word left on the Chinese lesson once it is done');
          if (SHOTS.includes(id)) await page.locator(P).screenshot({ path: join(artifacts, `course-${id}-${lang}.png`) });
          assert.deepEqual(errors, []);
        } finally {
          await page.close();
        }
      });
    }
  }
});

describe('completion needs the experiment itself', () => {
  test('shared_qk_is_not_done_by_the_tied_model_it_opens_on_nor_by_another_setting', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lesson=shared-qk');
    await page.locator(`${P} tp-controls input[data-setting="causal"]`).uncheck();
    await page.waitForTimeout(1500);
    assert.equal((await lesson(page)).step, 'todo');
    // On the tied model the same question has the other answer: every |q − k| is 0.
    await page.locator(`${P} tp-controls input[data-setting="causal"]`).check();
    await until(page, () => document.querySelector('transformer-playground').store.trace?.qk_gap);
    assert.ok((await store(page, (s) => Array.from(s.trace.qk_gap.data))).every((g) => g === 0));
    assert.deepEqual(await decided(page), { kind: 'choice', value: 0, options: 2 });
    await pick(page, 0, 'grammar-sinusoidal.safetensors');
    await until(page, isDone);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('batch_norm_is_not_done_by_train_mode_on_a_layernorm_model', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lesson=batch-norm');
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ model: 'reverse.safetensors' }));
    await until(page, () => document.querySelector('transformer-playground').info?.norm === 'pre_ln');
    await page.locator(`${P} tp-controls input[data-setting="mode"][value="train"]`).check();
    await until(page, () => document.querySelector('transformer-playground').lastForward?.train_note != null);
    await page.waitForTimeout(1500);
    assert.equal((await lesson(page)).step, 'todo');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

// The front door (issue 25): a start for everyone, and nothing lost without being asked.
// - The browser's language picks the start: a zh-CN browser opens in Chinese on the Chinese
//   twin of the default model with its Chinese prompt, and nothing English is left on the
//   first screen (the page's heading, the element, the offline line); an en-US browser
//   opens on the English default.
// - Switching the model keeps the prompt when the new vocabulary spells it (as the engine's
//   tokenizer says), and a note names what it cannot spell otherwise.
// - A switch that restarts the generation says so and keeps the previous output beside the
//   new one (before | after, each labelled with its setting), equal to what was generated
//   before; the output distribution and the saturation table show the two side by side.
// - A lesson closed and reopened returns where it was; the lab left and drawn again keeps
//   its form and selection.
// - The backend control and the badge say the same backend, the one the engine reports.
// Screenshots land in tests/browser/artifacts/ (front-door-*.png).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { englishLeft, launch, open, serve, shot } from './harness.mjs';

const P = 'transformer-playground';

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.close();
});

/** The playground's state, read through its scripting API. */
function state(page) {
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    return JSON.parse(
      JSON.stringify({ st: el.st, manifest: el.manifest, locale: el.locale, generated: el.generated, done: el.done, promptNote: el.promptNote, genBefore: el.genBefore, backend: el.backendInfo, vocab: el.info?.vocab ?? [] }),
    );
  });
}

/** Wait until the offline line has said the page is kept (the service worker installed). */
async function offlineLine(page) {
  await page.waitForSelector('tp-app-status >> [data-status="offline-ready"]', { timeout: 60000 });
  return page.evaluate(() => {
    const bar = document.querySelector('tp-app-status').shadowRoot.querySelector('.bar');
    return { text: bar.textContent, rect: bar.getBoundingClientRect().toJSON() };
  });
}

/** The Chinese twin of the default model as the manifest describes it: the same task in Chinese, the same positions. */
function chineseTwinOf(manifest) {
  const d = manifest[0];
  return manifest.find((m) => m.task === `zh-${d.task}` && m.pos_encoding === d.pos_encoding && !m.variant && !m.share_qk);
}

describe('a browser whose language is Chinese', () => {
  let browser;
  before(async () => {
    browser = await launch({ locale: 'zh-CN' });
  });
  after(async () => {
    await browser?.close();
  });

  test('a_chinese_browser_starts_in_chinese_on_a_chinese_model_with_no_english_on_the_first_screen', async () => {
    const { page, errors } = await open(browser.context, server.url, '', { viewport: { width: 1440, height: 900 } });
    const s = await state(page);
    assert.equal(await page.evaluate(() => navigator.language), 'zh-CN');
    assert.equal(s.locale, 'zh-Hans');
    const twin = chineseTwinOf(s.manifest);
    assert.ok(twin, 'the manifest has a Chinese twin of the default model');
    assert.equal(s.st.model, twin.file, 'the Chinese twin of the default model');
    assert.equal(s.st.text, twin.default_prompt);
    assert.match(s.st.text, /[\u4e00-\u9fff]/, 'a Chinese prompt');
    // Nothing names a model or a language in the link the page writes.
    assert.doesNotMatch(await page.evaluate(() => location.hash), /model=|lang=/);
    // The offline line, once the page is kept, speaks Chinese too.
    const line = await offlineLine(page);
    assert.match(line.text, /[\u4e00-\u9fff]{4}/, line.text);
    const chinese = await page.evaluate(() => (document.querySelector('transformer-playground').shadowRoot.textContent.match(/[\u4e00-\u9fff]+/g) ?? []).length);
    assert.ok(chinese >= 3, 'the first screen holds Chinese text');
    assert.deepEqual(await englishLeft(page, undefined, { firstScreen: true }), []);
    assert.match(await page.evaluate(() => document.title), /游乐场/);
    await shot(page, 'front-door-zh-CN-first-screen');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_chinese_start_shows_the_models_title_and_description_in_chinese', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=controls,input,generation&play=0');
    const s = await state(page);
    assert.equal(s.st.model, chineseTwinOf(s.manifest).file);
    const shown = await page.evaluate(() => {
      const c = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-controls').shadowRoot;
      return { title: c.querySelector('select[data-setting="model"]').selectedOptions[0].textContent.trim(), description: c.querySelector('[data-model-text]').textContent };
    });
    assert.match(shown.title, /[\u4e00-\u9fff]{2}/, shown.title);
    assert.doesNotMatch(shown.title, /Chinese|grammar/i, shown.title);
    assert.match(shown.description, /[\u4e00-\u9fff]{10}/, shown.description);
    assert.deepEqual(await englishLeft(page, undefined, { firstScreen: true }), []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_link_that_names_a_model_or_a_language_still_wins_in_a_chinese_browser', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lang=en&play=0');
    let s = await state(page);
    assert.equal(s.locale, 'en');
    assert.equal(s.st.model, s.manifest[0].file, 'an English page opens on the English default');
    await page.close();
    const other = await open(browser.context, server.url, 'model=reverse.safetensors&play=0');
    s = await state(other.page);
    assert.equal(s.st.model, 'reverse.safetensors');
    assert.equal(s.st.text, s.manifest.find((m) => m.file === 'reverse.safetensors').default_prompt);
    assert.deepEqual([...errors, ...other.errors], []);
    await other.page.close();
  });

  test('the_offline_line_leaves_the_backend_badge_uncovered_on_a_phone', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=controls,backend,input&play=0', { viewport: { width: 390, height: 844 } });
    // The worker was installed by the first page of this browser, so the line is shown as
    // it shows on a first visit.
    await page.waitForSelector('tp-app-status', { state: 'attached', timeout: 60000 });
    await page.evaluate(() => document.querySelector('tp-app-status').show('offline-ready'));
    await offlineLine(page);
    // Scrolled to the very end, and with the badge brought into view, nothing of the page is under the line.
    const covered = await page.evaluate(async () => {
      const bar = document.querySelector('tp-app-status').shadowRoot.querySelector('.bar').getBoundingClientRect();
      const badge = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge');
      badge.scrollIntoView({ block: 'end' });
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const b = badge.getBoundingClientRect();
      window.scrollTo(0, document.documentElement.scrollHeight);
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const main = document.querySelector('main > transformer-playground').getBoundingClientRect();
      return { badgeBottom: b.bottom, endBottom: main.bottom, barTop: bar.top, barHeight: bar.height };
    });
    assert.ok(covered.barHeight > 0, 'the line is shown');
    assert.ok(covered.badgeBottom <= covered.barTop + 0.5, `the badge ends at ${covered.badgeBottom}, the line starts at ${covered.barTop}`);
    assert.ok(covered.endBottom <= covered.barTop + 0.5, `the page ends at ${covered.endBottom}, the line starts at ${covered.barTop}`);
    await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-backend-badge').scrollIntoView({ block: 'end' }));
    await shot(page, 'front-door-zh-CN-390-offline-line');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_backend_control_and_the_badge_say_the_same_backend_in_chinese', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=controls,backend&play=0');
    const both = await backendWords(page);
    assert.equal(both.control.runs, both.info.backend);
    assert.equal(both.badge.runs, both.info.backend);
    assert.equal(both.control.text, both.badge.text);
    assert.match(both.control.text, /[\u4e00-\u9fff]/, both.control.text);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

/** What the backend control and the badge say, and what the engine reported. */
function backendWords(page) {
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    const part = (tag) => {
      const r = el.shadowRoot.querySelector(tag).shadowRoot.querySelector('[data-backend-runs]');
      return { runs: r.dataset.backendRuns, text: r.textContent.trim() };
    };
    return { control: part('tp-controls'), badge: part('tp-backend-badge'), info: el.backendInfo };
  });
}

describe('a browser whose language is English', () => {
  let browser;
  before(async () => {
    browser = await launch({ locale: 'en-US' });
  });
  after(async () => {
    await browser?.close();
  });

  test('an_english_browser_starts_on_the_english_default', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0');
    const s = await state(page);
    assert.equal(s.locale, 'en');
    assert.equal(s.st.model, s.manifest[0].file);
    assert.equal(s.st.text, s.manifest[0].default_prompt);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_prompt_survives_a_switch_to_a_model_that_can_spell_it_and_a_note_names_what_another_cannot', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=grammar-alibi.safetensors&text=the%20cat&views=controls,input&play=0');
    const pick = (file) => page.locator(`${P} tp-controls select[data-setting="model"]`).first().selectOption(file);
    const settled = (file) =>
      page.waitForFunction((file) => {
        const el = document.querySelector('transformer-playground');
        return el.st.model === file && el.info && el.lastForward && el.tokenized.length > 0;
      }, file, { timeout: 60000 });
    // The word-level tagger's vocabulary holds "the" and "cat": the engine spells the prompt, and it stays.
    await pick('tagging.safetensors');
    await settled('tagging.safetensors');
    let s = await state(page);
    assert.equal(s.st.text, 'the cat');
    assert.equal(s.promptNote, '');
    const spelled = await page.evaluate(() => document.querySelector('transformer-playground').store.call('tokenize', { text: 'the cat' }));
    assert.deepEqual(spelled.unknown, [], 'the engine spells it in the new vocabulary');
    assert.deepEqual(await page.evaluate(() => document.querySelector('transformer-playground').tokenized[0].ids), spelled.ids);
    assert.match(await page.evaluate(() => location.hash), /text=the/, 'the kept prompt is in the link');
    // The number-words translator cannot spell either word: its own example, and a note naming them.
    await pick('translate.safetensors');
    await settled('translate.safetensors');
    s = await state(page);
    const entry = s.manifest.find((m) => m.file === 'translate.safetensors');
    assert.equal(s.st.text, entry.default_prompt);
    const unknown = await page.evaluate(() => document.querySelector('transformer-playground').store.call('tokenize', { text: 'the cat' }));
    const pieces = unknown.unknown.map(([, t]) => t);
    assert.deepEqual(pieces, ['the', 'cat'], 'the engine cannot spell them');
    const note = await page.locator(`${P} tp-input [data-prompt-note]`).innerText();
    for (const p of pieces) assert.ok(note.includes(`“${p}”`), `the note names “${p}”: ${note}`);
    assert.equal(s.promptNote.trim(), note.replace(/×\s*$/, '').trim());
    await shot(page, 'front-door-prompt-note');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_switch_that_restarts_the_generation_keeps_the_previous_output_beside_the_new_one', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=grammar-alibi.safetensors&views=controls,generation&speed=0&max=10');
    await page.waitForFunction(() => document.querySelector('transformer-playground').done, undefined, { timeout: 60000 });
    const first = await state(page);
    assert.ok(first.generated.length > 0);
    const words = first.generated.map((id) => first.vocab[id]);
    await page.locator(`${P} tp-controls input[data-setting="scale"]`).uncheck();
    await page.locator(`${P} tp-generation [data-restarted]`).waitFor({ timeout: 30000 });
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      return el.st.scale === false && el.done && el.generated.length > 0;
    }, undefined, { timeout: 60000 });
    const s = await state(page);
    assert.deepEqual(s.genBefore.ids, first.generated, 'the before is what was generated before');
    assert.deepEqual(s.genBefore.tokens, words);
    const drawn = await page.evaluate(() => {
      const g = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-generation').shadowRoot;
      const cols = [...g.querySelectorAll('[data-compare] > div')].map((d) => d.getBoundingClientRect().toJSON());
      return {
        note: g.querySelector('[data-restarted]').textContent,
        before: g.querySelector('[data-before]').dataset.before,
        after: g.querySelector('[data-compare] [data-generated]').dataset.generated,
        beforeLabel: g.querySelector('[data-side="before"]').textContent,
        afterLabel: g.querySelector('[data-side="after"]').textContent,
        cols,
      };
    });
    assert.equal(drawn.before, first.generated.join(','));
    assert.equal(drawn.after, s.generated.join(','), 'the after is the new generation');
    assert.match(drawn.note, /√d_k scaling/);
    assert.match(drawn.note, /restarted/);
    assert.match(drawn.beforeLabel, /√d_k scaling on/);
    assert.match(drawn.afterLabel, /√d_k scaling off/);
    assert.equal(drawn.cols.length, 2);
    assert.ok(Math.abs(drawn.cols[0].top - drawn.cols[1].top) < 1 && drawn.cols[0].right <= drawn.cols[1].left + 1, 'before and after stand side by side');
    await shot(page, 'front-door-generation-before-after');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_output_distribution_and_the_saturation_show_before_and_after_a_switch_side_by_side', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=grammar-alibi.safetensors&views=controls,output,saturation&play=0');
    const read = () =>
      page.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        const f = el.lastForward;
        return { probs: Array.from(f.model_probs), mean: el.shadowRoot.querySelector('tp-saturation').shadowRoot.querySelector('tfoot tr').dataset.meanEntropy };
      });
    const was = await read();
    await page.locator(`${P} tp-controls input[data-setting="scale"]`).uncheck();
    await page.waitForFunction(() => {
      const o = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-output').shadowRoot;
      return o.querySelector('[data-before-prob]') !== null;
    }, undefined, { timeout: 30000 });
    const now = await read();
    const drawn = await page.evaluate(() => {
      const root = document.querySelector('transformer-playground').shadowRoot;
      const o = root.querySelector('tp-output').shadowRoot;
      const rows = [...o.querySelectorAll('[data-before-prob]')].map((c) => ({ id: Number(c.parentElement.querySelector('[data-token]').dataset.token), now: Number(c.parentElement.querySelector('[data-prob]').dataset.prob), before: Number(c.dataset.beforeProb) }));
      const sat = root.querySelector('tp-saturation').shadowRoot;
      return {
        rows,
        sides: o.querySelector('[data-sides]').textContent,
        satBefore: sat.querySelector('tfoot tr').dataset.beforeMeanEntropy,
        satHead: sat.querySelector('th[data-side="before"]')?.textContent ?? '',
      };
    });
    assert.ok(drawn.rows.length >= 5);
    for (const r of drawn.rows) {
      assert.equal(r.before, Math.fround(was.probs[r.id]), `token ${r.id}: before`);
      assert.equal(r.now, Math.fround(now.probs[r.id]), `token ${r.id}: now`);
    }
    assert.ok(drawn.rows.some((r) => r.before !== r.now), 'the switch changed the distribution');
    assert.match(drawn.sides, /√d_k scaling on/);
    assert.match(drawn.sides, /√d_k scaling off/);
    assert.equal(Number(drawn.satBefore), Number(was.mean), 'the saturation table keeps the previous mean entropy beside the new one');
    assert.notEqual(Number(now.mean), Number(was.mean));
    assert.match(drawn.satHead, /√d_k scaling on/);
    await shot(page, 'front-door-output-before-after');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_lesson_closed_and_reopened_returns_where_it_was_left', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lesson=scaled-dot');
    const lesson = page.locator(`${P} tp-lesson`);
    await lesson.locator('.try[data-step="todo"]').waitFor({ timeout: 30000 });
    await page.locator(`${P} tp-controls input[data-setting="scale"]`).uncheck();
    await lesson.locator('.try[data-step="done"]').waitFor({ timeout: 30000 });
    // Answer the lesson's question, trying the options in turn until one is right.
    await lesson.locator('[data-answer="open"]').waitFor({ timeout: 30000 });
    const options = lesson.locator('[data-answer] [data-option]');
    for (let k = 0; k < (await options.count()); k++) {
      await options.nth(k).check();
      await lesson.locator('[data-check]').click();
      if ((await lesson.locator('[data-verdict]').getAttribute('data-verdict')) === 'right') break;
    }
    assert.equal(await lesson.locator('[data-verdict]').getAttribute('data-verdict'), 'right');
    await lesson.locator('[data-tour="close"]').click();
    await page.waitForFunction(() => !document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lesson'));
    assert.equal((await state(page)).st.lesson, '');
    await page.locator(`${P} [data-tour="start"]`).click();
    await lesson.locator('.try[data-step="done"]').waitFor({ timeout: 30000 });
    const s = await state(page);
    assert.equal(s.st.lesson, 'scaled-dot');
    assert.equal(s.st.scale, false, 'what the learner changed is back');
    assert.equal(await lesson.locator('[data-notice]').count(), 1, 'what to notice is shown again');
    assert.equal(await lesson.locator('[data-verdict]').getAttribute('data-verdict'), 'right', 'the answer given is kept');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_lab_left_and_drawn_again_keeps_its_form_and_selection', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=lab&play=0');
    const field = page.locator(`${P} tp-lab input[name="n_layers"]`);
    await field.waitFor({ timeout: 60000 });
    await field.fill('3');
    await field.dispatchEvent('change');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form?.n_layers === 3);
    const task = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form.task);
    // Leave the lab (the element is removed), then come back.
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ views: ['controls'] }));
    await page.waitForFunction(() => !document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab'));
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ views: ['lab'] }));
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.form?.n_layers === 3, undefined, { timeout: 30000 });
    assert.equal(await field.inputValue(), '3');
    assert.equal(await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form.task), task);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_backend_control_and_the_badge_say_the_backend_the_engine_runs', async () => {
    // No WebGPU in this browser: Auto is asked (the default) and the CPU runs.
    const { page, errors } = await open(browser.context, server.url, 'views=controls,backend&play=0');
    const both = await backendWords(page);
    assert.equal(both.info.backend, 'cpu');
    assert.equal(both.control.runs, 'cpu');
    assert.equal(both.badge.runs, 'cpu');
    assert.equal(both.control.text, both.badge.text);
    assert.match(both.control.text, /Auto asked → CPU: this browser has no WebGPU/);
    // The CPU asked for: both say so.
    await page.locator(`${P} tp-controls input[data-setting="backend"]`).nth(2).check();
    await page.waitForFunction(() => document.querySelector('transformer-playground').backendInfo?.status.kind === 'cpu_chosen', undefined, { timeout: 30000 });
    const cpu = await backendWords(page);
    assert.equal(cpu.control.text, cpu.badge.text);
    assert.match(cpu.control.text, /^CPU asked → CPU$/);
    await shot(page, 'front-door-backend');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

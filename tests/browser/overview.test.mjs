// The page's front door in headless Chromium: the overview draws the loaded model's real
// stages from the core's layer plan (a pre-LN decoder, a post-LN decoder, an
// encoder-decoder, a classifier) with the numbers of the core's forward pass in its data
// attributes; each stage opens the chapter that explains it; every registered view is
// reachable from the default page in at most two clicks; old `views=` and `lesson=` links
// open exactly what they opened; the default page fits two screens at 1440×900.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve, shot, waitTokens } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: false });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

/** What the overview shows and what the core computed, side by side (read in the page). */
function readOverview(page) {
  return page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    // The overview draws what the element hands it: both finish their pending updates first,
    // so the picture read is the one of the forward pass read beside it.
    await el.updateComplete;
    const ov = el.shadowRoot.querySelector('tp-overview');
    await ov.updateComplete;
    const root = ov.shadowRoot;
    const f = el.lastForward;
    const num = (x) => Number(x);
    const rows = [...root.querySelectorAll('.flow')].map((row) => ({
      name: row.dataset.row,
      // Every stage of the row in page order (the block's steps inside the stack group).
      stages: [...row.querySelectorAll('[data-stage]')].map((b) => b.dataset.stage),
      chips: [...row.querySelectorAll('.stage[data-stage="tokens"] .chip')].map((c) => ({ id: num(c.dataset.id), pos: num(c.dataset.pos), isNew: c.classList.contains('new') })),
      embed: [...row.querySelectorAll('.stage[data-stage="embedding"] .strip > span')].map((c) => num(c.dataset.norm)),
      layers: [...row.querySelectorAll('[data-layer-chip]')].map((b) => [...b.querySelectorAll('.strip > span')].map((c) => num(c.dataset.norm))),
      shownLayer: num(row.querySelector('.stack')?.dataset.shownLayer),
      ffn: [...row.querySelectorAll('tp-ov-ffn')].map((x) => {
        const d = x.shadowRoot.querySelector('.ffn').dataset;
        return {
          site: x.dataset.site,
          layer: num(x.dataset.layer),
          rows: num(d.rows),
          cols: num(d.cols),
          max: num(d.max),
          active: num(d.active),
          pos: num(d.pos),
          last: (d.last ?? '').split(',').map(Number),
        };
      }),
      heads: [...row.querySelectorAll('tp-ov-heads')].map((h) => ({
        site: h.dataset.site,
        layer: num(h.dataset.layer),
        heads: [...h.shadowRoot.querySelectorAll('.head')].map((x) => ({
          head: num(x.dataset.head),
          rows: num(x.dataset.rows),
          cols: num(x.dataset.cols),
          query: num(x.dataset.query),
          max: num(x.dataset.max),
          last: x.dataset.last.split(',').map(Number),
        })),
      })),
    }));
    const bars = (stage) => [...root.querySelectorAll(`.stage[data-stage="${stage}"] .bars .num`)].map((n) => ({ id: num(n.dataset.token ?? n.dataset.class), p: num(n.dataset.prob) }));
    const next = root.querySelector('.stage[data-stage="next"] .big');
    const H = (t) => t.probs.shape[1];
    return {
      plan: el.plan,
      info: { pad: el.info.pad, n_heads: el.info.n_heads, arch: el.info.arch },
      rows,
      logits: bars('logits'),
      classes: bars('classes'),
      next: next ? num(next.dataset.token) : null,
      shown: el.store.shownViews,
      core: {
        tokens: f.tokens[0],
        src: f.src_tokens[0] ?? [],
        hidden: f.hidden.map((h) => ({ stack: h.stack, shape: h.norms.shape, data: [...h.norms.data] })),
        ffn: f.ffn.map((x) => ({ stack: x.stack, layer: x.layer, shape: x.hidden.shape, data: [...x.hidden.data] })),
        attention: f.attention.map((a) => ({ site: a.site, layer: a.layer, shape: a.probs.shape, data: [...a.probs.data] })),
        modelProbs: [...f.model_probs],
        nextProbs: [...f.next_probs],
        classProbs: f.class_probs ? [...f.class_probs] : null,
        generated: [...el.generated],
      },
      H: f.attention.length ? H(f.attention[0]) : 0,
    };
  });
}

/** The steps of one layer as the plan orders them, in the overview's stage names. */
function planSteps(stack) {
  const out = [];
  for (const sp of stack.sublayers) {
    if (sp.norm && sp.norm.placement === 'before') out.push('norm');
    out.push(sp.kind);
    if (sp.norm && sp.norm.placement === 'after') out.push('norm');
    else if (sp.residual) out.push('add');
  }
  return out;
}

/** Check every number a row draws against the core's forward pass. */
function checkRow(o, row, stack) {
  const pad = o.info.pad;
  const ids = stack.input === 'source' ? o.core.src : o.core.tokens;
  const real = ids.slice(0, ids.length - [...ids].reverse().findIndex((x) => x !== pad));
  assert.deepEqual(row.chips.map((c) => c.id), real, `${stack.name}: the token chips are the ids the core ran`);
  const hidden = o.core.hidden.find((h) => h.stack === stack.site);
  const [L1, B, T] = hidden.shape;
  assert.equal(L1, stack.layers + 1);
  const norms = (l) => hidden.data.slice(l * B * T, l * B * T + T);
  assert.deepEqual(row.embed, norms(0), `${stack.name}: the embedding strip is the residual stream entering layer 0`);
  assert.equal(row.layers.length, stack.layers, 'one chip per layer');
  row.layers.forEach((strip, l) => assert.deepEqual(strip, norms(l + 1), `${stack.name}: layer ${l + 1}'s strip is the residual stream after it`));
  const layer = row.shownLayer;
  // The FFN strip: the hidden units of the layer drawn in full, as the core computed them.
  assert.equal(row.ffn.length, stack.sublayers.filter((s) => s.kind === 'ffn').length, `${stack.name}: a strip per FFN step`);
  for (const x of row.ffn) {
    const tr = o.core.ffn.find((t) => t.stack === stack.site && t.layer === x.layer);
    assert.ok(tr, `the pass carries the FFN trace of ${stack.name} layer ${x.layer}`);
    assert.equal(x.site, stack.site);
    assert.equal(x.layer, layer, 'the FFN strip is of the layer drawn in full');
    const [, T, F] = tr.shape;
    assert.deepEqual([x.rows, x.cols], [T, F], `${stack.name}: positions × d_ff`);
    const m = tr.data.slice(0, T * F);
    assert.equal(x.max, Math.max(0, ...m), `${stack.name}.${layer}: the strip's largest unit is the core's`);
    assert.equal(x.active, m.filter((v) => v > 0).length, `${stack.name}.${layer}: units above zero`);
    assert.ok(x.active > 0 && x.max > 0, 'a live picture, not an empty one');
    // (a GELU's −0 reads back as 0 from the attribute)
    assert.deepEqual(x.last, m.slice(x.pos * F, (x.pos + 1) * F).map((v) => v + 0), `${stack.name}.${layer}: the newest position's units are the core's`);
  }
  for (const h of row.heads) {
    const tr = o.core.attention.find((a) => a.site === h.site && a.layer === h.layer);
    assert.ok(tr, `a trace for ${h.site} layer ${h.layer}`);
    assert.equal(h.layer, layer, 'the thumbnails are of the layer drawn in full');
    const [, Hn, Tq, S] = tr.shape;
    assert.equal(h.heads.length, Hn, 'a thumbnail per head');
    for (const x of h.heads) {
      assert.equal(x.rows, Tq);
      assert.equal(x.cols, S);
      const off = x.head * Tq * S;
      const m = tr.data.slice(off, off + Tq * S);
      assert.equal(x.max, Math.max(...m), `${h.site}.${h.layer}.${x.head}: its largest probability is the core's`);
      assert.deepEqual(x.last, m.slice(x.query * S, (x.query + 1) * S), `${h.site}.${h.layer}.${x.head}: the newest query's row is the core's`);
    }
  }
}

function checkTopProbs(drawn, probs, k) {
  const order = probs.map((p, i) => [i, p]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  assert.deepEqual(drawn.map((b) => [b.id, b.p]), order, 'the bars are the core’s largest probabilities, largest first');
}

describe('the overview draws the loaded model', () => {
  test('a_pre_ln_decoder_is_drawn_in_the_plans_order_with_the_cores_numbers', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0', { viewport: WIDE });
    const o = await readOverview(page);
    assert.deepEqual(o.shown, ['overview'], 'the default page: the overview, no chapter open');
    const [stack] = o.plan.stacks;
    assert.equal(o.plan.arch, 'decoder_only');
    assert.ok(stack.sublayers.every((s) => s.norm?.placement === 'before'), 'the default model is pre-LN');
    assert.equal(o.rows.length, 1);
    const expected = ['tokens', 'embedding', 'block', ...planSteps(stack), ...(stack.final_norm ? ['final_norm'] : []), 'logits', 'next'];
    assert.deepEqual(o.rows[0].stages, expected);
    assert.deepEqual(o.rows[0].stages.slice(3, 6), ['norm', 'self_attention', 'add'], 'pre-LN: the norm comes before the sublayer');
    checkRow(o, o.rows[0], stack);
    checkTopProbs(o.logits, o.core.modelProbs, 5);
    const argmax = o.core.nextProbs.indexOf(Math.max(...o.core.nextProbs));
    assert.equal(o.next, argmax, 'greedy: the next token is the one the chooser keeps');
    // Another layer drawn in full: its thumbnails are that layer's.
    await page.locator('tp-overview [data-layer-chip="1"]').click();
    const o2 = await readOverview(page);
    assert.equal(o2.rows[0].shownLayer, 1);
    checkRow(o2, o2.rows[0], stack);
    // The attention view is not shown, so the forward pass carries no q, k, v.
    assert.equal(await page.evaluate(() => document.querySelector('transformer-playground').lastForward.attention.some((a) => a.q)), false);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('generation_runs_through_the_overview_token_by_token', async () => {
    const { page, errors } = await open(browser.context, server.url, 'speed=0&max=5', { viewport: WIDE });
    await waitTokens(page, 5);
    await page.waitForFunction(() => document.querySelector('transformer-playground').done);
    await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
    const o = await readOverview(page);
    assert.equal(o.core.generated.length, 5);
    const chips = o.rows[0].chips;
    const newest = chips.filter((c) => c.isNew);
    assert.equal(newest.length, 1, 'one chip marked as the newest');
    assert.equal(newest[0].id, o.core.generated.at(-1), 'the newest chip is the last generated token');
    assert.equal(newest[0].pos, chips.length - 1);
    checkRow(o, o.rows[0], o.plan.stacks[0]);
    checkTopProbs(o.logits, o.core.modelProbs, 5);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_post_ln_decoder_puts_add_and_norm_after_each_sublayer', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=reverse-post-ln.safetensors&play=0', { viewport: WIDE });
    const o = await readOverview(page);
    const [stack] = o.plan.stacks;
    assert.ok(stack.sublayers.every((s) => s.norm?.placement === 'after'));
    assert.deepEqual(o.rows[0].stages.slice(3, 3 + planSteps(stack).length), planSteps(stack));
    assert.deepEqual(o.rows[0].stages.slice(3, 5), ['self_attention', 'norm'], 'post-LN: Add & Norm follows the sublayer');
    const labels = await page.locator('tp-overview .stage[data-stage="norm"] .t').allInnerTexts();
    assert.ok(labels.every((t) => /Add & LayerNorm/.test(t)), `the post-LN norm adds first: ${labels}`);
    checkRow(o, o.rows[0], stack);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_encoder_decoder_draws_both_stacks_and_the_cross_attention_reads_the_encoder', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=translate.safetensors&speed=0&max=3', { viewport: WIDE });
    await waitTokens(page, 3);
    await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
    const o = await readOverview(page);
    assert.equal(o.plan.arch, 'encoder_decoder');
    assert.deepEqual(o.rows.map((r) => r.name), o.plan.stacks.map((s) => s.name), 'a row per stack, in the order they run');
    const [enc, dec] = o.plan.stacks;
    assert.ok(o.rows[0].stages.includes('memory'), "the encoder's row ends in its output, read by the decoder");
    assert.ok(!o.rows[0].stages.includes('logits'));
    assert.deepEqual(o.rows[1].stages.slice(3, 3 + planSteps(dec).length), planSteps(dec));
    assert.ok(o.rows[1].stages.includes('cross_attention'));
    assert.ok(o.rows[1].heads.some((h) => h.site === 'cross'), 'the cross-attention thumbnails are drawn');
    checkRow(o, o.rows[0], enc);
    checkRow(o, o.rows[1], dec);
    checkTopProbs(o.logits, o.core.modelProbs, 5);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_classifier_ends_in_its_class_probabilities', async () => {
    const { page, errors } = await open(browser.context, server.url, 'model=sentiment.safetensors&play=0', { viewport: WIDE });
    const o = await readOverview(page);
    assert.equal(o.plan.head, 'classifier');
    assert.equal(o.rows[0].stages.at(-1), 'classes');
    assert.ok(!o.rows[0].stages.includes('next') && !o.rows[0].stages.includes('logits'));
    assert.deepEqual(o.classes.map((c) => c.p), o.core.classProbs, 'the class bars are the core’s class probabilities');
    checkRow(o, o.rows[0], o.plan.stacks[0]);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('typing_in_the_overviews_text_box_runs_the_new_text_through_every_stage', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0', { viewport: WIDE });
    const box = page.locator('tp-overview [data-overview-text]');
    assert.equal(await box.inputValue(), await page.evaluate(() => document.querySelector('transformer-playground').st.text), 'the box holds the text the page runs');
    await box.fill('the dog');
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      const t = el.tokenized[0]?.ids ?? [];
      const ran = el.lastForward?.tokens[0] ?? [];
      // The pass of the new text: its ids end the row the core ran (after <bos>).
      return el.st.text === 'the dog' && t.length > 0 && ran.slice(-t.length).join() === t.join() && ran.length <= t.length + 1;
    });
    // Wait for the picture of the new pass, then compare it with the core's tokens and numbers.
    await page.waitForFunction(() => {
      const el = document.querySelector('transformer-playground');
      const chips = el.shadowRoot.querySelector('tp-overview').shadowRoot.querySelectorAll('.stage[data-stage="tokens"] .chip');
      return chips.length === el.lastForward.tokens[0].length;
    });
    const o = await readOverview(page);
    const ids = await page.evaluate(() => [...document.querySelector('transformer-playground').lastForward.tokens[0]]);
    assert.deepEqual(o.rows[0].chips.map((c) => c.id), ids, 'the chips are the ids of the new text');
    checkRow(o, o.rows[0], o.plan.stacks[0]);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the overview opens the chapters', () => {
  test('each_stage_opens_the_chapter_that_explains_it_and_brings_its_view_into_sight', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0', { viewport: WIDE });
    const stages = await page.evaluate(() =>
      [...document.querySelector('transformer-playground').shadowRoot.querySelector('tp-overview').shadowRoot.querySelectorAll('[data-stage]')].map((b) => ({
        stage: b.dataset.stage,
        chapter: b.dataset.chapter,
        view: b.dataset.view,
      })),
    );
    const want = { tokens: 'input', embedding: 'positions', self_attention: 'attention', norm: 'blocks', add: 'blocks', ffn: 'blocks', final_norm: 'blocks', block: 'blocks', logits: 'output', next: 'output' };
    const seen = new Set();
    for (const s of stages) {
      if (seen.has(s.stage)) continue;
      seen.add(s.stage);
      assert.equal(s.chapter, want[s.stage], `${s.stage} opens ${want[s.stage]}`);
      await page.locator(`tp-overview [data-stage="${s.stage}"]`).first().click();
      await page.waitForFunction((c) => document.querySelector('transformer-playground').st.chapter === c, s.chapter);
      await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
      const r = await page.evaluate((v) => {
        const el = document.querySelector('transformer-playground');
        const view = el.shadowRoot.querySelector(`.view[data-view="${v}"]`);
        const box = view?.getBoundingClientRect();
        const nav = el.shadowRoot.querySelector('tp-chapters [aria-current="page"]') ?? el.shadowRoot.querySelector('tp-chapters').shadowRoot.querySelector('[aria-current="page"]');
        return { shown: !!view, top: box?.top ?? NaN, hash: location.hash, current: nav?.dataset.chapter ?? null, overview: !!el.shadowRoot.querySelector('tp-overview') };
      }, s.view);
      assert.ok(r.shown, `${s.stage}: the view ${s.view} is drawn`);
      assert.ok(r.overview, 'the overview stays above the chapter');
      assert.equal(r.current, s.chapter, 'the chapter bar marks the open chapter');
      assert.match(r.hash, new RegExp(`chapter=${s.chapter}`), 'the chapter is in the link');
      // Brought into sight: its top in the window (as high as the page lets it scroll).
      const inSight = () =>
        page.evaluate((v) => {
          const b = document.querySelector('transformer-playground').shadowRoot.querySelector(`.view[data-view="${v}"]`).getBoundingClientRect();
          return { top: b.top, h: innerHeight, atEnd: Math.ceil(scrollY + innerHeight) >= document.documentElement.scrollHeight };
        }, s.view);
      let at = await inSight();
      for (let k = 0; k < 100 && !(at.top >= -2 && (at.top < 120 || (at.atEnd && at.top < at.h - 100))); k++) {
        await page.waitForTimeout(50);
        at = await inSight();
      }
      assert.ok(at.top >= -2 && (at.top < 120 || (at.atEnd && at.top < at.h - 100)), `${s.stage}: the view ${s.view} is scrolled into sight: ${JSON.stringify(at)}`);
    }
    for (const k of ['tokens', 'embedding', 'self_attention', 'norm', 'ffn', 'logits', 'next']) assert.ok(seen.has(k), `the default model has a ${k} stage`);
    // Keyboard: a focused stage opens its chapter with Enter.
    await page.evaluate(() => document.querySelector('transformer-playground').store.patch({ chapter: '' }));
    await page.locator('tp-overview [data-stage="ffn"]').focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.chapter === 'blocks');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('every_registered_view_is_reachable_in_at_most_two_clicks_from_the_default_page', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&text=the%20dog', { viewport: WIDE });
    const names = await page.evaluate(async () => [...(await import('./playground.js')).VIEW_NAMES]);
    const links = await page.locator('tp-chapters a[data-chapter]').evaluateAll((as) => as.map((a) => ({ chapter: a.dataset.chapter, href: a.getAttribute('href') })));
    const reached = new Map([['overview', 0]]);
    for (const { chapter, href } of links) {
      if (chapter === 'lessons' || chapter === 'all') continue;
      assert.match(href, new RegExp(`chapter=${chapter}`));
      assert.match(href, /text=the(\+|%20)dog/, 'a chapter link carries the other settings');
      await page.locator(`tp-chapters a[data-chapter="${chapter}"]`).click();
      await page.waitForFunction((c) => document.querySelector('transformer-playground').st.chapter === c, chapter);
      await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
      const shown = await page.evaluate(() => [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.layout > .view')].map((v) => v.dataset.view));
      for (const v of shown) if (!reached.has(v)) reached.set(v, 1);
    }
    const missing = names.filter((n) => !reached.has(n));
    assert.deepEqual(missing, [], 'every view is one chapter link away (≤ 2 clicks)');
    // "All views": the old wall, every view.
    await page.locator('tp-chapters a[data-chapter="all"]').click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.chapter === 'all');
    await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
    const all = await page.evaluate(() => [...document.querySelector('transformer-playground').shadowRoot.querySelectorAll('.layout > .view')].map((v) => v.dataset.view));
    assert.deepEqual(all, names, 'chapter=all draws every view in the registry’s order');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_lessons_entry_and_the_primary_button_start_the_course', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0', { viewport: WIDE });
    const primary = page.locator('transformer-playground .bar button[data-tour="start"]');
    assert.equal(await primary.getAttribute('class'), 'primary');
    assert.match(await primary.innerText(), /Start the course/);
    await page.locator('tp-chapters a[data-chapter="lessons"]').click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.lesson !== '');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('old links and the page size', () => {
  test('views_links_show_exactly_their_views_without_overview_or_chapter_bar', async () => {
    const { page, errors } = await open(browser.context, server.url, 'views=attention&play=0');
    const r = await page.evaluate(() => {
      const root = document.querySelector('transformer-playground').shadowRoot;
      return {
        views: [...root.querySelectorAll('.layout > .view')].map((v) => v.dataset.view),
        chapters: root.querySelectorAll('tp-chapters').length,
        bar: root.querySelectorAll('.bar').length,
      };
    });
    assert.deepEqual(r, { views: ['attention'], chapters: 0, bar: 0 });
    // The overview alone works too.
    await page.evaluate(() => (location.hash = 'views=overview&play=0'));
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-overview') !== null);
    assert.deepEqual(await page.evaluate(() => document.querySelector('transformer-playground').store.shownViews), ['overview']);
    // A stage of the lone overview adds its chapter's views.
    await page.locator('tp-overview [data-stage="self_attention"]').click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.views.includes('attention'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_lesson_link_opens_its_views_as_before', async () => {
    const { page, errors } = await open(browser.context, server.url, 'lesson=heads');
    const r = await page.evaluate(() => {
      const root = document.querySelector('transformer-playground').shadowRoot;
      return { views: [...root.querySelectorAll('.layout > .view')].map((v) => v.dataset.view), lesson: !!root.querySelector('tp-lesson'), chapters: root.querySelectorAll('tp-chapters').length };
    });
    assert.deepEqual(r, { views: ['attention', 'output', 'cost'], lesson: true, chapters: 0 });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_unknown_chapter_is_named_in_a_note_and_none_is_opened', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=nonsense&play=0');
    const r = await page.evaluate(() => ({ notes: [...document.querySelector('transformer-playground').notes], chapter: document.querySelector('transformer-playground').st.chapter }));
    assert.equal(r.chapter, '');
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /"nonsense"/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_default_page_fits_two_screens_at_1440_by_900_and_flows_down_on_a_phone', async () => {
    for (const colorScheme of ['light', 'dark']) {
      const { page, errors } = await open(browser.context, server.url, 'play=0', { viewport: WIDE, media: { colorScheme } });
      await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
      const h = await page.evaluate(() => document.documentElement.scrollHeight);
      assert.ok(h <= 2 * 900, `the default page is ${h} px tall at 1440×900 (≤ 1800)`);
      const ov = await page.evaluate(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-overview').getBoundingClientRect().height);
      assert.ok(ov <= 900, `the overview fits one screen: ${ov} px`);
      await shot(page, `overview-1440-${colorScheme}`);
      await page.setViewportSize(PHONE);
      await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
      const phone = await page.evaluate(() => {
        const ov = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-overview');
        const flow = ov.shadowRoot.querySelector('.flow');
        return { dir: getComputedStyle(flow).flexDirection, sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth };
      });
      assert.equal(phone.dir, 'column', 'on a phone the picture flows top to bottom');
      assert.ok(phone.sw <= phone.cw, `nothing wider than the phone: ${phone.sw} > ${phone.cw}`);
      await shot(page, `overview-390-${colorScheme}`);
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
});

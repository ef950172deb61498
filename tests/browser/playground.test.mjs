// The playground in real headless Chromium: it loads cleanly, generates, reacts to every
// switch with the engine's own numbers, runs on WebGPU (SwiftShader) with the same greedy
// tokens as the CPU, falls back when WebGPU is missing, and treats its URL hash as
// untrusted. Screenshots land in tests/browser/artifacts/.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, serve, shot, waitTokens } from './harness.mjs';

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.close();
});

/** Probabilities of one head's map, as rows: (T, S) of sequence 0. */
async function headMap(page, site, layer, head) {
  return page.evaluate(
    ({ site, layer, head }) => {
      const el = document.querySelector('transformer-playground');
      const a = el.lastForward.attention.find((x) => x.site === site && x.layer === layer);
      const [, H, T, S] = a.probs.shape;
      const rows = [];
      for (let i = 0; i < T; i++) rows.push(Array.from(a.probs.data.slice((head * T + i) * S, (head * T + i + 1) * S)));
      void H;
      return rows;
    },
    { site, layer, head },
  );
}

function upperTriangleMax(rows) {
  let m = 0;
  rows.forEach((r, i) => r.forEach((p, j) => (j > i ? (m = Math.max(m, p)) : 0)));
  return m;
}

async function state(page) {
  return page.evaluate(() => {
    const el = document.querySelector('transformer-playground');
    return {
      st: el.st,
      info: el.info,
      backend: el.backendInfo,
      notes: [...el.notes],
      hash: location.hash,
      generated: [...el.generated],
      error: el.error,
    };
  });
}

describe('without WebGPU (the CPU fallback)', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: false });
  });
  after(async () => {
    await browser?.close();
  });

  test('page_loads_without_console_errors_and_generates_tokens', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all');
    const gen = await waitTokens(page, 4);
    assert.equal(gen.error, '', `the page reported an error: ${gen.error}`);
    assert.ok(gen.ids.length >= 4 || gen.done, `expected tokens, got ${JSON.stringify(gen)}`);
    // Every streamed token is drawn in the generation view.
    // Generation carries on while the test reads: read the drawn tokens and the element's
    // list in one turn, once the drawing has caught up with the list.
    const { drawn, generated } = await page.evaluate(async () => {
      const el = document.querySelector('transformer-playground');
      for (;;) {
        await el.updateComplete;
        const g = el.shadowRoot.querySelector('tp-generation');
        await g.updateComplete;
        if (g.generated.length === el.generated.length) {
          return { drawn: g.shadowRoot.querySelectorAll('.stream .g').length, generated: el.generated.length };
        }
      }
    });
    assert.equal(drawn, gen.ids.length === 0 ? 0 : generated);
    await shot(page, 'default-cpu');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('step_play_and_pause_drive_generation_one_token_at_a_time', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&speed=400&max=30');
    const n = () => page.evaluate(() => document.querySelector('transformer-playground').generated.length);
    assert.equal(await n(), 0, 'nothing runs before play');
    const step = page.getByRole('button', { name: 'generate one token' });
    for (let k = 1; k <= 3; k++) {
      await step.click();
      await page.waitForFunction((k) => document.querySelector('transformer-playground').generated.length === k, k);
    }
    // The cache holds the prompt and every token fed so far (the views draw in the frame
    // after the click's own).
    await page.evaluate(() => document.querySelector('transformer-playground').updateComplete);
    const cache = await page.locator('tp-generation canvas#cache').getAttribute('data-cache-len');
    const promptLen = await page.evaluate(() => 1 + document.querySelector('transformer-playground').tokenized[0].ids.length);
    assert.equal(Number(cache), promptLen + 2);
    await page.getByRole('button', { name: 'play generation' }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').generated.length >= 5);
    await page.getByRole('button', { name: 'pause generation' }).click();
    await page.waitForFunction(() => !document.querySelector('transformer-playground').playing);
    await page.waitForTimeout(300); // a step already in flight may still land
    const paused = await n();
    await page.waitForTimeout(1000);
    assert.equal(await n(), paused, 'nothing is generated while paused');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('page_says_it_fell_back_to_the_cpu_and_still_generates', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&backend=webgpu&speed=0&max=6');
    const s = await state(page);
    assert.equal(s.backend.backend, 'cpu');
    assert.match(s.backend.reason, /CPU/);
    const badge = await page.locator('tp-backend-badge .badge').innerText();
    assert.match(badge, /WebGPU/i);
    assert.match(badge, /CPU/);
    const gen = await waitTokens(page, 6);
    assert.ok(gen.ids.length >= 1, 'generation carried on on the CPU');
    await shot(page, 'fallback-badge');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('turning_the_causal_mask_off_fills_the_upper_triangle', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const site = (await state(page)).info.arch === 'encoder_only' ? 'encoder_self' : 'decoder_self';
    const before = await headMap(page, site, 0, 0);
    assert.ok(before.length >= 3, 'the prompt has several tokens');
    assert.equal(upperTriangleMax(before), 0, 'causal: no query attends to a later key');
    // The hatched (masked) cells are exactly the upper triangle.
    const masked = await page.locator('tp-attention .cell.masked').count();
    const T = before.length;
    assert.equal(masked, (T * (T - 1)) / 2);
    const v0 = await page.evaluate(() => document.querySelector('transformer-playground').lastForward);
    void v0;
    await page.getByLabel('causal mask').uncheck();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.causal === false);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelectorAll('.cell.masked').length === 0);
    const afterMap = await headMap(page, site, 0, 0);
    assert.ok(upperTriangleMax(afterMap) > 0.001, `the upper triangle now holds weight (max ${upperTriangleMax(afterMap)})`);
    assert.match((await state(page)).hash, /causal=0/);
    // A cell's probability is readable from its label as well as its data attribute.
    const label = await page.locator('tp-attention .cell[data-i="0"][data-j="1"]').getAttribute('aria-label');
    assert.match(label, /probability/);
    // Side by side with the previous setting: the difference view shows what changed.
    await page.getByLabel(/compare with the previous setting/).check();
    const diffs = await page.locator('tp-attention .diff .cell').evaluateAll((cs) => cs.map((c) => Number(c.dataset.diff)));
    assert.equal(diffs.length, T * T);
    assert.ok(Math.max(...diffs) > 0.001, 'some weight moved once the mask was off');
    await shot(page, 'causal-off');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_padded_batch_gives_pad_keys_zero_weight_until_the_padding_mask_is_off', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0&causal=0');
    const text = (await state(page)).st.text;
    await page.getByLabel('batch of unequal lengths (padding)').check();
    await page.locator('tp-input textarea#batch').fill(text.slice(0, 2));
    await page.waitForFunction(() => document.querySelector('transformer-playground').lastForward?.tokens.length === 2);
    const info = (await state(page)).info;
    const site = info.arch === 'encoder_only' ? 'encoder_self' : 'decoder_self';
    const pads = async () =>
      page.evaluate(
        ({ site, pad }) => {
          const f = document.querySelector('transformer-playground').lastForward;
          const a = f.attention.find((x) => x.site === site && x.layer === 0);
          const [, H, T, S] = a.probs.shape;
          const row = f.tokens[1];
          let padWeight = 0;
          for (let h = 0; h < H; h++)
            for (let i = 0; i < T; i++)
              for (let j = 0; j < S; j++) if (row[j] === pad) padWeight = Math.max(padWeight, a.probs.data[((1 * H + h) * T + i) * S + j]);
          return { padWeight, nPads: row.filter((t) => t === pad).length, T };
        },
        { site, pad: info.pad },
      );
    const on = await pads();
    assert.ok(on.nPads >= 1, 'the short sequence was padded');
    assert.equal(on.padWeight, 0, 'with the padding mask, no query attends to a pad');
    await page.getByRole('button', { name: 'sequence 2' }).click();
    // The second sequence's map hatches every pad column (causal mask off here).
    await page.waitForFunction(
      (n) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelectorAll('.cell.masked').length === n,
      on.T * on.nPads,
    );
    const chips = await page.locator('tp-input ul[data-row="1"] .chip.pad').count();
    assert.equal(chips, on.nPads, 'the pads are drawn as chips');
    await shot(page, 'padding-batch');
    await page.getByLabel('padding mask').uncheck();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.pad === false);
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.querySelectorAll('.cell.masked').length === 0);
    const off = await pads();
    assert.ok(off.padWeight > 0.001, `without the padding mask the pads take weight (${off.padWeight})`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('switching_position_encoding_loads_the_model_trained_with_it', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const s0 = await state(page);
    const pe = page.getByLabel('position encoding (loads the model trained with it)');
    const options = await pe.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, text: o.textContent.trim() })));
    assert.ok(options.length >= 2, `several position encodings ship for this task: ${JSON.stringify(options)}`);
    const other = options.find((o) => o.value !== s0.st.model);
    await pe.selectOption(other.value);
    await page.waitForFunction((file) => document.querySelector('transformer-playground').st.model === file, other.value);
    // The option names the encoding in words; the manifest says which one its model has.
    await page.waitForFunction((file) => {
      const el = document.querySelector('transformer-playground');
      return el.info && el.info.pos_encoding === el.manifest.find((m) => m.file === file)?.pos_encoding;
    }, other.value);
    const s1 = await state(page);
    assert.notEqual(s1.info.pos_encoding, s0.info.pos_encoding);
    assert.ok(s1.hash.includes(`model=${encodeURIComponent(other.value)}`), s1.hash);
    await shot(page, 'other-position-encoding');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a_link_with_state_reproduces_that_state', async () => {
    const hash = 'chapter=all&play=0&causal=0&pad=0&scale=0&layer=1&head=1&strategy=sample&temp=0.7&topk=5&seed=42&ablate=decoder_self.0.1&speed=300';
    const { page, errors } = await open(browser.context, server.url, hash);
    const s = await state(page);
    assert.deepEqual(
      { causal: s.st.causal, pad: s.st.pad, scale: s.st.scale, layer: s.st.layer, head: s.st.head, strategy: s.st.strategy, temp: s.st.temp, topk: s.st.topk, seed: s.st.seed, speed: s.st.speed },
      { causal: false, pad: false, scale: false, layer: 1, head: 1, strategy: 'sample', temp: 0.7, topk: 5, seed: 42, speed: 300 },
    );
    assert.deepEqual(s.st.ablate, [{ site: 'decoder_self', layer: 0, head: 1 }]);
    assert.deepEqual(s.notes, []);
    assert.equal(await page.getByLabel('causal mask').isChecked(), false);
    assert.equal(await page.getByLabel('padding mask').isChecked(), false);
    assert.equal(await page.getByLabel('scale by √d_k').isChecked(), false);
    const grid = page.locator('tp-attention [role="grid"]');
    assert.equal(await grid.getAttribute('data-layer'), '1');
    assert.equal(await grid.getAttribute('data-head'), '1');
    assert.equal(await page.getByRole('button', { name: 'switch on layer 1 head 2' }).getAttribute('aria-pressed'), 'true');
    // The page writes back the same settings.
    for (const kv of hash.split('&')) assert.ok(s.hash.includes(kv), `${kv} missing from ${s.hash}`);
    // The same link in a fresh page gives the same forward pass.
    const { page: page2 } = await open(browser.context, server.url, hash);
    const a = await headMap(page, 'decoder_self', 1, 1);
    const b = await headMap(page2, 'decoder_self', 1, 1);
    assert.deepEqual(a, b);
    await shot(page, 'state-from-link');
    assert.deepEqual(errors, []);
    await page.close();
    await page2.close();
  });

  test('a_link_that_names_a_model_starts_from_that_models_own_prompt', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const manifest = await page.evaluate(() => document.querySelector('transformer-playground').manifest);
    await page.close();
    for (const entry of manifest.slice(1)) {
      const { page: p } = await open(browser.context, server.url, `chapter=all&model=${entry.file}&play=0`);
      const s = await state(p);
      assert.equal(s.st.model, entry.file);
      assert.equal(s.st.text, entry.default_prompt, `${entry.file} starts from its own prompt`);
      assert.ok(!s.hash.includes('text='), `the model's own prompt stays out of the link: ${s.hash}`);
      await p.close();
    }
    // The reversal model, from its own prompt, writes the letters backwards.
    const rev = manifest.find((m) => m.task === 'reverse');
    if (rev) {
      const { page: p } = await open(browser.context, server.url, `chapter=all&model=${rev.file}&speed=0`);
      await p.waitForFunction(() => document.querySelector('transformer-playground').done, undefined, { timeout: 60000 });
      const out = await p.evaluate(() => {
        const el = document.querySelector('transformer-playground');
        return el.generated.map((i) => el.info.vocab[i]).join('');
      });
      const letters = rev.default_prompt.replace('>', '');
      assert.equal(out, `${[...letters].reverse().join('')}<eos>`);
      await p.close();
    }
    assert.deepEqual(errors, []);
  });

  test('hostile_hash_values_are_rejected_with_a_visible_note', async () => {
    const long = 'x'.repeat(5000);
    const hash = [
      'temp=abc',
      'seed=-1',
      'topk=1e9',
      'beam=NaN',
      'evil=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      `text=${long}`,
      'model=..%2F..%2Fetc%2Fpasswd',
      'ablate=decoder_self.0.0,%3Cimg%3E',
      'layer=999',
      'causal=maybe',
    ].join('&');
    const { page, errors } = await open(browser.context, server.url, `chapter=all&${hash}&speed=0&max=3`);
    const s = await state(page);
    const notes = page.locator('[data-notes]');
    await notes.waitFor();
    const text = await notes.innerText();
    for (const key of ['temp', 'seed', 'topk', 'beam', 'evil', 'text', 'model', 'ablate', 'layer', 'causal']) {
      assert.ok(text.includes(key), `the note names ${key}: ${text}`);
    }
    assert.equal(s.st.temp, 1);
    assert.equal(s.st.seed, 0);
    assert.ok(s.st.text.length <= 200);
    assert.equal(await page.locator('script:not([src])').count(), 0);
    // Script-like text as a prompt is only ever text.
    const { page: p2, errors: e2 } = await open(browser.context, server.url, `chapter=all&text=${encodeURIComponent('<img src=x onerror=alert(1)>')}&speed=0&max=2`);
    await waitTokens(p2, 2);
    assert.equal(await p2.locator('tp-input textarea#text').inputValue(), '<img src=x onerror=alert(1)>', 'the text is kept as text');
    assert.equal(await p2.locator('img').count(), 0);
    const gen = await waitTokens(page, 3);
    assert.ok(gen.ids.length >= 1, 'the page still generates');
    await shot(page, 'hostile-hash');
    assert.deepEqual(errors, []);
    assert.deepEqual(e2, []);
    await page.close();
    await p2.close();
  });

  test('heatmap_cells_are_keyboard_operable_with_values_announced', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const first = page.locator('tp-attention .cell[tabindex="0"]');
    await first.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    const focused = await page.evaluate(() => {
      const a = document.querySelector('transformer-playground').shadowRoot.querySelector('tp-attention').shadowRoot.activeElement;
      return { i: a?.dataset.i, j: a?.dataset.j, label: a?.getAttribute('aria-label') };
    });
    assert.deepEqual([focused.i, focused.j], ['2', '1']);
    assert.match(focused.label, /query 2 .* key 1/);
    const readout = await page.locator('tp-attention .readout').innerText();
    assert.match(readout, /query 2/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('clicking_a_head_ablates_it_and_changes_the_output', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const before = await page.evaluate(() => Array.from(document.querySelector('transformer-playground').lastForward.logits.data));
    await page.getByRole('button', { name: 'switch off (ablate) layer 1 head 1' }).click();
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.ablate.length === 1);
    await page.waitForFunction(
      (n) => {
        const f = document.querySelector('transformer-playground').lastForward;
        return f && f.logits.data.length === n;
      },
      before.length,
    );
    await page.waitForFunction(
      (b0) => document.querySelector('transformer-playground').lastForward.logits.data[b0.i] !== b0.v || false,
      { i: before.length - 1, v: before[before.length - 1] },
    );
    const after = await page.evaluate(() => Array.from(document.querySelector('transformer-playground').lastForward.logits.data));
    const diff = Math.max(...after.map((x, k) => Math.abs(x - before[k])));
    assert.ok(diff > 1e-4, `zeroing a head changes the logits (max change ${diff})`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('every_shipped_model_loads_and_draws_its_attention', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0');
    const files = await page.evaluate(() => document.querySelector('transformer-playground').manifest.map((m) => m.file));
    for (const file of files) {
      await page.getByLabel('model', { exact: true }).selectOption(file);
      await page.waitForFunction((f) => {
        const el = document.querySelector('transformer-playground');
        return el.st.model === f && el.lastForward && el.lastForward.attention.length > 0 && !el.error;
      }, file);
      const s = await state(page);
      const sites = await page.evaluate(() => [...new Set(document.querySelector('transformer-playground').lastForward.attention.map((a) => a.site))]);
      if (s.info.arch === 'encoder_decoder') assert.deepEqual(sites.sort(), ['cross', 'decoder_self', 'encoder_self']);
      await shot(page, `model-${file.replace('.safetensors', '')}`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an_embedded_widget_runs_its_preset_in_a_blog_post', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}example.html`);
    // A widget starts when it comes within a screen of the viewport; the lesson's sits near
    // that edge (its top moves by tens of pixels as the widget above it draws), so the test
    // scrolls down to it as a reader would, once the first has drawn.
    await page.waitForFunction(() => document.getElementById('unmasked').lastForward);
    await page.locator('#lesson').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => [...document.querySelectorAll('transformer-playground')].every((el) => el.ready && el.lastForward));
    await page.evaluate(() => Promise.all([...document.querySelectorAll('transformer-playground')].map((el) => el.ready)));
    const unmasked = await page.evaluate(() => {
      const el = document.getElementById('unmasked');
      const a = el.lastForward.attention.find((x) => x.site === 'decoder_self' || x.site === 'encoder_self');
      const [, , T, S] = a.probs.shape;
      let upper = 0;
      for (let i = 0; i < T; i++) for (let j = i + 1; j < S; j++) upper = Math.max(upper, a.probs.data[i * S + j]);
      return { upper, causal: el.st.causal, hash: location.hash, parts: [...el.shadowRoot.querySelectorAll('.layout > .view > :first-child')].map((n) => n.tagName.toLowerCase()) };
    });
    assert.equal(unmasked.causal, false);
    assert.ok(unmasked.upper > 0.001, 'the preset switched the causal mask off');
    assert.equal(unmasked.hash, '', 'embedded widgets leave the page URL alone');
    assert.deepEqual(unmasked.parts, ['tp-attention']);
    await shot(page, 'embedded');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the_page_fits_a_phone_screen', async () => {
    const { page, errors } = await open(browser.context, server.url, 'chapter=all&play=0', { viewport: { width: 390, height: 844 } });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no sideways scrolling on a phone (overflow ${overflow}px)`);
    await shot(page, 'phone');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('with WebGPU (SwiftShader)', () => {
  let browser;
  before(async () => {
    browser = await launch({ webgpu: true });
  });
  after(async () => {
    await browser?.close();
  });

  test('webgpu_backend_runs_and_gives_the_same_greedy_tokens_as_the_cpu', async () => {
    const n = 6;
    const { page, errors } = await open(browser.context, server.url, `chapter=all&backend=webgpu&speed=0&max=${n}`);
    const s = await state(page);
    assert.equal(s.backend.backend, 'webgpu', `WebGPU should run: ${s.backend.reason} ${s.backend.detail}`);
    assert.ok(Number.isFinite(s.backend.parity) && s.backend.parity < 1e-3, `GPU−CPU logit difference ${s.backend.parity}`);
    await waitTokens(page, n, 120000);
    assert.equal(await page.evaluate(() => document.querySelector('transformer-playground').lastForward.backend), 'webgpu');
    await shot(page, 'webgpu');
    const manifest = await page.evaluate(() => document.querySelector('transformer-playground').manifest);
    await page.close();
    // Every model that generates, every position encoding: the same greedy tokens.
    for (const entry of manifest.filter((m) => m.arch !== 'encoder_only')) {
      const { page: gpuPage, errors: ge } = await open(browser.context, server.url, `chapter=all&model=${entry.file}&backend=webgpu&speed=0&max=${n}`);
      const gs = await state(gpuPage);
      assert.equal(gs.backend.backend, 'webgpu', `${entry.file}: ${gs.backend.reason}`);
      assert.ok(gs.backend.parity < 1e-3, `${entry.file}: GPU−CPU logit difference ${gs.backend.parity}`);
      const gpu = await waitTokens(gpuPage, n, 120000);
      const { page: cpuPage, errors: ce } = await open(browser.context, server.url, `chapter=all&model=${entry.file}&backend=cpu&speed=0&max=${n}`);
      const cpu = await waitTokens(cpuPage, n);
      assert.ok(cpu.ids.length >= 1, `${entry.file} generates`);
      assert.deepEqual(gpu.ids, cpu.ids, `${entry.file}: greedy decoding picks the same tokens on both backends`);
      assert.deepEqual([...ge, ...ce], []);
      await gpuPage.close();
      await cpuPage.close();
    }
    assert.deepEqual(errors, []);
  });
});

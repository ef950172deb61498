// The page under hostile conditions, in real headless Chromium, served under the strict
// Content-Security-Policy (www/content-security-policy.txt) with a report-uri:
// - not one CSP violation in the page or the embed (and a control proving the policy bites);
// - an engine that traps, or a worker that dies, is restarted with the same model and
//   settings, the page says so, and generation carries on to the same tokens;
// - script-injection payloads in the link, the input, a tokenizer's tokens, the model
//   list, a checkpoint's file name and a run's name are shown as text, never run, and the
//   page says what it ignored;
// - a GPU device destroyed mid-generation hands over to the CPU with the CPU's tokens, and
//   a browser without navigator.gpu at all runs on the CPU and says why;
// - 1,000 generated tokens keep wasm memory and the page's JS heap flat after warm-up.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CSP, dist, launch, open, seeView, serve, shot } from './harness.mjs';
import { liveBytes } from './lab-memory.mjs';

/** Collect securitypolicyviolation events from the first script of every document on. */
function recordViolations() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) =>
    window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`),
  );
}

const PWN = 'window.__pwned=(window.__pwned||0)+1';
/** Markup that would run or draw if any of it reached the DOM as HTML. */
const PAYLOADS = [
  `<img data-pwn src=x onerror="${PWN}">`,
  `<script data-pwn>${PWN}</script>`,
  `<svg data-pwn onload="${PWN}"></svg>`,
  `"><iframe data-pwn srcdoc="<script>parent.${PWN}</script>">`,
];

const el = (page, f, arg) => page.evaluate(f, arg);

/** Every transformer-playground on the page has drawn its first forward pass. */
async function allReady(page) {
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined);
  await page.evaluate(() => Promise.all([...document.querySelectorAll('transformer-playground')].map((e) => e.ready)));
}

/** Wait until generation has stopped (done) with at least one token. */
async function waitDone(page, timeout = 90000) {
  await page.waitForFunction(
    () => {
      const e = document.querySelector('transformer-playground');
      return (e.done && e.generated.length > 0) || e.error;
    },
    null,
    { timeout },
  );
  return el(page, () => {
    const e = document.querySelector('transformer-playground');
    return { ids: [...e.generated], error: e.error };
  });
}

/** The text inside a component's shadow root (innerText of a host skips its shadow tree). */
const shadowText = (page, tag) =>
  page.evaluate((tag) => document.querySelector('transformer-playground').shadowRoot.querySelector(tag)?.shadowRoot?.textContent ?? '', tag);

async function noPwn(page) {
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'an injected script ran');
  // Playwright's CSS engine pierces open shadow roots: no payload element exists anywhere.
  assert.equal(await page.locator('[data-pwn]').count(), 0, 'payload markup reached the DOM');
}

let server;
let browser;
before(async () => {
  server = await serve(dist, { csp: true });
  browser = await launch({ webgpu: true });
  await browser.context.addInitScript(recordViolations);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** No violation reported to the server or seen by the page; resets both lists. */
async function assertNoViolations(page) {
  await page.waitForTimeout(300); // reports are POSTed asynchronously
  const seen = await page.evaluate(() => window.__csp);
  assert.deepEqual(server.cspReports, [], 'CSP violation reports');
  assert.deepEqual(seen, [], 'securitypolicyviolation events');
  server.cspReports.length = 0;
}

describe('strict Content-Security-Policy', () => {
  test('page_and_embed_run_under_the_strict_policy_without_a_single_violation', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const resp = await page.goto(`${server.url}#chapter=all&speed=0&max=8`);
    assert.equal(resp.headers()['content-security-policy'], `${CSP}; report-uri /csp-report`);
    assert.match(CSP, /^default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; worker-src 'self'$/);
    await allReady(page);
    await waitDone(page);
    // Touch the views that draw with inline styles (heatmaps, bars) and the diagram.
    await page.locator('tp-attention [role="gridcell"]').first().focus();
    await page.locator('tp-controls input[type="checkbox"]').first().click();
    await page.waitForTimeout(500);
    await shot(page, 'csp-page');
    await assertNoViolations(page);
    assert.deepEqual(errors.filter((e) => /Content.Security.Policy|Refused to/i.test(e)), []);
    await page.close();

    const embed = await browser.context.newPage();
    embed.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await embed.goto(`${server.url}embed.html`);
    await allReady(embed);
    await embed.waitForTimeout(1500);
    await shot(embed, 'csp-embed');
    await assertNoViolations(embed);
    assert.deepEqual(errors.filter((e) => /Content.Security.Policy|Refused to/i.test(e)), []);
    await embed.close();
  });

  test('the_policy_bites_an_inline_script_and_a_style_attribute_are_refused_and_reported', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${server.url}#play=0`);
    await allReady(page);
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.head.append(s);
      document.body.setAttribute('style', 'outline: 3px solid red');
    });
    await page.waitForFunction(() => window.__csp.length >= 2);
    assert.equal(await page.evaluate(() => window.__inline), undefined);
    const seen = await page.evaluate(() => window.__csp.join('\n'));
    assert.match(seen, /script-src/);
    assert.match(seen, /style-src/);
    for (let i = 0; i < 50 && server.cspReports.length < 2; i++) await page.waitForTimeout(100);
    assert.ok(server.cspReports.length >= 2, `reports reached the server: ${server.cspReports.length}`);
    server.cspReports.length = 0;
    await page.close();
  });
});

describe('the page survives its engine', () => {
  const HASH = 'chapter=all&backend=cpu&strategy=sample&seed=11&temp=0.9&max=24&speed=60';

  for (const kind of ['trap', 'throw']) {
    test(`an_engine_that_dies_by_${kind}_mid_generation_is_restarted_and_generation_ends_with_the_same_tokens`, async () => {
      // The reference: the same settings, no crash.
      const ref = await open(browser.context, server.url, HASH);
      const want = await waitDone(ref.page);
      assert.equal(want.error, '');
      await ref.page.close();

      const { page, errors } = await open(browser.context, server.url, HASH);
      await page.waitForFunction(() => document.querySelector('transformer-playground').generated.length >= 5);
      const before = await el(page, () => {
        const e = document.querySelector('transformer-playground');
        return { st: e.st, params: e.info.params };
      });
      await el(page, (kind) => document.querySelector('transformer-playground').testOnlyCrashEngine(kind), kind);
      await page.waitForFunction(() => document.querySelector('transformer-playground').engineRestarts === 1);
      const got = await waitDone(page);
      const after = await el(page, () => {
        const e = document.querySelector('transformer-playground');
        return { st: e.st, params: e.info.params, note: e.engineNote, forward: e.lastForward !== null, hash: location.hash };
      });
      assert.equal(got.error, '', 'the page shows an error after recovering');
      assert.deepEqual(got.ids, want.ids, 'generation carried on to the tokens of an undisturbed run');
      assert.deepEqual(after.st, before.st, 'settings survived the restart');
      assert.equal(after.params, before.params, 'the same model was loaded again');
      assert.ok(after.forward, 'the views have a forward pass again');
      const note = await page.locator('[data-engine-note]').innerText();
      assert.match(note, /engine stopped .*restarted/i);
      assert.match(note, kind === 'trap' ? /crashed \(.*unreachable/i : /worker stopped with an error/i);
      await shot(page, `engine-restarted-${kind}`);
      await assertNoViolations(page);
      assert.deepEqual(errors.filter((e) => !/test-only/.test(e)), []);
      await page.close();
    });
  }
});

describe('hostile text is text', () => {
  test('script_payloads_in_the_link_are_shown_as_text_never_run_and_named_in_the_notes', async () => {
    const hash = new URLSearchParams({
      text: PAYLOADS[0].slice(0, 60),
      batch: `${PAYLOADS[1]}\n${PAYLOADS[2]}`,
      model: `${PAYLOADS[0]}.safetensors`,
      [PAYLOADS[3]]: '1',
      seed: PAYLOADS[1],
      play: '0',
      chapter: 'all',
    }).toString();
    const { page, errors } = await open(browser.context, server.url, hash);
    await noPwn(page);
    const notes = await page.locator('[data-notes]').innerText();
    assert.match(notes, /Ignored model=/);
    assert.match(notes, /Ignored seed=/);
    assert.match(notes, /Ignored unknown setting "">\<iframe data-pwn/);
    // The payload text became tokens: characters the vocabulary lacks are named as <unk>.
    const input = (await shadowText(page, 'tp-input')).replace(/\s+/g, ' ');
    assert.match(input, /not in the vocabulary and became <unk>/);
    const boxes = await page.locator('tp-input textarea').evaluateAll((ts) => ts.map((t) => t.value));
    assert.ok(boxes.includes(`${PAYLOADS[1]}\n${PAYLOADS[2]}`), `the batch payload is the batch box's text: ${JSON.stringify(boxes)}`);
    assert.match(input, /“<” at 0/);
    await shot(page, 'hostile-link');
    await assertNoViolations(page);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('typed_payloads_and_a_tokenizer_made_of_payloads_are_drawn_as_text', async () => {
    // A real shipped model whose vocabulary has markup in place of four of its tokens.
    const manifest = JSON.parse(readFileSync(join(dist, 'models/manifest.json'), 'utf8'));
    const file = manifest[0].file;
    const bytes = readFileSync(join(dist, 'models', file));
    const n = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
    const tok = JSON.parse(header.__metadata__.tokenizer);
    const swapped = tok.tokens.length - 4;
    tok.tokens.splice(swapped, 4, ...PAYLOADS);
    header.__metadata__.tokenizer = JSON.stringify(tok);
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    const hostile = Buffer.concat([len, json, bytes.subarray(8 + n)]);
    // And a model list whose titles are markup (a file name that is markup is dropped).
    const list = manifest.map((m, i) => (i === 0 ? { ...m, title: PAYLOADS[2], description: PAYLOADS[0] } : m));
    list.push({ ...manifest[0], file: `${PAYLOADS[1]}.safetensors`, title: 'bad file name' });

    // Without the offline worker, so the swapped files are what the page fetches.
    const direct = await launch({ serviceWorkers: 'block' });
    await direct.context.addInitScript(recordViolations);
    const page = await direct.context.newPage();
    const errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('dialog', (d) => {
      errors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.route(`**/models/${file}`, (r) => r.fulfill({ body: hostile, contentType: 'application/octet-stream' }));
    await page.route('**/models/manifest.json', (r) => r.fulfill({ body: JSON.stringify(list), contentType: 'application/json' }));
    await page.goto(`${server.url}#chapter=all&speed=0&max=40&strategy=sample&seed=3&temp=5`);
    await allReady(page);
    const vocab = await el(page, () => document.querySelector('transformer-playground').info.vocab);
    assert.deepEqual(vocab.slice(swapped), PAYLOADS);
    // The whole-vocabulary distribution names every token: the payloads appear as text.
    await seeView(page, 'output');
    await page.locator('tp-output button', { hasText: 'Show all' }).click();
    const output = await shadowText(page, 'tp-output');
    for (const p of PAYLOADS) assert.ok(output.includes(p), `token ${p} is not shown as text`);
    const controls = await shadowText(page, 'tp-controls');
    assert.ok(controls.includes(PAYLOADS[2]), 'the markup title is shown as text');
    assert.ok(!controls.includes('bad file name'), 'an entry whose file name is markup is dropped');
    // Typed text: markup in the prompt.
    await page.locator('tp-input textarea').first().fill(PAYLOADS.join(' '));
    await page.waitForFunction(() => document.querySelector('transformer-playground').st.text.includes('data-pwn'));
    await page.waitForTimeout(800);
    await noPwn(page);
    await shot(page, 'hostile-tokens');
    await assertNoViolations(page);
    assert.deepEqual(errors, []);
    await direct.close();
  });

  test('a_checkpoint_file_and_a_run_named_in_markup_are_drawn_as_text', async () => {
    const { page, errors } = await open(browser.context, server.url, 'play=0&views=lab');
    await page.waitForFunction(() => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab')?.form != null);
    const real = readFileSync(join(dist, 'models/reverse.safetensors'));
    // File names cannot hold "/", so these payloads close no tags; they would still run as markup.
    const badName = `${PAYLOADS[0]}.safetensors`;
    const goodName = `x"><img data-pwn src=x onerror="${PWN}">.safetensors`;
    const pick = (name, buffer) => page.locator('tp-lab input[data-import]').setInputFiles({ name, mimeType: 'application/octet-stream', buffer });
    // A file that is not a checkpoint: the loader's message names it, as text.
    await pick(badName, real.subarray(0, 100));
    const alert = page.locator('tp-lab [data-error]');
    await alert.waitFor();
    assert.ok((await alert.textContent()).trim().startsWith(`${badName} was not loaded: `), await alert.textContent());
    // A real one: it becomes the page's model, and the lab names it as text.
    await pick(goodName, real);
    await page.locator('tp-lab [data-used]').waitFor();
    assert.ok((await page.locator('tp-lab [data-used]').textContent()).includes(goodName));
    // A run renamed to markup: its row in the run table, then the page's model when used.
    const runName = PAYLOADS[3];
    const id = await el(
      page,
      async (name) => {
        const e = document.querySelector('transformer-playground');
        const h = e.train({ task: 'reverse', steps: 4, eval_every: 2 });
        await h.done;
        await e.renameRun(h.id, name);
        return h.id;
      },
      runName,
    );
    const row = page.locator(`tp-lab tr[data-run="${id}"]`);
    await page.waitForFunction(
      ([id, name]) => document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').shadowRoot.querySelector(`tr[data-run="${id}"]`)?.textContent.includes(name),
      [id, runName],
    );
    await row.locator('button[data-use]').click();
    await page.waitForFunction((name) => document.querySelector('transformer-playground').customModel === name, runName);
    await page.locator('tp-lab [data-used]', { hasText: runName }).waitFor();
    await page.waitForTimeout(500);
    await noPwn(page);
    await shot(page, 'hostile-names');
    await assertNoViolations(page);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('a lost GPU', () => {
  /** Step the page's generation one token at a time until it stops; `at(n)` runs after n tokens. */
  const stepToEnd = (page, loseAt) =>
    el(
      page,
      async (loseAt) => {
        const e = document.querySelector('transformer-playground');
        let lost = null;
        while (!e.done) {
          if (e.generated.length === loseAt && lost === null) lost = await e.testOnlyLoseGpu();
          await e.store.gen.stepOne();
          if (e.error || e.genNote) throw new Error(e.error || e.genNote);
        }
        return { ids: [...e.generated], lost, backend: e.backendInfo };
      },
      loseAt,
    );

  for (const strategy of ['greedy', 'sample']) {
    test(
      `a_device_destroyed_mid_generation_hands_over_to_the_cpu_with_the_tokens_of_a_cpu_only_run_${strategy}`,
      // Sampling carries on with the same random stream: the generator resumes on the CPU
      // where it stands (Generator::resume_on), its random stream kept.
      async () => {
        // A high temperature: nearly every draw depends on the random stream, not on the model.
        const settings = `strategy=${strategy}&seed=5&temp=3&max=20&play=0&speed=0`;
        const cpu = await open(browser.context, server.url, `chapter=all&backend=cpu&${settings}`);
        const want = await stepToEnd(cpu.page, -1);
        await cpu.page.close();
        const { page, errors } = await open(browser.context, server.url, `chapter=all&backend=webgpu&${settings}`);
        assert.equal(await el(page, () => document.querySelector('transformer-playground').backendInfo.backend), 'webgpu');
        const got = await stepToEnd(page, 6);
        assert.equal(got.lost, true, 'the test hook found a GPU device to destroy');
        assert.equal(got.backend.backend, 'cpu');
        assert.match(got.backend.reason, /GPU failed/);
        assert.match(got.backend.detail ?? '', /lost|destroy/i);
        const badge = await page.locator('tp-backend-badge .badge').innerText();
        assert.match(badge, /GPU failed/);
        assert.deepEqual(got.ids, want.ids, 'the tokens after the loss are those of a CPU-only run');
        await shot(page, `gpu-lost-${strategy}`);
        await assertNoViolations(page);
        assert.deepEqual(errors, []);
        await page.close();
      },
    );
  }

  test('a_browser_without_navigator_gpu_at_all_runs_on_the_cpu_and_says_why', async () => {
    const bare = await launch({ webgpu: true, serviceWorkers: 'block' });
    // No WebGPU object anywhere: not on the page's navigator, not on the worker's.
    await bare.context.addInitScript(() => {
      delete Navigator.prototype.gpu;
    });
    await bare.context.route('**/assets/worker-*.js', async (route) => {
      const resp = await route.fetch();
      const body = `delete WorkerNavigator.prototype.gpu;\n${await resp.text()}`;
      await route.fulfill({ response: resp, body });
    });
    const { page, errors } = await open(bare.context, server.url, 'chapter=all&backend=webgpu&speed=0&max=6');
    assert.equal(await page.evaluate(() => 'gpu' in navigator), false);
    await waitDone(page);
    const info = await el(page, () => document.querySelector('transformer-playground').backendInfo);
    assert.equal(info.backend, 'cpu');
    assert.match(info.reason, /WebGPU is unavailable/);
    assert.equal(info.detail, 'this browser has no navigator.gpu');
    assert.match(await page.locator('tp-backend-badge .badge').innerText(), /WebGPU is unavailable/);
    assert.deepEqual(errors, []);
    await bare.close();
  });

  test('a_browser_whose_webgpu_offers_no_adapter_gets_the_engine_without_its_gpu_backend_and_says_why', async () => {
    // Headless Chromium without its WebGPU switches: navigator.gpu is there, an adapter is not.
    const plain = await launch({ webgpu: false, serviceWorkers: 'block' });
    const wasm = [];
    plain.context.on('request', (r) => {
      const name = new URL(r.url()).pathname.split('/').pop();
      if (name.endsWith('.wasm')) wasm.push(name);
    });
    const { page, errors } = await open(plain.context, server.url, 'chapter=all&backend=webgpu&speed=0&max=6');
    const offered = await page.evaluate(async () => !!navigator.gpu && !!(await navigator.gpu.requestAdapter()));
    assert.equal(offered, false, 'this browser offers an adapter: the test needs one that does not');
    await waitDone(page);
    const info = await el(page, () => document.querySelector('transformer-playground').backendInfo);
    assert.equal(info.backend, 'cpu');
    assert.equal(info.status.kind, 'cpu_no_gpu');
    assert.equal(info.detail, 'this browser offers no WebGPU adapter');
    // Its inference engine is the one without the GPU backend (the whole engine comes too,
    // for the side studies of chapter=all).
    const modules = wasm.map((w) => w.replace(/-[\w-]+\.wasm$/, ''));
    assert.ok(modules.includes('tplay_infer_bg') && !modules.includes('tplay_infer_gpu_bg'), `the engine without its GPU backend: ${wasm.join(', ')}`);
    assert.equal((await page.evaluate(() => document.querySelector('transformer-playground').generated.length)) > 0, true, 'it generates on the CPU');
    assert.match(await page.locator('tp-backend-badge .badge').innerText(), /WebGPU is unavailable/);
    assert.deepEqual(errors, []);
    await plain.close();
  });
});

describe('long runs keep memory flat', () => {
  test('a_thousand_generated_tokens_grow_wasm_memory_and_the_js_heap_by_at_most_ten_percent_after_warm_up', async () => {
    const { page, errors } = await open(browser.context, server.url, 'backend=cpu&speed=0&max=200&play=0&views=generation');
    // Only the generation view (views=generation): the run measures the engine and the
    // page's state, not the redrawing of a 200 × 200 heatmap per token.
    const cdp = await page.context().newCDPSession(page);
    // The live objects of a heap snapshot (lab-memory.mjs): V8's usedSize also counts compiled
    // code and space not yet reused, and swings by more than 10% between identical runs.
    const heap = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      return liveBytes(cdp);
    };
    /** Generate n tokens in the page, starting again whenever a run stops (context full, max). */
    const generate = (n) =>
      el(page, async (n) => {
        const e = document.querySelector('transformer-playground');
        let total = 0;
        while (total < n) {
          await e.store.gen.start(true);
          if (e.generated.length === 0) throw new Error(e.genNote || e.error || 'no tokens');
          total += e.generated.length;
        }
        return total;
      }, n);
    await generate(200); // warm-up: caches, JIT, the allocator's first growth
    const wasm0 = (await el(page, () => document.querySelector('transformer-playground').memoryUse())).wasm_bytes;
    const heap0 = await heap();
    const made = await generate(1000);
    const wasm1 = (await el(page, () => document.querySelector('transformer-playground').memoryUse())).wasm_bytes;
    const heap1 = await heap();
    console.log(`memory over ${made} tokens after warm-up: wasm ${wasm0} → ${wasm1} bytes, page JS heap ${heap0} → ${heap1} bytes`);
    assert.ok(made >= 1000);
    assert.ok(wasm1 <= wasm0 * 1.1, `wasm memory grew from ${wasm0} to ${wasm1}`);
    assert.ok(heap1 <= heap0 * 1.1, `the JS heap grew from ${heap0} to ${heap1}`);
    await assertNoViolations(page);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

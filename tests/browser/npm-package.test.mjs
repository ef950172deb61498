// The npm package `transformer-playground`, as a site would use it: built
// (www/scripts/build-npm.mjs), packed with `npm pack`, installed from the tarball (offline:
// the package has no dependencies) into a fresh Vite project built with the front end's
// own Vite (its build and its dev server), and into a plain static page that loads the module from node_modules. In both
// the element renders, and its next-token probabilities equal those of the wasm core run
// under node on the same model and input. A consumer's TypeScript file typechecks against
// the package's types, and a page that loads the module from another origin runs it too.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, root, serve, shot } from './harness.mjs';

const www = join(root, 'www');
const el = 'document.querySelector("transformer-playground")';
let work;
let tarball;
let project;
let browser;
const servers = [];

function run(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'tplay-npm-'));
  run(process.execPath, [join(www, 'scripts/build-npm.mjs')], www);
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work, join(www, 'dist-npm')], work));
  tarball = join(work, packed[0].filename);
  // A fresh project: its package.json, the tarball installed without the network.
  project = join(work, 'post');
  mkdirSync(join(project, 'static'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'post', private: true, type: 'module' }));
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], project);
  const pkg = join(project, 'node_modules/transformer-playground');
  // The Vite route, as the package's README says: import it, copy the models, name them.
  writeFileSync(
    join(project, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A post</title></head><body>
<transformer-playground no-hash views="output" preset="play=0" models="./playground-models/"></transformer-playground>
<script type="module" src="./main.js"></script></body></html>`,
  );
  writeFileSync(join(project, 'main.js'), `import 'transformer-playground';\n`);
  cpSync(join(pkg, 'dist/models'), join(project, 'public/playground-models'), { recursive: true });
  run(process.execPath, [join(www, 'node_modules/vite/bin/vite.js'), 'build', '--base', './', '--logLevel', 'error'], project);
  // The plain route: the module straight from node_modules, the models found beside it.
  writeFileSync(
    join(project, 'static/index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A plain post</title></head><body>
<transformer-playground no-hash views="output" preset="play=0"></transformer-playground>
<script type="module" src="../node_modules/transformer-playground/dist/transformer-playground.js"></script></body></html>`,
  );
  browser = await launch({ webgpu: false, serviceWorkers: 'block' });
});

after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function served(dir, opts) {
  const s = await serve(dir, opts);
  servers.push(s);
  return s;
}

/** Open a page and wait for the element's first drawn forward pass (or its error). */
async function live(url) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => customElements.get('transformer-playground') !== undefined, null, { timeout: 30000 });
  const error = await page.evaluate(async () => {
    const p = document.querySelector('transformer-playground');
    await Promise.race([p.ready, new Promise((_, no) => setTimeout(() => no(new Error(`not ready: ${p.error || 'timeout'}`)), 60000))]);
    return p.error;
  });
  assert.equal(error, '', 'no error');
  return { page, errors };
}

/** What the element ran and the probabilities it drew. */
function drawn(page) {
  return page.evaluate(() => {
    const p = document.querySelector('transformer-playground');
    const s = p.store;
    return {
      model: p.st.model,
      req: { batch: s.input.batch, src: s.input.src ?? undefined, switches: s.switches(), sampling: s.sampling() },
      probs: Array.from(p.lastForward.model_probs),
      shown: Array.from(p.renderRoot.querySelector('tp-output').renderRoot.querySelectorAll('[data-token][data-prob]')).map((b) => [Number(b.dataset.token), Number(b.dataset.prob)]),
    };
  });
}

/** The same forward pass by the wasm core under node, on the packed model file. */
let core;
async function coreProbs(model, req) {
  if (!core) {
    core = await import(join(www, 'pkg/tplay.js'));
    core.initSync({ module: readFileSync(join(www, 'pkg/tplay_bg.wasm')) });
  }
  const e = new core.Engine();
  e.load(readFileSync(join(project, 'node_modules/transformer-playground/dist/models', model)));
  const r = await e.forward(req);
  e.free();
  return Array.from(r.model_probs);
}

function assertSameNumbers(got, want, what) {
  assert.equal(got.length, want.length, `${what}: as many probabilities`);
  assert.ok(got.length > 1);
  for (let i = 0; i < got.length; i++) assert.equal(got[i], want[i], `${what}: probability ${i}`);
}

describe('the npm package', () => {
  test('the_tarball_holds_the_module_its_types_worker_wasm_and_every_shipped_model', () => {
    const pkg = join(project, 'node_modules/transformer-playground');
    const meta = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    assert.equal(meta.name, 'transformer-playground');
    assert.match(meta.version, /^\d+\.\d+\.\d+$/);
    assert.equal(meta.exports['.'].import, './dist/transformer-playground.js');
    assert.equal(meta.exports['.'].types, './dist/transformer-playground.d.ts');
    for (const f of ['dist/transformer-playground.js', 'dist/transformer-playground.d.ts', 'dist/engine-types.d.ts', 'dist/assets/worker.js', 'dist/assets/tplay_infer_bg.wasm', 'dist/assets/tplay_infer_gpu_bg.wasm', 'dist/assets/tplay.js', 'dist/assets/tplay_bg.wasm', 'content-security-policy.txt', '_headers', 'README.md'])
      assert.ok(statSync(join(pkg, f)).size > 0, f);
    const shipped = JSON.parse(readFileSync(join(root, 'models/manifest.json'), 'utf8')).map((m) => m.file);
    const packed = readdirSync(join(pkg, 'dist/models'));
    for (const f of shipped) assert.ok(packed.includes(f), `model ${f} packed`);
    // The worker is named the way bundlers follow it.
    assert.match(readFileSync(join(pkg, 'dist/transformer-playground.js'), 'utf8'), /new Worker\(new URL\("\.\/assets\/worker\.js", import\.meta\.url\)/);
    console.log(`tarball: ${statSync(tarball).size} bytes`);
  });

  test('in_a_fresh_vite_project_the_element_draws_the_cores_probabilities', async () => {
    const s = await served(join(project, 'dist'), { csp: true });
    const { page, errors } = await live(`${s.url}index.html`);
    const d = await drawn(page);
    assertSameNumbers(d.probs, await coreProbs(d.model, d.req), 'vite build');
    assert.ok(d.shown.length > 0, 'the output view draws bars');
    for (const [id, p] of d.shown) assert.ok(Math.abs(d.probs[id] - p) < 1e-6, `token ${id}: drawn ${p}, the core's ${d.probs[id]}`);
    // The bundler copied the worker and the wasm into the built folder.
    const assets = readdirSync(join(project, 'dist/assets'));
    assert.ok(assets.some((f) => /^worker.*\.js$/.test(f)), assets.join(' '));
    // The three engine modules: the inference ones the page starts (without and with the
    // WebGPU backend), the whole one the lab fetches.
    for (const m of [/^tplay_infer_bg.*\.wasm$/, /^tplay_infer_gpu_bg.*\.wasm$/, /^tplay_bg.*\.wasm$/]) assert.ok(assets.some((f) => m.test(f)), `${m} among ${assets.join(' ')}`);
    assert.deepEqual(s.cspReports, [], 'no violation of the documented policy');
    assert.deepEqual(errors, []);
    await shot(page, 'npm-vite');
    await page.close();
  });

  test('under_the_vite_dev_server_the_element_draws_the_cores_probabilities', async () => {
    const { createServer } = await import(join(www, 'node_modules/vite/dist/node/index.js'));
    const dev = await createServer({ root: project, configFile: false, logLevel: 'error', server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false } });
    await dev.listen();
    servers.push({ close: () => dev.close() });
    const { page, errors } = await live(`${dev.resolvedUrls.local[0]}index.html`);
    const d = await drawn(page);
    assertSameNumbers(d.probs, await coreProbs(d.model, d.req), 'vite dev server');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('in_a_plain_static_page_the_element_draws_the_cores_probabilities', async () => {
    const s = await served(project, { csp: true });
    const { page, errors } = await live(`${s.url}static/index.html`);
    const d = await drawn(page);
    assertSameNumbers(d.probs, await coreProbs(d.model, d.req), 'static page');
    assert.deepEqual(s.cspReports, []);
    assert.deepEqual(errors, []);
    await page.close();
    // Models that are not where the element looks: it says where it looked and what to do.
    writeFileSync(join(project, 'static/missing.html'), readFileSync(join(project, 'static/index.html'), 'utf8').replace('preset="play=0"', 'preset="play=0" models="./nowhere/"'));
    const lost = await browser.context.newPage();
    await lost.goto(`${s.url}static/missing.html`);
    await lost.waitForFunction(`${el} && ${el}.error`, null, { timeout: 30000 });
    const error = await lost.evaluate(`${el}.error`);
    assert.ok(error.includes(`${s.url}static/nowhere/manifest.json`), error);
    assert.match(error, /HTTP 404/);
    assert.match(error, /models attribute/);
    await lost.close();
  });

  test('the_embed_menu_of_an_installed_element_writes_a_snippet_that_loads_this_module_and_its_models', async () => {
    // The plain page (models beside the module) and the Vite build (models named by `models`).
    for (const [dir, path] of [[project, 'static/index.html'], [join(project, 'dist'), 'index.html']]) {
      const s = await served(dir, { csp: true });
      const { page, errors } = await live(`${s.url}${path}`);
      const snip = await page.evaluate(`${el}.embedSnippet('output')`);
      // No embed.html ships with the package: the element form only, loading the module the page loaded.
      assert.equal(snip.iframe, '', `${path}: no iframe form`);
      const src = /<script type="module" src="([^"]+)"><\/script>/.exec(snip.element)?.[1];
      assert.ok(src && (await page.evaluate((u) => [...document.scripts].some((x) => x.src === u) || performance.getEntriesByName(u).length > 0, src)), `${path}: the snippet loads a module this page loaded: ${snip.element}`);
      // The dialog offers no iframe, and its snippet is that one.
      const menu = page.locator('transformer-playground .view[data-view="output"] tp-view-menu');
      await menu.locator('.trigger').click();
      await menu.locator('[data-action="embed"]').click();
      await page.locator('tp-embed-dialog dialog[open]').waitFor();
      assert.equal(await page.locator('tp-embed-dialog [data-embed-form="iframe"]').count(), 0, `${path}: no iframe choice`);
      assert.equal(await page.locator('tp-embed-dialog [data-embed-snippet]').inputValue(), snip.element);
      // Pasted into another post of the site: it draws the same numbers. The site's strict policy
      // refuses a style attribute, so the room the snippet holds goes into its stylesheet (www/README.md).
      const room = / style="([^"]*)"/.exec(snip.element)?.[1];
      assert.match(room ?? '', /min-height:\d+px/);
      writeFileSync(join(dir, 'copied.css'), `transformer-playground { ${room} }`);
      writeFileSync(join(dir, 'copied.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Copied</title><link rel="stylesheet" href="./copied.css"></head><body>${snip.element.replace(/ style="[^"]*"/, '')}</body></html>`);
      const copy = await live(`${s.url}copied.html`);
      assertSameNumbers((await drawn(copy.page)).probs, (await drawn(page)).probs, `${path}: the copied snippet`);
      assert.deepEqual(s.cspReports, []);
      assert.deepEqual([...errors, ...copy.errors], []);
      await Promise.all([page.close(), copy.page.close()]);
    }
  });

  test('a_typescript_file_of_the_site_typechecks_against_the_package_types', () => {
    writeFileSync(
      join(project, 'use.ts'),
      `import { VIEW_NAMES, type TransformerPlayground } from 'transformer-playground';
const p = document.querySelector('transformer-playground');
const same: TransformerPlayground | null = p;
async function main(): Promise<number> {
  if (!same) return 0;
  await same.ready;
  const probs: Float32Array | undefined = same.lastForward?.model_probs;
  const link: string = same.linkTo(VIEW_NAMES[0]);
  same.chrome = 'none';
  same.keep = 'title';
  const snippet: string = same.embedSnippet('attention', { alone: true, keep: ['heads'] }).element;
  return (probs?.[0] ?? 0) + link.length + snippet.length + (same.info?.d_model ?? 0);
}
void main();
`,
    );
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true, lib: ['es2022', 'dom'], skipLibCheck: false }, files: ['use.ts'] }));
    run(process.execPath, [join(www, 'node_modules/typescript/bin/tsc'), '-p', project], project);
    // And a wrong use fails: the types are real.
    writeFileSync(join(project, 'use.ts'), `const p = document.querySelector('transformer-playground');\nconst n: number = p!.linkTo('output');\n`);
    assert.throws(() => run(process.execPath, [join(www, 'node_modules/typescript/bin/tsc'), '-p', project], project));
  });

  test('loaded_from_another_origin_it_runs_and_a_host_refusing_blob_workers_is_told_so', async () => {
    // The module on one origin (with CORS, as a CDN sends it), the page on another (another
    // port): the worker starts from a blob shim, and the numbers are the core's.
    const cdn = await served(project, { headers: { 'Access-Control-Allow-Origin': '*' } });
    const host = mkdtempSync(join(work, 'host-'));
    writeFileSync(
      join(host, 'index.html'),
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Another site</title></head><body>
<transformer-playground no-hash views="output" preset="play=0"></transformer-playground>
<script type="module" src="${cdn.url}node_modules/transformer-playground/dist/transformer-playground.js"></script></body></html>`,
    );
    const site = await served(host);
    const { page, errors } = await live(`${site.url}index.html`);
    const d = await drawn(page);
    assertSameNumbers(d.probs, await coreProbs(d.model, d.req), 'script from another origin');
    assert.deepEqual(errors, []);
    await page.close();

    // A host whose policy allows the CDN's script but no blob: worker: the widget says what to add.
    const strict = await served(host, { csp: `default-src 'self' ${cdn.url.slice(0, -1)}; script-src 'self' ${cdn.url.slice(0, -1)} 'wasm-unsafe-eval'; worker-src 'self'` });
    const refused = await browser.context.newPage();
    await refused.goto(`${strict.url}index.html`);
    await refused.waitForFunction(`${el} && ${el}.error`, null, { timeout: 60000 });
    const error = await refused.evaluate(`${el}.error`);
    assert.match(error, /worker-src blob:/, error);
    const shown = await refused.evaluate(`${el}.renderRoot.querySelector('[role="alert"]').textContent`);
    assert.ok(shown.includes(error), shown);
    assert.doesNotMatch(shown, /SecurityError|Failed to construct/);
    await refused.close();
  });
});

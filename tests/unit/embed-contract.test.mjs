// The names a post's embeds use are a versioned contract (www/README.md, "Stable names"):
// view names, setting keys, model file names, the element's attributes and each view's
// parts for `keep`. Version 1 is written out below, by hand, as the README published it:
// every name of it must keep working (as itself or through an alias) for as long as
// CONTRACT_VERSION says 1, and the README's tables must say what the code accepts — a name
// the code gained or lost without the README (or the version) following fails here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const { transformWithOxc } = await import(require.resolve('vite'));

/** A TypeScript module of www/src as a node module (its @lit/localize import by file URL). */
async function load(rel) {
  const source = join(root, 'www/src', rel);
  const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
  const localize = pathToFileURL(require.resolve('@lit/localize')).href;
  return import(`data:text/javascript;base64,${Buffer.from(code.replace(/(['"])@lit\/localize\1/g, JSON.stringify(localize))).toString('base64')}`);
}

const url = await load('state/url.ts');
const { ALONE, partsOf } = await load('views/alone.ts');
const readme = readFileSync(join(root, 'www/README.md'), 'utf8');
const element = readFileSync(join(root, 'www/src/components/transformer-playground.ts'), 'utf8');
const registry = readFileSync(join(root, 'www/src/views/registry.ts'), 'utf8');
const manifest = JSON.parse(readFileSync(join(root, 'models/manifest.json'), 'utf8'));
const files = manifest.map((m) => m.file);

/** Version 1 of the contract, as published. Never edit a name out of it. */
const V1 = {
  views: ['overview', 'controls', 'backend', 'input', 'characters', 'generation', 'architecture', 'attention', 'masks', 'output', 'hidden', 'sqrt-dk', 'saturation', 'cost', 'schedule', 'positions', 'embedding-scale', 'order', 'extrapolation', 'ffn', 'no-leak', 'norms', 'dropout', 'parallel', 'beams', 'weights', 'lab'],
  viewAliases: { heatmap: 'attention', probabilities: 'output', badge: 'backend', sqrtdk: 'sqrt-dk', 'scaled-dot': 'sqrt-dk', residual: 'hidden', beam: 'beams', tokens: 'input' },
  settings: ['model', 'text', 'batch', 'causal', 'mask', 'pad', 'scale', 'ablate', 'backend', 'seed', 'strategy', 'temp', 'topk', 'topp', 'beam', 'speed', 'max', 'play', 'mode', 'drop', 'cache', 'site', 'layer', 'head', 'theme', 'lang', 'views', 'chapter', 'train', 'lesson', 'lock', 'hide', 'lessons', 'note', 'example', 'chrome', 'keep'],
  settingAliases: { temperature: 'temp', 'top-k': 'topk', 'top-p': 'topp', ablation: 'ablate', speed_ms: 'speed' },
  models: ['grammar-alibi.safetensors', 'grammar-rope.safetensors', 'grammar-sinusoidal.safetensors', 'grammar-learned.safetensors', 'grammar-relative.safetensors', 'grammar-none.safetensors', 'grammar-shared-qk.safetensors', 'translate.safetensors', 'sentiment.safetensors', 'tagging.safetensors', 'reverse.safetensors', 'zh-grammar-alibi.safetensors', 'zh-grammar-sinusoidal.safetensors', 'zh-grammar-learned.safetensors', 'zh-grammar-none.safetensors', 'zh-numerals.safetensors', 'zh-sentiment.safetensors', 'reverse-post-ln.safetensors', 'reverse-batch-norm.safetensors', 'reverse-no-residual.safetensors', 'reverse-no-embed-scale.safetensors', 'reverse-dot.safetensors', 'reverse-additive.safetensors', 'reverse-dropout.safetensors'],
  modelAliases: { 'grammar.safetensors': 'grammar-alibi.safetensors', 'grammar-lm.safetensors': 'grammar-alibi.safetensors' },
  attributes: ['model', 'preset', 'models', 'no-hash', 'theme', 'views', 'lesson', 'lang', 'chrome', 'keep', 'load'],
  parts: {
    overview: ['title', 'text', 'legend'],
    controls: ['note'],
    backend: ['reason', 'why'],
    input: ['title', 'text'],
    characters: ['title', 'hint'],
    generation: ['title', 'buttons', 'stats', 'cache'],
    architecture: ['title', 'steps'],
    attention: ['title', 'heads', 'tools', 'inspector', 'readout', 'legend'],
    masks: ['title', 'editor', 'legend'],
    output: ['title', 'controls', 'note', 'more'],
    hidden: ['title', 'note'],
    'sqrt-dk': ['title', 'note', 'controls', 'legend', 'numbers'],
    saturation: ['title', 'note'],
    cost: ['title', 'controls', 'note'],
    schedule: ['title', 'formula', 'controls'],
    positions: ['title', 'controls', 'slopes', 'note'],
    'embedding-scale': ['title', 'note', 'legend', 'numbers'],
    order: ['title', 'note', 'controls', 'texts', 'verdict'],
    extrapolation: ['title', 'note', 'controls', 'legend', 'numbers'],
    ffn: ['title', 'note', 'edit', 'verdict', 'maps'],
    'no-leak': ['title', 'note', 'edit'],
    norms: ['title', 'note'],
    dropout: ['title', 'note'],
    parallel: ['title', 'note', 'controls', 'legend', 'tables'],
    beams: ['title', 'legend', 'best'],
    weights: ['title', 'note', 'changed'],
    lab: ['title', 'experiments', 'settings', 'note'],
  },
};

/** The names in backticks of a piece of markdown. */
const ticked = (s) => [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
/** The section of the README under `heading`, up to the next heading. */
function section(heading) {
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `www/README.md has "${heading}"`);
  const rest = readme.slice(at + heading.length + 2);
  return rest.slice(0, rest.search(/\n#{2,3} /) >>> 0);
}
/** The rows of the first markdown table of `text`: its cells, header and rule left out. */
function rows(text) {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2)
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
}
/** `a` → `b` pairs written in a cell ("`heatmap` → `attention`, …"; "`sqrtdk` and `scaled-dot` → `sqrt-dk`"). */
function arrows(cell) {
  const out = {};
  for (const part of cell.split(/,\s*(?=`)/)) {
    const [from, to] = part.split('→');
    if (!to) continue;
    for (const name of ticked(from)) out[name] = ticked(to)[0];
  }
  return out;
}

const sorted = (a) => [...a].sort();
const names = section('### Stable names (embed contract, version 1)');
const contract = Object.fromEntries(rows(names).map(([kind, ...rest]) => [kind, rest]));

test('while the contract is version 1, every name of version 1 still works', () => {
  assert.equal(url.CONTRACT_VERSION, 1, 'a new version adds its names to this test as V2, keeping V1');
  const viewNames = [...registry.matchAll(/^\s+name: '([a-z-]+)',?$/gm)].map((m) => m[1]);
  for (const v of V1.views) assert.ok(viewNames.includes(v) || (v in url.VIEW_ALIASES && viewNames.includes(url.VIEW_ALIASES[v])), `view ${v}`);
  for (const [old, now] of Object.entries(V1.viewAliases)) assert.equal(url.viewAlias(old), now, `view alias ${old}`);
  const keys = Object.keys(url.DEFAULTS);
  for (const k of V1.settings) assert.ok(keys.includes(k) || keys.includes(url.SETTING_ALIASES[k]), `setting ${k}`);
  for (const [old, now] of Object.entries(V1.settingAliases)) assert.equal(url.SETTING_ALIASES[old], now, `setting alias ${old}`);
  for (const f of V1.models) assert.ok(files.includes(f) || files.includes(url.MODEL_ALIASES[f]), `model ${f}`);
  for (const [old, now] of Object.entries(V1.modelAliases)) assert.equal(url.MODEL_ALIASES[old], now, `model alias ${old}`);
  // What a link reads: each name of version 1, written in a link, parses without a note.
  for (const v of [...V1.views, ...Object.keys(V1.viewAliases)]) assert.deepEqual(url.parseHash(`views=${v}`).notes, [], `views=${v}`);
  for (const f of [...V1.models, ...Object.keys(V1.modelAliases)]) assert.deepEqual(url.parseHash(`model=${f}`).notes, [], `model=${f}`);
  for (const [view, parts] of Object.entries(V1.parts)) {
    for (const p of parts) assert.ok(partsOf(url.viewAlias(view)).includes(p), `${view} keeps ${p}`);
    assert.ok(partsOf(view).includes('menu'), `${view} keeps menu`);
  }
  // The element's attributes: each one the element reads.
  for (const a of V1.attributes) {
    const prop = a.replace(/-(\w)/g, (_, c) => c.toUpperCase());
    assert.ok(new RegExp(`^//\\s+${a}(=|\\s)`, 'm').test(element) && (element.includes(`getAttribute('${a}')`) || new RegExp(`^\\s+${prop}: \\{ type`, 'm').test(element)), `attribute ${a}`);
  }
});

test('the README says exactly the names the code accepts', () => {
  // Views and their aliases.
  const viewNames = [...registry.matchAll(/^\s+name: '([a-z-]+)',?$/gm)].map((m) => m[1]);
  assert.deepEqual(sorted(ticked(contract.views[0])), sorted(viewNames), 'the views row');
  assert.deepEqual(arrows(contract.views[1]), { ...url.VIEW_ALIASES }, 'the view aliases');
  // Settings: the URL-hash table's keys and chrome, keep.
  const hashKeys = rows(section('## URL hash')).flatMap(([keys]) => ticked(keys));
  assert.deepEqual(sorted([...hashKeys, ...ticked(contract.settings[0])]), sorted(Object.keys(url.DEFAULTS)), 'the URL-hash table and the settings row name every setting key');
  assert.deepEqual(arrows(contract.settings[1]), { ...url.SETTING_ALIASES }, 'the setting aliases');
  assert.deepEqual(arrows(contract.models[1]), { ...url.MODEL_ALIASES }, 'the model aliases');
  for (const to of Object.values(url.MODEL_ALIASES)) assert.ok(files.includes(to), `${to} is shipped`);
  // The element's attributes: the README's row, the element's own list of them.
  const listed = [...element.matchAll(/^\/\/ {3}([a-z-]+)(?:="|\s)/gm)].map((m) => m[1]);
  assert.deepEqual(sorted(ticked(contract['element attributes'][0])), sorted(listed), "the attributes row and the element's header");
  assert.deepEqual(sorted(listed), sorted(V1.attributes));
  // Each view's parts: the "Just the picture" table and views/alone.ts.
  const table = Object.fromEntries(rows(section('### Just the picture: `chrome="none"`')).map(([view, , parts]) => [ticked(view)[0], ticked(parts)]));
  assert.deepEqual(sorted(Object.keys(table)), sorted(viewNames), 'a row per view');
  assert.deepEqual(sorted(Object.keys(ALONE)), sorted(viewNames), 'views/alone.ts has every view');
  for (const v of viewNames) assert.deepEqual(table[v], Object.keys(ALONE[v].parts), `${v}: the README's parts are views/alone.ts's`);
});

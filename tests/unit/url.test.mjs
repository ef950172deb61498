// Property tests of the URL-hash settings parser (www/src/state/url.ts) with fast-check:
// a link is untrusted text, so any string must parse without throwing; every valid state
// survives format → parse unchanged; and a hostile value is never applied, only reported.
// url.ts is TypeScript: Vite's own transform (oxc) strips its types for node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const fc = require('fast-check');
const { transformWithOxc } = await import(require.resolve('vite'));

const source = join(root, 'www/src/state/url.ts');
const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
// The module's only import, @lit/localize, by its file URL (a data: URL has no node_modules).
const localize = pathToFileURL(require.resolve('@lit/localize')).href;
const url = await import(`data:text/javascript;base64,${Buffer.from(code.replace(/(['"])@lit\/localize\1/g, JSON.stringify(localize))).toString('base64')}`);
const { DEFAULTS, MAX_TEXT, parseHash, formatHash, SETTING_ALIASES, VIEW_ALIASES, MODEL_ALIASES, CONTRACT_VERSION } = url;

const RUNS = Number(process.env.TPLAY_PROPERTY_RUNS ?? 3000);
const KEYS = Object.keys(DEFAULTS);
const SITES = ['encoder_self', 'decoder_self', 'cross'];

/** Text a person can type: any Unicode scalar values (no lone surrogates). */
const text = (max) => fc.string({ unit: 'binary', maxLength: max });
const int = (min, max) => fc.integer({ min, max });
const real = (min, max) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });

/** Every valid setting, field by field (what url.ts's table says it accepts). */
const VALID = {
  // An alias (a renamed file) reads as its current name: left out of the round trip.
  model: fc.stringMatching(/^[A-Za-z0-9_.-]{1,60}\.safetensors$/).filter((m) => !(m in MODEL_ALIASES)),
  text: text(MAX_TEXT),
  // A batch of one empty line is the empty batch (both format to ''): left out.
  batch: fc.array(text(MAX_TEXT).map((s) => s.replace(/\n/g, ' ')), { maxLength: 4 }).filter((b) => !(b.length === 1 && b[0] === '')),
  causal: fc.constantFrom(null, true, false),
  mask: fc.option(
    fc.record(
      {
        rule: fc.oneof(
          fc.constant({ kind: 'none' }),
          fc.constant({ kind: 'causal' }),
          fc.record({ kind: fc.constant('prefix_lm'), prefix: int(0, 9999) }, { noNullPrototype: true }),
          fc.record({ kind: fc.constant('sliding_window'), window: int(1, 9999) }, { noNullPrototype: true }),
        ),
        cells: fc.array(fc.record({ query: int(0, 9999), key: int(0, 9999), hidden: fc.boolean() }, { noNullPrototype: true }), { maxLength: 256 }),
      },
      { noNullPrototype: true },
    ),
    { nil: null },
  ),
  pad: fc.boolean(),
  scale: fc.boolean(),
  ablate: fc.array(fc.record({ site: fc.constantFrom(...SITES), layer: int(0, 99), head: int(0, 99) }, { noNullPrototype: true }), { maxLength: 64 }),
  backend: fc.constantFrom('auto', 'webgpu', 'cpu'),
  seed: int(0, 4294967295),
  strategy: fc.constantFrom('greedy', 'sample', 'beam'),
  temp: real(0.05, 5),
  topk: int(0, 10000),
  topp: real(0.01, 1),
  beam: int(1, 8),
  speed: int(0, 2000),
  max: int(1, 200),
  play: fc.boolean(),
  mode: fc.constantFrom('eval', 'train'),
  // Probabilities from 0.001 up print without an exponent, as a person types them.
  drop: fc.oneof(fc.constant(null), fc.constant(0), real(0.001, 0.9)),
  cache: fc.boolean(),
  site: fc.constantFrom(null, ...SITES),
  layer: int(0, 63),
  head: int(0, 63),
  theme: fc.constantFrom('auto', 'light', 'dark'),
  lang: fc.constantFrom(null, 'en', 'zh-Hans'),
  views: fc.array(fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/).filter((v) => !(v in VIEW_ALIASES)), { maxLength: 32 }),
  chrome: fc.constantFrom('full', 'none'),
  keep: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/), { maxLength: 8 }),
  train: fc
    .array(fc.tuple(fc.stringMatching(/^[a-z][a-z0-9_]{0,19}$/), fc.stringMatching(/^[A-Za-z0-9_.:%+-]{0,60}$/)), { maxLength: 8 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&')),
  lesson: fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z][a-z0-9-]{0,39}$/)),
  // Checked for its shape here; the page drops (and names) a chapter it does not have.
  chapter: fc.oneof(fc.constant(''), fc.constant('all'), fc.stringMatching(/^[a-z][a-z-]{0,23}$/)),
  // Names of settings and controls; the page drops (and names) the ones it does not know.
  lock: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/), { maxLength: 64 }),
  hide: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/), { maxLength: 64 }),
  // An assignment: lesson ids (the page drops unknown ones), the teacher's instruction and example as free text.
  lessons: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,39}$/), { maxLength: 16 }),
  note: text(300),
  example: text(MAX_TEXT),
};
const validState = fc.record(VALID, { noNullPrototype: true });

test('every_setting_of_the_table_has_a_generator_here', () => {
  assert.deepEqual(Object.keys(VALID).sort(), KEYS.slice().sort());
});

/** What an attacker puts in a link. */
const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '"><img src=x onerror="window.__pwned=1">',
  'javascript:window.__pwned=1',
  '${window.__pwned=1}',
  '{{constructor.constructor("window.__pwned=1")()}}',
  '__proto__',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  '0x10',
  '9'.repeat(400),
  '\u0000\u001b[31m\u202e',
  '\ud800',
  'a'.repeat(MAX_TEXT + 1),
];

test('any_string_parses_without_throwing_and_notes_stay_short_plain_sentences', () => {
  const hash = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 400 }),
    fc.string({ unit: 'grapheme', maxLength: 400 }),
    // Lone surrogates and other broken UTF-16, as a hand-edited link can hold.
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 200 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS, '__proto__', 'constructor'), fc.string()), fc.oneof(fc.constantFrom(...HOSTILE), fc.string())), { maxLength: 30 }).map(
      // Raw, not encoded: a hand-made link need not be well-formed.
      (kv) => kv.map(([k, v]) => `${k}=${v}`).join('&'),
    ),
  );
  fc.assert(
    fc.property(fc.boolean(), hash, (withMark, h) => {
      const { state, notes } = parseHash(withMark ? `#${h}` : h);
      assert.equal(typeof state, 'object');
      assert.deepEqual(Object.keys(state).sort(), KEYS.slice().sort());
      assert.ok(notes.length <= 12);
      for (const n of notes) {
        assert.equal(typeof n, 'string');
        assert.ok(n.length < 300, `note too long: ${n.length}`);
        // eslint-disable-next-line no-control-regex
        assert.ok(!/[\u0000-\u001f\u007f]/.test(n), `control characters in ${JSON.stringify(n)}`);
      }
      // Nothing from the link reaches shared prototypes.
      assert.equal({}.pwned, undefined);
      assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'model'), false);
    }),
    { numRuns: RUNS },
  );
});

test('every_valid_state_survives_format_then_parse_unchanged_and_without_notes', () => {
  fc.assert(
    fc.property(validState, (st) => {
      const h = formatHash(st);
      const { state, notes } = parseHash(`#${h}`);
      assert.deepEqual(notes, [], `hash ${h}`);
      assert.deepEqual(state, st);
    }),
    { numRuns: RUNS },
  );
});

test('a_hostile_value_for_any_setting_is_ignored_and_named_in_a_note', () => {
  fc.assert(
    fc.property(fc.constantFrom(...KEYS.filter((k) => !['text', 'batch', 'note', 'example'].includes(k))), fc.constantFrom(...HOSTILE), (key, value) => {
      const { state, notes } = parseHash(`#${new URLSearchParams({ [key]: value })}`);
      assert.deepEqual(state, DEFAULTS, `${key}=${value} was applied`);
      assert.equal(notes.length, 1);
      assert.ok(notes[0].startsWith(`Ignored ${key}=`), notes[0]);
    }),
    { numRuns: RUNS },
  );
  // Free text is text: markup in it is kept as characters (the page renders it as text),
  // and only its length is judged.
  for (const v of HOSTILE) {
    const { state, notes } = parseHash(`#${new URLSearchParams({ text: v })}`);
    if (v.length <= MAX_TEXT) {
      assert.deepEqual(notes, []);
      assert.equal(state.text, v.replace('\ud800', '\ufffd'));
    } else {
      assert.equal(state.text, DEFAULTS.text);
      assert.match(notes[0], /^Ignored text=/);
    }
  }
  // So is an assignment's instruction (at most 300 characters) and example (at most MAX_TEXT).
  for (const [key, max] of [['note', 300], ['example', MAX_TEXT]]) {
    for (const v of [...HOSTILE, 'x'.repeat(max + 1)]) {
      const { state, notes } = parseHash(`#${new URLSearchParams({ [key]: v })}`);
      if (v.length <= max) {
        assert.deepEqual(notes, []);
        assert.equal(state[key], v.replace('\ud800', '\ufffd'));
      } else {
        assert.equal(state[key], '');
        assert.ok(notes[0].startsWith(`Ignored ${key}=`), notes[0]);
      }
    }
  }
});

test('unknown_and_repeated_keys_are_ignored_with_a_note_each', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 30 }).filter((k) => !KEYS.includes(k) && !(k in SETTING_ALIASES)), fc.string(), (key, value) => {
      const { state, notes } = parseHash(`#${new URLSearchParams([[key, value], ['seed', '5'], ['seed', '6']])}`);
      assert.equal(state.seed, 5);
      assert.equal(notes.length, 2, JSON.stringify(notes));
      assert.match(notes[0], /^Ignored unknown setting /);
      assert.match(notes[1], /^Ignored a repeated setting "seed"/);
    }),
    { numRuns: RUNS },
  );
});

test('ablated_heads_are_spelled_site_dot_layer_dot_head_as_in_the_cli', () => {
  const { state, notes } = parseHash('#ablate=decoder_self.0.2,cross.1.0');
  assert.deepEqual(notes, []);
  assert.deepEqual(state.ablate, [
    { site: 'decoder_self', layer: 0, head: 2 },
    { site: 'cross', layer: 1, head: 0 },
  ]);
  const hash = formatHash(state);
  assert.ok(decodeURIComponent(hash).includes('ablate=decoder_self.0.2,cross.1.0'), hash);
  assert.deepEqual(parseHash(hash).state.ablate, state.ablate);
  // The CLI's older SITE:LAYER:HEAD is not a spelling of the URL: ignored, with a note.
  for (const old of ['decoder_self:0:2', 'decoder_self.0', 'self.0.2', 'cross.1.0.3']) {
    const r = parseHash(`#${new URLSearchParams({ ablate: old })}`);
    assert.deepEqual(r.state.ablate, [], old);
    assert.match(r.notes[0], /^Ignored ablate=/, old);
  }
});

test('a_hostile_or_malformed_mask_is_refused_with_a_note_and_a_valid_one_is_read_exactly', () => {
  const many = Array.from({ length: 257 }, (_, i) => `${i}.0.h`).join(',');
  for (const bad of ['window-0', 'prefix--1', 'window-', 'causal;1.2', 'causal;1.2.h;0.0.s', 'causal;1.2.x', 'sideways', `causal;${many}`, 'window-99999']) {
    const { state, notes } = parseHash(`mask=${encodeURIComponent(bad)}`);
    assert.equal(state.mask, null, bad);
    assert.equal(notes.length, 1, bad);
    assert.match(notes[0], /^Ignored mask=/, bad);
  }
  const { state, notes } = parseHash('mask=window-3%3B4.1.h%2C0.2.s');
  assert.deepEqual(notes, []);
  assert.deepEqual(state.mask, { rule: { kind: 'sliding_window', window: 3 }, cells: [{ query: 4, key: 1, hidden: true }, { query: 0, key: 2, hidden: false }] });
});

test('renamed_names_keep_working_as_aliases_of_the_versioned_contract', () => {
  assert.ok(Number.isInteger(CONTRACT_VERSION) && CONTRACT_VERSION >= 1);
  // Every alias points at a current name, and no alias is itself a current name.
  for (const [old, now] of Object.entries(SETTING_ALIASES)) {
    assert.ok(KEYS.includes(now), `${old} → ${now} is a setting`);
    assert.ok(!KEYS.includes(old), `${old} is not also a setting`);
  }
  const { state, notes } = parseHash('temperature=0.5&top-k=7&views=heatmap,probabilities,sqrtdk&model=grammar.safetensors&strategy=sample');
  assert.deepEqual(notes, []);
  assert.equal(state.temp, 0.5);
  assert.equal(state.topk, 7);
  assert.deepEqual(state.views, ['attention', 'output', 'sqrt-dk']);
  assert.equal(state.model, 'grammar-alibi.safetensors');
  // Written back, a link uses the current names only.
  const link = formatHash(state);
  assert.match(link, /temp=0\.5/);
  assert.match(link, /views=attention%2Coutput%2Csqrt-dk/);
  assert.doesNotMatch(link, /temperature|heatmap|grammar\.safetensors/);
  // An alias and its current name in one link are one setting said twice: the second is ignored with a note.
  assert.equal(parseHash('temp=2&temperature=3').state.temp, 2);
  assert.equal(parseHash('temp=2&temperature=3').notes.length, 1);
});

test('chrome_and_keep_read_as_settings', () => {
  const { state, notes } = parseHash('chrome=none&keep=heads,legend');
  assert.deepEqual(notes, []);
  assert.equal(state.chrome, 'none');
  assert.deepEqual(state.keep, ['heads', 'legend']);
  assert.equal(parseHash('chrome=bare').notes.length, 1);
  assert.equal(parseHash('chrome=bare').state.chrome, 'full');
});

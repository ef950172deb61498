// The lessons' answers outside the page: the tour's progress read back from storage that
// anyone could have written (src/lessons/progress.ts) never throws and keeps only answers of
// the right shape; an answer recorded right marks the lesson done; and a typed number is
// read as people write it (src/lessons/answer.ts). Both are TypeScript with no imports:
// Vite's own transform (oxc) strips their types for node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const fc = require('fast-check');
const { transformWithOxc } = await import(require.resolve('vite'));

/** A module's TypeScript as a data: URL, its relative imports (./student) made data: URLs too. */
async function dataUrl(file) {
  const source = join(root, file);
  let { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
  for (const m of [...code.matchAll(/from\s+(['"])(\.\/[\w-]+)\1/g)]) {
    code = code.replace(m[0], `from ${JSON.stringify(await dataUrl(join(dirname(file), `${m[2]}.ts`)))}`);
  }
  return `data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;
}

async function load(file) {
  return import(await dataUrl(file));
}

// A localStorage of one key, as the browser's.
const store = new Map();
globalThis.localStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};

const { loadProgress, recordAnswer } = await load('www/src/lessons/progress.ts');
const { parseNumber, isRight } = await load('www/src/lessons/answer.ts');

/** Is this a progress of the promised shape? */
function wellFormed(p) {
  assert.ok(Array.isArray(p.done) && p.done.every((x) => typeof x === 'string' && x.length <= 40));
  assert.equal(typeof p.last, 'string');
  for (const [id, a] of Object.entries(p.answers)) {
    assert.ok(id.length > 0 && id.length <= 40, id);
    assert.deepEqual(Object.keys(a).sort(), ['answer', 'right', 'tries']);
    assert.ok(typeof a.answer === 'string' && typeof a.right === 'boolean' && Number.isInteger(a.tries) && a.tries >= 1);
  }
}

test('progress_read_from_any_stored_text_never_throws_and_is_well_formed', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.json(), fc.anything().map((x) => JSON.stringify({ done: x, last: x, answers: x }) ?? '')), (text) => {
      store.set('tplay-lessons', text);
      wellFormed(loadProgress());
    }),
    { numRuns: 2000 },
  );
});

test('progress_keeps_answers_of_the_right_shape_and_drops_the_rest', () => {
  store.set(
    'tplay-lessons',
    JSON.stringify({
      done: ['heads', 7, 'x'.repeat(41)],
      last: 'qkv',
      answers: {
        heads: { answer: '1', right: true, tries: 2 },
        qkv: { answer: 0, right: true, tries: 1 },
        order: { answer: '0', right: 'yes', tries: 1 },
        ffn: { answer: '3', right: false, tries: 0 },
        ['__proto__']: { answer: '1', right: true, tries: 1 },
        ['x'.repeat(41)]: { answer: '1', right: true, tries: 1 },
      },
    }),
  );
  const p = loadProgress();
  assert.deepEqual(p.done, ['heads']);
  assert.equal(p.last, 'qkv');
  assert.deepEqual(Object.keys(p.answers).sort(), ['__proto__', 'heads'].sort());
  assert.deepEqual({ ...p.answers.heads }, { answer: '1', right: true, tries: 2 });
  assert.equal(Object.getPrototypeOf({}).right, undefined, 'nothing leaks into Object.prototype');
  store.set('tplay-lessons', JSON.stringify({ answers: [1, 2] }));
  assert.deepEqual(Object.keys(loadProgress().answers), []);
});

test('a_wrong_answer_is_kept_without_finishing_the_lesson_a_right_one_finishes_it', () => {
  store.delete('tplay-lessons');
  let p = recordAnswer('heads', { answer: '2', right: false, tries: 1 });
  assert.deepEqual(p.done, []);
  assert.deepEqual({ ...loadProgress().answers.heads }, { answer: '2', right: false, tries: 1 });
  p = recordAnswer('heads', { answer: '0', right: true, tries: 2 });
  assert.deepEqual(loadProgress().done, ['heads']);
  assert.deepEqual({ ...loadProgress().answers.heads }, { answer: '0', right: true, tries: 2 });
});

test('typed_numbers_are_read_as_people_write_them', () => {
  const cases = [
    ['0.0011', 0.0011],
    [' 1.1e-3 ', 0.0011],
    ['1,5', 1.5],
    ['1,500', 1500],
    ['１２', 12],
    ['０．５', 0.5],
    ['−3', -3],
    ['.5', 0.5],
    ['7', 7],
  ];
  for (const [t, x] of cases) assert.equal(parseNumber(t), x, t);
  for (const t of ['', 'abc', '12%', '1.2.3', 'e5', 'Infinity', 'NaN', '0x10', '1e999']) assert.equal(parseNumber(t), null, t);
});

test('any_text_parses_to_a_finite_number_or_null', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (t) => {
      const x = parseNumber(t);
      assert.ok(x === null || Number.isFinite(x));
    }),
    { numRuns: 3000 },
  );
});

test('an_answer_is_right_within_the_tolerance_and_wrong_beyond_it', () => {
  assert.equal(isRight(12, 12, 0), true);
  assert.equal(isRight(13, 12, 0), false);
  assert.equal(isRight(0.00112, 0.0011180339, 0.0011180339 * 0.02), true);
  assert.equal(isRight(0.0013, 0.0011180339, 0.0011180339 * 0.02), false);
  assert.equal(isRight(0, 0, 5e-4), true);
  assert.equal(isRight(0.01, 0, 5e-4), false);
});

// docs/model.zh-Hans.md is a translation of docs/model.md: every formula, name and code
// span (`…`), every link target and every table row of the English stays, unchanged and as
// often, in the Chinese; the lessons' anchors (#attention, #ffn-norms, #forward-pass) exist.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const en = readFileSync(join(root, 'docs/model.md'), 'utf8');
const zh = readFileSync(join(root, 'docs/model.zh-Hans.md'), 'utf8');

/** Each distinct match of `re` in `s` and how often it occurs. */
function counts(s, re) {
  const m = new Map();
  for (const x of s.match(re) ?? []) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

test('every_code_span_and_formula_of_the_english_is_in_the_chinese_as_often', () => {
  const z = counts(zh, /`[^`]+`/g);
  const lost = [...counts(en, /`[^`]+`/g)].filter(([s, n]) => (z.get(s) ?? 0) < n).map(([s]) => s);
  assert.deepEqual(lost, []);
});

test('every_link_target_and_table_row_count_is_kept', () => {
  const z = counts(zh, /\]\([^)]+\)/g);
  const lost = [...counts(en, /\]\([^)]+\)/g)].filter(([s, n]) => (z.get(s) ?? 0) < n).map(([s]) => s);
  assert.deepEqual(lost, []);
  const rows = (s) => s.split('\n').filter((l) => l.startsWith('|')).length;
  assert.equal(rows(zh), rows(en));
});

test('the_anchors_the_lessons_link_to_exist', () => {
  const lessons = readFileSync(join(root, 'www/src/lessons/lessons.ts'), 'utf8');
  const anchors = new Set([...lessons.matchAll(/doc: '([a-z-]+)'/g)].map((m) => m[1]));
  assert.ok(anchors.size > 0);
  for (const a of anchors) assert.ok(zh.includes(`<a id="${a}"></a>`), a);
});

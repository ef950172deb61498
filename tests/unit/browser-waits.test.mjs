// The browser tests' waits can fail. playwright's `page.waitForFunction` polls its predicate
// and stops at the first truthy answer without awaiting it, so an `async` predicate (whose
// answer is a promise, always truthy) ends the wait at once, and the test then reads a page
// that has not finished. Every predicate handed to it in tests/browser is synchronous.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'tests/browser');

/** `file:line` of every `waitForFunction(async …` call in the source `text`. */
export function asyncWaits(name, text) {
  const found = [];
  for (const m of text.matchAll(/\bwaitForFunction\(\s*async\b/g)) found.push(`${name}:${text.slice(0, m.index).split('\n').length}`);
  return found;
}

test('the_scan_finds_an_async_predicate_and_passes_a_synchronous_one', () => {
  assert.deepEqual(asyncWaits('a.mjs', 'x;\nawait page.waitForFunction(\n  async () => true);'), ['a.mjs:2']);
  assert.deepEqual(asyncWaits('b.mjs', 'await page.waitForFunction(() => el.done);\nconst f = async () => 1;'), []);
});

test('every_waitForFunction_predicate_in_the_browser_tests_is_synchronous', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.mjs') && !f.endsWith('-scratch.mjs'));
  assert.ok(files.length > 20, `browser test files found: ${files.length}`);
  const found = files.flatMap((f) => asyncWaits(f, readFileSync(join(dir, f), 'utf8')));
  assert.deepEqual(found, [], 'an async predicate ends the wait at once: make it synchronous');
});

// The page's limits on a text to learn (www/src/lab-view/text-input.ts) are the core's
// (crate/src/tasks/text.rs): the page checks a text before the engine does, in the page's
// language, and must refuse exactly what the engine refuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const rust = readFileSync(join(root, 'crate/src/tasks/text.rs'), 'utf8');
const ts = readFileSync(join(root, 'www/src/lab-view/text-input.ts'), 'utf8');
const tokenizer = readFileSync(join(root, 'crate/src/tokenizer.rs'), 'utf8');

/** The value of a constant, evaluated from its literal (`1 << 20`, `8192`, `8_192`). */
function value(src, name, lang) {
  const re = lang === 'rust' ? new RegExp(`pub const ${name}: usize = ([^;]+);`) : new RegExp(`export const ${name} = ([^;]+);`);
  const m = re.exec(src);
  assert.ok(m, `no ${name} in ${lang}`);
  const expr = m[1].replace(/_/g, '').trim();
  assert.match(expr, /^[\d\s<]+$/, `${name} = ${expr}`);
  return Function(`return (${expr});`)();
}

test('the_pages_text_limits_are_the_cores', () => {
  for (const name of ['MAX_TEXT_BYTES', 'MAX_TEXT_VOCAB', 'MIN_TEXT_CHARS', 'HELD_OUT_DIVISOR']) {
    assert.equal(value(ts, name, 'ts'), value(rust, name, 'rust'), name);
  }
  // The specials every vocabulary starts with.
  const specials = /pub const SPECIALS: \[&str; (\d+)\]/.exec(tokenizer);
  assert.equal(value(ts, 'SPECIAL_TOKENS', 'ts'), Number(specials[1]));
});

// No model number typed into the page's views and lessons. Every figure a sentence gives
// about a model — the ratio of position to token vectors, the FFN's share of a block's
// parameters, a held-out accuracy, a count — is the engine's (or the training CLI's, in the
// manifest) and reaches the sentence as a placeholder of its msg() string, so it stays
// true when the model changes. This test scans www/src/components/**,
// www/src/lessons/** and the lab's view (www/src/lab-view/**) and fails on any digit left in a msg() string outside its
// placeholders (the allowed formulas and labels are listed, with reasons, in
// ./prose-scan.mjs), and on Math.random: nothing drawn is made up. That each such sentence
// agrees with the engine on every shipped model is tests/browser/truth.test.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTypedNumbers, msgStrings, strayNumbers } from './prose-scan.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const src = join(root, 'www/src');

function* files(dir) {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

const SCANNED = ['components', 'lessons', 'lab-view'].flatMap((d) => [...files(join(src, d))]);

test('the_scanner_finds_a_typed_ratio_count_percentage_and_decimal_in_a_bad_sample', () => {
  const bad = [
    "msg('the position vectors are about 2× the token vectors')",
    'msg(str`trained on ${n} strings, 86 % of them reversed`)',
    "msg('It holds most of the 8544 parameters of a block.', { id: 'x' })",
    'msg(html`dropout <b>0.1</b> on every sublayer`)',
    'msg("Six layers, 4 heads")',
  ].join('\n');
  const found = findTypedNumbers(bad, 'components/tp-bad.ts');
  assert.deepEqual(
    found.map((f) => [f.line, f.numbers]),
    [
      [1, ['2×']],
      [2, ['86 %']],
      [3, ['8544']],
      [4, ['0.1']],
      [5, ['4']],
    ],
  );
});

test('the_scanner_lets_placeholders_formulas_and_labels_pass', () => {
  const good = [
    'msg(str`the position vectors are about ${x}× the token vectors (${pct} %)`)',
    "msg('score(q, k) = q·k / √d_k, W_Q and W_1, b₁, 1/(1 − p), 2·C·n(n + 1) FLOPs')",
    'msg(str`after L${l}: weight 0, probability 1, row 2`)',
    'msg(str`${a} of ${b} values before position ${first} changed${`${k} more`}`)',
  ].join('\n');
  assert.deepEqual(findTypedNumbers(good, 'components/tp-good.ts'), []);
  // A nested template in a placeholder is skipped whole, and the text after it is read.
  assert.deepEqual(msgStrings('msg(str`a ${`b ${c} 7`} d`)').map((m) => m.text), ['a ⟨⟩ d']);
  assert.deepEqual(strayNumbers('a ⟨⟩ is 3.5× b'), ['3.5×']);
});

test('no_view_or_lesson_shows_a_number_typed_into_a_sentence', () => {
  let strings = 0;
  const typed = [];
  for (const f of SCANNED) {
    const source = readFileSync(f, 'utf8');
    strings += msgStrings(source).length;
    for (const x of findTypedNumbers(source, f)) typed.push(`${f.slice(src.length + 1)}:${x.line} ${JSON.stringify(x.numbers)} in ${JSON.stringify(x.text.slice(0, 140))}`);
  }
  // The views and lessons hold hundreds of sentences: a scan that found none proves nothing.
  assert.ok(strings > 500, `only ${strings} msg() strings found`);
  assert.deepEqual(typed, [], 'a number in a sentence must be a placeholder holding the engine’s value');
});

test('no_view_or_lesson_calls_math_random', () => {
  const found = SCANNED.filter((f) => /Math\s*\.\s*random/.test(readFileSync(f, 'utf8'))).map((f) => f.slice(src.length + 1));
  assert.deepEqual(found, []);
});

// The page's number formatting (www/src/ui/format.ts): an f32 value widened to f64 reads
// as the number it stands for, a count has its groups, tiny and huge values an exponent,
// and every printed number reads back (Number(text)) as the value to the digits shown.
// format.ts is TypeScript: Vite's own transform (oxc) strips its types for node.

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
const source = join(root, 'www/src/ui/format.ts');
const { code } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
const { num, fixed, int, percent, ms } = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);

const f32 = (x) => Math.fround(x);

test('an_f32_setting_widened_to_f64_reads_as_the_number_it_stands_for', () => {
  assert.equal(String(f32(0.1)), '0.10000000149011612');
  assert.equal(num(f32(0.1)), '0.1');
  assert.equal(num(f32(0.9)), '0.9');
  assert.equal(num(f32(0.7)), '0.7');
  assert.equal(num(f32(1e-9)), '1e-9');
  assert.equal(num(4000), '4000');
  assert.equal(num(0), '0');
  assert.equal(num(-0.5), '-0.5');
});

test('num_keeps_the_significant_digits_asked_for_and_switches_to_an_exponent_at_the_ends', () => {
  assert.equal(num(Math.PI), '3.142');
  assert.equal(num(Math.PI, 2), '3.1');
  assert.equal(num(0.000123456), '0.0001235');
  assert.equal(num(0.0000123456), '1.235e-5');
  assert.equal(num(123456789), '1.235e8');
  assert.equal(num(-123456789, 2), '-1.2e8');
  assert.equal(num(2e-7), '2e-7');
});

test('fixed_writes_the_decimals_or_an_exponent_where_they_would_say_nothing', () => {
  assert.equal(fixed(0.123456), '0.123');
  assert.equal(fixed(0.5, 4), '0.5000');
  assert.equal(fixed(0.0004), '4.00e-4');
  assert.equal(fixed(-0.0000001, 3), '-1.00e-7');
  assert.equal(fixed(0), '0.000');
  assert.equal(fixed(-0.0001, 2), '-1.00e-4');
  assert.equal(fixed(-0.0004, 3), '-4.00e-4');
  assert.equal(fixed(123456), '1.23e5');
});

test('infinities_and_nan_read_as_symbols', () => {
  for (const f of [num, fixed, int, percent, ms]) {
    assert.equal(f(Number.NEGATIVE_INFINITY), '−∞');
    assert.equal(f(Number.POSITIVE_INFINITY), '∞');
    assert.equal(f(Number.NaN), 'NaN');
  }
});

test('counts_have_groups_of_three_in_both_languages', () => {
  assert.equal(int(1234567), '1,234,567');
  assert.equal(int(1234567, 'zh-Hans'), '1,234,567');
  assert.equal(int(12), '12');
  assert.equal(int(-4096), '-4,096');
  assert.equal(int(2.6), '3');
});

test('shares_and_durations_read_with_their_units', () => {
  assert.equal(percent(0.125), '12.5 %');
  assert.equal(percent(1, 0), '100 %');
  assert.equal(ms(0.4234), '0.423 ms');
  assert.equal(ms(12.34), '12.3 ms');
  assert.equal(ms(1250), '1.25 s');
});

test('every_printed_number_reads_back_within_the_digits_it_shows_and_never_has_more_than_six', () => {
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }), fc.integer({ min: 1, max: 6 }), (x, sig) => {
      const t = num(x, sig);
      const back = Number(t);
      assert.ok(Number.isFinite(back), `${x} → ${t}`);
      const digits = t.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
      assert.ok(digits.length <= sig, `${x} → ${t} has more than ${sig} digits`);
      if (x !== 0) assert.ok(Math.abs(back - x) <= Math.abs(x) * 10 ** (1 - sig), `${x} → ${t} reads back as ${back}`);
    }),
    { numRuns: 3000 },
  );
  fc.assert(
    fc.property(fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e4, max: 1e4 }), (x) => {
      // Any f32 the engine sends, at the default 4 digits: no more than six significant digits.
      const t = num(x);
      const digits = t.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
      assert.ok(digits.length <= 6, `${x} → ${t}`);
    }),
  );
});

// The completion code's format (www/src/lessons/code.ts, www/README.md "Completion codes"):
// any completion survives encode → decode (fields cut to the format's limits); a code with
// any one character changed, a truncated one, one with characters added, one of another
// version, an oversized text and garbage are all refused with their reason, never thrown.

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
const source = join(root, 'www/src/lessons/code.ts');
const { code: js } = await transformWithOxc(readFileSync(source, 'utf8'), source, { lang: 'ts' });
const C = await import(`data:text/javascript;base64,${Buffer.from(js).toString('base64')}`);
const { encodeCompletion, decodeCompletion, crc32, toBase32, fromBase32, codesIn, MAX_CODE_TEXT } = C;

const RUNS = Number(process.env.TPLAY_PROPERTY_RUNS ?? 500);
const enc = new TextEncoder();

const lesson = fc.oneof(
  fc.record({ answer: fc.constant(''), answered: fc.constant(false), right: fc.constant(false), tries: fc.constant(0) }, { noNullPrototype: true }),
  fc.record(
    { answer: fc.string({ maxLength: 8 }).filter((s) => enc.encode(s).length <= 15), answered: fc.constant(true), right: fc.boolean(), tries: fc.integer({ min: 1, max: 63 }) },
    { noNullPrototype: true },
  ),
);
const run = fc.record(
  { metric: fc.integer({ min: 0, max: 10000 }).map((m) => m / 10000), loss: fc.integer({ min: 0, max: 65535 }).map((l) => l / 1000), steps: fc.integer({ min: 0, max: 0xffffff }) },
  { noNullPrototype: true },
);
const completion = fc.record(
  {
    student: fc.string({ minLength: 1, maxLength: 16 }).filter((s) => enc.encode(s).length <= 48),
    assignment: fc.integer({ min: 0, max: 0xffffffff }),
    lessons: fc.array(lesson, { maxLength: 16 }),
    runs: fc.array(run, { maxLength: 4 }),
  },
  { noNullPrototype: true },
);

/** Three lessons (one wrong) and one lab run: the class's case. */
const CLASS = {
  student: 'Seat 12',
  assignment: 0x1234abcd,
  lessons: [
    { answer: '0', answered: true, right: true, tries: 1 },
    { answer: '2', answered: true, right: false, tries: 3 },
    { answer: '0.0011', answered: true, right: true, tries: 2 },
  ],
  runs: [{ metric: 0.9875, loss: 0.042, steps: 300 }],
};

test('base32_and_crc32_are_the_standard_ones', () => {
  // CRC-32 of "123456789" is 0xCBF43926 (the check value of the IEEE polynomial).
  assert.equal(crc32(enc.encode('123456789')), 0xcbf43926);
  // RFC 4648 test vector "foobar" in Crockford's alphabet.
  assert.equal(toBase32(enc.encode('foobar')), 'CSQPYRK1E8');
  assert.deepEqual(Buffer.from(fromBase32('CSQPYRK1E8')).toString(), 'foobar');
  // O reads as 0, I and L as 1.
  assert.deepEqual(fromBase32('CSQPYRKIE8'), fromBase32('CSQPYRK1E8'));
});

test('any_completion_survives_encode_then_decode', () => {
  fc.assert(
    fc.property(completion, (c) => {
      const text = encodeCompletion(c);
      assert.match(text, /^TP[0-9A-HJKMNP-TV-Z]+$/);
      const d = decodeCompletion(text);
      assert.ok(d.ok, JSON.stringify(d));
      assert.deepEqual(d.code, { version: 1, ...c });
      // Spaces, hyphens and lower case are read the same.
      const loose = text.toLowerCase().replace(/(.{5})/g, '$1 -');
      assert.deepEqual(decodeCompletion(loose).code, d.code);
    }),
    { numRuns: RUNS },
  );
});

test('the_class_case_is_short_enough_for_a_small_qr_code', () => {
  const text = encodeCompletion(CLASS);
  // The layout of www/README.md: version, length, assignment (7); the name (1 + 7); the lessons'
  // count (1), each a status byte and its answer's length and bytes (2 + 1, 2 + 1, 2 + 6); the
  // runs' count (1) and one run (7); the CRC (4): 42 bytes, 68 characters, and the prefix.
  const bytes = 7 + (1 + 7) + 1 + (2 + 1) + (2 + 1) + (2 + 6) + 1 + 7 + 4;
  assert.equal(bytes, 42);
  assert.equal(text.length, 2 + Math.ceil((bytes * 8) / 5));
  assert.deepEqual(decodeCompletion(text).code, { version: 1, ...CLASS });
});

test('every_one_character_edit_is_refused', () => {
  const text = encodeCompletion(CLASS);
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  for (let i = 2; i < text.length; i++) {
    for (const ch of alphabet) {
      if (ch === text[i]) continue;
      const d = decodeCompletion(text.slice(0, i) + ch + text.slice(i + 1));
      // The last character holds padding bits too: a change only there may decode the same bytes.
      if (d.ok) {
        assert.equal(i, text.length - 1);
        assert.deepEqual(d.code, decodeCompletion(text).code);
        continue;
      }
      assert.ok(['checksum', 'truncated', 'extra', 'version', 'malformed'].includes(d.reason), `${i} ${ch}: ${d.reason}`);
    }
  }
  // An answer changed: the checksum says so.
  const i = text.length - 12;
  const edited = text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
  assert.equal(decodeCompletion(edited).reason, 'checksum');
});

test('truncated_extended_other_versions_oversized_and_garbage_are_refused_with_their_reason', () => {
  const text = encodeCompletion(CLASS);
  for (let n = 3; n < text.length - 1; n++) assert.equal(decodeCompletion(text.slice(0, n)).reason, 'truncated', `cut to ${n}`);
  assert.equal(decodeCompletion(`${text}AB`).reason, 'extra');
  // Version 2: the first byte (the first 8 bits after TP) is 2.
  const bytes = fromBase32(text.slice(2));
  bytes[0] = 2;
  const v2 = decodeCompletion(`TP${toBase32(bytes)}`);
  assert.equal(v2.reason, 'version');
  assert.equal(v2.version, 2);
  assert.equal(decodeCompletion('TP' + 'A'.repeat(MAX_CODE_TEXT)).reason, 'oversize');
  assert.equal(decodeCompletion('x'.repeat(1e6)).reason, 'oversize');
  assert.equal(decodeCompletion('').reason, 'empty');
  assert.equal(decodeCompletion('<script>alert(1)</script>').reason, 'not-a-code');
  assert.equal(decodeCompletion('TPUUUU!').reason, 'not-a-code');
  assert.equal(decodeCompletion('XX' + text.slice(2)).reason, 'not-a-code');
  fc.assert(
    fc.property(fc.string({ maxLength: 500 }), (s) => {
      const d = decodeCompletion(s);
      assert.equal(typeof d.ok, 'boolean');
    }),
    { numRuns: RUNS },
  );
});

test('fields_beyond_the_limits_are_cut_not_refused', () => {
  const long = { ...CLASS, student: '张'.repeat(40), lessons: Array.from({ length: 20 }, () => ({ answer: '1234567890123456789', answered: true, right: true, tries: 500 })) };
  const d = decodeCompletion(encodeCompletion(long));
  assert.ok(d.ok);
  // 16 characters of three bytes each: 48 bytes, never half a character.
  assert.equal(d.code.student, '张'.repeat(16));
  assert.equal(d.code.lessons.length, 16);
  assert.equal(d.code.lessons[0].answer, '123456789012345');
  assert.equal(d.code.lessons[0].tries, 63);
});

test('pasted_text_splits_into_codes', () => {
  const a = encodeCompletion(CLASS);
  const b = encodeCompletion({ ...CLASS, student: 'Bo' });
  assert.deepEqual(codesIn(`${a}\n\n  ${b}, ${a};`), [a, b, a]);
});

// GPT-2's byte-level vocabulary in readable form (www/src/ui/byte-level.ts), checked against
// the bytes node's own UTF-8 encoder gives: a token's text, a token that is part of a
// character as its bytes in hex, and runs of such tokens joined back into their characters
// as the generation stream draws them. Bundled for node with rolldown.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const { rolldown } = require('rolldown');

const bundle = await rolldown({ input: join(root, 'www/src/ui/byte-level.ts'), cwd: join(root, 'www'), logLevel: 'silent' });
const { output } = await bundle.generate({ format: 'esm' });
const { byteLevelText, groupBytePieces } = await import(`data:text/javascript;base64,${Buffer.from(output[0].code).toString('base64')}`);

/** GPT-2's bytes_to_unicode, written from its definition: the token string of some bytes. */
function byteLevel(bytes) {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const map = new Map(bs.map((b) => [b, b]));
  let n = 0;
  for (let b = 0; b < 256; b++) if (!map.has(b)) map.set(b, 256 + n++);
  return [...bytes].map((b) => String.fromCodePoint(map.get(b))).join('');
}

const hex = (bytes) => `‹${[...bytes].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ')}›`;

test('a token reads as the text its bytes spell, or as its bytes when they are part of a character', () => {
  assert.equal(byteLevelText(byteLevel(Buffer.from(' cat'))), ' cat');
  assert.equal(byteLevelText(byteLevel(Buffer.from('猫'))), '猫');
  const thumb = Buffer.from(' 👍');
  assert.equal(byteLevelText(byteLevel(thumb.subarray(0, 3))), hex(thumb.subarray(0, 3)));
  assert.equal(byteLevelText('<|endoftext|>'), '<|endoftext|>');
});

test('runs of byte pieces are joined into the characters they spell, and nothing else moves', () => {
  const thumb = Buffer.from(' 👍'); // 20 F0 9F 91 8D
  const cat = Buffer.from('猫'); // E6 8C AB
  const pieces = [' The', hex(thumb.subarray(0, 3)), hex(thumb.subarray(3, 4)), hex(thumb.subarray(4)), hex(cat.subarray(0, 2)), hex(cat.subarray(2)), '!'];
  assert.deepEqual(groupBytePieces(pieces), [
    { text: ' The', from: 0, to: 0 },
    { text: ' 👍', from: 1, to: 3 },
    { text: '猫', from: 4, to: 5 },
    { text: '!', from: 6, to: 6 },
  ]);
  // A piece whose character never completes (the generation stopped mid-character) stays.
  const cut = [hex(cat.subarray(0, 2)), 'x'];
  assert.deepEqual(groupBytePieces(cut), [
    { text: cut[0], from: 0, to: 0 },
    { text: 'x', from: 1, to: 1 },
  ]);
  // The joined text of every group is the text of all the tokens' bytes.
  const all = Buffer.concat([Buffer.from(' The'), thumb, cat, Buffer.from('!')]).toString('utf8');
  assert.equal(groupBytePieces(pieces).map((g) => g.text).join(''), all);
});

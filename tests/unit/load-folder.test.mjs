// "Load a model"'s sorting of what a reader gives (www/src/load/folder.ts): picked or
// dropped files become a Hugging Face GPT-2 folder or one checkpoint, and anything else is
// refused with a sentence that names what is missing; an address becomes its folder; a
// response body is read within its ceiling. The module is bundled for node with rolldown
// (its imports: @lit/localize and the page's number formats).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'www/package.json'));
const { rolldown } = require('rolldown');

const bundle = await rolldown({ input: join(root, 'www/src/load/folder.ts'), cwd: join(root, 'www'), logLevel: 'silent' });
const { output } = await bundle.generate({ format: 'esm' });
const folder = await import(`data:text/javascript;base64,${Buffer.from(output[0].code).toString('base64')}`);
const { sortPicked, folderUrl, readBody, folderLabel } = folder;

const file = (name, size = 10, path = '') => ({ name, size, webkitRelativePath: path, arrayBuffer: async () => new ArrayBuffer(size) });
const names = (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'object' ? v.name : v]));

test('a Hugging Face folder is sorted by its file names, other files left aside', () => {
  const p = sortPicked([file('README.md'), file('config.json', 10, 'gpt2/config.json'), file('model.safetensors'), file('tokenizer.json'), file('generation_config.json')]);
  assert.deepEqual(names(p), { kind: 'hf', config: 'config.json', model: 'model.safetensors', tokenizerJson: 'tokenizer.json', folder: 'gpt2' });
  const bare = sortPicked([file('vocab.json'), file('merges.txt'), file('model.safetensors'), file('config.json')]);
  assert.deepEqual(names(bare), { kind: 'hf', config: 'config.json', model: 'model.safetensors', vocabJson: 'vocab.json', merges: 'merges.txt', folder: '' });
  // Both tokenizer forms: tokenizer.json is read.
  assert.equal(sortPicked([file('vocab.json'), file('merges.txt'), file('tokenizer.json'), file('model.safetensors'), file('config.json')]).tokenizerJson.name, 'tokenizer.json');
});

test('one .safetensors file alone is the page’s own checkpoint', () => {
  assert.deepEqual(names(sortPicked([file('reverse-run.safetensors')])), { kind: 'checkpoint', file: 'reverse-run.safetensors' });
  assert.deepEqual(names(sortPicked([file('model.safetensors')])), { kind: 'checkpoint', file: 'model.safetensors' });
});

test('what is missing or wrong is named in one sentence', () => {
  const refuse = (files, re) => assert.throws(() => sortPicked(files), (e) => re.test(e.message), re.source);
  refuse([], /No files/);
  refuse([file('config.json'), file('model.safetensors')], /No tokenizer/);
  refuse([file('config.json'), file('model.safetensors'), file('vocab.json')], /vocab\.json and merges\.txt go together/);
  refuse([file('config.json'), file('tokenizer.json')], /model\.safetensors is missing/);
  refuse([file('config.json'), file('tokenizer.json'), file('pytorch_model.bin')], /pytorch_model\.bin but no model\.safetensors/);
  refuse([file('config.json'), file('tokenizer.json'), file('model-00001-of-00002.safetensors'), file('model-00002-of-00002.safetensors')], /split into several/);
  refuse([file('model.safetensors'), file('tokenizer.json')], /config\.json is missing/);
  refuse([file('a.safetensors'), file('b.safetensors')], /one \.safetensors checkpoint at a time/);
  refuse([file('cat.png'), file('notes.txt')], /None of these files is a model \(cat\.png, notes\.txt\)/);
});

test('an address becomes its folder: a file of it, a Hugging Face model page, only http(s)', () => {
  assert.equal(folderUrl('https://host/models/gpt2').href, 'https://host/models/gpt2/');
  assert.equal(folderUrl('https://host/models/gpt2/config.json').href, 'https://host/models/gpt2/');
  assert.equal(folderUrl('https://host/m/model.safetensors?download=1#x').href, 'https://host/m/');
  assert.equal(folderUrl('https://huggingface.co/openai-community/gpt2').href, 'https://huggingface.co/openai-community/gpt2/resolve/main/');
  assert.equal(folderUrl('https://huggingface.co/gpt2').href, 'https://huggingface.co/gpt2/resolve/main/');
  assert.equal(folderUrl('https://huggingface.co/openai-community/gpt2/tree/main').href, 'https://huggingface.co/openai-community/gpt2/resolve/main/');
  assert.equal(folderUrl('https://huggingface.co/openai-community/gpt2/blob/main/config.json').href, 'https://huggingface.co/openai-community/gpt2/resolve/main/');
  assert.equal(folderUrl('https://huggingface.co/openai-community/gpt2/resolve/main/').href, 'https://huggingface.co/openai-community/gpt2/resolve/main/');
  assert.equal(folderUrl('gpt2/prefix_tied/', 'http://127.0.0.1:8000/index.html').href, 'http://127.0.0.1:8000/gpt2/prefix_tied/');
  assert.throws(() => folderUrl('javascript:alert(1)'), /Only http and https/);
  assert.throws(() => folderUrl('file:///etc/'), /Only http and https/);
  assert.throws(() => folderUrl('not a url'), /is not an address/);
  assert.equal(folderLabel('https://huggingface.co/openai-community/gpt2/resolve/main/'), 'gpt2');
  assert.equal(folderLabel('http://127.0.0.1:1/gpt2/bare_tied/'), 'bare_tied');
});

test('a body is read within its ceiling: refused before reading when announced larger, cut off when it sends more', async () => {
  const body = new Uint8Array(1000).map((_, i) => i % 251);
  const ok = await readBody(new Response(body, { headers: { 'content-length': '1000' } }), 'http://h/model.safetensors', 4096);
  assert.deepEqual(ok, body);
  const seen = [];
  await readBody(new Response(body), 'http://h/model.safetensors', 4096, (d, t) => seen.push([d, t]));
  assert.deepEqual(seen.at(-1), [1000, null]);
  await assert.rejects(readBody(new Response(body, { headers: { 'content-length': '1000' } }), 'http://h/model.safetensors', 999), /model\.safetensors holds 1\.0 kB, more than can be loaded here/);
  await assert.rejects(readBody(new Response(body), 'http://h/model.safetensors', 999), /more than can be loaded here/);
  // A server that sends more than it announced.
  await assert.rejects(readBody(new Response(body, { headers: { 'content-length': '500' } }), 'http://h/model.safetensors', 4096), /sent more bytes than it announced/);
});

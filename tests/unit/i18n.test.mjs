// The page's translations (www/xliff/zh-Hans.xlf) against its source: @lit/localize's own
// analyser finds every msg() call in www/src, and this test fails when a string has no
// Simplified Chinese translation, when a translation is left over from a string that is
// gone (stale), when a translation's placeholders do not match its string's, when a
// translation changes a number of its string, or when the committed locale module
// (www/src/locales/zh-Hans.ts, what the page loads) is not what `lit-localize build`
// makes of the XLIFF now, or when a string's English changed since it was translated
// (www/xliff/zh-Hans.sources.json). Fix: `npm --prefix www run i18n` (extract, then build),
// translate what is missing or changed, then `node www/scripts/i18n-record.mjs`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const www = join(root, 'www');
const require = createRequire(join(www, 'package.json'));
const tools = dirname(require.resolve('@lit/localize-tools/package.json'));
const { readConfigFileAndWriteSchema } = await import(pathToFileURL(join(tools, 'lib/config.js')).href);
const { RuntimeLitLocalizer } = await import(pathToFileURL(join(tools, 'lib/modes/runtime.js')).href);

const { unescapeLocale } = await import(pathToFileURL(join(www, 'scripts/i18n-unescape.mjs')).href);
const config = readConfigFileAndWriteSchema(join(www, 'lit-localize.json'));
const localizer = new RuntimeLitLocalizer(config);
const { messages, errors } = localizer.extractSourceMessages();
const { translations } = localizer.readTranslationsSync();
const TARGET = 'zh-Hans';

/** A message's text with its placeholders shown as {expression}. */
const text = (m) => m.contents.map((c) => (typeof c === 'string' ? c : `{${c.untranslatable}}`)).join('');
const where = (m) => `${m.file.fileName.slice(www.length + 1)}: ${JSON.stringify(text(m)).slice(0, 120)}`;

test('the_analyser_reads_every_msg_call_of_the_source', () => {
  assert.deepEqual(errors.map((e) => e.messageText), []);
  // The page has hundreds of strings: a broken analysis (no files found) must not pass.
  assert.ok(messages.length > 900, `only ${messages.length} strings found`);
  assert.deepEqual(config.targetLocales, [TARGET]);
});

test('every_string_of_the_interface_has_a_simplified_chinese_translation', () => {
  const zh = new Map((translations.get(TARGET) ?? []).map((m) => [m.name, m]));
  const missing = messages.filter((m) => !zh.has(m.name) || text(zh.get(m.name)).trim() === '');
  assert.deepEqual(missing.map(where), [], `${missing.length} strings lack a translation`);
});

test('no_translation_is_left_from_a_string_that_is_gone', () => {
  const ids = new Set(messages.map((m) => m.name));
  const stale = (translations.get(TARGET) ?? []).filter((m) => !ids.has(m.name));
  assert.deepEqual(stale.map((m) => `${m.name}: ${text(m).slice(0, 80)}`), []);
});

test('every_translation_was_made_from_the_english_the_source_has_now', () => {
  // lit-localize keeps a translation under its id when the English changes; the record
  // says which English each translation was made from (www/scripts/i18n-record.mjs).
  const record = JSON.parse(readFileSync(join(www, 'xliff/zh-Hans.sources.json'), 'utf8'));
  const changed = messages.filter((m) => record[m.name] !== undefined && record[m.name] !== text(m)).map(where);
  const unrecorded = messages.filter((m) => record[m.name] === undefined).map(where);
  assert.deepEqual(changed, [], 'the English changed since these were translated: redo them, then run node www/scripts/i18n-record.mjs');
  assert.deepEqual(unrecorded, [], 'translated but not recorded: run node www/scripts/i18n-record.mjs');
});

test('translations_keep_the_placeholders_and_every_number_of_their_string', () => {
  assert.deepEqual(localizer.validateTranslations().errors, []);
  const zh = new Map((translations.get(TARGET) ?? []).map((m) => [m.name, m]));
  const numbers = (s) => (s.match(/\d+(?:\.\d+)?/g) ?? []).sort();
  const changed = [];
  for (const m of messages) {
    const t = zh.get(m.name);
    if (!t) continue;
    // Only the literal text: what the placeholders hold is the same code in both.
    const lit = (x) => x.contents.filter((c) => typeof c === 'string').join(' ');
    if (numbers(lit(m)).join(',') !== numbers(lit(t)).join(',')) changed.push(`${where(m)} → ${text(t)}`);
  }
  assert.deepEqual(changed, []);
});

test('the_committed_locale_module_is_what_the_xliff_builds_now', async () => {
  const out = mkdtempSync(join(tmpdir(), 'tplay-i18n-'));
  try {
    const fresh = new RuntimeLitLocalizer({
      ...config,
      output: { ...config.output, outputDir: out, localeCodesModule: join(out, 'codes.ts') },
    });
    await fresh.build();
    for (const f of [`${TARGET}.ts`, 'codes.ts']) {
      const want = unescapeLocale(readFileSync(join(out, f), 'utf8'));
      const have = readFileSync(join(www, 'src/locales', f), 'utf8');
      assert.ok(have === want, `www/src/locales/${f} is out of date: run npm --prefix www run i18n`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('the_shipped_models_titles_and_descriptions_are_the_manifests_own', async () => {
  // www/src/i18n/models.ts carries the manifest's English into msg() calls; a model list
  // that changed since makes it stale. Fix: node www/scripts/model-texts.mjs, then translate.
  const { render, target } = await import(pathToFileURL(join(www, 'scripts/model-texts.mjs')).href);
  const manifest = JSON.parse(readFileSync(join(root, 'models/manifest.json'), 'utf8'));
  assert.ok(manifest.length >= 20, `only ${manifest.length} models in the manifest`);
  assert.equal(readFileSync(target, 'utf8'), render(manifest), 'www/src/i18n/models.ts is stale');
  const ids = new Set(messages.map((m) => m.name));
  for (const m of manifest) {
    const name = m.file.replace(/\.safetensors$/, '');
    assert.ok(ids.has(`model.${name}.title`) && ids.has(`model.${name}.description`), name);
  }
});

test('a_translation_shown_as_text_carries_no_xml_entities', () => {
  // lit-localize writes &, < and > as entities into every message; the page shows a plain or
  // str message as text, so they must be characters there (www/scripts/i18n-unescape.mjs).
  const module = readFileSync(join(www, 'src/locales', `${TARGET}.ts`), 'utf8');
  const plain = [...module.matchAll(/'([^'\n]+)': (html|str)?`((?:[^`\\]|\\.)*)`/gs)].filter((m) => m[2] !== 'html');
  assert.ok(plain.length > 500, `only ${plain.length} plain messages found`);
  const left = plain.filter((m) => /&(?:lt|gt|quot|apos|amp);/.test(m[3])).map((m) => `${m[1]}: ${m[3].slice(0, 60)}`);
  assert.deepEqual(left, []);
});

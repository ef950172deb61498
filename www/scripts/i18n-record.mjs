// Records, for every translated string, the English text its translation was made from
// (www/xliff/zh-Hans.sources.json). lit-localize keeps a translation when its English text
// changes under the same id, so tests/unit/i18n.test.mjs compares this record with the
// source: a string whose English changed since it was translated fails until its
// translation is redone in www/xliff/zh-Hans.xlf and this script is run again.
// Run from the repository root: node www/scripts/i18n-record.mjs

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const www = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(www, 'package.json'));
const tools = dirname(require.resolve('@lit/localize-tools/package.json'));
const { readConfigFileAndWriteSchema } = await import(pathToFileURL(join(tools, 'lib/config.js')).href);
const { RuntimeLitLocalizer } = await import(pathToFileURL(join(tools, 'lib/modes/runtime.js')).href);

/** A message's English text with its placeholders shown as {expression}. */
export const text = (m) => m.contents.map((c) => (typeof c === 'string' ? c : `{${c.untranslatable}}`)).join('');

const localizer = new RuntimeLitLocalizer(readConfigFileAndWriteSchema(join(www, 'lit-localize.json')));
const { messages } = localizer.extractSourceMessages();
const translated = new Set((localizer.readTranslationsSync().translations.get('zh-Hans') ?? []).map((m) => m.name));
const record = Object.fromEntries(
  messages
    .filter((m) => translated.has(m.name))
    .map((m) => [m.name, text(m)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(join(www, 'xliff/zh-Hans.sources.json'), `${JSON.stringify(record, null, 1)}\n`);
console.log(`recorded the English of ${Object.keys(record).length} translated strings`);

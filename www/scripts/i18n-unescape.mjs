// lit-localize build (0.8) writes every translation into the locale module with &, < and >
// as XML entities. An html`` template is parsed as HTML, so there they are right; a plain or
// str`` message becomes text as it is, so "&lt;unk&gt;" would be shown as those eight
// characters (upstream: lit/lit#5012). This undoes the entities in the messages that are not
// html``. `npm --prefix www run i18n` runs it after the build; tests/unit/i18n.test.mjs
// applies it to a fresh build when it compares.
// Run from the repository root: node www/scripts/i18n-unescape.mjs

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENTITIES = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'", '&amp;': '&' };

/** The locale module's text with the entities of its non-html messages decoded. */
export function unescapeLocale(module) {
  return module.replace(/('[^'\n]+': )(html|str)?`((?:[^`\\]|\\.)*)`/gs, (all, key, tag, body) =>
    tag === 'html' ? all : `${key}${tag ?? ''}\`${body.replace(/&(?:lt|gt|quot|apos|amp);/g, (e) => ENTITIES[e])}\``,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const www = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const config = JSON.parse(readFileSync(join(www, 'lit-localize.json'), 'utf8'));
  for (const locale of config.targetLocales) {
    const file = join(www, config.output.outputDir, `${locale}.ts`);
    writeFileSync(file, unescapeLocale(readFileSync(file, 'utf8')));
  }
}

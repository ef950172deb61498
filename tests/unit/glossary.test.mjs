// The glossary (www/src/i18n/terms.ts, GLOSSARY) against the Chinese translations
// (www/xliff/zh-Hans.xlf): every translation of an English string that names one of the
// standard terms says it the glossary's way (多头注意力, 层归一化, 束搜索…, or the Latin
// name Chinese texts also write, such as LayerNorm), and no translation uses a rendering
// the glossary rules out (多头关注, 层标准化, 集束搜索…). The interface and the lessons are
// checked alike: both are units of the same file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const www = join(root, 'www');

/**
 * GLOSSARY of terms.ts: its entries are plain object literals (strings, regular
 * expressions, arrays), so the array is read from the source as it is.
 */
function glossary() {
  const src = readFileSync(join(www, 'src/i18n/terms.ts'), 'utf8');
  const m = /export const GLOSSARY: readonly Term\[\] = (\[[\s\S]*?\n\]);/.exec(src);
  assert.ok(m, 'terms.ts has export const GLOSSARY: readonly Term[] = [ … ];');
  return new Function(`return ${m[1]};`)();
}

const decode = (s) =>
  s
    .replace(/<x [^>]*\/>/g, '{}')
    .replace(/<ph[^>]*>[\s\S]*?<\/ph>/g, '{}')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** The units of the XLIFF: id, English source, Chinese target. */
function units() {
  const xlf = readFileSync(join(www, 'xliff/zh-Hans.xlf'), 'utf8');
  return [...xlf.matchAll(/<trans-unit id="([^"]+)"[^>]*>\s*<source>([\s\S]*?)<\/source>\s*(?:<target>([\s\S]*?)<\/target>)?/g)].map((m) => ({
    id: m[1],
    source: decode(m[2]),
    target: decode(m[3] ?? ''),
  }));
}

const GLOSSARY = glossary();
const UNITS = units();

test('the_glossary_holds_the_standard_terms', () => {
  const zh = GLOSSARY.map((t) => t.zh);
  for (const want of ['多头注意力', '查询', '键', '值', '残差连接', '层归一化', '批归一化', '前馈网络', '位置编码', '掩码', 'KV 缓存', '束搜索', '教师强制', '预热']) {
    assert.ok(zh.includes(want), `${want} is in the glossary`);
  }
  assert.ok(UNITS.length > 900, `only ${UNITS.length} translation units read`);
});

test('every_translation_of_a_string_that_names_a_term_says_the_glossarys_term', () => {
  const wrong = [];
  for (const t of GLOSSARY) {
    for (const u of UNITS) {
      if (!t.source.test(u.source)) continue;
      const ok = u.target.includes(t.zh) || (t.latin ?? []).some((l) => new RegExp(`(^|[^A-Za-z])${l}([^A-Za-z]|$)`).test(u.target));
      if (!ok) wrong.push(`${u.id}: “${t.en}” → ${t.zh} missing in ${JSON.stringify(u.target.slice(0, 90))}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('no_translation_uses_a_rendering_the_glossary_rules_out', () => {
  const wrong = [];
  for (const t of GLOSSARY) {
    for (const u of UNITS) {
      for (const bad of t.not) if (u.target.includes(bad)) wrong.push(`${u.id}: ${bad} (say ${t.zh}) in ${JSON.stringify(u.target.slice(0, 90))}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the_check_fails_on_a_wrong_rendering', () => {
  // The two checks above, on made-up units: they must catch what they are for.
  const mh = GLOSSARY.find((t) => t.zh === '多头注意力');
  assert.ok(mh.source.test('Multi-head attention splits the width'));
  assert.ok(mh.not.some((b) => '多头关注把宽度分开'.includes(b)));
  const ln = GLOSSARY.find((t) => t.zh === '层归一化');
  assert.ok(ln.not.some((b) => '层标准化'.includes(b)));
});

/**
 * Where a lesson (its task, hint or question) names a thing of the page in quotes — a
 * model's title, a control, a button, a column — the names it quotes that are strings of
 * the page themselves, each with the Chinese the page shows for it: [unit id, English name,
 * the Chinese translations of that name].
 */
function quotedNames(units) {
  const shown = new Map();
  for (const u of units) if (u.target) shown.set(u.source, [...(shown.get(u.source) ?? []), u.target]);
  const out = [];
  for (const u of units) {
    if (!/^(lesson|check|course)\./.test(u.id)) continue;
    for (const [, name] of u.source.matchAll(/“([^”]+)”/g)) if (shown.has(name)) out.push({ u, name, zh: shown.get(name) });
  }
  return out;
}

test('a_lesson_quotes_each_name_of_the_page_as_the_chinese_page_shows_it', () => {
  // A Chinese learner told to load “语法语言模型 · 共享 W_Q = W_K” or untick “因果掩码” must find those words on the page.
  const named = quotedNames(UNITS);
  assert.ok(named.length >= 25, `only ${named.length} quoted names found`);
  const wrong = named.filter(({ u, zh }) => !zh.some((t) => u.target.includes(`“${t}”`))).map(({ u, name, zh }) => `${u.id}: “${name}” is shown as ${zh.map((t) => `“${t}”`).join(' or ')}, not in ${JSON.stringify(u.target.slice(0, 90))}`);
  assert.deepEqual(wrong, []);
  // The check fails on a lesson that quotes a model by a title the Chinese list does not show.
  const title = UNITS.find((u) => u.id === 'model.grammar-shared-qk.title');
  const bad = [...UNITS, { id: 'lesson.x.task', source: `Load “${title.source}”.`, target: `加载“${title.source}”。` }];
  assert.equal(quotedNames(bad).filter(({ u, zh }) => u.id === 'lesson.x.task' && !zh.some((t) => u.target.includes(`“${t}”`))).length, 1);
});

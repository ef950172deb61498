// Screenshots of the front door to look at: the overview and every chapter, at 1440, 1024
// and 390 px, light and dark, English and Chinese (a Chinese browser), into
// tests/browser/artifacts/screens/. Not a test: run it after `cargo xtask build` with
//   node tests/browser/screens.mjs            (every combination)
//   TPLAY_SCREENS=quick node tests/browser/screens.mjs   (1440 light English, 390 dark Chinese)
//   TPLAY_SCREENS=1024,1440-dark node tests/browser/screens.mjs   (the combinations named)
// Prints each file and the console errors the page logged (none expected).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launch, open, serve } from './harness.mjs';

const CHAPTERS = ['', 'input', 'attention', 'positions', 'blocks', 'output', 'cost', 'lab'];
const want = process.env.TPLAY_SCREENS ?? '';
const all = [1440, 1024, 390].flatMap((width) => ['light', 'dark'].flatMap((scheme) => ['en-US', 'zh-CN'].map((locale) => ({ width, scheme, locale }))));
// `quick`, or a comma-separated list of filters such as `1024` or `1440-dark` or `390-light-zh-CN`.
const filters = want === 'quick' ? ['1440-light-en-US', '390-dark-zh-CN'] : want.split(',').filter(Boolean);
const combos = filters.length ? all.filter((c) => filters.some((f) => `${c.width}-${c.scheme}-${c.locale}`.startsWith(f))) : all;
const out = join(artifacts, 'screens');
mkdirSync(out, { recursive: true });

const server = await serve();
let failures = 0;
for (const locale of new Set(combos.map((c) => c.locale))) {
  const browser = await launch({ locale });
  for (const { width, scheme } of combos.filter((c) => c.locale === locale)) {
    for (const chapter of CHAPTERS) {
      const hash = `play=0${chapter ? `&chapter=${chapter}` : ''}`;
      const { page, errors } = await open(browser.context, server.url, hash, { viewport: { width, height: 900 }, media: { colorScheme: scheme } });
      await page.waitForTimeout(chapter ? 1500 : 500);
      const file = join(out, `${chapter || 'overview'}-${width}-${scheme}-${locale}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(`${file}${errors.length ? `  console errors: ${errors.join(' | ')}` : ''}`);
      failures += errors.length;
      await page.close();
    }
  }
  await browser.close();
}
await server.close();
process.exit(failures ? 1 : 0);

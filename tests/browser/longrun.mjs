// The long form of the memory test, for `cargo xtask bench` (it prints numbers and asserts
// nothing): 10,000 generated tokens in the page, starting again whenever a run stops (the
// context limit or the token limit), with wasm linear memory and the page's JS heap (the
// live objects of a heap snapshot after a forced garbage collection, V8's usedSize beside
// it: lab-memory.mjs) measured after a 500-token warm-up and at the end, and the speed
// over the first and the last tenth. Once with only the generation view drawn, once with
// every view. TPLAY_LONGRUN_TOKENS, TPLAY_LONGRUN_WARMUP and TPLAY_LONGRUN_MAX (tokens per
// run, 200) override the counts; TPLAY_LONGRUN_VIEWS=every runs only the second.

import { launch, open, serve } from './harness.mjs';
import { liveBytes } from './lab-memory.mjs';

const TOKENS = Number(process.env.TPLAY_LONGRUN_TOKENS ?? 10000);
const WARMUP = Number(process.env.TPLAY_LONGRUN_WARMUP ?? 500);
/** Tokens per run before it starts again (the page's `max`; the context limit stops it sooner). */
const MAX = Number(process.env.TPLAY_LONGRUN_MAX ?? 200);

async function run(context, url, views) {
  const hash = `backend=cpu&speed=0&max=${MAX}&play=0${views ? `&views=${views}` : ''}`;
  const { page } = await open(context, url, hash);
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const used = (await cdp.send('Runtime.getHeapUsage')).usedSize;
    return { live: await liveBytes(cdp), used };
  };
  const wasm = () => page.evaluate(async () => (await document.querySelector('transformer-playground').memoryUse()).wasm_bytes);
  const generate = (n) =>
    page.evaluate(async (n) => {
      const e = document.querySelector('transformer-playground');
      let total = 0;
      // (tokens so far, ms) after each run, to see whether tokens get slower as the page ages.
      const marks = [[0, performance.now()]];
      while (total < n) {
        await e.store.gen.start(true);
        if (e.generated.length === 0) throw new Error(e.genNote || e.error || 'no tokens');
        total += e.generated.length;
        marks.push([total, performance.now()]);
      }
      return { total, marks };
    }, n);
  await generate(WARMUP);
  const [w0, h0, t0] = [await wasm(), await heap(), Date.now()];
  const { total: made, marks } = await generate(TOKENS);
  const [w1, h1, t1] = [await wasm(), await heap(), Date.now()];
  const pct = (a, b) => `${(((b - a) / a) * 100).toFixed(1)}%`;
  // Tokens per second over the first and the last tenth of the run.
  const rate = (from, to) => ((to[0] - from[0]) / ((to[1] - from[1]) / 1000)).toFixed(1);
  const tenth = Math.max(1, Math.round(marks.length / 10));
  console.log(
    `${views || 'every view'}: ${made} tokens after a ${WARMUP}-token warm-up in ${((t1 - t0) / 1000).toFixed(0)} s ` +
      `(${rate(marks[0], marks[tenth])} tokens/s over the first tenth, ${rate(marks[marks.length - 1 - tenth], marks[marks.length - 1])} over the last) — ` +
      `wasm memory ${w0} → ${w1} bytes (${pct(w0, w1)}), page JS heap (live objects) ${h0.live} → ${h1.live} bytes (${pct(h0.live, h1.live)}; V8 usedSize ${h0.used} → ${h1.used})`,
  );
  await page.close();
}

const server = await serve();
const browser = await launch();
try {
  if (process.env.TPLAY_LONGRUN_VIEWS !== 'every') await run(browser.context, server.url, 'generation');
  await run(browser.context, server.url, '');
} finally {
  await browser.close();
  await server.close();
}

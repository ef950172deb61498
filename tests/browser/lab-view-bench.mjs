// The lab's responsiveness for `cargo xtask bench` (prints numbers, asserts nothing about
// time): the input latency of clicks while a run trains. The page shows every view; the
// reverse task's shipped recipe trains in its worker while the plots redraw; a click on
// the lab's "hide"/"show" button (which rebuilds every plot) and on the page's causal-mask
// switch (a new forward pass) is timed, and the same switch with nothing training for comparison, from the input event's timestamp to the next frame
// the page draws after the handlers ran, and by the browser's Event Timing API where it
// reports (it reports only events of 16 ms or more); for the switch also until every view
// bound to the forward pass has drawn the new one.

import { launch, open, serve } from './harness.mjs';

const CLICKS = Number(process.env.TPLAY_BENCH_CLICKS ?? 30);

const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

const server = await serve();
const browser = await launch({ webgpu: false });
try {
  const { page } = await open(browser.context, server.url, 'play=0&chapter=all');
  // Time every click: input timestamp → the first frame after the handlers, and Event Timing.
  await page.evaluate(() => {
    window.__clicks = [];
    window.__settled = [];
    window.__timing = [];
    document.addEventListener(
      'click',
      (e) => {
        const t0 = e.timeStamp;
        const kind = window.__kind;
        requestAnimationFrame(() => setTimeout(() => window.__clicks.push({ kind, ms: performance.now() - t0 }), 0));
        // The switch's whole answer: the new forward pass drawn by the views bound to it
        // (the frame after the attention view holds it).
        if (kind.endsWith(':causal')) {
          const el = document.querySelector('transformer-playground');
          const before = el.lastForward;
          const poll = () => {
            const att = el.shadowRoot.querySelector('tp-attention');
            if (el.lastForward && el.lastForward !== before && att?.attention === el.lastForward.attention) {
              setTimeout(() => window.__settled.push({ kind, ms: performance.now() - t0 }), 0);
            } else requestAnimationFrame(poll);
          };
          requestAnimationFrame(poll);
        }
      },
      { capture: true },
    );
    if (PerformanceObserver.supportedEntryTypes?.includes('event')) {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (e.interactionId) window.__timing.push({ id: e.interactionId, start: e.startTime, duration: e.duration });
      }).observe({ type: 'event', durationThreshold: 16, buffered: false });
    }
  });
  await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.runsRestored;
    for (const r of [...el.runs]) await el.deleteRun(r.id);
    el.shadowRoot.querySelector('tp-lab').scrollIntoView();
  });
  await page.waitForFunction(() => customElements.get('tp-lab') && document.querySelector('transformer-playground').shadowRoot.querySelector('tp-lab').form);
  // The same clicks with nothing training first: what the page costs on its own.
  const clickAll = async (phase, hide) => {
    for (let i = 0; i < CLICKS; i++) {
      const kind = i % 2 === 0 && hide ? 'hide' : 'causal';
      await page.evaluate((k) => (window.__kind = k), `${phase}:${kind}`);
      if (kind === 'hide') await hide().click();
      else {
        const n = await page.evaluate(() => window.__settled.length);
        await page.locator('tp-controls input[type="checkbox"]').first().click();
        // Each switch is timed on its own: the next click waits until this one has settled.
        await page.waitForFunction((n) => window.__settled.length > n, n, { timeout: 30000 });
      }
      await page.waitForTimeout(150);
    }
  };
  await clickAll('idle', null);
  await page.evaluate(() => (window.__trainingFrom = performance.now()));
  const id = await page.evaluate(() => {
    const h = document.querySelector('transformer-playground').train({ task: 'reverse' });
    window.__run = h;
    return h.id;
  });
  await page.waitForFunction((id) => (document.querySelector('transformer-playground').runs.find((r) => r.id === id)?.points.length ?? 0) >= 20, id, { timeout: 120000 });
  const steps0 = await page.evaluate((id) => document.querySelector('transformer-playground').runs.find((r) => r.id === id).points.length, id);
  const t0 = Date.now();
  const hide = () => page.locator(`tp-lab tr[data-run="${id}"] .row-actions button`).first();
  await clickAll('training', hide);
  await page.waitForTimeout(300);
  const r = await page.evaluate((id) => {
    const run = document.querySelector('transformer-playground').runs.find((r) => r.id === id);
    // Event Timing: one number per interaction (pointerdown, pointerup and click share an
    // id), its longest event, from the input to the next paint — the INP measure.
    const byId = new Map();
    for (const e of window.__timing) {
      const phase = e.start >= window.__trainingFrom ? 'training' : 'idle';
      const k = `${phase}:${e.id}`;
      byId.set(k, Math.max(byId.get(k) ?? 0, e.duration));
    }
    const timing = [...byId].map(([k, ms]) => ({ phase: k.split(':')[0], ms }));
    return { clicks: [...window.__clicks], settled: [...window.__settled], timing, steps: run.points.length, status: run.status, sps: run.steps_per_s };
  }, id);
  const secs = (Date.now() - t0) / 1000;
  await page.evaluate(() => window.__run.stop());
  console.log(`lab: click input latency while training (reverse recipe in its worker, every view on the page, ${CLICKS} clicks on the lab's hide/show and the causal-mask switch):`);
  const line = (name, xs) => `${name}: median ${f(quantile(xs, 0.5))} ms, p95 ${f(quantile(xs, 0.95))} ms, max ${f(Math.max(...xs))} ms (${xs.length} clicks)`;
  const ms = (k) => r.clicks.filter((c) => k.test(c.kind)).map((c) => c.ms);
  console.log(`  ${line('input → next frame, every click while training', ms(/^training:/))}`);
  console.log(`    ${line("the lab's hide/show (every plot rebuilt)", ms(/^training:hide$/))}`);
  console.log(`    ${line('the causal-mask switch (a forward pass, every view redrawn)', ms(/^training:causal$/))}`);
  console.log(`  ${line('the causal-mask switch with nothing training, for comparison', ms(/^idle:/))}`);
  const settled = (k) => r.settled.filter((c) => k.test(c.kind)).map((c) => c.ms);
  console.log(`  click on the causal-mask switch → every view drawn with the new forward pass (the views that ask the engine for work of their own follow):`);
  console.log(`    ${line('while training', settled(/^training:/))}`);
  console.log(`    ${line('with nothing training', settled(/^idle:/))}`);
  for (const phase of ['training', 'idle']) {
    const t = r.timing.filter((x) => x.phase === phase).map((x) => x.ms);
    console.log(
      `  Event Timing (input to next paint, per interaction; only those of 16 ms or more are reported), ${phase === 'training' ? 'while training' : 'with nothing training'}: ${t.length} of ${CLICKS} clicks reported${t.length ? `, median ${f(quantile(t, 0.5))} ms, max ${f(Math.max(...t))} ms` : ''}`,
    );
  }
  console.log(`  training meanwhile: ${r.steps - steps0} steps in ${secs.toFixed(1)} s (${r.status}, ${f(r.sps)} steps/s of the run's own compute)`);
  await page.close();
} finally {
  await browser.close();
  await server.close();
}

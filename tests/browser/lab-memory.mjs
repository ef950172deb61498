// Memory over a long training run in the page, shared by the short form in
// lab-reliability.test.mjs and the long form in lab-bench.mjs (`cargo xtask bench`): the
// reverse recipe trains through el.train with the lab drawing its plots; after `warmup`
// steps, and again `steps` steps later, the run's worker's wasm linear memory, the page
// engine's wasm memory and the page's JS heap are read. The JS heap figure is what a heap
// snapshot holds — every object still reachable, array buffers' contents included — after a
// forced garbage collection; V8's own `usedSize` is printed beside it, but it also counts
// compiled code and not-yet-reused space, which swing by ±0.6 MB between identical runs.

/** Train `warmup` + `steps` steps of the reverse recipe; the figures at both ends. */
export async function trainingMemory(page, { warmup, steps }) {
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const used = (await cdp.send('Runtime.getHeapUsage')).usedSize;
    return { live: await liveBytes(cdp), used };
  };
  const id = await page.evaluate(async () => {
    const el = document.querySelector('transformer-playground');
    await el.runsRestored;
    el.shadowRoot.querySelector('tp-lab')?.scrollIntoView();
    // More steps than will be taken: the run is stopped once measured.
    const h = el.train({ task: 'reverse', steps: 1_000_000 });
    window.__memoryRun = h;
    await h.started;
    return h.id;
  });
  const reach = (n) =>
    page.waitForFunction(([id, n]) => (document.querySelector('transformer-playground').runs.find((r) => r.id === id)?.log.length ?? 0) >= n, [id, n], {
      timeout: 0,
      polling: 250,
    });
  const figures = async () => {
    // Between chunks, the run paused: nothing is in flight while memory is read.
    await page.evaluate(() => window.__memoryRun.pause());
    const r = await page.evaluate(async (id) => {
      const el = document.querySelector('transformer-playground');
      const run = el.runs.find((x) => x.id === id);
      return { step: run.log.step(run.log.length - 1), columns: run.log.bytes, run: await el.runMemoryUse(id), engine: await el.memoryUse() };
    }, id);
    const h = await heap();
    await page.evaluate(() => window.__memoryRun.resume());
    return { step: r.step, runWasm: r.run.wasm_bytes, engineWasm: r.engine.wasm_bytes, heap: h.live, used: h.used, columns: r.columns };
  };
  await reach(warmup);
  const start = await figures();
  const t0 = Date.now();
  await reach(start.step + steps);
  const end = await figures();
  const seconds = (Date.now() - t0) / 1000;
  await page.evaluate(async () => {
    const h = window.__memoryRun;
    await h.stop();
    await document.querySelector('transformer-playground').deleteRun(h.id);
  });
  await cdp.detach();
  return { start, end, seconds };
}

/** Bytes of every object a heap snapshot of the page holds (the sum of self sizes). */
export async function liveBytes(cdp) {
  const chunks = [];
  const take = (e) => chunks.push(e.chunk);
  cdp.on('HeapProfiler.addHeapSnapshotChunk', take);
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
  cdp.off('HeapProfiler.addHeapSnapshotChunk', take);
  const snap = JSON.parse(chunks.join(''));
  const fields = snap.snapshot.meta.node_fields;
  const self = fields.indexOf('self_size');
  let total = 0;
  for (let i = self; i < snap.nodes.length; i += fields.length) total += snap.nodes[i];
  return total;
}

/** Growth from a to b as a fraction of a. */
export const growth = (a, b) => (b - a) / a;

/** One line of figures. */
export function describe({ start, end, seconds }) {
  const pct = (a, b) => `${(growth(a, b) * 100).toFixed(1)}%`;
  return (
    `steps ${start.step} → ${end.step} (${end.step - start.step} steps in ${seconds.toFixed(0)} s): ` +
    `training worker wasm memory ${start.runWasm} → ${end.runWasm} bytes (${pct(start.runWasm, end.runWasm)}), ` +
    `page engine wasm memory ${start.engineWasm} → ${end.engineWasm} bytes (${pct(start.engineWasm, end.engineWasm)}), ` +
    `page JS heap (live objects) ${start.heap} → ${end.heap} bytes (${pct(start.heap, end.heap)}; V8 usedSize ${start.used} → ${end.used}), ` +
    `of which the run's curve columns ${start.columns} → ${end.columns} bytes`
  );
}

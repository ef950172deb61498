// Engine-only decoding through the worker API, for the bench programs (tests/browser/bench.mjs,
// tests/browser/gpu-bench.mjs): a fresh engine loads the page's model, moves to `backend`
// and decodes greedily; tokens/s counted from the first token on.

/** Engine-only decoding (no traced forward per token), driven through the worker API. */
export async function engineDecode(page, backend, n) {
  return page.evaluate(
    async ({ backend, n }) => {
      const { EngineClient } = await import('./playground.js');
      const el = document.querySelector('transformer-playground');
      const c = new EngineClient();
      const entry = el.manifest.find((m) => m.file === el.st.model);
      const info = await c.call('load', { url: new URL(`models/${entry.file}`, location.href).href });
      const b = await c.call('setBackend', { backend });
      const prompt = await c.call('tokenize', { text: entry.default_prompt });
      const sampling = { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 1, seed: 0 };
      const switches = { causal: true, padding_mask: true, scale: true, ablate: [] };
      const t0 = performance.now();
      await c.call('generateStart', { prompt: [info.bos, ...prompt.ids], switches, sampling, max_new_tokens: n, trace: false });
      let first = null;
      let steps = 0;
      for (let i = 0; i < n; i++) {
        const s = await c.call('generateStep', {});
        steps++;
        if (first === null) first = performance.now();
        if (s.done) break;
      }
      const end = performance.now();
      c.terminate();
      return { backend: b.backend, ttft: first - t0, tps: steps > 1 ? (steps - 1) / ((end - first) / 1000) : NaN, steps };
    },
    { backend, n },
  );
}

// Starts the module and rayon's pool (one Web Worker per core, sharing the module's
// memory), then trains each recipe on 1 thread and on every core, alternately, `rounds` times.
import init, { initThreadPool, train_bench } from './pkg/tplay_wasm_threads.js';

const params = new URLSearchParams(location.search);
const rounds = Number(params.get('rounds') ?? 2);
const plan = [
  ['reverse.safetensors', Number(params.get('reverse') ?? 150), false],
  ['grammar-sinusoidal.safetensors', Number(params.get('grammar') ?? 20), false],
  ['grammar-sinusoidal.safetensors', Number(params.get('wide') ?? 4), true],
];
try {
  await init();
  const cores = navigator.hardwareConcurrency;
  await initThreadPool(cores);
  const rows = [];
  for (const [file, steps, wide] of plan) {
    for (let r = 0; r < rounds; r++) {
      for (const threads of [1, cores]) {
        const [sps, hash] = train_bench(file, steps, threads, wide).split(' ');
        rows.push({ file, steps, threads, wide, sps: Number(sps), hash });
      }
    }
  }
  postMessage({ isolated: self.crossOriginIsolated, cores, rows });
} catch (e) {
  postMessage({ error: String((e && e.stack) || e) });
}

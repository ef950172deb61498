// The page's WebGPU on this machine's GPU, for `cargo xtask bench gpu` (a program that
// prints numbers; it asserts nothing about time). Headless Chromium is started with
// WebGPU on (the harness's flag); if the adapter it finds is a software one (SwiftShader)
// or none, it tries again with Vulkan switches that reach a real GPU on Linux. Then, on
// the adapter it got: its description, engine-only decoding of the default model on the
// CPU and on WebGPU, and lab runs (the reverse recipe's shape and a wider grammar model)
// trained on both, steps/s side by side, with the largest relative loss difference of the
// two curves (WebGPU must match the CPU within the lab's tolerance).

import { loadavg } from 'node:os';
import { launch, open, openLab, serve } from './harness.mjs';
import { engineDecode } from './engine-decode.mjs';

const TOKENS = Number(process.env.TPLAY_BENCH_TOKENS ?? 48);
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const load = () => `load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
const ATTEMPTS = [
  { name: 'the harness flags (--enable-unsafe-webgpu)', args: [] },
  { name: 'Vulkan (--use-angle=vulkan, --enable-features=Vulkan, --ignore-gpu-blocklist)', args: ['--use-angle=vulkan', '--enable-features=Vulkan,VulkanFromANGLE', '--ignore-gpu-blocklist'] },
];

async function adapterInfo(page) {
  return page.evaluate(async () => {
    if (!navigator.gpu) return null;
    const a = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!a) return null;
    const i = a.info ?? {};
    return { vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '', description: i.description ?? '', fallback: a.isFallbackAdapter ?? false };
  });
}

const software = (i) => !i || i.fallback || /swiftshader|llvmpipe|lavapipe/i.test(`${i.vendor} ${i.architecture} ${i.description}`);

/** A lab run to its end: steps/s, where it ran, and its loss curve. */
async function train(page, settings) {
  return page.evaluate(async (settings) => {
    const el = document.querySelector('transformer-playground');
    const h = el.train(settings);
    const s = await h.done;
    const run = JSON.parse(JSON.stringify(el.runs.find((r) => r.id === h.id)));
    await el.deleteRun(h.id);
    return { sps: s.steps_per_s, backend: JSON.stringify(run.backend ?? s.backend ?? null), losses: run.points.map((p) => p.loss) };
  }, settings);
}

const worst = (a, b) => Math.max(...b.map((w, i) => Math.abs(a[i] - w) / Math.abs(w)));

/** The adapter Chromium finds with these switches (null: none). */
async function probe(url, attempt) {
  const browser = await launch({ webgpu: true, args: attempt.args });
  try {
    const { page } = await open(browser.context, url, 'play=0');
    return await adapterInfo(page);
  } finally {
    await browser.close();
  }
}

const server = await serve();
try {
  // A hardware adapter if any attempt finds one, else the software one.
  const found = [];
  for (const attempt of ATTEMPTS) {
    const info = await probe(server.url, attempt);
    console.log(`Chromium with ${attempt.name}: adapter ${info ? `${info.vendor} · ${info.architecture} · ${info.device} · ${info.description}${info.fallback ? ' (fallback)' : ''}` : 'none'} · ${load()}`);
    if (info) found.push({ attempt, info });
    if (info && !software(info)) break;
  }
  const chosen = found.find((x) => !software(x.info)) ?? found[0];
  if (!chosen) {
    console.log('Chromium found no WebGPU adapter with any of the switches tried.');
  } else {
    if (software(chosen.info)) console.log('(a software adapter: the figures below show the path works, not its speed)');
    const browser = await launch({ webgpu: true, args: chosen.attempt.args });
    try {
      const { page } = await openLab(browser.context, server.url);
      console.log();
      console.log(`with ${chosen.attempt.name}:`);
      console.log();
      console.log('| figure | CPU (wasm) | WebGPU | WebGPU ÷ CPU | load (1, 5, 15 min) |');
      console.log('|---|---:|---:|---:|---|');
      const cpu = await engineDecode(page, 'cpu', TOKENS);
      const gpu = await engineDecode(page, 'webgpu', TOKENS);
      console.log(`| decode, default model, engine only (tokens/s; ran on ${cpu.backend} / ${gpu.backend}) | ${f(cpu.tps, 0)} | ${f(gpu.tps, 0)} | ${f(gpu.tps / cpu.tps, 2)} | ${load().slice(5)} |`);
      for (const [name, settings] of [
        ['train reverse recipe shape (steps/s)', { task: 'reverse', steps: 60, eval_every: 0, seed: 3 }],
        ['train grammar, d_model 128, 4 layers (steps/s)', { task: 'grammar', steps: 12, eval_every: 0, seed: 3, d_model: 128, n_heads: 4, n_layers: 4, d_ff: 512 }],
      ]) {
        if (software(chosen.info) && settings.d_model) {
          // SwiftShader takes minutes per step of the wide model.
          console.log(`| ${name}: not run on a software adapter | | | | ${load().slice(5)} |`);
          continue;
        }
        const c = await train(page, { ...settings, backend: 'cpu' });
        const g = await train(page, { ...settings, backend: 'webgpu' });
        const diff = g.losses.length === c.losses.length ? worst(g.losses, c.losses).toExponential(1) : 'n/a';
        console.log(`| ${name}; largest relative loss difference ${diff}; ran on ${g.backend} | ${f(c.sps, 2)} | ${f(g.sps, 2)} | ${f(g.sps / c.sps, 2)} | ${load().slice(5)} |`);
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}

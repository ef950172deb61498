// Every WGSL kernel in shaders/ compiles in Chromium's WebGPU (Tint, on SwiftShader), with
// each value of its MODE / ACT / boolean `override` constants. The native tests run the
// kernels through naga on Vulkan; Chromium's compiler is a different one with its own
// checks (the uniformity analysis around barriers, the range of float literals), and the
// page runs the same files there. Needs no build: the shaders are read from the
// repository and handed to a blank page.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, root, serve } from './harness.mjs';

let browser;
let server;
let dir;

before(async () => {
  // WebGPU needs a secure context: a page served from 127.0.0.1 (its own free port).
  dir = mkdtempSync(join(tmpdir(), 'tplay-shaders-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>shaders</title>');
  server = await serve(dir);
  browser = await launch({ webgpu: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The `override` constants of a shader and the values to try: every MODE / ACT value the
 * launch functions use (0 to 2), both values of a boolean. */
function specialisations(source) {
  const overrides = [...source.matchAll(/^override\s+(\w+)\s*:\s*(\w+)/gm)].map((m) => ({ name: m[1], type: m[2] }));
  let sets = [{}];
  for (const { name, type } of overrides) {
    const values = type === 'bool' ? [0, 1] : [0, 1, 2];
    sets = sets.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  }
  return sets;
}

test('every_wgsl_kernel_compiles_in_chromium_webgpu_for_each_of_its_specialisations', async () => {
  const files = readdirSync(join(root, 'shaders')).filter((f) => f.endsWith('.wgsl')).sort();
  assert.ok(files.length > 10, `found only ${files.length} shaders`);
  const shaders = files.map((f) => {
    const source = readFileSync(join(root, 'shaders', f), 'utf8');
    return { file: f, source, sets: specialisations(source) };
  });
  const page = await browser.context.newPage();
  await page.goto(server.url);
  const report = await page.evaluate(async (shaders) => {
    if (!navigator.gpu) return { fatal: 'navigator.gpu is missing' };
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) return { fatal: 'no WebGPU adapter' };
    const device = await adapter.requestDevice({ requiredLimits: { maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage } });
    const problems = [];
    let pipelines = 0;
    for (const { file, source, sets } of shaders) {
      device.pushErrorScope('validation');
      const module = device.createShaderModule({ code: source, label: file });
      const info = await module.getCompilationInfo();
      const moduleError = await device.popErrorScope();
      for (const m of info.messages) {
        if (m.type === 'error') problems.push(`${file}:${m.lineNum}:${m.linePos} ${m.message}`);
      }
      if (moduleError) problems.push(`${file}: ${moduleError.message}`);
      if (moduleError || info.messages.some((m) => m.type === 'error')) continue;
      for (const constants of sets) {
        device.pushErrorScope('validation');
        device.pushErrorScope('internal');
        try {
          await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
          pipelines += 1;
        } catch (e) {
          problems.push(`${file} ${JSON.stringify(constants)}: ${e.message}`);
        }
        const internal = await device.popErrorScope();
        const validation = await device.popErrorScope();
        for (const e of [internal, validation]) {
          if (e) problems.push(`${file} ${JSON.stringify(constants)}: ${e.message}`);
        }
      }
    }
    device.destroy();
    return { problems, pipelines };
  }, shaders);
  assert.equal(report.fatal, undefined, report.fatal);
  assert.deepEqual(report.problems, [], report.problems.join('\n'));
  const expected = shaders.reduce((n, s) => n + s.sets.length, 0);
  assert.equal(report.pipelines, expected, 'every specialisation became a pipeline');
  console.log(`${files.length} shaders, ${report.pipelines} pipelines compiled in Chromium`);
});

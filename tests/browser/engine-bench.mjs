// The engine benchmark (crate/src/bench.rs) in wasm under node, for `cargo xtask bench`:
// loads the bench build of the core (`--features bench`, simd128) from the folder given
// as the first argument, runs it and writes its report (JSON) to the second argument.
// Run with `node --no-liftoff` so that V8 compiles the module with its optimising
// compiler at once, as a page that keeps decoding ends up doing. A program that prints
// numbers; it asserts nothing about time.
//
// The clock the core reads is the process's CPU time (so other programs on a busy
// machine do not inflate the figures), as natively it reads the thread's CPU time.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [pkg, out] = process.argv.slice(2);
if (!pkg || !out) {
  console.error('usage: node --no-liftoff engine-bench.mjs <bench pkg dir> <out.json>');
  process.exit(2);
}
globalThis.tplayBenchNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const mod = await import(join(pkg, 'tplay.js'));
await mod.default({ module_or_path: readFileSync(join(pkg, 'tplay_bg.wasm')) });
const quick = process.env.TPLAY_BENCH_QUICK === '1';
const json = mod.benchReport(quick);
writeFileSync(out, json);
const r = JSON.parse(json);
console.log(`wasm (${r.build}): decode ${r.decode_tokens_per_s.value.toFixed(0)} tokens/s, 64-token forward ${r.prefill_64_ms.value.toFixed(3)} ms`);

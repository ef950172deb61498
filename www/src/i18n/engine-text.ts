// What the engine says, in the page's language. The engine (the Rust core in a worker)
// speaks English. Two kinds of its text are known here and translated:
//
// - the backend badge's reasons: the core's `BackendStatus`, worded here by its `kind`;
// - the core's errors: each starts with the kind of the core's `Error` (crate/src/error.rs:
//   `invalid config:`, `bad checkpoint:`, `bad input:`, `GPU backend:`). The kind is
//   translated and the core's own sentence after it is shown as the core wrote it (it
//   names fields, tensors and numbers, which read the same in any language). Any other
//   error text is shown as it came, inside the translated frame of where it happened.

import { msg, str } from '@lit/localize';
import type { BackendRace, BackendStatus, BackendWant } from '../engine/protocol';
import { NO_GPU_DETAIL } from '../engine/protocol';
import { ms, num } from '../ui/format';

/** Why the engine runs where it does, in the page's language, by the core's status kind. */
export function backendReason(status: BackendStatus): string {
  switch (status.kind) {
    case 'starting':
      return msg('starting on the CPU');
    case 'cpu_chosen':
      return msg('the CPU was chosen');
    case 'webgpu':
    case 'webgpu_checked':
      return msg('running on WebGPU');
    case 'cpu_no_gpu':
      return insecure()
        ? msg('WebGPU needs a secure page (HTTPS, or this computer’s own address) and this one came over plain HTTP — running on the CPU', { id: 'engine.no-gpu-insecure' })
        : msg('WebGPU is unavailable in this browser — running on the CPU');
    case 'cpu_test_failed':
      return msg('WebGPU started but its test pass failed — running on the CPU');
    case 'cpu_disagrees':
      return msg('WebGPU gives logits that disagree with the CPU — running on the CPU');
    case 'cpu_faster':
      return msg('WebGPU agrees with the CPU but is slower for this model — running on the CPU', { id: 'engine.cpu-faster' });
    case 'cpu_fell_back':
    case 'cpu_refused':
    case 'cpu_lost':
      return msg('the GPU failed — generation carries on on the CPU');
  }
}

/** The page came over plain HTTP from another computer (a class on a LAN): browsers offer no WebGPU there. */
function insecure(): boolean {
  return typeof globalThis.isSecureContext === 'boolean' && !globalThis.isSecureContext;
}

/** Why the engine runs on the CPU although WebGPU was asked for, in a few words, by the core's status kind. */
function whyNotGpu(status: BackendStatus): string {
  switch (status.kind) {
    case 'cpu_no_gpu':
      return insecure() ? msg('WebGPU needs a secure page (HTTPS), not plain HTTP', { id: 'engine.no-gpu-insecure-short' }) : msg('this browser has no WebGPU');
    case 'cpu_test_failed':
      return msg("WebGPU's test pass failed");
    case 'cpu_disagrees':
      return msg("WebGPU's logits disagree with the CPU's");
    case 'cpu_faster':
      return msg('the CPU is faster for this model', { id: 'engine.cpu-faster-short' });
    case 'starting':
      return msg('starting');
    default:
      return msg('the GPU failed');
  }
}

/**
 * What runs against what was asked, in one line that the backend control and the badge
 * both show: "WebGPU asked → CPU: this browser has no WebGPU", "WebGPU asked → WebGPU",
 * "CPU asked → CPU". `info` null: the engine has not said yet.
 */
export function backendSummary(asked: BackendWant, info: { backend: 'webgpu' | 'cpu'; status: BackendStatus } | null): string {
  const name = (b: BackendWant) => (b === 'auto' ? msg('Auto', { id: 'engine.backend-auto' }) : b === 'webgpu' ? 'WebGPU' : 'CPU');
  if (!info) return msg(str`${name(asked)} asked → starting`);
  if (asked !== 'cpu' && info.backend === 'cpu') return msg(str`${name(asked)} asked → CPU: ${whyNotGpu(info.status)}`, { id: 'engine.asked-cpu-because' });
  if (asked === 'auto' && info.status.kind === 'webgpu_checked') return msg('Auto asked → WebGPU: it agrees with the CPU and is faster for this model', { id: 'engine.auto-gpu' });
  return msg(str`${name(asked)} asked → ${name(info.backend)}`);
}

/**
 * The race between an agreeing GPU and the CPU, in one line: "one generated token: CPU
 * 0.24 ms, WebGPU 6.8 ms (28× slower)" (or "one pass of the test input" for a model that
 * does not generate).
 */
export function raceLine(race: BackendRace): string {
  const gpuWins = race.gpu_ms < race.cpu_ms;
  const times = num(gpuWins ? race.cpu_ms / race.gpu_ms : race.gpu_ms / race.cpu_ms, 2);
  const cpu = ms(race.cpu_ms);
  const gpu = ms(race.gpu_ms);
  if (race.unit === 'token') {
    return gpuWins
      ? msg(str`one generated token: CPU ${cpu}, WebGPU ${gpu} (${times}× faster)`, { id: 'engine.race-token-faster' })
      : msg(str`one generated token: CPU ${cpu}, WebGPU ${gpu} (${times}× slower)`, { id: 'engine.race-token-slower' });
  }
  return gpuWins
    ? msg(str`one pass of the test input: CPU ${cpu}, WebGPU ${gpu} (${times}× faster)`, { id: 'engine.race-faster' })
    : msg(str`one pass of the test input: CPU ${cpu}, WebGPU ${gpu} (${times}× slower)`, { id: 'engine.race-slower' });
}

/** The badge's detail (why the GPU is not used), by the core's status kind; null: none. */
export function backendDetail(status: BackendStatus): string | null {
  switch (status.kind) {
    case 'cpu_no_gpu':
      // The worker's two details (NO_GPU_DETAIL), then the GPU backend's own words.
      if (status.detail === NO_GPU_DETAIL.noNavigatorGpu) return msg('this browser has no navigator.gpu');
      if (status.detail === NO_GPU_DETAIL.noAdapter) return msg('this browser offers no WebGPU adapter', { id: 'engine.no-adapter-offered' });
      return gpuDetailText(status.detail);
    case 'cpu_disagrees': {
      const d = status.max_abs_diff;
      return d !== undefined && d !== null ? msg(str`the largest GPU−CPU logit difference is ${d}`) : msg('the GPU returned NaN or infinite logits where the CPU did not');
    }
    case 'cpu_test_failed':
    case 'cpu_fell_back':
    case 'cpu_refused':
    case 'cpu_lost':
      return errorText(status.detail);
    default:
      return null;
  }
}

/**
 * Why the GPU backend could not start, in the page's language: the core's sentence for a
 * missing adapter translated, with the browser's own reason quoted as it said it; any other
 * reason quoted whole, as the GPU backend wrote it.
 */
export function gpuDetailText(detail: string): string {
  const m = /^(?:GPU backend: )?no WebGPU\/Vulkan adapter found \(([\s\S]*)\); the CPU backend works everywhere\b/.exec(detail);
  if (m)
    return msg(str`no WebGPU or Vulkan adapter was found (the browser said “${m[1]}”); the CPU backend works everywhere. WebGPU needs a recent Chrome or Edge, or a flag in other browsers.`, {
      id: 'engine.no-adapter',
    });
  return msg(str`the GPU backend said “${detail.replace(/^GPU backend: /, '')}”`, { id: 'engine.gpu-said' });
}

/** An error's text with the core's kind translated (the rest as the core wrote it). */
export function errorText(text: string): string {
  const m = /^(invalid config|bad checkpoint|bad input|GPU backend): ([\s\S]*)$/.exec(text);
  if (!m) return text;
  const rest = m[2];
  switch (m[1]) {
    case 'invalid config':
      return msg(str`invalid config: ${rest}`);
    case 'bad checkpoint':
      return msg(str`bad checkpoint: ${rest}`);
    case 'bad input':
      return msg(str`bad input: ${rest}`);
    default:
      return msg(str`GPU backend: ${rest}`);
  }
}

/**
 * What the engine says about a train-mode pass (the core's `train_note`), in the page's
 * language: which of its four sentences it is, with the core's dropout p and seed. A note
 * the page does not know is shown as the core wrote it.
 */
export function trainNoteText(note: string): string {
  const gpu = /^train mode \((.*)\) ran on the CPU: the page's train-mode passes use the CPU reference, also when WebGPU is chosen$/.exec(note);
  const cpu = /^train mode: (.*)$/.exec(note);
  const what = gpu?.[1] ?? cpu?.[1];
  if (what === undefined) return note;
  let words: string | null = null;
  let m: RegExpExecArray | null;
  if ((m = /^dropout p = ([^ ]+) drawn from seed (\d+), BatchNorm with the batch's own statistics$/.exec(what)))
    words = msg(str`dropout p = ${m[1]} drawn from seed ${m[2]}, BatchNorm with the batch’s own statistics`, { id: 'engine.train-note.dropout-batch-norm' });
  else if ((m = /^dropout p = ([^ ]+) drawn from seed (\d+)$/.exec(what))) words = msg(str`dropout p = ${m[1]} drawn from seed ${m[2]}`, { id: 'engine.train-note.dropout' });
  else if (what === "BatchNorm with the batch's own statistics (dropout p = 0)")
    words = msg('BatchNorm with the batch’s own statistics (dropout p = 0)', { id: 'engine.train-note.batch-norm' });
  else if (what === 'dropout p = 0 and no BatchNorm: train mode computes exactly what eval mode does')
    words = msg('dropout p = 0 and no BatchNorm: train mode computes exactly what eval mode does', { id: 'engine.train-note.same' });
  if (words === null) return note;
  return gpu
    ? msg(str`train mode (${words}) ran on the CPU: the page’s train-mode passes use the CPU reference, also when WebGPU is chosen`, { id: 'engine.train-note.gpu' })
    : msg(str`train mode: ${words}`, { id: 'engine.train-note.cpu' });
}

/** A progress line from the worker, translated when it is one of its known sentences. */
export function progressLabel(label: string): string {
  if (label === 'Starting the engine (compiling the WebAssembly core)') return msg('Starting the engine (compiling the WebAssembly core)');
  if (label === 'The engine is running') return msg('The engine is running');
  const dl = /^Downloading (.+)$/.exec(label);
  if (dl) return msg(str`Downloading ${dl[1]}`);
  return label;
}

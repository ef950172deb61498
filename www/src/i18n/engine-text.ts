// What the engine says, in the page's language. The engine (the Rust core in a worker)
// speaks English. Two kinds of its text are known here and translated:
//
// - the backend badge's reasons: a fixed set of sentences from ../engine/worker.ts, each
//   mapped to its translation (an unknown one is shown as it came);
// - the core's errors: each starts with the kind of the core's `Error` (crate/src/error.rs:
//   `invalid config:`, `bad checkpoint:`, `bad input:`, `GPU backend:`). The kind is
//   translated and the core's own sentence after it is shown as the core wrote it (it
//   names fields, tensors and numbers, which read the same in any language). Any other
//   error text is shown as it came, inside the translated frame of where it happened.

import { msg, str } from '@lit/localize';

/** The badge's reason, translated when it is one of the worker's known sentences. */
export function backendReason(reason: string): string {
  switch (reason) {
    case 'starting on the CPU':
      return msg('starting on the CPU');
    case 'the GPU failed — generation carries on on the CPU':
      return msg('the GPU failed — generation carries on on the CPU');
    case 'the CPU was chosen':
      return msg('the CPU was chosen');
    case 'WebGPU is unavailable in this browser — running on the CPU':
      return msg('WebGPU is unavailable in this browser — running on the CPU');
    case 'WebGPU started but its test pass failed — running on the CPU':
      return msg('WebGPU started but its test pass failed — running on the CPU');
    case 'running on WebGPU':
      return msg('running on WebGPU');
    case 'WebGPU gives logits that disagree with the CPU — running on the CPU':
      return msg('WebGPU gives logits that disagree with the CPU — running on the CPU');
    default:
      return reason;
  }
}

/** The badge's detail (why the GPU is not used), with known sentences translated. */
export function backendDetail(detail: string): string {
  if (detail === 'this browser has no navigator.gpu') return msg('this browser has no navigator.gpu');
  if (detail === 'the GPU returned NaN or infinite logits where the CPU did not') return msg('the GPU returned NaN or infinite logits where the CPU did not');
  const diff = /^the largest GPU−CPU logit difference is (\S+)$/.exec(detail);
  if (diff) return msg(str`the largest GPU−CPU logit difference is ${diff[1]}`);
  return errorText(detail);
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

/** A progress line from the worker, translated when it is one of its known sentences. */
export function progressLabel(label: string): string {
  if (label === 'Starting the engine (compiling the WebAssembly core)') return msg('Starting the engine (compiling the WebAssembly core)');
  if (label === 'The engine is running') return msg('The engine is running');
  const dl = /^Downloading (.+)$/.exec(label);
  if (dl) return msg(str`Downloading ${dl[1]}`);
  return label;
}

// A run in words: the held-out metric's name, and where its steps run (the backend and,
// for the cell's title, its adapter or what made it fall back to the CPU).

import { msg, str } from '@lit/localize';
import { backendReason, errorText, gpuDetailText } from '../i18n/engine-text';
import { ms, num } from '../ui/format';
import type { RunBackend } from './host';

export const METRIC_WORDS: Record<string, string> = {
  get exact_match() {
    return msg('exact match');
  },
  get token_accuracy() {
    return msg('token accuracy');
  },
  get class_accuracy() {
    return msg('class accuracy');
  },
  get grammatical() {
    return msg('grammatical sentences');
  },
  get next_char_accuracy() {
    return msg('next-character accuracy', { id: 'lab.metric.next-char' });
  },
};

/**
 * Where a run's steps run, in a few words: "WebGPU", or "CPU: why" ("CPU: WebGPU agrees but
 * is 12× slower per step (CPU 0.8 ms, WebGPU 9.6 ms)": an `auto` run's race, `train::race`).
 */
export function backendText(b: RunBackend | null): string {
  if (!b) return '–';
  switch (b.kind) {
    case 'webgpu':
      return 'WebGPU';
    case 'cpu_chosen':
      return msg('CPU: chosen in the settings');
    case 'cpu_no_gpu':
      return msg('CPU: WebGPU not available');
    case 'cpu_refused':
      return msg(str`CPU: ${b.detail}`);
    case 'webgpu_checked':
      return 'WebGPU';
    case 'cpu_faster': {
      const [times, cpu, gpu] = [num(b.gpu_ms / b.cpu_ms, 2), ms(b.cpu_ms), ms(b.gpu_ms)];
      return msg(str`CPU: WebGPU agrees but is ${times}× slower per step (CPU ${cpu}, WebGPU ${gpu})`, { id: 'lab.run-cpu-faster' });
    }
    case 'cpu_disagrees':
      return msg('CPU: WebGPU’s losses disagree with the CPU’s', { id: 'lab.run-cpu-disagrees' });
    case 'cpu_test_failed':
      return msg('CPU: WebGPU failed its timed steps', { id: 'lab.run-cpu-test-failed' });
    case 'cpu_lost':
      return /lost/i.test(b.detail) ? msg(str`CPU: the GPU device was lost at step ${b.step}`) : msg(str`CPU: the GPU failed at step ${b.step}`);
    default:
      // The statuses of the playground's engine (a run's steps never take these).
      return backendReason(b);
  }
}

/** The longer story of a run's backend (the cell's title): the adapter, or what happened. */
export function backendDetail(b: RunBackend | null): string {
  if (!b) return '';
  switch (b.kind) {
    case 'webgpu':
      return b.adapter;
    case 'cpu_chosen':
      return '';
    case 'cpu_no_gpu':
    case 'cpu_refused':
      return gpuDetailText(b.detail);
    case 'webgpu_checked': {
      const [times, cpu, gpu] = [num(b.cpu_ms / b.gpu_ms, 2), ms(b.cpu_ms), ms(b.gpu_ms)];
      return msg(str`${b.adapter}: its losses agree with the CPU’s (largest relative difference ${num(b.parity, 2)}) and it is ${times}× faster per step (CPU ${cpu}, WebGPU ${gpu})`, { id: 'lab.run-gpu-faster' });
    }
    case 'cpu_faster':
      return msg(str`${b.adapter}: its losses agree with the CPU’s (largest relative difference ${num(b.parity, 2)}) over the run’s first steps, timed on both`, { id: 'lab.run-cpu-faster-detail' });
    case 'cpu_disagrees':
      return b.max_abs_diff === null || b.max_abs_diff === undefined
        ? msg(str`${b.adapter}: the losses of the run’s first steps have a NaN or an infinity on one side or both`, { id: 'lab.run-disagrees-nan' })
        : msg(str`${b.adapter}: the largest relative loss difference over the run’s first steps is ${num(b.max_abs_diff, 2)}`, { id: 'lab.run-disagrees-by' });
    case 'cpu_test_failed':
      return `${b.adapter}: ${errorText(b.detail)}`;
    case 'cpu_lost':
      return msg(str`${b.detail}; the run went on on the CPU from step ${b.from}, the last step copied back from the GPU`);
    default:
      return '';
  }
}

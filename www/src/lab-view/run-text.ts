// A run in words: the held-out metric's name, and where its steps run (the backend and,
// for the cell's title, its adapter or what made it fall back to the CPU).

import { msg, str } from '@lit/localize';
import { backendReason, gpuDetailText } from '../i18n/engine-text';
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
};

/** Where a run's steps run, in a few words: "WebGPU", or "CPU: why". */
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
    case 'cpu_lost':
      return msg(str`${b.detail}; the run went on on the CPU from step ${b.from}, the last step copied back from the GPU`);
    default:
      return '';
  }
}

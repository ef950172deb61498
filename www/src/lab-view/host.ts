// The element's lab API as the lab view uses it (www/README.md, "The lab"), and the
// protocol types of a run (crate/src/protocol.rs).

import type { Activation, Arch, Norm, PosEncoding, Score } from '../engine/protocol';

export type LrSettings = { kind: 'noam'; factor: number; warmup: number } | { kind: 'constant'; value: number };

export type RunSettings = {
  task: string;
  arch: Arch | null;
  d_model: number;
  n_heads: number;
  n_layers: number;
  d_ff: number;
  activation: Activation;
  pos_encoding: PosEncoding;
  norm: Norm;
  final_norm: boolean;
  residual: boolean;
  scale_embeddings: boolean;
  score: Score;
  share_qk: boolean;
  dropout: number;
  label_smoothing: number;
  batch: number;
  steps: number;
  seed: number;
  len: number | null;
  adam_beta1: number;
  adam_beta2: number;
  adam_eps: number;
  lr: LrSettings;
  clip: number;
  eval_every: number;
};

export type RunDefaults = {
  settings: RunSettings;
  recipe: string | null;
  threshold: number | null;
  description: string;
  metric_name: string;
  notes: Record<string, string>;
  not_for_task: Record<string, string>;
};

export type EvalPoint = { loss: number; metric: number; metric_name: string };

export type TrainPoint = {
  step: number;
  loss: number;
  lr: number;
  grad_norm: number;
  elapsed_ms: number;
  eval: EvalPoint | null;
  residual_norms: number[];
  grad_norms: number[];
};

export type RunStatus = 'running' | 'paused' | 'stopped' | 'done' | 'failed';

export interface RunRecord {
  id: string;
  name: string;
  settings: RunSettings;
  points: TrainPoint[];
  status: RunStatus;
  error: string | null;
  steps_per_s: number;
  elapsed_ms: number;
  created_at: number;
  hidden: boolean;
}

export interface RunHandle extends EventTarget {
  readonly id: string;
  pause(): unknown;
  resume(): unknown;
  stop(): unknown;
  stepOnce(): unknown;
  readonly done: Promise<unknown>;
}

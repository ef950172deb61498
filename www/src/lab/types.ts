// The lab's records: a run as the page keeps it (settings, curves, status), and what a
// finished run reports. The numbers themselves come from the core (`TrainPoint`).

import type { HealthAlarm, RunBackend, RunSettings, TrainPoint } from '../engine/protocol';
import type { PointLog } from './points';

export type RunStatus = 'running' | 'paused' | 'stopped' | 'done' | 'failed';

/** One training run as the page keeps it (and IndexedDB stores it). */
export interface RunRecord {
  id: string;
  /** A name for people (renameRun changes it). */
  name: string;
  settings: RunSettings;
  /** One per step taken, in order (built from `log` each time it is read: a fresh array). */
  readonly points: TrainPoint[];
  /** The same curves as columns of numbers (what the page keeps; see lab/points.ts). */
  readonly log: PointLog;
  status: RunStatus;
  /** Why the run failed, or what happened to it (a reload stopped it); null when nothing did. */
  error: string | null;
  /** Steps per second of the run's own compute. */
  steps_per_s: number;
  /** Compute time so far, pauses excluded. */
  elapsed_ms: number;
  /** Date.now() when the run was started. */
  created_at: number;
  hidden: boolean;
  /** The step of the weights kept with the run (saved every few seconds and at pause, stop, done); null before the first save. */
  checkpoint_step: number | null;
  /** The `tplay train` flags of the same run. */
  command: string[];
  /** Where its steps run (or ran last), and why; null for a run saved before this was kept. */
  backend: RunBackend | null;
  /** What the health watch saw, in step order (a stopping one last); absent before the first. */
  alarms?: HealthAlarm[];
}

/** What a run ended with. */
export interface RunSummary {
  id: string;
  status: RunStatus;
  /** Steps taken. */
  step: number;
  /** The last step's training loss (NaN before any step). */
  loss: number;
  /** The task's metric at the last evaluation (the final one for a finished run), or null. */
  metric: number | null;
  metric_name: string | null;
  /** Held-out loss at the last evaluation, or null. */
  eval_loss: number | null;
  /** Compute seconds. */
  seconds: number;
  steps_per_s: number;
}

/** Detail of a run's 'progress' event. */
export interface RunProgress {
  run: RunRecord;
  /** The points this chunk added. */
  points: TrainPoint[];
}

// A run as the page keeps it: the public RunRecord fields, its curves in a PointLog
// (columns of numbers, see points.ts), and the form IndexedDB stores it in. `points` is
// built from the columns each time it is read, so embedders and JSON see the documented
// shape while the page keeps one compact copy.

import type { HealthAlarm, RunBackend, RunSettings, TrainPoint } from '../engine/protocol';
import { PointLog, type StoredPoints } from './points';
import type { RunRecord, RunStatus } from './types';

/** The fields of a RunRecord other than its curves. */
type Fields = Omit<RunRecord, 'points' | 'log'>;

/** What IndexedDB keeps: the fields and the columns (runs saved before kept `points`). */
export type StoredRun = Fields & { log: StoredPoints };

const STATUSES: readonly RunStatus[] = ['running', 'paused', 'stopped', 'done', 'failed'];

export class Run implements RunRecord {
  id: string;
  name: string;
  settings: RunSettings;
  status: RunStatus;
  error: string | null;
  steps_per_s: number;
  elapsed_ms: number;
  created_at: number;
  hidden: boolean;
  checkpoint_step: number | null;
  command: string[];
  backend: RunBackend | null;
  alarms: HealthAlarm[];
  readonly log: PointLog;

  constructor(f: Fields, log = new PointLog()) {
    this.id = f.id;
    this.name = f.name;
    this.settings = f.settings;
    this.status = f.status;
    this.error = f.error;
    this.steps_per_s = f.steps_per_s;
    this.elapsed_ms = f.elapsed_ms;
    this.created_at = f.created_at;
    this.hidden = f.hidden;
    this.checkpoint_step = f.checkpoint_step;
    this.command = f.command;
    this.backend = f.backend;
    this.alarms = Array.isArray(f.alarms) ? f.alarms : [];
    this.log = log;
  }

  /** One per step taken, in order (a fresh array each read). */
  get points(): TrainPoint[] {
    return this.log.toArray();
  }

  private fields(): Fields {
    const { id, name, settings, status, error, steps_per_s, elapsed_ms, created_at, hidden, checkpoint_step, command, backend, alarms } = this;
    return { id, name, settings, status, error, steps_per_s, elapsed_ms, created_at, hidden, checkpoint_step, command, backend, alarms };
  }

  /** The documented RunRecord shape, for JSON. */
  toJSON(): Omit<RunRecord, 'log'> {
    return { ...this.fields(), points: this.points };
  }

  stored(): StoredRun {
    return { ...this.fields(), log: this.log.stored() };
  }

  /** A stored run back (either form), or null if `v` is not one (an old or foreign entry is skipped). */
  static fromStored(v: unknown): Run | null {
    const r = v as Partial<StoredRun> & { points?: unknown };
    if (!r || typeof r !== 'object') return null;
    const ok =
      typeof r.id === 'string' &&
      typeof r.name === 'string' &&
      typeof r.settings === 'object' &&
      r.settings !== null &&
      typeof r.status === 'string' &&
      STATUSES.includes(r.status) &&
      typeof r.created_at === 'number';
    if (!ok) return null;
    const log = Array.isArray(r.points) ? PointLog.fromPoints(r.points as TrainPoint[]) : PointLog.fromStored(r.log);
    if (!log) return null;
    return new Run(
      {
        id: r.id!,
        name: r.name!,
        settings: r.settings!,
        status: r.status!,
        error: typeof r.error === 'string' ? r.error : null,
        steps_per_s: typeof r.steps_per_s === 'number' ? r.steps_per_s : 0,
        elapsed_ms: typeof r.elapsed_ms === 'number' ? r.elapsed_ms : 0,
        created_at: r.created_at!,
        hidden: !!r.hidden,
        checkpoint_step: typeof r.checkpoint_step === 'number' ? r.checkpoint_step : null,
        command: Array.isArray(r.command) ? r.command.filter((c): c is string => typeof c === 'string') : [],
        backend: backendOf(r.backend),
        alarms: alarmsOf(r.alarms),
      },
      log,
    );
  }
}

const ALARM_KINDS = ['non_finite', 'update_too_large', 'attention_collapsed', 'gradient_exploding'];

/** A stored run's health alarms (those that are not one are left out). */
function alarmsOf(v: unknown): HealthAlarm[] {
  if (!Array.isArray(v)) return [];
  return v.filter((a): a is HealthAlarm => !!a && typeof a === 'object' && ALARM_KINDS.includes((a as HealthAlarm).kind) && typeof (a as HealthAlarm).step === 'number');
}

const BACKEND_KINDS = ['webgpu', 'webgpu_checked', 'cpu_chosen', 'cpu_no_gpu', 'cpu_refused', 'cpu_faster', 'cpu_disagrees', 'cpu_test_failed', 'cpu_lost'];

/** A stored run's backend, or null when it has none (saved before it was kept) or it is not one. */
function backendOf(v: unknown): RunBackend | null {
  const b = v as { kind?: unknown } | null | undefined;
  if (!b || typeof b !== 'object' || typeof b.kind !== 'string' || !BACKEND_KINDS.includes(b.kind)) return null;
  return b as RunBackend;
}

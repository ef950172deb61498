// The lab's runs: each training run has its own engine in its own Web Worker (so the
// inference views stay responsive) and is driven a chunk at a time — about 50 ms of
// steps per request — so pause, stop and step-once act at once: pausing is simply not
// asking for the next chunk. Records (settings, curves) and the latest weights are kept
// in IndexedDB and come back after a reload; a lost worker marks its run failed with the
// reason, and the weights saved last stay with it.

import type { EngineClient } from '../engine/client';
import type { ModelInfo, RunSettings, TrainPoint } from '../engine/protocol';
import { runCsv } from './csv';
import { alarmText } from './health';
import { deviceRoom, preflight, PreflightRefusal } from './preflight';
import type { RunStorage } from './persist';
import { Run } from './record';
import type { RunProgress, RunRecord, RunStatus, RunSummary } from './types';
import { msg, str } from '@lit/localize';

/** Milliseconds of training per chunk. */
export const CHUNK_MS = 50;
/** How often a running run's record and its weights are saved. */
export const RECORD_SAVE_MS = 2_000;
export const CHECKPOINT_SAVE_MS = 10_000;

/** The checkpoint loader's size limit (crate/src/limits.rs MAX_CHECKPOINT_BYTES), checked before the bytes cross to the engine. */
export const MAX_CHECKPOINT_BYTES = 720 * 1024 * 1024;

/** What the lab needs from the page. */
export interface LabHost {
  /** A fresh engine for one run (its own worker). */
  trainer(): EngineClient;
  /** Make checkpoint bytes the page's model (`task`: the run's task, whose prompt the page then shows). */
  useCheckpoint(bytes: Uint8Array, label: string, task: string | null): Promise<ModelInfo>;
  /** The runs changed (the element dispatches tp-runs-changed). */
  changed(): void;
  /** Something could not be saved (a full quota): say so. */
  storageFailed(message: string): void;
  storage: RunStorage;
  /** Why these settings may not be trained here ('' when they may): a classroom link that locks the lab's settings. */
  refuse?(settings: RunSettings, defaults: RunSettings): string;
}

/** A run being driven, with its engine. */
interface Live {
  rec: Run;
  handle: RunHandle;
  client: EngineClient | null;
  looping: boolean;
  /** Single steps asked for while paused. */
  stepsWanted: number;
  lastRecordSave: number;
  lastCheckpointSave: number;
  settle: { resolve: (s: RunSummary) => void; reject: (e: Error) => void };
  /** Settles when the loop is idle. */
  idle: Promise<void>;
}

/** A handle on one training run: 'progress' events, controls, and its end. */
export class RunHandle extends EventTarget {
  /** Resolves with the run's record once it started; rejects with the reason it could not (bad settings). */
  readonly started: Promise<RunRecord>;
  /** Resolves when the run is done or stopped; rejects when it fails. */
  readonly done: Promise<RunSummary>;
  /** @internal */
  resolveStarted!: (r: RunRecord) => void;
  /** @internal */
  rejectStarted!: (e: Error) => void;
  /** @internal */
  resolveDone!: (s: RunSummary) => void;
  /** @internal */
  rejectDone!: (e: Error) => void;

  constructor(
    readonly id: string,
    private lab: LabRegistry,
  ) {
    super();
    this.started = new Promise((res, rej) => {
      this.resolveStarted = res;
      this.rejectStarted = rej;
    });
    this.done = new Promise((res, rej) => {
      this.resolveDone = res;
      this.rejectDone = rej;
    });
    // A caller that never looks at a promise must not see an unhandled rejection.
    this.started.catch(() => undefined);
    this.done.catch(() => undefined);
  }

  /** The run's record (undefined before it started). */
  get run(): RunRecord | undefined {
    return this.lab.run(this.id);
  }
  pause(): Promise<void> {
    return this.lab.pause(this.id);
  }
  resume(): Promise<void> {
    return this.lab.resume(this.id);
  }
  stop(): Promise<void> {
    return this.lab.stop(this.id);
  }
  /** One step (pausing the run first if it is running). */
  stepOnce(): Promise<void> {
    return this.lab.stepOnce(this.id);
  }
}

/** The task as a new run's name begins (`sort 2`), in the page's language; the id itself where the page has no word for it. */
function taskWord(task: string): string {
  switch (task) {
    case 'copy':
      return msg('copy', { id: 'lab.run-name.copy' });
    case 'reverse':
      return msg('reverse', { id: 'lab.run-name.reverse' });
    case 'sort':
      return msg('sort', { id: 'lab.run-name.sort' });
    case 'add':
      return msg('add', { id: 'lab.run-name.add' });
    case 'grammar':
      return msg('grammar', { id: 'lab.run-name.grammar' });
    case 'translate':
      return msg('translate', { id: 'lab.run-name.translate' });
    case 'sentiment':
      return msg('sentiment', { id: 'lab.run-name.sentiment' });
    case 'tagging':
      return msg('tagging', { id: 'lab.run-name.tagging' });
    case 'zh-grammar':
      return msg('zh-grammar', { id: 'lab.run-name.zh-grammar' });
    case 'zh-numerals':
      return msg('zh-numerals', { id: 'lab.run-name.zh-numerals' });
    case 'zh-sentiment':
      return msg('zh-sentiment', { id: 'lab.run-name.zh-sentiment' });
    default:
      return task;
  }
}

function newId(): string {
  const rand = Math.floor(Math.random() * 36 ** 6)
    .toString(36)
    .padStart(6, '0');
  return `run-${Date.now().toString(36)}-${rand}`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function summaryOf(r: RunRecord): RunSummary {
  const n = r.log.length;
  const ev = r.log.lastEval();
  return {
    id: r.id,
    status: r.status,
    step: n ? r.log.step(n - 1) : 0,
    loss: n ? r.log.loss(n - 1) : Number.NaN,
    metric: ev?.metric ?? null,
    metric_name: ev?.metric_name ?? null,
    eval_loss: ev?.loss ?? null,
    seconds: r.elapsed_ms / 1000,
    steps_per_s: r.steps_per_s,
  };
}

export class LabRegistry {
  private records: Run[] = [];
  private live = new Map<string, Live>();
  /** The last storage failure, in words ('' when none). */
  storageError = '';
  /** Settles once the stored runs are back. */
  readonly restored: Promise<void>;

  constructor(private host: LabHost) {
    this.restored = this.restore();
  }

  /** Every run, oldest first (copies of the records are not made: do not mutate). */
  get runs(): RunRecord[] {
    return [...this.records];
  }

  run(id: string): Run | undefined {
    return this.records.find((r) => r.id === id);
  }

  private need(id: string): Run {
    const r = this.run(id);
    if (!r) throw new Error(`no run '${id}'`);
    return r;
  }

  /** Runs saved by an earlier visit. A run that was training when the page closed is stopped, saying so. */
  private async restore(): Promise<void> {
    let stored: Run[];
    try {
      stored = await this.host.storage.records();
    } catch (e) {
      this.reportStorage(msg(str`The saved runs could not be read (${message(e)}).`));
      return;
    }
    for (const r of stored) {
      if (this.run(r.id)) continue;
      if (r.status === 'running' || r.status === 'paused') {
        if (r.checkpoint_step !== null) {
          // It continues from where it was last saved; the curve after that step is dropped.
          r.status = 'paused';
          const lost = r.log.truncateAfter(r.checkpoint_step);
          r.error = lost
            ? msg(str`The page closed while this run trained; it continues from step ${r.checkpoint_step}, where it was last saved (the ${lost} steps after it are lost).`)
            : null;
        } else {
          r.status = 'stopped';
          r.error = msg('The page closed while this run trained, before its weights were first saved; its curves are kept.');
        }
      }
      this.records.push(r);
    }
    this.records.sort((a, b) => a.created_at - b.created_at);
    this.host.changed();
  }

  private reportStorage(msg: string) {
    this.storageError = msg;
    console.warn('lab:', msg);
    this.host.storageFailed(msg);
  }

  private async saveRecord(r: Run): Promise<void> {
    try {
      await this.host.storage.saveRecord(r);
    } catch (e) {
      this.reportStorage(msg(str`Run "${r.name}" could not be saved in this browser's storage (${message(e)}); it stays on this page until it is closed.`));
    }
  }

  /** Save the run's current weights with it (its engine exports them). */
  private async saveCheckpoint(l: Live): Promise<void> {
    if (!l.client) return;
    const n = l.rec.log.length;
    const step = n ? l.rec.log.step(n - 1) : 0;
    let snap: { checkpoint: Uint8Array; state: Uint8Array };
    try {
      snap = await l.client.call('trainSnapshot', {});
    } catch (e) {
      // The engine is gone; the crash handler reports it.
      void e;
      return;
    }
    l.lastCheckpointSave = performance.now();
    try {
      await this.host.storage.saveSnapshot(l.rec.id, snap.checkpoint, snap.state);
      l.rec.checkpoint_step = step;
    } catch (e) {
      this.reportStorage(msg(str`The weights of run "${l.rec.name}" could not be saved in this browser's storage (${message(e)}).`));
    }
    await this.saveRecord(l.rec);
  }

  private emit(l: Live, points: TrainPoint[]) {
    const detail: RunProgress = { run: l.rec, points };
    l.handle.dispatchEvent(new CustomEvent('progress', { detail }));
    this.host.changed();
  }

  /** Start a run: the task's defaults with `settings` over them. */
  train(settings: Partial<RunSettings>): RunHandle {
    const id = newId();
    const handle = new RunHandle(id, this);
    void this.begin(id, handle, settings);
    return handle;
  }

  private async begin(id: string, handle: RunHandle, partial: Partial<RunSettings>) {
    let client: EngineClient | null = null;
    try {
      await this.restored;
      const task = typeof partial.task === 'string' ? partial.task : 'reverse';
      client = this.host.trainer();
      const d = await client.call('runDefaults', { task });
      const settings: RunSettings = { ...d.settings, ...partial, task };
      const why = this.host.refuse?.(settings, d.settings) ?? '';
      if (why) throw new Error(why);
      // What the run will need against what this device offers, before any step.
      const engine = client;
      await preflight(settings, (s) => engine.call('runFootprint', s), await deviceRoom(settings.backend === 'webgpu'));
      const started = await client.call('trainStart', settings);
      const n = this.records.filter((r) => r.settings.task === task).length + 1;
      const rec = new Run({
        id,
        name: `${taskWord(task)} ${n}`,
        settings: started.settings,
        status: 'running',
        error: null,
        steps_per_s: 0,
        elapsed_ms: 0,
        created_at: Date.now(),
        hidden: false,
        checkpoint_step: null,
        command: started.command,
        backend: started.backend,
      });
      this.records.push(rec);
      await this.attach(rec, handle, client);
    } catch (e) {
      client?.terminate();
      // A pre-flight refusal keeps its offer (a batch that fits) for the form.
      const err = e instanceof PreflightRefusal ? e : new Error(message(e));
      handle.rejectStarted(err);
      handle.rejectDone(err);
    }
  }

  /** Drive `rec` with the engine `client` (which holds its session). */
  private async attach(rec: Run, handle: RunHandle, client: EngineClient): Promise<void> {
    const l: Live = {
      rec,
      handle,
      client,
      looping: false,
      stepsWanted: 0,
      lastRecordSave: performance.now(),
      lastCheckpointSave: performance.now(),
      settle: { resolve: handle.resolveDone, reject: handle.rejectDone },
      idle: Promise.resolve(),
    };
    this.live.set(rec.id, l);
    client.onCrash((why) => void this.lost(l, why));
    await this.saveRecord(rec);
    handle.resolveStarted(rec);
    this.host.changed();
    this.kick(l);
  }

  /**
   * Continue a run that has no engine (it was paused when the page closed, or its worker
   * died) from its last saved weights and state: the steps it takes are those it would
   * have taken. A running run just resumes. Returns a handle on it.
   */
  resumeRun(id: string): RunHandle {
    const l = this.live.get(id);
    if (l) {
      void this.resume(id);
      return l.handle;
    }
    const handle = new RunHandle(id, this);
    void this.revive(id, handle);
    return handle;
  }

  private async revive(id: string, handle: RunHandle, paused = false): Promise<void> {
    let client: EngineClient | null = null;
    try {
      const r = this.need(id);
      if (r.status === 'done') throw new Error(`run "${r.name}" is done: it took all its ${r.settings.steps} steps`);
      const [checkpoint, state] = await Promise.all([this.host.storage.checkpoint(id), this.host.storage.state(id)]);
      const from = r.checkpoint_step;
      if (!checkpoint || !state || from === null) throw new Error(`run "${r.name}" has no saved weights to continue from`);
      client = this.host.trainer();
      const started = await client.call('trainResume', { settings: r.settings, checkpoint, state });
      r.log.truncateAfter(from);
      r.status = paused ? 'paused' : 'running';
      r.error = null;
      r.command = started.command;
      r.backend = started.backend;
      await this.attach(r, handle, client);
    } catch (e) {
      client?.terminate();
      const err = new Error(message(e));
      handle.rejectStarted(err);
      handle.rejectDone(err);
    }
  }

  /** Run the chunk loop unless it runs already. */
  private kick(l: Live) {
    if (l.looping) return;
    l.looping = true;
    l.idle = this.loop(l).finally(() => {
      l.looping = false;
    });
  }

  private async loop(l: Live): Promise<void> {
    while (l.client && (l.rec.status === 'running' || (l.rec.status === 'paused' && l.stepsWanted > 0))) {
      const one = l.rec.status !== 'running';
      if (one) l.stepsWanted--;
      let c;
      try {
        c = await l.client.call('trainChunk', one ? { max_steps: 1, budget_ms: 0 } : { max_steps: 1_000_000, budget_ms: CHUNK_MS });
      } catch (e) {
        if (l.client) await this.fail(l, msg(str`Training stopped: ${message(e)}`));
        return;
      }
      for (const p of c.points) l.rec.log.push(p);
      if (c.alarms.length) l.rec.alarms = [...(l.rec.alarms ?? []), ...c.alarms];
      const halt = c.alarms.find((a) => a.stopped);
      l.rec.steps_per_s = c.steps_per_s;
      l.rec.elapsed_ms = c.elapsed_ms;
      l.rec.backend = c.backend;
      this.emit(l, c.points);
      if (halt) {
        // A NaN or an infinity: the run stops at the step before, saying where and why.
        await this.fail(l, alarmText(halt, l.rec.settings));
        return;
      }
      if (c.done) {
        await this.finish(l, 'done');
        return;
      }
      const now = performance.now();
      if (now - l.lastCheckpointSave > CHECKPOINT_SAVE_MS) await this.saveCheckpoint(l);
      else if (now - l.lastRecordSave > RECORD_SAVE_MS) {
        l.lastRecordSave = now;
        void this.saveRecord(l.rec);
      }
    }
  }

  /** The run ends (done or stopped): its weights are saved, its engine closed, its promise settled. */
  private async finish(l: Live, status: 'done' | 'stopped') {
    l.rec.status = status;
    await this.saveCheckpoint(l);
    l.client?.terminate();
    l.client = null;
    this.live.delete(l.rec.id);
    await this.saveRecord(l.rec);
    this.host.changed();
    l.settle.resolve(summaryOf(l.rec));
  }

  private async fail(l: Live, why: string) {
    if (l.rec.status === 'failed') return;
    l.rec.status = 'failed';
    l.rec.error =
      l.rec.checkpoint_step !== null
        ? `${why} ${msg(str`The weights saved at step ${l.rec.checkpoint_step} are kept, and the run can continue from there.`, { id: 'lab.fail-kept' })}`
        : `${why} ${msg('No weights had been saved yet.', { id: 'lab.fail-none-kept' })}`;
    l.client?.terminate();
    l.client = null;
    this.live.delete(l.rec.id);
    await this.saveRecord(l.rec);
    this.host.changed();
    l.settle.reject(new Error(l.rec.error));
  }

  /** The run's worker died under it. */
  private async lost(l: Live, why: string) {
    if (!this.live.has(l.rec.id)) return;
    l.client = null;
    await this.fail(l, msg(str`The training worker stopped (${why}).`));
  }

  async pause(id: string): Promise<void> {
    const l = this.live.get(id);
    if (!l || l.rec.status !== 'running') return;
    l.rec.status = 'paused';
    await l.idle;
    await this.saveCheckpoint(l);
    this.host.changed();
  }

  /** Resume a paused run; a run without an engine (see resumeRun) continues from its saved step. */
  async resume(id: string): Promise<void> {
    const l = this.live.get(id);
    if (!l) {
      await this.resumeRun(id).started;
      return;
    }
    if (l.rec.status !== 'paused') return;
    l.rec.status = 'running';
    this.host.changed();
    this.kick(l);
  }

  async stop(id: string): Promise<void> {
    const l = this.live.get(id);
    if (!l) return;
    l.rec.status = 'stopped';
    l.stepsWanted = 0;
    await l.idle;
    if (this.live.has(id)) await this.finish(l, 'stopped');
  }

  async stepOnce(id: string): Promise<void> {
    if (!this.live.has(id)) {
      // A run without an engine: back from its saved step, paused, then one step.
      const h = new RunHandle(id, this);
      void this.revive(id, h, true);
      await h.started;
    }
    const l = this.live.get(id);
    if (!l) return;
    if (l.rec.status === 'running') await this.pause(id);
    if (l.rec.status !== 'paused') return;
    l.stepsWanted++;
    await l.idle;
    this.kick(l);
    await l.idle;
  }

  /** The run's weights now: from its engine while it trains, else as saved. */
  async checkpoint(id: string): Promise<Uint8Array> {
    const r = this.need(id);
    const l = this.live.get(id);
    if (l?.client) return l.client.call('trainExport', {});
    const bytes = await this.host.storage.checkpoint(id);
    if (!bytes) throw new Error(`run "${r.name}" has no saved weights`);
    return bytes;
  }

  async exportRun(id: string): Promise<Blob> {
    const bytes = await this.checkpoint(id);
    return new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' });
  }

  exportRunCsv(id: string): Blob {
    return new Blob([runCsv(this.need(id))], { type: 'text/csv' });
  }

  async useRun(id: string): Promise<ModelInfo> {
    const r = this.need(id);
    return this.host.useCheckpoint(await this.checkpoint(id), r.name, r.settings.task);
  }

  async renameRun(id: string, name: string): Promise<void> {
    const r = this.need(id);
    const clean = String(name).trim().slice(0, 200);
    if (!clean) throw new Error('a run needs a name');
    r.name = clean;
    this.host.changed();
    await this.saveRecord(r);
  }

  async hideRun(id: string, hidden: boolean): Promise<void> {
    const r = this.need(id);
    r.hidden = !!hidden;
    this.host.changed();
    await this.saveRecord(r);
  }

  async deleteRun(id: string): Promise<void> {
    this.need(id);
    const l = this.live.get(id);
    if (l) {
      this.live.delete(id);
      l.client?.terminate();
      l.client = null;
      l.rec.status = 'stopped';
      l.settle.resolve(summaryOf(l.rec));
    }
    this.records = this.records.filter((r) => r.id !== id);
    this.host.changed();
    try {
      await this.host.storage.remove(id);
    } catch (e) {
      this.reportStorage(msg(str`Run ${id} could not be removed from this browser's storage (${message(e)}).`));
    }
  }

  /** The memory of a running run's engine (its worker's wasm linear memory; its JS heap where the browser tells). */
  async memoryUse(id: string): Promise<{ wasm_bytes: number; js_heap_bytes: number | null }> {
    const l = this.live.get(id);
    if (!l?.client) throw new Error(`run '${id}' has no running engine`);
    return l.client.call('memoryUse', {});
  }

  /** Test-only: make a running run's engine trap (the browser tests prove the run fails cleanly). */
  async testOnlyCrash(id: string): Promise<void> {
    const l = this.live.get(id);
    if (!l?.client) throw new Error(`run '${id}' has no running engine`);
    try {
      await l.client.call('testOnlyCrash', { kind: 'trap' });
    } catch {
      // The trap answers with the engine's death; the crash handler marks the run.
    }
  }

  /**
   * Test-only: destroy the GPU device of a running run's engine, as a driver reset would
   * (true when the run had one); the run goes on on the CPU from the last step it copied back.
   */
  async testOnlyLoseGpu(id: string): Promise<boolean> {
    const l = this.live.get(id);
    if (!l?.client) throw new Error(`run '${id}' has no running engine`);
    return l.client.call('testOnlyLoseGpu', {});
  }

  /** Test-only: a weight of a running run's layer `layer` (from 0) turns NaN before its next step; the run stops there and names it. */
  async testOnlyNanAtLayer(id: string, layer: number): Promise<boolean> {
    const l = this.live.get(id);
    if (!l?.client) throw new Error(`run '${id}' has no running engine`);
    return l.client.call('testOnlyNanAtLayer', { layer });
  }

  /** Close every run's engine (the element left the page); what was saved stays. */
  close(): void {
    for (const l of this.live.values()) {
      l.client?.terminate();
      l.client = null;
    }
    this.live.clear();
  }
}

export type { RunProgress, RunRecord, RunStatus, RunSummary };

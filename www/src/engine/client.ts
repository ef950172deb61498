// The page's handle on the engine worker: typed calls that resolve with the worker's
// answer. No DOM code lives here, so the same client works in a test or a lesson page.

import type { Api, EventMessage, Op, RequestMessage, ResponseMessage } from './protocol';
import { isEvent } from './protocol';
import { startWorker } from './worker-start';

/** Anything that sends typed requests to an engine (the client, or the page's store). */
export type EngineCaller = Pick<EngineClient, 'call'>;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** The engine is gone (trapped, or its worker died): a new client must take over. */
export class EngineCrashed extends Error {}

export class EngineClient {
  private worker: Worker;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private listeners: ((e: EventMessage) => void)[] = [];
  private crashListeners: ((why: string) => void)[] = [];
  /** Why the engine died; null while it runs. */
  crashed: string | null = null;

  constructor(worker?: Worker) {
    this.worker =
      worker ?? startWorker(() => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tplay-engine' }));
    this.worker.onmessage = (ev: MessageEvent<ResponseMessage | EventMessage>) => this.receive(ev.data);
    this.worker.onerror = (ev: ErrorEvent) => {
      ev.preventDefault();
      this.die(`the engine's worker stopped with an error (${ev.message || 'no message'})`);
    };
    this.worker.onmessageerror = () => this.die('the engine sent a message the page could not read');
  }

  /** A separate engine for one training run (its own worker, so the views stay responsive). */
  static trainer(): EngineClient {
    return new EngineClient(startWorker(() => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tplay-train' })));
  }

  /** Send one request; the promise settles with the worker's one answer to it. */
  call<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
    if (this.crashed !== null) return Promise.reject(new EngineCrashed(this.crashed));
    const id = this.nextId++;
    const msg: RequestMessage<K> = { id, op, payload };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage(msg);
    });
  }

  onEvent(f: (e: EventMessage) => void): void {
    this.listeners.push(f);
  }

  /** Called once if the engine dies; every pending and later call fails with EngineCrashed. */
  onCrash(f: (why: string) => void): void {
    this.crashListeners.push(f);
  }

  terminate(): void {
    this.worker.terminate();
  }

  private die(why: string): void {
    if (this.crashed !== null) return;
    this.crashed = why;
    this.worker.terminate();
    const err = new EngineCrashed(why);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    for (const f of this.crashListeners) f(why);
  }

  private receive(m: ResponseMessage | EventMessage): void {
    if (isEvent(m)) {
      for (const f of this.listeners) f(m);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else if (m.fatal) {
      this.pending.set(m.id, p);
      this.die(`the engine crashed (${m.error})`);
    } else p.reject(Object.assign(new Error(m.error), { kind: m.kind }));
  }
}

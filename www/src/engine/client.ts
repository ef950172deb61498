// The page's handle on the engine worker: typed calls that resolve with the worker's
// answer. No DOM code lives here, so the same client works in a test or a lesson page.
//
// Every playground of a page shares one engine worker: each client is a session of it
// (its own wasm `Engine`, its loaded model, its generation), and the worker keeps one copy
// of each checkpoint it has fetched for all of them. A trainer (the lab) has a worker of
// its own. When the shared worker dies, every session hears it; the next client starts a
// fresh worker.

import type { Api, EventMessage, Op, RequestMessage, ResponseMessage } from './protocol';
import { isEvent } from './protocol';
import { startWorker } from './worker-start';

/** Anything that sends typed requests to an engine (the client, or the page's store). */
export type EngineCaller = Pick<EngineClient, 'call'>;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** The engine is gone (trapped, or its worker died): a new client must take over. */
export class EngineCrashed extends Error {}

/** One worker and the sessions (clients) it serves. */
class Channel {
  private nextId = 1;
  private nextSession = 1;
  private pending = new Map<number, Pending>();
  readonly clients = new Set<EngineClient>();
  crashed: string | null = null;

  constructor(
    readonly worker: Worker,
    private readonly onGone: (c: Channel) => void,
  ) {
    worker.onmessage = (ev: MessageEvent<ResponseMessage | EventMessage>) => this.receive(ev.data);
    worker.onerror = (ev: ErrorEvent) => {
      ev.preventDefault();
      this.die(`the engine's worker stopped with an error (${ev.message || 'no message'})`);
    };
    worker.onmessageerror = () => this.die('the engine sent a message the page could not read');
  }

  join(c: EngineClient): number {
    this.clients.add(c);
    return this.nextSession++;
  }

  /** A session ends: the worker frees its engine; the last one out stops the worker. */
  leave(c: EngineClient, session: number): void {
    if (!this.clients.delete(c) || this.crashed !== null) return;
    if (this.clients.size === 0) {
      this.worker.terminate();
      this.onGone(this);
    } else this.worker.postMessage({ close: session });
  }

  send<K extends Op>(session: number, op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
    if (this.crashed !== null) return Promise.reject(new EngineCrashed(this.crashed));
    const id = this.nextId++;
    const msg: RequestMessage<K> = { id, session, op, payload };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage(msg);
    });
  }

  private die(why: string): void {
    if (this.crashed !== null) return;
    this.crashed = why;
    this.worker.terminate();
    this.onGone(this);
    const err = new EngineCrashed(why);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    for (const c of [...this.clients]) c.crashedWith(why);
    this.clients.clear();
  }

  private receive(m: ResponseMessage | EventMessage): void {
    if (isEvent(m)) {
      for (const c of this.clients) if (m.session === undefined || m.session === c.session) c.heard(m);
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

/** The page's shared engine worker, while one runs. */
let shared: Channel | null = null;

function sharedChannel(): Channel {
  if (!shared || shared.crashed !== null) {
    const ch: Channel = new Channel(startWorker(() => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tplay-engine' })), (gone) => {
      if (shared === gone) shared = null;
    });
    shared = ch;
  }
  return shared;
}

export class EngineClient {
  private channel: Channel;
  /** This client's session in its worker. */
  readonly session: number;
  private listeners: ((e: EventMessage) => void)[] = [];
  private crashListeners: ((why: string) => void)[] = [];
  /** Why the engine died; null while it runs. */
  crashed: string | null = null;

  /** A session of the page's shared engine worker, or of `worker` alone when given. */
  constructor(worker?: Worker) {
    this.channel = worker ? new Channel(worker, () => undefined) : sharedChannel();
    this.session = this.channel.join(this);
  }

  /** A separate engine for one training run (its own worker, so the views stay responsive). */
  static trainer(): EngineClient {
    return new EngineClient(startWorker(() => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tplay-train' })));
  }

  /** How many sessions the page's shared engine worker serves now (0: none runs). */
  static sharedSessions(): number {
    return shared?.clients.size ?? 0;
  }

  /** Send one request; the promise settles with the worker's one answer to it. */
  call<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
    if (this.crashed !== null) return Promise.reject(new EngineCrashed(this.crashed));
    return this.channel.send(this.session, op, payload);
  }

  onEvent(f: (e: EventMessage) => void): void {
    this.listeners.push(f);
  }

  /** Called once if the engine dies; every pending and later call fails with EngineCrashed. */
  onCrash(f: (why: string) => void): void {
    this.crashListeners.push(f);
  }

  /** End this session (the worker stops with its last session). */
  terminate(): void {
    this.channel.leave(this, this.session);
  }

  /** @internal The worker sent news for this session (or for all). */
  heard(e: EventMessage): void {
    for (const f of this.listeners) f(e);
  }

  /** @internal The worker died. */
  crashedWith(why: string): void {
    if (this.crashed !== null) return;
    this.crashed = why;
    for (const f of this.crashListeners) f(why);
  }
}

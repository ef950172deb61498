// The page's handle on the engine worker: typed calls that resolve with the worker's
// answer. No DOM code lives here, so the same client works in a test or a lesson page.

import type { Api, EventMessage, Op, RequestMessage, ResponseMessage } from './protocol';
import { isEvent } from './protocol';

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class EngineClient {
  private worker: Worker;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private listeners: ((e: EventMessage) => void)[] = [];

  constructor(worker?: Worker) {
    this.worker =
      worker ?? new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tplay-engine' });
    this.worker.onmessage = (ev: MessageEvent<ResponseMessage | EventMessage>) => this.receive(ev.data);
    this.worker.onerror = (ev: ErrorEvent) => {
      const err = new Error(`the engine worker failed: ${ev.message || 'unknown error'}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  /** Send one request; the promise settles with the worker's one answer to it. */
  call<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
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

  terminate(): void {
    this.worker.terminate();
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
    else p.reject(new Error(m.error));
  }
}

// Models a learner loaded, kept in the browser's storage (IndexedDB database
// `tplay-models`, object store `models`) for the next visit: a description of each under
// `meta:<id>` and its files under `files:<id>`, written together in one transaction. Every
// failure (the quota above all) is thrown to the caller, which says that the model was
// loaded but not kept. (IndexedDB is used directly: the few calls here do not need a
// library, and this module is loaded only with "Load a model".)

import { msg } from '@lit/localize';
import type { HfFiles } from '../engine/protocol';

/** A kept model, as the list shows it. */
export interface KeptModel {
  id: string;
  /** Its name (the folder's, the file's, or the address's last part). */
  label: string;
  kind: 'hf' | 'checkpoint';
  /** The bytes its files take. */
  bytes: number;
  /** When it was kept (ms since 1970). */
  saved_at: number;
  /** The address it was downloaded from ('' for files from this device). */
  url: string;
  /** What the engine said of it when it loaded. */
  layers: number;
  heads: number;
  d_model: number;
  vocab: number;
  params: number;
}

/** A kept model's files. */
export type KeptFiles = { kind: 'hf'; files: HfFiles } | { kind: 'checkpoint'; bytes: Uint8Array };

/** The bytes a model's files take. */
export function filesBytes(f: KeptFiles): number {
  if (f.kind === 'checkpoint') return f.bytes.length;
  const h = f.files;
  return h.config.length + h.model.length + (h.tokenizerJson?.length ?? 0) + (h.vocabJson?.length ?? 0) + (h.merges?.length ?? 0);
}

function isMeta(v: unknown): v is KeptModel {
  const m = v as KeptModel;
  return !!m && typeof m.id === 'string' && typeof m.label === 'string' && (m.kind === 'hf' || m.kind === 'checkpoint') && typeof m.bytes === 'number';
}

/** A request's result, or its error. */
function done<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((ok, no) => {
    r.onsuccess = () => ok(r.result);
    r.onerror = () => no(r.error);
  });
}

export class KeptModels {
  private opened: Promise<IDBDatabase> | null = null;

  private db(): Promise<IDBDatabase> {
    if (!this.opened) {
      if (typeof indexedDB === 'undefined') return Promise.reject(new Error(msg('this browser has no IndexedDB', { id: 'load.no-idb' })));
      const r = indexedDB.open('tplay-models', 1);
      r.onupgradeneeded = () => r.result.createObjectStore('models');
      this.opened = done(r);
      // A failure to open is not kept: the next call tries again.
      this.opened.catch(() => (this.opened = null));
    }
    return this.opened;
  }

  /** Run `work` on the object store in one transaction; settles when the transaction has committed. */
  private async tx<T>(mode: IDBTransactionMode, work: (s: IDBObjectStore) => IDBRequest<T> | void): Promise<T | undefined> {
    const t = (await this.db()).transaction('models', mode);
    const r = work(t.objectStore('models'));
    await new Promise<void>((ok, no) => {
      t.oncomplete = () => ok();
      t.onerror = t.onabort = () => no(t.error ?? new Error('IndexedDB transaction aborted'));
    });
    return r ? r.result : undefined;
  }

  /** The kept models, the latest first. */
  async list(): Promise<KeptModel[]> {
    const all = (await this.tx('readonly', (s) => s.getAll(IDBKeyRange.bound('meta:', 'meta:\uffff')))) ?? [];
    return (all as unknown[]).filter(isMeta).sort((a, b) => b.saved_at - a.saved_at);
  }

  /** Keep a model (one already kept under the same name, kind and size is replaced). */
  async keep(meta: Omit<KeptModel, 'id' | 'saved_at' | 'bytes'>, files: KeptFiles): Promise<KeptModel> {
    const size = filesBytes(files);
    const same = (await this.list()).find((m) => m.label === meta.label && m.kind === meta.kind && m.bytes === size);
    const id = same?.id ?? `${Date.now().toString(36)}-${Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
    const m: KeptModel = { ...meta, id, bytes: size, saved_at: Date.now() };
    await this.tx('readwrite', (s) => {
      s.put(m, `meta:${id}`);
      s.put(files, `files:${id}`);
    });
    return m;
  }

  /** A kept model's files (undefined when there is none by that id). */
  async files(id: string): Promise<KeptFiles | undefined> {
    return (await this.tx('readonly', (s) => s.get(`files:${id}`))) as KeptFiles | undefined;
  }

  async remove(id: string): Promise<void> {
    await this.tx('readwrite', (s) => {
      s.delete(`meta:${id}`);
      s.delete(`files:${id}`);
    });
  }
}

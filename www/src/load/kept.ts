// Models a learner loaded, kept in the browser's storage (IndexedDB, through idb-keyval)
// for the next visit: a description of each under `meta:<id>` and its files under
// `files:<id>`, written together in one transaction. Every failure (the quota above all)
// is thrown to the caller, which says that the model was loaded but not kept.

import { msg } from '@lit/localize';
import { createStore, delMany, entries, get, setMany, type UseStore } from 'idb-keyval';
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

export class KeptModels {
  private store: UseStore | null = null;

  private db(): UseStore {
    if (!this.store) {
      if (typeof indexedDB === 'undefined') throw new Error(msg('this browser has no IndexedDB', { id: 'load.no-idb' }));
      this.store = createStore('tplay-models', 'models');
    }
    return this.store;
  }

  /** The kept models, the latest first. */
  async list(): Promise<KeptModel[]> {
    const out: KeptModel[] = [];
    for (const [k, v] of await entries<string, unknown>(this.db())) if (typeof k === 'string' && k.startsWith('meta:') && isMeta(v)) out.push(v);
    return out.sort((a, b) => b.saved_at - a.saved_at);
  }

  /** Keep a model (one already kept under the same name, kind and size is replaced). */
  async keep(meta: Omit<KeptModel, 'id' | 'saved_at' | 'bytes'>, files: KeptFiles): Promise<KeptModel> {
    const size = filesBytes(files);
    const same = (await this.list()).find((m) => m.label === meta.label && m.kind === meta.kind && m.bytes === size);
    const id = same?.id ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const m: KeptModel = { ...meta, id, bytes: size, saved_at: Date.now() };
    await setMany(
      [
        [`meta:${id}`, m],
        [`files:${id}`, files],
      ],
      this.db(),
    );
    return m;
  }

  /** A kept model's files (undefined when there is none by that id). */
  async files(id: string): Promise<KeptFiles | undefined> {
    return get<KeptFiles>(`files:${id}`, this.db());
  }

  async remove(id: string): Promise<void> {
    await delMany([`meta:${id}`, `files:${id}`], this.db());
  }
}

// Runs kept in IndexedDB (through idb-keyval): each run's record (settings, curves,
// status) under `rec:<id>` and its latest weights under `ckpt:<id>`. Every failure —
// the quota above all — is thrown to the caller, which reports it; nothing is swallowed.

import { createStore, del, entries, get, set, type UseStore } from 'idb-keyval';
import type { RunRecord } from './types';

export interface RunStorage {
  saveRecord(r: RunRecord): Promise<void>;
  saveCheckpoint(id: string, bytes: Uint8Array): Promise<void>;
  checkpoint(id: string): Promise<Uint8Array | undefined>;
  records(): Promise<RunRecord[]>;
  remove(id: string): Promise<void>;
}

/** The page's runs in IndexedDB (database `tplay-lab`, object store `runs`). */
export class IdbRunStorage implements RunStorage {
  private store: UseStore | null = null;

  private db(): UseStore {
    if (!this.store) {
      if (typeof indexedDB === 'undefined') throw new Error('this browser has no IndexedDB, so runs are not kept after the page closes');
      this.store = createStore('tplay-lab', 'runs');
    }
    return this.store;
  }

  saveRecord(r: RunRecord): Promise<void> {
    return set(`rec:${r.id}`, r, this.db());
  }

  saveCheckpoint(id: string, bytes: Uint8Array): Promise<void> {
    return set(`ckpt:${id}`, bytes, this.db());
  }

  checkpoint(id: string): Promise<Uint8Array | undefined> {
    return get<Uint8Array>(`ckpt:${id}`, this.db());
  }

  async records(): Promise<RunRecord[]> {
    const all = await entries<string, unknown>(this.db());
    const out: RunRecord[] = [];
    for (const [k, v] of all) {
      if (typeof k === 'string' && k.startsWith('rec:') && isRecord(v)) out.push(v);
    }
    return out.sort((a, b) => a.created_at - b.created_at);
  }

  async remove(id: string): Promise<void> {
    await del(`rec:${id}`, this.db());
    await del(`ckpt:${id}`, this.db());
  }
}

/** A stored record has the fields the page reads (an old or foreign entry is skipped). */
function isRecord(v: unknown): v is RunRecord {
  const r = v as RunRecord;
  return (
    !!r &&
    typeof r.id === 'string' &&
    typeof r.name === 'string' &&
    typeof r.settings === 'object' &&
    r.settings !== null &&
    Array.isArray(r.points) &&
    typeof r.status === 'string' &&
    typeof r.created_at === 'number'
  );
}

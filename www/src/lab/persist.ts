// Runs kept in IndexedDB (through idb-keyval): each run's record (settings, status,
// curves as columns: lab/record.ts) under `rec:<id>`, its latest weights under `ckpt:<id>` and, saved with them,
// what continuing it needs (optimiser moments, data position) under `state:<id>`. Every failure —
// the quota above all — is thrown to the caller, which reports it; nothing is swallowed.

import { createStore, delMany, entries, get, set, setMany, type UseStore } from 'idb-keyval';
import { Run } from './record';
import { studentRunPrefix } from '../lessons/student';

export interface RunStorage {
  saveRecord(r: Run): Promise<void>;
  /** The weights and the state besides them (to continue the run), together. */
  saveSnapshot(id: string, checkpoint: Uint8Array, state: Uint8Array): Promise<void>;
  checkpoint(id: string): Promise<Uint8Array | undefined>;
  state(id: string): Promise<Uint8Array | undefined>;
  records(): Promise<Run[]>;
  remove(id: string): Promise<void>;
}

/**
 * The page's runs in IndexedDB (database `tplay-lab`, object store `runs`). Each student's
 * keys start with their prefix (`@<name>/rec:<id>`, ../lessons/student.ts); the default
 * student's have none (`rec:<id>`), so runs kept before students existed are theirs.
 */
export class IdbRunStorage implements RunStorage {
  private store: UseStore | null = null;

  /** The key prefix of the student whose runs these are (read once: a change of student reloads the page). */
  private readonly prefix: string;

  constructor(prefix: string = studentRunPrefix()) {
    this.prefix = prefix;
  }

  private db(): UseStore {
    if (!this.store) {
      if (typeof indexedDB === 'undefined') throw new Error('this browser has no IndexedDB, so runs are not kept after the page closes');
      this.store = createStore('tplay-lab', 'runs');
    }
    return this.store;
  }

  saveRecord(r: Run): Promise<void> {
    return set(`${this.prefix}rec:${r.id}`, r.stored(), this.db());
  }

  saveSnapshot(id: string, checkpoint: Uint8Array, state: Uint8Array): Promise<void> {
    // One transaction: the weights and the state of one step, or neither.
    return setMany(
      [
        [`${this.prefix}ckpt:${id}`, checkpoint],
        [`${this.prefix}state:${id}`, state],
      ],
      this.db(),
    );
  }

  state(id: string): Promise<Uint8Array | undefined> {
    return get<Uint8Array>(`${this.prefix}state:${id}`, this.db());
  }

  checkpoint(id: string): Promise<Uint8Array | undefined> {
    return get<Uint8Array>(`${this.prefix}ckpt:${id}`, this.db());
  }

  async records(): Promise<Run[]> {
    const all = await entries<string, unknown>(this.db());
    const out: Run[] = [];
    for (const [k, v] of all) {
      const r = typeof k === 'string' && k.startsWith(`${this.prefix}rec:`) ? Run.fromStored(v) : null;
      if (r) out.push(r);
    }
    return out.sort((a, b) => a.created_at - b.created_at);
  }

  async remove(id: string): Promise<void> {
    await delMany([`${this.prefix}rec:${id}`, `${this.prefix}ckpt:${id}`, `${this.prefix}state:${id}`], this.db());
  }
}

/** Delete every run of the student whose prefix is given (all their keys; '' for the default student's, which have none), in one transaction. */
export async function forgetRuns(prefix: string): Promise<void> {
  if (typeof indexedDB === 'undefined') return;
  const db = createStore('tplay-lab', 'runs');
  const all = await entries<string, unknown>(db);
  const mine = all.map(([k]) => k).filter((k) => typeof k === 'string' && (prefix ? k.startsWith(prefix) : !k.startsWith('@')));
  if (mine.length) await delMany(mine, db);
}

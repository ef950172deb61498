// Weights edited by hand, with no DOM in it: read a tensor of the loaded model (or a
// strided selection of it) by its checkpoint name, set values, restore the trained ones,
// list what is edited and export the edited model — each a request to the engine, which
// keeps the trained model beside the edited one (crate/src/engine/weights.rs). After every
// change the host recomputes every view from the edited model, as a model change would,
// keeping the prompt. A drag sends many values in a row: the newest value for a selection
// replaces one not yet sent, and the views recompute once for a burst of edits.

import type { Api, ModelInfo, Op, WeightEdits, WeightRestoreRequest, WeightSelection, WeightSetRequest, WeightTensor, WeightValues } from '../engine/protocol';

export interface WeightsHost {
  call<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']>;
  /** The loaded model's description: a new one (a new model) means nothing is edited. */
  info(): ModelInfo | null;
  changed(): void;
  /** Is a generation running or shown (so it starts again after the edit)? */
  generating(): boolean;
  /** Stop the generation: it was drawing from the old weights. */
  stopGeneration(): void;
  /** Run the forward pass again on the edited model (`first`: the first edit of the trained model; `none`: nothing is edited any more). */
  recompute(first: boolean, none: boolean): Promise<void>;
  /** Start the generation again, from the prompt, on the edited model. */
  restartGeneration(): void;
  /** Why no weight may be edited here ('' when they may): a classroom link that locks the model. */
  refuse?(): string;
}

const NONE: WeightEdits = { edits: [], changed: 0 };

export class WeightEditor {
  private edits: WeightEdits = NONE;
  /** The model `edits` belong to. */
  private editsOf: ModelInfo | null = null;
  /** The newest value not yet sent, per selection. */
  private readonly latest = new Map<string, () => Promise<WeightEdits>>();
  private chain: Promise<unknown> = Promise.resolve();
  private recomputing: Promise<void> | null = null;
  private dirty = false;
  private first = false;
  /** Restart the generation once the burst of edits is recomputed. */
  private resume = false;

  constructor(private readonly host: WeightsHost) {}

  /** What is edited in the loaded model now (nothing for a model loaded since). */
  get current(): WeightEdits {
    return this.editsOf !== null && this.editsOf === this.host.info() ? this.edits : NONE;
  }

  /** Every parameter tensor of the loaded model, by checkpoint name, with its shape and how many values are edited. */
  tensors(): Promise<WeightTensor[]> {
    return this.host.call('weightTensors', {});
  }

  /** Values of one tensor, now and as trained (`start`, `count`, `stride`: a row, a column, a slice). */
  read(sel: WeightSelection): Promise<WeightValues> {
    return this.host.call('readWeights', sel);
  }

  /** Set values of one tensor (`values[i]` at flat index `start + i·stride`); every view recomputes. Rejects with the engine's message for a bad name, index or value, and nothing changes. */
  set(req: WeightSetRequest): Promise<WeightEdits> {
    // Edited weights are another model: a locked model refuses them (restoring the trained ones stays allowed).
    const why = this.host.refuse?.() ?? '';
    if (why) return Promise.reject(new Error(why));
    return this.queue(`set ${req.name} ${req.start ?? 0} ${req.stride ?? 1} ${req.values.length}`, () => this.host.call('setWeights', req));
  }

  /** Restore trained values: every tensor (no argument), one tensor (`{ name }`), or a selection of it; every view recomputes. */
  restore(req: WeightRestoreRequest = {}): Promise<WeightEdits> {
    return this.queue(`restore ${JSON.stringify(req)}`, () => this.host.call('restoreWeights', req));
  }

  /** The edits as the engine lists them now. */
  async list(): Promise<WeightEdits> {
    const r = await this.host.call('weightEdits', {});
    this.record(r);
    return r;
  }

  /** The model as it computes now (edited or not), as a .safetensors checkpoint: the format of a lab run's export, which `loadCheckpoint` and `tplay` read. */
  async exportModel(): Promise<Blob> {
    const bytes = await this.host.call('exportModel', {});
    return new Blob([bytes as BlobPart], { type: 'application/octet-stream' });
  }

  private record(r: WeightEdits): void {
    this.edits = r;
    this.editsOf = this.host.info();
    this.host.changed();
  }

  /** Send `send` after the requests before it; a newer request of the same `key` not yet sent replaces it. */
  private queue(key: string, send: () => Promise<WeightEdits>): Promise<WeightEdits> {
    this.latest.set(key, send);
    const job = this.chain.then(async () => {
      const next = this.latest.get(key);
      if (next) this.latest.delete(key);
      if (!next) return this.current;
      if (!this.recomputing) {
        this.resume = this.host.generating();
        this.first = this.current.changed === 0;
      }
      this.host.stopGeneration();
      let r: WeightEdits;
      try {
        r = await next();
      } catch (e) {
        if (this.resume && !this.recomputing) this.host.restartGeneration();
        throw e;
      }
      this.record(r);
      await this.recompute();
      return r;
    });
    this.chain = job.catch(() => undefined);
    return job;
  }

  /** Recompute the views once for every burst of edits; resolves once the last edit is drawn. */
  private recompute(): Promise<void> {
    this.dirty = true;
    if (this.recomputing) return this.recomputing;
    this.recomputing = (async () => {
      try {
        while (this.dirty) {
          this.dirty = false;
          const first = this.first;
          this.first = false;
          await this.host.recompute(first, this.current.changed === 0);
        }
      } finally {
        this.recomputing = null;
        if (this.resume) {
          this.resume = false;
          this.host.restartGeneration();
        }
      }
    })();
    return this.recomputing;
  }
}

// "Load a model", without its dialog: files (picked, dropped, or given by a script), a
// folder at an address, or a model kept from an earlier visit become the page's model
// through the store (`useHfFolder`, `useCheckpoint`), and what loaded is kept in the
// browser's storage (./kept.ts) for the next visit. The dialog (../components/
// tp-load-dialog.ts) and the element's scripting API (`loadModel`, `keptModels`, …) both
// drive this class. This module is loaded when it is first needed.

import { msg, str } from '@lit/localize';
import type { HfCheck, HfFiles, ModelInfo } from '../engine/protocol';
import type { DeviceRoom } from '../lab/preflight';
import { bytes } from '../ui/format';
import { CONFIG_MAX_BYTES, downloadModel, folderLabel, folderUrl, probeFolder, readSmall, readTokenizer, sortPicked, type NamedFile, type Probe } from './folder';
import { KeptModels, filesBytes, type KeptFiles, type KeptModel } from './kept';

/** What the loader needs of the page's store. */
export interface LoadTarget {
  checkHf(config: Uint8Array, modelBytes: number | null): Promise<HfCheck>;
  useHfFolder(files: HfFiles, label: string): Promise<ModelInfo>;
  useCheckpoint(bytes: Uint8Array, label: string): Promise<ModelInfo>;
}

/** What a load did. */
export interface Loaded {
  info: ModelInfo;
  label: string;
  kind: 'hf' | 'checkpoint';
  /** The bytes of the files loaded. */
  bytes: number;
  /** Milliseconds from the first byte read to the model in the engine (a download not counted). */
  ms: number;
  /** The kept entry (null when it was not kept). */
  kept: KeptModel | null;
  /** Why it was not kept, in one sentence ('' when it was, or was not asked to be). */
  keptNote: string;
}

/** A stage of a load, for the dialog's status line and progress bar. */
export type Stage =
  | { stage: 'check' }
  | { stage: 'read' }
  | { stage: 'download'; done: number; total: number | null }
  | { stage: 'engine' }
  | { stage: 'keep' };

export interface LoadOptions {
  /** Keep the model in the browser's storage (default true). */
  keep?: boolean;
  stage?: (s: Stage) => void;
  signal?: AbortSignal;
}

export class ModelLoader {
  /**
   * `room`: this device's room, as the pre-flight reads it (../lab/preflight.ts
   * `deviceRoom`; the page gives it, so this module, loaded later, shares the page's copy).
   */
  constructor(
    private readonly target: LoadTarget,
    private readonly room: () => Promise<DeviceRoom>,
    readonly kept: KeptModels = new KeptModels(),
  ) {}

  /** What model.safetensors may hold to be downloaded here: what this device can load (the pre-flight's rule, about three times the file). */
  private async downloadCeiling(): Promise<number> {
    return Math.floor((await this.room()).memory / 3);
  }

  /** Files picked, dropped or given: a Hugging Face folder or one checkpoint. */
  async fromFiles(given: readonly NamedFile[], opts: LoadOptions = {}): Promise<Loaded> {
    const picked = sortPicked(given);
    opts.stage?.({ stage: 'check' });
    if (picked.kind === 'checkpoint') {
      const t0 = performance.now();
      const label = picked.file.name;
      opts.stage?.({ stage: 'read' });
      const data = new Uint8Array(await picked.file.arrayBuffer());
      opts.stage?.({ stage: 'engine' });
      let info: ModelInfo;
      try {
        info = await this.target.useCheckpoint(data, label);
      } catch (e) {
        // A Hugging Face model.safetensors alone is not a checkpoint of this page: say what else it needs.
        if (label === 'model.safetensors') {
          throw new Error(`${message(e)} ${msg('A Hugging Face model also needs its config.json and tokenizer files: choose them together, or the whole folder.', { id: 'load.hf-alone' })}`);
        }
        throw e;
      }
      return this.finish({ kind: 'checkpoint', bytes: data }, info, label, '', performance.now() - t0, opts);
    }
    const config = await readSmall(picked.config, CONFIG_MAX_BYTES);
    // The engine's check and this device's pre-flight, before model.safetensors is read.
    const check = await this.target.checkHf(config, picked.model.size);
    const t0 = performance.now();
    opts.stage?.({ stage: 'read' });
    const tokenizer = await readTokenizer(picked);
    const model = new Uint8Array(await picked.model.arrayBuffer());
    const files: HfFiles = { config, model, ...tokenizer };
    const label = picked.folder || check.model_type;
    opts.stage?.({ stage: 'engine' });
    const info = await this.target.useHfFolder(files, label);
    return this.finish({ kind: 'hf', files }, info, label, '', performance.now() - t0, opts);
  }

  /** Check the folder at `address` (config.json, the size of model.safetensors, the tokenizer) without downloading the model. */
  async probe(address: string, signal?: AbortSignal): Promise<Probe> {
    const base = folderUrl(address, typeof document !== 'undefined' ? document.baseURI : undefined);
    return probeFolder(base, { check: (config, size) => this.target.checkHf(config, size), signal });
  }

  /** Download a checked folder's model.safetensors and load the folder. */
  async fromProbe(p: Probe, opts: LoadOptions = {}): Promise<Loaded> {
    const files = await downloadModel(p, await this.downloadCeiling(), (done, total) => opts.stage?.({ stage: 'download', done, total }), opts.signal);
    const t0 = performance.now();
    opts.stage?.({ stage: 'engine' });
    const label = folderLabel(p.base);
    const info = await this.target.useHfFolder(files, label);
    return this.finish({ kind: 'hf', files }, info, label, p.base, performance.now() - t0, opts);
  }

  /** The folder at `address`, checked, downloaded and loaded. */
  async fromUrl(address: string, opts: LoadOptions = {}): Promise<Loaded> {
    opts.stage?.({ stage: 'check' });
    return this.fromProbe(await this.probe(address, opts.signal), opts);
  }

  /** A model kept from an earlier visit. */
  async fromKept(id: string, opts: LoadOptions = {}): Promise<Loaded> {
    const meta = (await this.kept.list()).find((m) => m.id === id);
    const files = meta ? await this.kept.files(id) : undefined;
    if (!meta || !files) throw new Error(msg('That model is no longer in this browser’s storage.', { id: 'load.kept-gone' }));
    const t0 = performance.now();
    opts.stage?.({ stage: 'engine' });
    const info = files.kind === 'hf' ? await this.target.useHfFolder(files.files, meta.label) : await this.target.useCheckpoint(files.bytes, meta.label);
    return { info, label: meta.label, kind: files.kind, bytes: meta.bytes, ms: performance.now() - t0, kept: meta, keptNote: '' };
  }

  /** A loaded model, kept for the next visit where asked and where the browser's storage has room. */
  private async finish(files: KeptFiles, info: ModelInfo, label: string, url: string, ms: number, opts: LoadOptions): Promise<Loaded> {
    const size = filesBytes(files);
    const out: Loaded = { info, label, kind: files.kind, bytes: size, ms, kept: null, keptNote: '' };
    if (opts.keep === false) return out;
    opts.stage?.({ stage: 'keep' });
    const room = (await this.room()).storage;
    if (room !== null && size > room) {
      out.keptNote = msg(str`It was not kept for the next visit: it takes ${bytes(size)}, and the browser’s storage has ${bytes(room)} left.`, { id: 'load.no-room' });
      return out;
    }
    try {
      const layers = info.decoder_layers + info.encoder_layers;
      // Ask the browser not to evict the kept files under storage pressure (it may decline; nothing depends on it).
      void globalThis.navigator?.storage?.persist?.().catch(() => false);
      out.kept = await this.kept.keep({ label, kind: files.kind, url, layers, heads: info.n_heads, d_model: info.d_model, vocab: info.vocab.length, params: info.params }, files);
    } catch (e) {
      out.keptNote = msg(str`It was not kept for the next visit: ${message(e)}`, { id: 'load.not-kept' });
    }
    return out;
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

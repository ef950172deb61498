// The scripting API of <transformer-playground> that delegates to the lab's runs
// (../lab/registry.ts) and to the store's test hooks: the element (./transformer-playground.ts)
// extends this class, so embedders and tests call these on the element itself.

import { msg } from '@lit/localize';
import type { ModelInfo, RunDefaults, RunFootprint, RunSettings } from '../engine/protocol';
import type { LabRegistry, RunHandle, RunRecord } from '../lab/registry';
import { formatRunQuery, parseRunQuery } from '../lab/url';
import { LocalizedElement } from '../i18n/locale';
import { deviceRoom } from '../lab/preflight';
import type { PlaygroundStore } from '../state/store';
import type { WeightEditor } from '../state/weights';
import type { ModelLoader } from '../load/loader';
import type { KeptModel } from '../load/kept';
import type { NamedFile } from '../load/folder';
import type { TpLoadDialog } from './tp-load-dialog';
import { droppedFiles } from '../load/drop';
import { errorText } from '../i18n/engine-text';
import { isLocked, refusedNote } from '../state/locks';

/** Where `loadModel` reads a model from: files (a Hugging Face folder's, or one checkpoint), or the address of a folder. */
export type ModelSource = { files: ArrayLike<NamedFile> } | { url: string };

/** How `loadModel` loads: `keep` (default true) keeps it in the browser's storage; `onProgress` follows a download; `signal` cancels it. */
export interface LoadModelOptions {
  keep?: boolean;
  onProgress?: (done: number, total: number | null) => void;
  signal?: AbortSignal;
}

export class PlaygroundRunsApi extends LocalizedElement {
  /** The state and its orchestration (no DOM); created when the element is connected. */
  store: PlaygroundStore | null = null;
  /** The lab's runs and their engines; created when the element is connected. */
  lab: LabRegistry | null = null;


  protected needLab(): LabRegistry {
    if (!this.lab) throw new Error('the playground is not on a page yet');
    return this.lab;
  }

  protected needStore(): PlaygroundStore {
    if (!this.store) throw new Error('the playground is not on a page yet');
    return this.store;
  }

  /** Every training run, oldest first (with those kept from earlier visits). */
  get runs(): RunRecord[] {
    return this.lab?.runs ?? [];
  }
  /** The last failure to save a run in the browser's storage ('' when none). */
  get labStorageError(): string {
    return this.lab?.storageError ?? '';
  }
  /** Settles once the runs kept from earlier visits are back. */
  get runsRestored(): Promise<void> {
    return this.needLab().restored;
  }
  /** Train a model: the task's default settings (its shipped recipe) with `settings` over them. */
  train(settings: Partial<RunSettings> = {}): RunHandle {
    return this.needLab().train(settings);
  }
  /** Continue a run without an engine (paused when the page closed, or its worker died) from its last saved step; a running run just resumes. */
  resumeRun(id: string): RunHandle {
    return this.needLab().resumeRun(id);
  }
  /** A task's default settings, a line about every field, and the fields that do not apply to it. */
  runDefaults(task: string): Promise<RunDefaults> {
    return this.needStore().call('runDefaults', { task });
  }
  /**
   * What a run would need before it starts (the lab's pre-flight compares it with the
   * device): `params`, `memory_bytes` (its worker at its peak, an estimate),
   * `storage_bytes` (its saved weights and optimiser state), `largest_buffer_bytes` (the
   * largest single GPU buffer). `settings` go over the task's defaults, as in `train`.
   */
  async runFootprint(settings: Partial<RunSettings> = {}): Promise<RunFootprint> {
    const task = typeof settings.task === 'string' ? settings.task : 'reverse';
    const d = await this.runDefaults(task);
    return this.needStore().call('runFootprint', { ...d.settings, ...settings, task });
  }
  /** The run's current weights become the page's model. */
  useRun(id: string): Promise<ModelInfo> {
    return this.needLab().useRun(id);
  }
  /** The run's current weights as a .safetensors checkpoint. */
  exportRun(id: string): Promise<Blob> {
    return this.needLab().exportRun(id);
  }
  /** The run's curves as CSV, a row per step. */
  exportRunCsv(id: string): Blob {
    return this.needLab().exportRunCsv(id);
  }
  /** Checkpoint bytes become the page's model; bad bytes reject with the loader's message and change nothing. */
  loadCheckpoint(bytes: Uint8Array | ArrayBuffer, label = msg('imported checkpoint')): Promise<ModelInfo> {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    return this.needStore().useCheckpoint(u8, label);
  }
  renameRun(id: string, name: string): Promise<void> {
    return this.needLab().renameRun(id, name);
  }
  hideRun(id: string, hidden: boolean): Promise<void> {
    return this.needLab().hideRun(id, hidden);
  }
  deleteRun(id: string): Promise<void> {
    return this.needLab().deleteRun(id);
  }
  /** A run's settings as link text (`task=reverse&n_layers=6&residual=0`): what differs from `base` (the task's defaults). */
  runQuery(settings: RunSettings, base?: RunSettings): string {
    return formatRunQuery(settings, base);
  }
  /** Settings from link text: what is acceptable, and a sentence for each value refused (never applied). */
  parseRunQuery(text: string): { settings: Partial<RunSettings>; notes: string[] } {
    return parseRunQuery(text);
  }
  /** The memory of a run's training worker while it has one: `wasm_bytes` (its linear memory), `js_heap_bytes` (where the browser tells). */
  runMemoryUse(id: string): Promise<{ wasm_bytes: number; js_heap_bytes: number | null }> {
    return this.needLab().memoryUse(id);
  }
  /** Test-only: make a running run's training worker trap, to prove the run is marked failed and keeps its saved weights. */
  testOnlyCrashRun(id: string): Promise<void> {
    return this.needLab().testOnlyCrash(id);
  }
  /** Test-only: destroy the GPU device a running run trains on, to prove the run goes on on the CPU and says so (true when it had one). */
  testOnlyLoseRunGpu(id: string): Promise<boolean> {
    return this.needLab().testOnlyLoseGpu(id);
  }
  /** Test-only: make one weight of a running run's layer `layer` (from 0) NaN before its next step, to prove the run stops there and names the layer (false: no such layer). */
  testOnlyNanAtLayer(id: string, layer: number): Promise<boolean> {
    return this.needLab().testOnlyNanAtLayer(id, layer);
  }
  /** Hand edits of the loaded model's weights: read, set, restore, list, export (www/README.md, "Editing weights"). */
  get weights(): WeightEditor {
    return this.needStore().weights;
  }
  /** The label of a model that is not a shipped one (a run, an import); '' for a shipped model. */
  get customModel(): string {
    return this.store?.customModel ?? '';
  }


  private loader: { store: PlaygroundStore; loader: Promise<ModelLoader> } | null = null;
  /** "Load a model"'s loader (../load/loader.ts), loaded with its dialog when first needed. */
  protected modelLoader(): Promise<ModelLoader> {
    const store = this.needStore();
    if (this.loader?.store !== store) this.loader = { store, loader: import('./tp-load-dialog').then((m) => new m.ModelLoader(store, deviceRoom)) };
    return this.loader.loader;
  }
  /**
   * A model that is not a shipped one becomes the page's model: a Hugging Face GPT-2
   * folder's files (`config.json`, `model.safetensors`, `tokenizer.json` or `vocab.json` +
   * `merges.txt`) or one of the page's .safetensors checkpoints (`{ files }`), or the
   * folder at an address (`{ url }`: config.json is checked, then model.safetensors'
   * size, before it is downloaded). Refused before anything large is read when the engine
   * or this device cannot hold it; a bad folder rejects with one sentence and the page
   * keeps its model. Kept in the browser's storage for the next visit unless `keep: false`.
   */
  async loadModel(source: ModelSource, opts: LoadModelOptions = {}): Promise<ModelInfo> {
    const loader = await this.modelLoader();
    const o = {
      keep: opts.keep,
      signal: opts.signal,
      stage: (s: { stage: string; done?: number; total?: number | null }) => {
        if (s.stage === 'download') opts.onProgress?.(s.done ?? 0, s.total ?? null);
      },
    };
    const r = 'url' in source ? await loader.fromUrl(source.url, o) : await loader.fromFiles(Array.from(source.files), o);
    return r.info;
  }
  /** The models kept in this browser's storage by `loadModel` or "Load a model", the latest first. */
  async keptModels(): Promise<KeptModel[]> {
    return (await this.modelLoader()).kept.list();
  }
  /** Load a kept model again (by its `id`). */
  async loadKeptModel(id: string): Promise<ModelInfo> {
    return (await (await this.modelLoader()).fromKept(id)).info;
  }
  /** Delete a kept model from the browser's storage (the page's model stays as it is). */
  async deleteKeptModel(id: string): Promise<void> {
    await (await this.modelLoader()).kept.remove(id);
  }

  /** Open "Load a model" (./tp-load-dialog.ts with ../load/, loaded when first opened); `files`: loaded at once (a drop's). */
  async openModelLoader(files?: readonly NamedFile[]): Promise<void> {
    const s = this.needStore();
    const loader = await this.modelLoader();
    let d = this.renderRoot.querySelector<TpLoadDialog>('tp-load-dialog');
    if (!d) {
      d = document.createElement('tp-load-dialog') as TpLoadDialog;
      this.renderRoot.append(d);
    }
    d.loader = loader;
    d.explain = errorText;
    // Drawn by the dialog, in its language: why the model may not change here ('' when it may).
    d.refusal = () => (isLocked(s.st, 'model') ? refusedNote(['model']) : '');
    await d.show(files);
  }

  connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('dragover', this.onDragOver);
    this.addEventListener('drop', this.onDrop);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.removeEventListener('dragover', this.onDragOver);
    this.removeEventListener('drop', this.onDrop);
  }

  /** Files dragged over the playground may be dropped on it (a view that takes drops itself, the lab's, handles its own). */
  private onDragOver = (e: DragEvent) => {
    if (!e.defaultPrevented && e.dataTransfer?.types.includes('Files') && this.store?.st.chrome !== 'none') e.preventDefault();
  };

  /** Files dropped on the playground (the dialog's drop zone included) open "Load a model" with them. */
  private onDrop = (e: DragEvent) => {
    const dt = e.dataTransfer;
    if (e.defaultPrevented || !dt?.types.includes('Files') || !this.store || this.store.st.chrome === 'none') return;
    e.preventDefault();
    void droppedFiles(dt).then((files) => this.openModelLoader(files));
  };

  /** Test-only hooks (see PlaygroundStore). */
  testOnlyCrashEngine(kind: 'trap' | 'throw' = 'trap'): Promise<void> {
    return this.store ? this.store.testOnlyCrashEngine(kind) : Promise.resolve();
  }
  testOnlyLoseGpu(): Promise<boolean> {
    return this.store ? this.store.testOnlyLoseGpu() : Promise.resolve(false);
  }
  /** The engine's memory (wasm linear memory, worker JS heap where known). */
  memoryUse(): Promise<{ wasm_bytes: number; js_heap_bytes: number | null }> | null {
    return this.store?.memoryUse() ?? null;
  }
}

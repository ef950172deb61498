// The read-only part of <transformer-playground>'s scripting API: the store's state as the
// element last drew it (settings, model, last forward pass, generation, notes). The element
// (./transformer-playground.ts) extends this class, so embedders and tests read these on the
// element itself; nothing here changes anything.

import type { BackendInfo, CostReport, ForwardResult, LayerPlan, ManifestEntry, ModelInfo, Schedule, Tokenized } from '../engine/protocol';
import type { PlaygroundState } from '../state/url';
import type { GenStats } from '../state/generation';
import { PlaygroundRunsApi } from './playground-runs-api';

export class PlaygroundStateApi extends PlaygroundRunsApi {

  /** The settings (mirrored in the URL hash). */
  get st(): PlaygroundState | undefined {
    return this.store?.st;
  }
  /** The shipped models (models/manifest.json). */
  get manifest(): ManifestEntry[] {
    return this.store?.manifest ?? [];
  }
  /** The loaded model's description. */
  get info(): ModelInfo | null {
    return this.store?.info ?? null;
  }
  /** The loaded model's layer plan (the core's `model::plan::LayerPlan`). */
  get plan(): LayerPlan | null {
    return this.store?.plan ?? null;
  }
  /** Which backend runs, why, and the GPU–CPU parity measured on this device. */
  get backendInfo(): BackendInfo | null {
    return this.store?.backendInfo ?? null;
  }
  /** Settings of the link that were not used. */
  get notes(): string[] {
    return this.store?.notes ?? [];
  }
  /** The last failure, in words ('' when none). */
  get error(): string {
    return this.store?.error ?? '';
  }
  /** The input rows after the tokenizer. */
  get tokenized(): Tokenized[] {
    return this.store?.tokenized ?? [];
  }
  /** The latest forward pass with its traces. */
  get lastForward(): ForwardResult | null {
    return this.store?.lastForward ?? null;
  }
  /** Generated ids (beam search: the best hypothesis's). */
  get generated(): number[] {
    return this.store?.gen.generated ?? [];
  }
  get done(): boolean {
    return this.store?.gen.done ?? false;
  }
  get playing(): boolean {
    return this.store?.gen.playing ?? false;
  }
  /** Why generation cannot run with these settings ('' when it can). */
  get genNote(): string {
    return this.store?.gen.note ?? '';
  }
  /** Time to first token and per-token timings of the generation. */
  get stats(): GenStats | undefined {
    return this.store?.gen.stats;
  }
  /** The cost view's numbers. */
  get costReport(): CostReport | null {
    return this.store?.costReport ?? null;
  }
  /** The schedule view's Noam curve. */
  get schedule(): Schedule | null {
    return this.store?.schedule ?? null;
  }
  /** The focused heatmap cell. */
  get cell(): { i: number; j: number } {
    return this.store?.cell ?? { i: 0, j: 0 };
  }
  /** The batch row the views show. */
  get row(): number {
    return this.store?.shownRow ?? 0;
  }
  /** Milliseconds from connection to the first drawn forward pass. */
  get readyMs(): number | null {
    return this.store?.readyMs ?? null;
  }
  /** performance.now() when the first forward pass was drawn (from navigation start). */
  get readyAt(): number | null {
    return this.store?.readyAt ?? null;
  }
  /** The slow step under way (engine start, a model download: phase, label, done, total), or null. */
  get progress(): { phase: string; label: string; done: number; total: number | null } | null {
    const p = this.store?.progress;
    return p ? { phase: p.phase, label: p.label, done: p.done, total: p.total } : null;
  }

  /** Times the engine died and was restarted. */
  get engineRestarts(): number {
    return this.store?.engineRestarts ?? 0;
  }
  /** What the page says about the last engine restart. */
  get engineNote(): string {
    return this.store?.engineNote ?? '';
  }
  /** What the page said when a model switch could not keep the prompt: the characters the new model cannot spell ('' when it kept it). */
  get promptNote(): string {
    return this.store?.promptNote ?? '';
  }
  /** What the page said when a change of a setting the classroom link locked was refused ('' when nothing was). */
  get lockNote(): string {
    return this.store?.lockNote ?? '';
  }
  /** Why this setting cannot change here (a classroom link locked it; '' when it can), as its control says beside it. */
  lockedWhy(name: string): string {
    return this.store?.lockedWhy(name) ?? '';
  }
  /** The generation a switch restarted, kept as the "before" beside the new one (null when none). */
  get genBefore(): { ids: number[]; tokens: string[]; prompt: string[]; done: boolean; what: string; model: string } | null {
    const b = this.store?.genBefore;
    return b ? { ids: [...b.ids], tokens: [...b.tokens], prompt: [...b.prompt], done: b.done, what: b.what, model: b.state.model } : null;
  }
}

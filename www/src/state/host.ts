// What the store needs from its surroundings, and what a view may ask the engine for.
// The element <transformer-playground> is one host; a test or a lesson page can be another.

import type { EngineClient } from '../engine/client';
import type { Lang, PlaygroundState } from './url';

/**
 * What a view needs from the engine beyond the forward pass and its traces (which every
 * view gets); the store asks only for what a shown view needs.
 */
export type Need =
  /** q, k and v of every head on each attention trace (the q·k inspector) */
  | 'qkv'
  /** every FFN's hidden units on the forward pass (the overview's FFN strip) */
  | 'ffn'
  /** parameters and FLOPs per component (`cost`) */
  | 'cost'
  /** the Noam learning-rate curve (`noam`) */
  | 'schedule';

/** What the store needs from its surroundings (the element gives the page's). */
export interface StoreHost {
  /** A fresh engine (in the page: a Web Worker running the wasm core). */
  engine(): EngineClient;
  /** Where manifest.json and the checkpoints are. */
  modelsBase: URL;
  /** The file to start with (an entry of the manifest; '' for the first). */
  model: string;
  /** Settings in the URL-hash format, applied before the hash. */
  preset: string;
  /** The view names shown when the settings name none ('' for every view). */
  views: string;
  /** Defaults the page sets before any preset or link (the reader's theme, reduced motion). */
  defaults: Partial<PlaygroundState>;
  /** The URL hash, or null to leave it alone (several widgets on one page). */
  hash: { read(): string; write(hash: string): void } | null;
  /** Every view name there is (the registry's). */
  viewNames: readonly string[];
  /**
   * The views of a chapter, by its name (www/src/views/chapters.ts); undefined for a name
   * that is not a chapter. Without it, a page that names no views shows every view.
   */
  chapterViews?(chapter: string): readonly string[] | undefined;
  /** Every chapter's name (what `chapter=` may name besides `all`). */
  chapterNames?: readonly string[];
  /** What each view needs, by name. */
  needsOf(view: string): readonly Need[];
  /** Something drawn changed. */
  changed(): void;
  /**
   * Settings a link implies beyond its own keys (a lesson's preset for `lesson=<id>`),
   * applied as defaults under the link's; '' for none.
   */
  implied?(hash: string): string;
  /** The names a classroom link may hide (`hide=`). */
  hideable?: readonly string[];
  /**
   * The language the page starts in (the link's, the preset's, the element's, the reader's
   * or the browser's). When nothing names a model, a Chinese page starts on the Chinese
   * twin of the default model, with its Chinese prompt. Absent: English.
   */
  startLang?(): Lang;
  /**
   * The language of this playground: the store makes its words (notes about a link, what
   * it says after an engine restart) in it, whatever language other playgrounds of the
   * page are in. Absent: the page's.
   */
  lang?(): Lang;
}

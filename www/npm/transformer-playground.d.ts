// Types of <transformer-playground> and its scripting API (the package's README and the
// project's www/README.md document each member). The engine's requests and results are
// the core's own types, in ./engine-types.d.ts.

import type {
  BackendStatus,
  CostReport,
  ForwardResult,
  LayerPlan,
  ModelInfo,
  Schedule,
  Tokenized,
} from './engine-types';

export * from './engine-types';

/** One shipped model: an entry of models/manifest.json. */
export interface ManifestEntry {
  file: string;
  title?: string;
  default_prompt: string;
  [key: string]: unknown;
}

/** Which backend runs, why, and the measured GPU−CPU parity. */
export interface BackendInfo {
  backend: 'cpu' | 'webgpu';
  reason: string;
  detail: string | null;
  adapter: string | null;
  parity: number | null;
  status: BackendStatus;
}

/** The slow step under way. */
export interface Progress {
  phase: 'engine' | 'download';
  label: string;
  done: number;
  total: number | null;
}

/** A view as drawn, as an SVG picture with its caption. */
export interface Picture {
  svg: string;
  width: number;
  height: number;
  [key: string]: unknown;
}

/** The settings (the URL-hash table of www/README.md): a read-only record. */
export type PlaygroundSettings = Readonly<Record<string, unknown>> & {
  readonly model: string;
  readonly text: string;
  readonly views: readonly string[];
};

/** The store: the element's state and its actions (read it, call `patch`). */
export interface PlaygroundStoreLike {
  readonly st: PlaygroundSettings;
  patch(changes: Record<string, unknown>): Promise<void> | void;
  call(op: string, payload: unknown): Promise<unknown>;
  readonly modelsBase: URL;
  [key: string]: unknown;
}

/** The attributes, as properties of the same names. */
export interface TransformerPlaygroundAttributes {
  /** The model to start with: a file of models/manifest.json. */
  model: string;
  /** Settings in the URL-hash format, applied before the page's own hash. */
  preset: string;
  /** Where manifest.json and the checkpoints are (default: models/ beside the script). */
  models: string;
  /** Views to show, comma separated (names of the registry). */
  views: string;
  /** One lesson, with its preset and without the tour. */
  lesson: string;
  /** `none`: each view's picture alone, without title, prose, controls or menu. */
  chrome: string;
  /** With chrome="none": the parts of each view kept beside its picture, comma separated. */
  keep: string;
}

export declare class TransformerPlayground extends HTMLElement {
  model: string;
  preset: string;
  models: string;
  views: string;
  lesson: string;
  chrome: string;
  keep: string;
  /** Settles once the first real forward pass is drawn (the `tp-ready` event says the same). */
  readonly ready: Promise<void>;
  /** Settles once the views show the state as it is now. */
  readonly updateComplete: Promise<boolean>;
  readonly store: PlaygroundStoreLike | null;
  readonly st: PlaygroundSettings;
  readonly manifest: readonly ManifestEntry[];
  readonly info: ModelInfo | null;
  readonly plan: LayerPlan | null;
  readonly backendInfo: BackendInfo;
  readonly notes: readonly string[];
  /** The last failure in words ('' when none). */
  readonly error: string;
  readonly locale: 'en' | 'zh-Hans';
  readonly language: 'en' | 'zh-Hans';
  readonly tokenized: Tokenized | null;
  readonly lastForward: ForwardResult | null;
  readonly generated: readonly number[];
  readonly playing: boolean;
  readonly done: boolean;
  readonly genNote: string;
  readonly stats: { totalFlops: number; totalFed: number; [key: string]: unknown };
  readonly costReport: CostReport | null;
  readonly schedule: Schedule | null;
  readonly cell: { row: number; col: number } | null;
  readonly row: number;
  readonly readyMs: number | null;
  readonly readyAt: number | null;
  readonly progress: Progress | null;
  readonly engineRestarts: number;
  readonly engineNote: string;
  readonly promptNote: string;
  readonly genBefore: { ids: number[]; tokens: string[]; prompt: string; done: boolean; what: string; model: string } | null;
  /** Open a chapter below the overview and bring `view` into sight. */
  openChapter(name: string, view?: string): Promise<void>;
  /** The engine's memory. */
  memoryUse(): Promise<{ wasm_bytes: number; js_heap_bytes: number | null }>;
  /** A view as drawn now, as an SVG picture with a caption. */
  picture(name: string): Picture;
  /** A link that opens the full playground on this view, with every setting as it is now. */
  linkTo(name: string): string;
  /**
   * The snippet that puts this view, as it is now, into a post: the script and the element,
   * and an iframe of embed.html ('' where no embed.html is beside the module, as in this package).
   */
  embedSnippet(name: string, opts?: { alone?: boolean; keep?: string[]; height?: number }): { element: string; iframe: string };
  /** What the page said when a change of a locked setting was refused ('' when none). */
  readonly lockNote: string;
  /** Why the setting `name` cannot change here ('' when it can). */
  lockedWhy(name: string): string;
  /** Show the view `name` alone on a projector ('' goes back); settles once it is drawn. */
  project(name: string): Promise<void>;
  /** The view shown alone on a projector ('' for none). */
  readonly projected: string;
  testOnlyCrashEngine(kind?: 'trap' | 'throw'): Promise<void>;
  testOnlyLoseGpu(): Promise<boolean>;
}

/** The engine's worker as a typed client (no DOM). */
export declare class EngineClient {
  constructor(worker?: Worker);
  call(op: string, payload: unknown): Promise<unknown>;
  terminate(): void;
}

/** Every view: its name in `views="…"`, its element and title. */
export declare const VIEWS: readonly { name: string; tag: string; title: string; [key: string]: unknown }[];
export declare const VIEW_NAMES: readonly string[];
/** The URL-hash format of the settings. */
export declare function parseHash(hash: string, defaults?: unknown): { state: PlaygroundSettings; notes: string[] };
export declare function formatHash(state: PlaygroundSettings, base?: unknown): string;
export declare function viewToSvg(el: Element, caption: { title: string; model: string; settings: string }): Picture;
export declare function svgToPng(p: Picture): Promise<Blob>;
export declare const PlaygroundStore: { new (...args: never[]): PlaygroundStoreLike };

declare global {
  interface HTMLElementTagNameMap {
    'transformer-playground': TransformerPlayground;
  }
  interface HTMLElementEventMap {
    'tp-ready': CustomEvent<unknown>;
  }
}

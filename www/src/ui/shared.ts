// Styles and small helpers shared by the components.

import { css, noChange, type ReactiveController, type ReactiveControllerHost } from 'lit';
import { Directive, directive, PartType, type AttributePart, type PartInfo } from 'lit/directive.js';

/** Fire a bubbling, composed event so the playground hears it through shadow roots. */
export function emit<T>(from: EventTarget, name: string, detail: T): void {
  from.dispatchEvent(new CustomEvent<T>(name, { detail, bubbles: true, composed: true }));
}

/** The light palette; every colour a view uses is one of these variables. */
const LIGHT = css`
  color-scheme: light;
  --tp-page: #f6f7f9;
  --tp-bg: #ffffff;
  --tp-fg: #1c1f24;
  --tp-muted: #5b6470;
  --tp-line: #d9dde3;
  --tp-accent: #2f5bd3;
  --tp-accent-soft: #e3ebff;
  --tp-warn: #a14b00;
  --tp-warn-soft: #fff1e0;
  --tp-error: #b00020;
  --tp-focus: #e4007c;
  --tp-attn-fill: #e8f0fe;
  --tp-ffn-fill: #fdf1dc;
  --tp-io-fill: #eef1f4;
  --tp-hatch-a: #9aa1ab;
  --tp-hatch-b: #d8dce1;
  --tp-masked: #c5cad1;
`;

/** The dark palette: the same roles, readable on a dark page. */
const DARK = css`
  color-scheme: dark;
  --tp-page: #14161a;
  --tp-bg: #1d2026;
  --tp-fg: #e6e8eb;
  --tp-muted: #a3acb8;
  --tp-line: #3f4550;
  --tp-accent: #8fb0ff;
  --tp-accent-soft: #25304a;
  --tp-warn: #ffb870;
  --tp-warn-soft: #3a2a18;
  --tp-error: #ff8a9a;
  --tp-focus: #ff5cb8;
  --tp-attn-fill: #22314f;
  --tp-ffn-fill: #3d3020;
  --tp-io-fill: #2a2f37;
  --tp-hatch-a: #5d6470;
  --tp-hatch-b: #2f343c;
  --tp-masked: #4a505a;
`;

/**
 * The colour theme, set once on <transformer-playground> and inherited by every view inside
 * it: the reader's system preference (`prefers-color-scheme`) unless the element's `theme`
 * attribute says `light` or `dark`.
 */
export const theme = css`
  :host {
    ${LIGHT}
  }
  :host([theme='dark']) {
    ${DARK}
  }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme='light'])) {
      ${DARK}
    }
  }
`;

export const panel = css`
  :host {
    display: block;
    --tp-radius: 10px;
    /* Font stacks that end in a CJK face before the generic family, so Chinese tokens draw
       with Simplified Chinese glyphs from whatever the system has (macOS, Windows, Linux
       with Noto CJK or WenQuanYi). Nothing is downloaded. */
    --tp-cjk: 'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', 'Noto Sans CJK SC',
      'Source Han Sans SC', 'WenQuanYi Micro Hei';
    --tp-sans: system-ui, -apple-system, 'Segoe UI', Roboto, var(--tp-cjk), sans-serif;
    --tp-mono: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'Noto Sans Mono CJK SC', var(--tp-cjk),
      monospace;
    color: var(--tp-fg);
    font-family: var(--tp-sans);
  }
  .card {
    background: var(--tp-bg);
    border: 1px solid var(--tp-line);
    border-radius: var(--tp-radius);
    padding: 12px 14px;
    min-width: 0;
  }
  h2 {
    font-size: 0.95rem;
    margin: 0 0 8px;
    display: flex;
    gap: 8px;
    align-items: baseline;
    flex-wrap: wrap;
  }
  h2 .sub {
    font-weight: normal;
    color: var(--tp-muted);
    font-size: 0.85rem;
  }
  .muted {
    color: var(--tp-muted);
  }
  .small {
    font-size: 0.82rem;
  }
  .mono {
    font-family: var(--tp-mono);
  }
  button,
  select,
  input,
  textarea {
    font: inherit;
    color: inherit;
  }
  button {
    border: 1px solid var(--tp-line);
    background: var(--tp-bg);
    border-radius: 6px;
    padding: 4px 10px;
    cursor: pointer;
  }
  button[aria-pressed='true'] {
    background: var(--tp-accent-soft);
    border-color: var(--tp-accent);
  }
  button:focus-visible,
  select:focus-visible,
  input:focus-visible,
  textarea:focus-visible,
  [tabindex]:focus-visible {
    outline: 2px solid var(--tp-accent);
    outline-offset: 2px;
  }
  select,
  input[type='number'],
  textarea {
    border: 1px solid var(--tp-line);
    border-radius: 6px;
    background: var(--tp-bg);
    padding: 4px 6px;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
  @media (prefers-reduced-motion: reduce) {
    * {
      animation: none !important;
      transition: none !important;
    }
  }
`;

/**
 * Inline styles through the CSSOM (`element.style.setProperty`), never a `style`
 * attribute: the page runs under a Content-Security-Policy without 'unsafe-inline', which
 * refuses style attributes (even set from script) but not CSSOM writes. Lit's own
 * `styleMap` writes the attribute on its first render, so this directive replaces it.
 * Use as `style=${styles(`background: ${c}; width: ${w}px`)}` (kebab-case properties).
 */
class CssomStyles extends Directive {
  private previous = new Map<string, string>();
  private text: string | null = null;

  constructor(info: PartInfo) {
    super(info);
    if (info.type !== PartType.ATTRIBUTE || info.name !== 'style') throw new Error('styles() belongs in a style attribute');
  }

  render(_text: string) {
    return noChange;
  }

  update(part: AttributePart, [text]: [string]) {
    // The same text as last time: nothing to write (a write, even of the same value, costs
    // a style recalculation of the element).
    if (text === this.text) return noChange;
    this.text = text;
    const style = (part.element as HTMLElement).style;
    const next = new Map<string, string>();
    for (const decl of text.split(';')) {
      const i = decl.indexOf(':');
      if (i > 0) next.set(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
    }
    for (const p of this.previous.keys()) if (!next.has(p)) style.removeProperty(p);
    for (const [p, v] of next) if (this.previous.get(p) !== v) style.setProperty(p, v);
    this.previous = next;
    return noChange;
  }
}

export const styles = directive(CssomStyles);

/**
 * Call `f` once, the first time `el` comes into view: views that ask the engine for work of
 * their own (a side model, a sampled experiment) wait until someone can see them, so the
 * first load fetches and computes only what is on screen.
 */
export function whenSeen(el: Element, f: () => void): () => void {
  if (typeof IntersectionObserver === 'undefined') {
    f();
    return () => {};
  }
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) {
      io.disconnect();
      f();
    }
  });
  io.observe(el);
  return () => io.disconnect();
}

/**
 * Whether its host element has been on screen yet: `seen` turns true the first time it is
 * (then the host updates), so a view that asks the engine for work waits until it is seen.
 */
export class SeenController implements ReactiveController {
  seen = false;
  private unobserve: () => void = () => {};

  constructor(private readonly host: ReactiveControllerHost & Element) {
    host.addController(this);
  }

  hostConnected(): void {
    this.unobserve = whenSeen(this.host, () => {
      this.seen = true;
      this.host.requestUpdate();
    });
  }

  hostDisconnected(): void {
    this.unobserve();
  }
}

/**
 * The theme's colour variables as its host sees them, read once per theme (a read costs a
 * style recalculation, too dear for every redraw of a canvas); the host draws again when
 * the theme changes: the playground's `theme` attribute, or the system's dark mode.
 */
export class ThemeColours implements ReactiveController {
  private cache: Record<string, string> | null = null;
  private readonly dark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
  private observer: MutationObserver | null = null;
  private readonly changed = () => {
    this.cache = null;
    this.host.requestUpdate();
  };

  constructor(
    private readonly host: ReactiveControllerHost & HTMLElement,
    private readonly names: readonly string[],
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.cache = null;
    this.dark?.addEventListener('change', this.changed);
    // The playground element that holds the view carries the theme.
    let node: Node = this.host;
    for (;;) {
      const root = node.getRootNode();
      if (!(root instanceof ShadowRoot)) break;
      node = root.host;
      if (root.host.tagName === 'TRANSFORMER-PLAYGROUND') {
        this.observer = new MutationObserver(this.changed);
        this.observer.observe(root.host, { attributes: true, attributeFilter: ['theme'] });
        break;
      }
    }
  }

  hostDisconnected(): void {
    this.dark?.removeEventListener('change', this.changed);
    this.observer?.disconnect();
    this.observer = null;
  }

  /** Each variable's value ('' where it is not set). */
  get(): Record<string, string> {
    if (!this.cache) {
      const style = getComputedStyle(this.host);
      this.cache = Object.fromEntries(this.names.map((n) => [n, style.getPropertyValue(n).trim()]));
    }
    return this.cache;
  }
}

/**
 * Size a canvas to `w` × `h` CSS pixels at the screen's pixel ratio and hand back its
 * context, cleared and scaled to CSS pixels. The backing store is reallocated only when
 * the size changes.
 */
export function canvasFor(c: HTMLCanvasElement, w: number, h: number): CanvasRenderingContext2D | null {
  const dpr = Math.max(1, Math.min(3, Math.round(window.devicePixelRatio || 1)));
  if (c.width !== w * dpr || c.height !== h * dpr) {
    c.width = w * dpr;
    c.height = h * dpr;
  }
  if (c.style.width !== `${w}px`) c.style.width = `${w}px`;
  if (c.style.height !== `${h}px`) c.style.height = `${h}px`;
  const ctx = c.getContext('2d');
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

/** A view's short paragraphs and its small table of numbers (the dropout and norms views). */
export const numberTable = css`
  p {
    font-size: 0.85rem;
    margin: 4px 0 8px;
  }
  table {
    border-collapse: collapse;
    font-size: 0.8rem;
    font-variant-numeric: tabular-nums;
  }
  td,
  th {
    padding: 2px 6px;
    border-bottom: 1px solid var(--tp-line);
    text-align: left;
  }
  th {
    font-weight: normal;
    color: var(--tp-muted);
  }
`;

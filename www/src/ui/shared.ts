// Styles and small helpers shared by the components.

import { css, noChange, type ReactiveController, type ReactiveControllerHost } from 'lit';
import { Directive, directive, PartType, type AttributePart, type ElementPart, type PartInfo } from 'lit/directive.js';
import { AsyncDirective } from 'lit/async-directive.js';
import { msg } from '@lit/localize';

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
  --tp-zero: #dcdcdc;
  --tp-zero-dot: #555555;
  --tp-on-accent: #ffffff;
  --tp-gpu: #1b7d7a;
  --tp-cpu: #3b528b;
  --tp-shadow: 0 4px 16px rgba(20, 24, 32, 0.16);
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
  --tp-zero: #3a3f47;
  --tp-zero-dot: #c9ced6;
  --tp-on-accent: #ffffff;
  --tp-gpu: #1b7d7a;
  --tp-cpu: #3b528b;
  --tp-shadow: 0 4px 16px rgba(0, 0, 0, 0.5);
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

/**
 * The scales every component draws with: a type scale (rem, so the reader's font size
 * holds), a spacing scale on a 4 px step, radii. Set on each component's host, so a view
 * embedded on its own has them too; an embedder may override any of them.
 */
const SCALES = css`
  --tp-text-xs: 0.75rem;
  --tp-text-sm: 0.8125rem;
  --tp-text-md: 0.875rem;
  --tp-text-base: 1rem;
  --tp-text-lg: 1.125rem;
  --tp-text-xl: 1.375rem;
  --tp-leading: 1.45;
  --tp-space-1: 4px;
  --tp-space-2: 8px;
  --tp-space-3: 12px;
  --tp-space-4: 16px;
  --tp-space-5: 24px;
  --tp-space-6: 32px;
  --tp-radius: 10px;
  --tp-radius-sm: 6px;
`;

export const panel = css`
  :host {
    display: block;
    ${SCALES}
    /* Font stacks that end in a CJK face before the generic family, so Chinese tokens draw
       with Simplified Chinese glyphs from whatever the system has (macOS, Windows, Linux
       with Noto CJK or WenQuanYi). Nothing is downloaded. */
    --tp-cjk: 'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', 'Noto Sans CJK SC',
      'Source Han Sans SC', 'WenQuanYi Micro Hei';
    --tp-sans: system-ui, -apple-system, 'Segoe UI', Roboto, var(--tp-cjk), sans-serif;
    --tp-mono: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'Noto Sans Mono CJK SC', var(--tp-cjk),
      monospace;
    color: var(--tp-fg);
    /* --tp-font, set by an embedder on the element (never inside), is the font of every view. */
    font-family: var(--tp-font, var(--tp-sans));
  }
  .card {
    background: var(--tp-bg);
    border: 1px solid var(--tp-line);
    border-radius: var(--tp-radius);
    padding: var(--tp-space-3) var(--tp-space-4);
    min-width: 0;
  }
  /* A view's title row: the title, what it shows in a few words, and room at the end for
     the playground's "⋯" menu (--tp-menu-room, set only where the playground frames it). */
  h2 {
    font-size: var(--tp-text-base);
    line-height: 1.3;
    margin: 0 0 var(--tp-space-2);
    padding-inline-end: var(--tp-menu-room, 0);
    display: flex;
    gap: var(--tp-space-2);
    align-items: baseline;
    flex-wrap: wrap;
  }
  h2 .sub {
    font-weight: normal;
    color: var(--tp-muted);
    font-size: var(--tp-text-md);
  }
  h3 {
    font-size: var(--tp-text-md);
    margin: var(--tp-space-3) 0 var(--tp-space-1);
  }
  p {
    line-height: var(--tp-leading);
  }
  .muted {
    color: var(--tp-muted);
  }
  .small {
    font-size: var(--tp-text-sm);
  }
  /* Beside a control a classroom link locked: why it does not move (../ui/locked.ts). */
  .locked-why {
    font-size: var(--tp-text-sm);
    color: var(--tp-muted);
    font-weight: normal;
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
    border-radius: var(--tp-radius-sm);
    padding: var(--tp-space-1) var(--tp-space-3);
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
    border-radius: var(--tp-radius-sm);
    background: var(--tp-bg);
    padding: var(--tp-space-1) 6px;
  }
  /* A table wider than its panel scrolls inside a box the keyboard can reach (tabindex=0,
     with a name): the page itself never scrolls sideways. */
  .scroll {
    overflow-x: auto;
    max-width: 100%;
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
 * A box that scrolls sideways when its content is wider than the panel (a wide table on a
 * phone): while it does, the keyboard can reach it (tabindex 0) and a screen reader names
 * it (a region labelled `label`), so its hidden part can be scrolled into sight; while it
 * fits, it is a plain box and no tab stop. Use on an element with `overflow-x: auto`:
 * `<div class="wrap" ${scrollRegion(msg('…'))}>`.
 */
class ScrollRegion extends AsyncDirective {
  private el: HTMLElement | null = null;
  private label = '';
  private observer: ResizeObserver | null = null;

  constructor(info: PartInfo) {
    super(info);
    if (info.type !== PartType.ELEMENT) throw new Error('scrollRegion() belongs on an element');
  }

  render(_label: string) {
    return noChange;
  }

  update(part: ElementPart, [label]: [string]) {
    const el = part.element as HTMLElement;
    this.label = label;
    if (el !== this.el) {
      this.observer?.disconnect();
      this.el = el;
      this.content = new WeakSet();
      this.observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => this.check());
      this.observer?.observe(el);
    }
    // Its content may grow without the box changing size (a table filling in).
    for (const child of el.children) {
      if (this.content.has(child)) continue;
      this.content.add(child);
      this.observer?.observe(child);
    }
    // Whether it scrolls is read where the observer reports a new size, after the
    // browser's own layout: reading it here, on every render, forced a layout per view
    // per token while a generation played. Only the name follows the label at once.
    if (!this.observer) this.check();
    else if (this.added.includes('aria-label') && el.getAttribute('aria-label') !== label) el.setAttribute('aria-label', label);
    return noChange;
  }

  /** The children observed beside the box. */
  private content = new WeakSet<Element>();

  /** The attributes this directive set (an element's own role or name stays as it is). */
  private added: string[] = [];

  private check() {
    const el = this.el;
    if (!el) return;
    const scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
    if (scrolls && !this.added.length) {
      const own = (a: string) => el.hasAttribute(a);
      const set = (a: string, v: string) => {
        el.setAttribute(a, v);
        this.added.push(a);
      };
      if (!own('tabindex')) set('tabindex', '0');
      if (!own('role')) set('role', 'region');
      if (!own('aria-label') && !own('aria-labelledby')) set('aria-label', this.label);
    } else if (scrolls && this.added.includes('aria-label') && el.getAttribute('aria-label') !== this.label) {
      el.setAttribute('aria-label', this.label);
    } else if (!scrolls && this.added.length) {
      for (const a of this.added) el.removeAttribute(a);
      this.added = [];
    }
  }

  protected disconnected(): void {
    this.observer?.disconnect();
  }

  protected reconnected(): void {
    if (this.el) {
      this.observer?.observe(this.el);
      this.check();
    }
  }
}

export const scrollRegion = directive(ScrollRegion);

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
    font-size: var(--tp-text-md);
    margin: var(--tp-space-1) 0 var(--tp-space-2);
  }
  table {
    border-collapse: collapse;
    font-size: var(--tp-text-sm);
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

/** The name of a box that scrolls (scrollRegion), for screen readers, whatever it holds. */
export function scrollLabel(): string {
  return msg('more than fits: scroll, or use the arrow keys, to see the rest', { id: 'scroll.region' });
}

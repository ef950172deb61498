// Pictures out: any view of the playground as an SVG or PNG file for slides and papers,
// with a caption naming the view, the model and the settings. Nothing here knows about a
// particular view: it walks the element as drawn (into shadow roots), writes each box
// with the computed styles that make it look as it does, turns canvases into images and
// keeps inline SVG as SVG. A new view gets its pictures without any code of its own.
//
// The SVG holds the view's HTML in a <foreignObject> (browsers and browser-based tools
// draw it exactly as on screen) and the caption as plain SVG text. The PNG is that SVG
// drawn onto a canvas at twice the size. Everything is built as text and loaded as an
// image from a data: URL, so it works under a Content-Security-Policy that refuses inline
// styles and scripts.

import { msg, str } from '@lit/localize';

/** What the caption says. */
export interface Caption {
  /** The view's title ("Attention"). */
  title: string;
  /** The model, as the page names it. */
  model: string;
  /** The settings that differ from the defaults, in words or as the link's hash. */
  settings: string;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const XHTML_NS = 'http://www.w3.org/1999/xhtml';

/** Properties children inherit: written only where they differ from the parent's. */
const INHERITED = [
  'color',
  'font-family',
  'font-size',
  'font-weight',
  'font-style',
  'font-variant-numeric',
  'line-height',
  'letter-spacing',
  'text-align',
  'text-transform',
  'white-space',
  'word-break',
  'overflow-wrap',
  'visibility',
  'writing-mode',
  'list-style-type',
  'border-collapse',
  'border-spacing',
  'caption-side',
  'empty-cells',
];

/** Properties children do not inherit: written where they differ from a bare element's. */
const OWN = [
  'display',
  'box-sizing',
  'position',
  'top',
  'right',
  'bottom',
  'left',
  'z-index',
  'float',
  'vertical-align',
  'overflow-x',
  'overflow-y',
  'opacity',
  'transform',
  'transform-origin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border-top-width',
  'border-right-width',
  'border-bottom-width',
  'border-left-width',
  'border-top-style',
  'border-right-style',
  'border-bottom-style',
  'border-left-style',
  'border-top-color',
  'border-right-color',
  'border-bottom-color',
  'border-left-color',
  'border-top-left-radius',
  'border-top-right-radius',
  'border-bottom-right-radius',
  'border-bottom-left-radius',
  'background-color',
  'background-image',
  'background-size',
  'background-position',
  'background-repeat',
  'box-shadow',
  'flex-direction',
  'flex-wrap',
  'flex-grow',
  'flex-shrink',
  'flex-basis',
  'order',
  'align-items',
  'align-self',
  'align-content',
  'justify-content',
  'justify-items',
  'justify-self',
  'row-gap',
  'column-gap',
  'grid-template-columns',
  'grid-template-rows',
  'grid-auto-flow',
  'grid-column-start',
  'grid-column-end',
  'grid-row-start',
  'grid-row-end',
  'text-decoration-line',
  'text-decoration-color',
  'text-overflow',
  'image-rendering',
  'table-layout',
  'list-style-position',
];

/** How an element inside an inline <svg> looks: its presentation properties. */
const SVG_PROPS = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-opacity',
  'stroke-dasharray',
  'stroke-linecap',
  'stroke-linejoin',
  'opacity',
  'font-family',
  'font-size',
  'font-weight',
  'font-style',
  'text-anchor',
  'dominant-baseline',
  'visibility',
];

/** Elements that are never drawn, or that the export leaves out on purpose. */
const SKIP = new Set(['style', 'script', 'template', 'link', 'meta', 'noscript']);
/** Elements whose size is their own (drawn content), inline or not. */
const REPLACED = new Set(['canvas', 'img', 'input', 'select', 'textarea', 'button', 'video']);
const FORM = new Set(['input', 'select', 'textarea', 'button']);
const VOID = new Set(['br', 'hr', 'img', 'input', 'wbr', 'col', 'area', 'source']);
/** HTML attributes that change what is drawn (the rest, events and ARIA included, go). */
const KEEP_HTML_ATTRS = new Set(['colspan', 'rowspan', 'span', 'type', 'dir', 'min', 'max', 'step']);

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;');

/** Computed styles of bare elements, one per tag, to leave out what every such element has. */
class Baseline {
  private host: HTMLElement | null = null;
  private root: ShadowRoot | null = null;
  private cache = new Map<string, Map<string, string>>();

  get(tag: string): Map<string, string> {
    let m = this.cache.get(tag);
    if (m) return m;
    if (!this.root) {
      this.host = document.createElement('div');
      // CSSOM writes, which a style-src policy allows (a style attribute it would refuse).
      this.host.style.position = 'absolute';
      this.host.style.visibility = 'hidden';
      this.host.style.pointerEvents = 'none';
      this.host.style.left = '-10000px';
      document.body.appendChild(this.host);
      this.root = this.host.attachShadow({ mode: 'open' });
    }
    const el = document.createElement(tag.includes('-') ? 'div' : tag);
    this.root.appendChild(el);
    const cs = getComputedStyle(el);
    m = new Map(OWN.map((p) => [p, cs.getPropertyValue(p)]));
    el.remove();
    this.cache.set(tag, m);
    return m;
  }

  dispose() {
    this.host?.remove();
    this.host = null;
    this.root = null;
  }
}

/** The children a reader sees: a shadow root's content in place of the host's light DOM. */
function drawnChildren(el: Element): Node[] {
  if (el instanceof HTMLSlotElement) return el.assignedNodes({ flatten: true });
  const root = (el as HTMLElement).shadowRoot;
  return Array.from((root ?? el).childNodes);
}

function skipped(el: Element): boolean {
  return SKIP.has(el.localName) || el.hasAttribute('data-export-skip');
}

/** One element inside an inline <svg>, with its presentation properties written out. */
function svgElement(el: Element, out: string[], top: boolean): void {
  if (skipped(el)) return;
  const cs = getComputedStyle(el);
  if (cs.display === 'none') return;
  const attrs: string[] = [];
  if (top) attrs.push(`xmlns="${SVG_NS}"`);
  for (const a of Array.from(el.attributes)) {
    const n = a.name;
    if (n === 'style' || n === 'class' || n === 'tabindex' || n === 'role' || n === 'focusable' || n.startsWith('aria-') || n.startsWith('on') || n === 'xmlns') continue;
    if (n.startsWith('data-')) continue;
    attrs.push(`${n}="${escapeAttr(a.value)}"`);
  }
  const style = SVG_PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';');
  // The element's laid-out size goes with it: a width of 100% means nothing in a file.
  if (top) {
    const r = el.getBoundingClientRect();
    attrs.push(`style="${escapeAttr(`${style};display:block;width:${r.width}px;height:${r.height}px;max-width:none;margin:0 auto`)}"`);
  } else {
    attrs.push(`style="${escapeAttr(style)}"`);
  }
  out.push(`<${el.localName} ${attrs.join(' ')}>`);
  for (const c of Array.from(el.childNodes)) {
    if (c.nodeType === Node.TEXT_NODE) out.push(escapeText(c.textContent ?? ''));
    else if (c instanceof Element) svgElement(c, out, false);
  }
  out.push(`</${el.localName}>`);
}

/** One HTML element (or shadow host) and what is drawn inside it. */
function htmlElement(el: Element, parent: CSSStyleDeclaration | null, base: Baseline, out: string[]): void {
  if (skipped(el)) return;
  if (el instanceof SVGSVGElement) {
    svgElement(el, out, true);
    return;
  }
  if (el instanceof SVGElement) return;
  const cs = getComputedStyle(el);
  if (cs.display === 'none') return;
  const tag = el.localName;
  const decl: string[] = [];
  // Form controls and table headers take their font and alignment from the browser's own
  // sheet, not from their parent: theirs are always written.
  const control = FORM.has(tag) || tag === 'th';
  for (const p of INHERITED) {
    const v = cs.getPropertyValue(p);
    if (!parent || control || parent.getPropertyValue(p) !== v) decl.push(`${p}:${v}`);
  }
  const bare = base.get(tag);
  for (const p of OWN) {
    const v = cs.getPropertyValue(p);
    if (v !== bare.get(p)) decl.push(`${p}:${v}`);
  }
  // Boxes keep their laid-out size, so the picture does not reflow around other fonts.
  const replaced = REPLACED.has(tag);
  const inline = !replaced && (cs.display === 'inline' || cs.display === 'contents');
  if (!inline) decl.push(`width:${cs.width}`, `height:${cs.height}`);
  // A shadow host or custom element is written as a plain box.
  const name = tag.includes('-') || el instanceof HTMLSlotElement ? (inline ? 'span' : 'div') : tag;
  if (el instanceof HTMLCanvasElement) {
    let src = '';
    try {
      src = el.toDataURL('image/png');
    } catch {
      // a canvas tainted by another origin's image cannot be read; it stays blank
    }
    out.push(`<img src="${escapeAttr(src)}" style="${escapeAttr(decl.join(';'))}" />`);
    return;
  }
  const attrs: string[] = [];
  for (const a of Array.from(el.attributes)) if (KEEP_HTML_ATTRS.has(a.name)) attrs.push(`${a.name}="${escapeAttr(a.value)}"`);
  if (el instanceof HTMLImageElement) attrs.push(`src="${escapeAttr(el.currentSrc || el.src)}"`);
  if (el instanceof HTMLInputElement) {
    if (el.type === 'checkbox' || el.type === 'radio') {
      if (el.checked) attrs.push('checked="checked"');
    } else {
      attrs.push(`value="${escapeAttr(el.value)}"`);
    }
  }
  if (el instanceof HTMLButtonElement || el instanceof HTMLInputElement || el instanceof HTMLSelectElement) {
    if (el.disabled) attrs.push('disabled="disabled"');
  }
  attrs.push(`style="${escapeAttr(decl.join(';'))}"`);
  if (VOID.has(name)) {
    out.push(`<${name} ${attrs.join(' ')} />`);
    return;
  }
  out.push(`<${name} ${attrs.join(' ')}>`);
  if (el instanceof HTMLSelectElement) {
    const o = el.selectedOptions[0];
    if (o) out.push(`<option selected="selected">${escapeText(o.text)}</option>`);
  } else if (el instanceof HTMLTextAreaElement) {
    out.push(escapeText(el.value));
  } else {
    for (const c of drawnChildren(el)) {
      if (c.nodeType === Node.TEXT_NODE) out.push(escapeText(c.textContent ?? ''));
      else if (c instanceof Element) htmlElement(c, cs, base, out);
    }
  }
  out.push(`</${name}>`);
}

/** Split text into lines of at most `width` characters, at spaces or `&` where it can. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    let cut = Math.max(rest.lastIndexOf(' ', width), rest.lastIndexOf('&', width));
    if (cut <= 0) cut = width;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) lines.push(rest);
  return lines;
}

/** A finished picture: the SVG text and its size in CSS pixels. */
export interface Picture {
  svg: string;
  width: number;
  height: number;
}

/**
 * The element as drawn, with a caption below it, as a standalone SVG document.
 * `el` is a view's element (its shadow root is walked) or any other element.
 */
export function viewToSvg(view: Element, caption: Caption): Picture {
  // A view whose shadow root draws one box (its card) is pictured as that box alone: the
  // host may be stretched taller by its neighbours in the page's grid.
  const drawn = drawnChildren(view).filter((n): n is Element => n instanceof Element && !skipped(n) && getComputedStyle(n).display !== 'none');
  const el = view.shadowRoot && drawn.length === 1 ? drawn[0] : view;
  const r = el.getBoundingClientRect();
  const width = Math.ceil(r.width);
  const bodyHeight = Math.ceil(r.height);
  const base = new Baseline();
  const body: string[] = [];
  try {
    htmlElement(el, null, base, body);
  } finally {
    base.dispose();
  }
  const cs = getComputedStyle(el);
  // The caption in the view's own colours: its card's background, its text colour.
  const bg = cs.getPropertyValue('--tp-bg').trim() || '#ffffff';
  const fg = cs.getPropertyValue('--tp-fg').trim() || '#1c1f24';
  const muted = cs.getPropertyValue('--tp-muted').trim() || fg;
  const font = cs.getPropertyValue('font-family');
  const chars = Math.max(40, Math.floor((width - 24) / 6.6));
  // Wrapped with its "Settings: " lead, which takes room on the first line too.
  const settings = wrap(msg(str`Settings: ${caption.settings || msg('default settings')}`), chars);
  const lines: { text: string; size: number; weight: string; fill: string; mono: boolean }[] = [
    { text: caption.title, size: 15, weight: '700', fill: fg, mono: false },
    { text: msg(str`Model: ${caption.model}`), size: 12.5, weight: '400', fill: fg, mono: false },
    ...settings.map((t) => ({ text: t, size: 11.5, weight: '400', fill: muted, mono: true })),
  ];
  const pad = 12;
  let y = bodyHeight + pad;
  const text: string[] = [];
  for (const l of lines) {
    y += l.size * 1.35;
    const family = l.mono ? "ui-monospace, Menlo, Consolas, monospace" : font;
    text.push(
      `<text x="${pad}" y="${y.toFixed(1)}" fill="${escapeAttr(l.fill)}" font-family="${escapeAttr(family)}" font-size="${l.size}" font-weight="${l.weight}">${escapeText(l.text)}</text>`,
    );
  }
  const height = Math.ceil(y + pad);
  const title = `${caption.title} — ${caption.model}`;
  const svg = [
    `<svg xmlns="${SVG_NS}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${escapeText(title)}</title>`,
    `<desc>${escapeText(msg(str`Settings: ${caption.settings || msg('default settings')}`))}</desc>`,
    `<rect width="100%" height="100%" fill="${escapeAttr(bg)}"/>`,
    `<foreignObject x="0" y="0" width="${width}" height="${bodyHeight}">`,
    `<div xmlns="${XHTML_NS}" style="width:${width}px;height:${bodyHeight}px;overflow:hidden">`,
    body.join(''),
    '</div></foreignObject>',
    `<g class="caption">${text.join('')}</g>`,
    '</svg>',
  ].join('');
  return { svg, width, height };
}

/** The SVG drawn onto a canvas, `scale` device pixels per CSS pixel, as PNG bytes. */
export async function svgToPng(p: Picture, scale = 2): Promise<Blob> {
  // A data: URL, not a blob: one: Chromium marks a canvas that drew a blob: SVG holding a
  // <foreignObject> as tainted and refuses to encode it.
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(p.svg)}`;
  {
    const img = new Image();
    img.src = url;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = Math.round(p.width * scale);
    c.height = Math.round(p.height * scale);
    const ctx = c.getContext('2d');
    if (!ctx) throw new Error(msg('this browser cannot draw on a canvas'));
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, p.width, p.height);
    return await new Promise<Blob>((ok, no) => c.toBlob((b) => (b ? ok(b) : no(new Error(msg('the picture could not be encoded as PNG')))), 'image/png'));
  }
}

/** Offer bytes as a file download. */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name from a view and model: "attention-grammar-alibi". */
export function fileStem(view: string, model: string): string {
  return `${view}-${model.replace(/\.safetensors$/, '')}`.replace(/[^A-Za-z0-9_.-]+/g, '-');
}

// A view's picture alone (`chrome="none"`, `#chrome=none`): for a blog post whose own text
// carries the explanation. Per view: the element that holds the view (`root`), its picture
// (kept always) and its other parts by name; the parts named in `keep` stay too, and every
// other part of the view — its title, prose, controls, inspector — is left out. The ⋯ menu
// (pictures and link) is the part `menu` of every view. The names are part of the embed
// contract (www/README.md, "Just the picture"): never removed, renamed only with an alias.
//
// Applied as one more style sheet on the view's shadow root (`applyAlone`): the view draws
// exactly as in the full page (the same numbers, the same code) and the sheet hides what is
// not kept, so no view needs code of its own for it. No numbers here.

export interface AloneDef {
  /** The view's own box, whose children are its parts (default: its card). */
  readonly root?: string;
  /** The picture: the children of `root` always kept. */
  readonly picture: string;
  /** The other parts, by name (selectors within the view's shadow root). */
  readonly parts: Readonly<Record<string, string>>;
}

const CARD = 'section.card';
/** The card's direct children matching `sel`. */
const top = (sel: string, root = CARD) => sel.split(',').map((s) => `${root} > ${s.trim()}`).join(', ');
/** The title row of a card. */
const TITLE = top('h2');

export const ALONE: Readonly<Record<string, AloneDef>> = {
  overview: { picture: '.rows', parts: { title: top('header'), text: top('.text-box'), legend: top('.legend') } },
  controls: { picture: '.row', parts: { note: top('.desc') } },
  backend: { root: '.badge', picture: '.name, .runs', parts: { reason: top('.reason', '.badge'), why: top('details', '.badge') } },
  input: { picture: '.chips, .row-label', parts: { title: top('.bar'), text: top('label, textarea') } },
  characters: { root: 'section', picture: '.keys', parts: { title: top('h3', 'section'), hint: top('.hint', 'section') } },
  generation: { picture: '.stream', parts: { title: TITLE, buttons: top('.buttons'), stats: top('.stats'), cache: top('.cache') } },
  architecture: { picture: 'svg', parts: { title: TITLE, steps: top('button, p, ol') } },
  attention: {
    picture: '.beside',
    parts: { title: TITLE, heads: top('.thumbs'), tools: top('.map-tools'), inspector: '.beside > tp-qk', readout: top('.readout'), legend: top('.legend') },
  },
  masks: { picture: '.room', parts: { title: TITLE, editor: top('.editor'), legend: top('.legend') } },
  tokenizer: { picture: '.pieces', parts: { title: TITLE, note: top('p'), controls: top('.controls') } },
  output: { picture: '.bars', parts: { title: TITLE, controls: top('.controls'), note: top('p'), more: top('button') } },
  hidden: { picture: '.wrap', parts: { title: TITLE, note: top('p') } },
  'sqrt-dk': { picture: '.charts', parts: { title: TITLE, note: top('p'), controls: top('.controls'), legend: top('.legend'), numbers: top('details') } },
  saturation: { picture: '.wrap', parts: { title: TITLE, note: top('p') } },
  cost: { picture: '.wrap', parts: { title: TITLE, controls: top('.controls'), note: top('p') } },
  schedule: { picture: 'svg', parts: { title: TITLE, formula: top('p:not(.muted)'), controls: top('.controls') } },
  positions: { picture: 'tp-heat, svg', parts: { title: TITLE, controls: top('.controls'), slopes: top('.slopes'), note: top('h3, p') } },
  'embedding-scale': { picture: 'svg', parts: { title: TITLE, note: top('p'), legend: top('.legend'), numbers: top('details') } },
  order: { picture: '.wrap', parts: { title: TITLE, note: top('p:not(.verdict)'), controls: top('.controls'), texts: top('.texts'), verdict: top('.verdict') } },
  extrapolation: { picture: 'svg', parts: { title: TITLE, note: top('p'), controls: top('.controls'), legend: top('.legend'), numbers: top('table') } },
  ffn: { picture: '.wrap', parts: { title: TITLE, note: top('p:not(.verdict)'), edit: top('.edit'), verdict: top('.verdict'), maps: top('.maps') } },
  'no-leak': { picture: '.wrap', parts: { title: TITLE, note: top('p'), edit: top('.edit') } },
  norms: { picture: '.models', parts: { title: TITLE, note: top('p') } },
  dropout: { picture: '.wrap, tp-heat, .maps', parts: { title: TITLE, note: top('p, ul') } },
  parallel: { picture: '.charts', parts: { title: TITLE, note: top('p, h3'), controls: top('.row'), legend: top('.legend'), tables: top('.wrap') } },
  time: { picture: '.charts', parts: { title: TITLE, note: top('p, .rates'), controls: top('.row'), legend: top('.legend'), steps: top('h3, .bars'), tables: top('.wrap') } },
  beams: { picture: '.wrap', parts: { title: TITLE, legend: top('.legend'), best: top('p') } },
  weights: { picture: '.pick, .strip-label, .strip', parts: { title: TITLE, note: top('p'), changed: top('.changed') } },
  lab: {
    root: 'section.card.lab',
    picture: '.plots, .actions',
    parts: { title: top('h2', 'section.card.lab'), experiments: top('.experiments', 'section.card.lab'), settings: top('form', 'section.card.lab'), note: top('p', 'section.card.lab') },
  },
};

/** The parts of a view that `keep` may name (the ⋯ menu, `menu`, is every view's). */
export function partsOf(view: string): string[] {
  return [...Object.keys(ALONE[view]?.parts ?? {}), 'menu'];
}

/** The style sheet that leaves out what `keep` does not name (a view missing from ALONE keeps everything). */
export function aloneCss(view: string, keep: readonly string[]): string {
  const def = ALONE[view];
  if (!def) return '';
  const root = def.root ?? CARD;
  const kept = Object.entries(def.parts)
    .filter(([name]) => keep.includes(name))
    .map(([, sel]) => sel);
  const shown = [def.picture, ...kept].join(', ');
  const hidden = Object.entries(def.parts)
    .filter(([name]) => !keep.includes(name))
    .map(([, sel]) => sel);
  return [
    // Every child of the view's box that is neither its picture nor a kept part.
    `${root} > :not(${shown}) { display: none !important; }`,
    hidden.length ? `${hidden.join(', ')} { display: none !important; }` : '',
    // The card holds the picture alone: no room above it for a title row or a menu.
    `${root} { gap: var(--tp-space-2); }`,
  ].join('\n');
}

const sheets = new Map<string, CSSStyleSheet>();
const APPLIED = new WeakMap<ShadowRoot, CSSStyleSheet>();

/** Put the sheet for `view` and `keep` on the view element's shadow root (replacing an earlier one); null keeps everything. */
export function applyAlone(el: Element, view: string, keep: readonly string[] | null): void {
  const root = el.shadowRoot;
  if (!root) return;
  const before = APPLIED.get(root);
  let sheet: CSSStyleSheet | undefined;
  if (keep) {
    const key = `${view}|${[...keep].sort().join(',')}`;
    sheet = sheets.get(key);
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(aloneCss(view, keep));
      sheets.set(key, sheet);
    }
  }
  if (before === sheet) return;
  const others = root.adoptedStyleSheets.filter((s) => s !== before);
  root.adoptedStyleSheets = sheet ? [...others, sheet] : others;
  if (sheet) APPLIED.set(root, sheet);
  else APPLIED.delete(root);
}

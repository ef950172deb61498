// When a view has drawn its picture: the frame keeps the room reserved for the view
// (./reserve.ts) until then, not merely until the engine's first answer — a chart that
// asks the engine for more (the schedule's curve, the no-leak check, the lab's runs)
// arrives a moment after the first pass, and until it does the view is a few pixels of
// card. A view is drawn when one of its picture's boxes (./alone.ts, the same for the full
// view and the picture alone) has marks: an SVG with shapes or text, a canvas, a heat map,
// or visible text; a view may say it itself with a `pictureDrawn` property (the lab: a
// run with a step). No numbers here.

import { ALONE } from './alone';

/** A view element that says itself whether its picture is drawn. */
interface SaysDrawn {
  readonly pictureDrawn?: boolean;
}

const MARKS = 'path, rect, line, polyline, polygon, circle, text';

function marked(n: Element): boolean {
  const tag = n.tagName.toLowerCase();
  if (tag === 'svg') return !!n.querySelector(MARKS);
  if (tag === 'canvas') return (n as HTMLCanvasElement).width > 0 && (n as HTMLCanvasElement).height > 0;
  if (tag === 'tp-heat') return true;
  if (n.querySelector(`svg :is(${MARKS}), canvas, tp-heat`)) return true;
  return (n.textContent ?? '').trim() !== '';
}

/** Whether the view element `el` (the view `view`) has drawn its picture. */
export function pictureDrawn(view: string, el: Element | null): boolean {
  if (!el) return false;
  // A view whose code has not arrived yet (./load.ts) has drawn nothing.
  if (!el.matches(':defined')) return false;
  const says = (el as SaysDrawn).pictureDrawn;
  if (typeof says === 'boolean') return says;
  const def = ALONE[view];
  const root = el.shadowRoot;
  if (!def || !root) return true;
  const box = def.root ?? 'section.card';
  const sel = def.picture
    .split(',')
    .map((s) => `${box} > ${s.trim()}`)
    .join(', ');
  return [...root.querySelectorAll(sel)].some((n) => n.getBoundingClientRect().height > 0 && marked(n));
}

/** How long each frame is looked at after the engine's first answer, and then how often. */
const EVERY_FRAME_MS = 5000;
const SLOW_MS = 500;
/** After an update of the playground, how long each frame is looked at again (a picture that went away). */
const AFTER_UPDATE_MS = 1000;
/**
 * After this long a view that has not drawn (one out of sight that waits to be seen, say)
 * lets its room go; one whose code has not arrived (./load.ts) keeps it.
 */
const GIVE_UP_MS = 30000;

/**
 * The views of a playground whose picture is drawn now. `look` (after each update of the
 * playground, once the engine has answered) looks at the frames, every animation frame — so
 * before the frame is painted — at first and for a moment after each update, then twice a
 * second while a view has not drawn (until GIVE_UP_MS have passed); `changed` is called when
 * a view has drawn, or when its picture went away (a model being switched: the schedule's
 * curve is asked for again), so its frame holds its room again instead of shrinking.
 */
export class DrawnViews {
  private readonly drawn = new Set<string>();
  private readonly givenUp = new Set<string>();
  private since = 0;
  private readonly arrived = new Map<string, number>();
  private until = 0;
  private timer = 0;
  private frame = 0;
  private root: ParentNode | null = null;

  /**
   * `busy`: while it holds (a generation playing, at any speed), the frames are not looked
   * at: reading a box's size lays out the whole page, before the frame's own layout, every
   * frame; a playback only adds to pictures, and the first update after it looks again.
   */
  constructor(
    private readonly changed: () => void,
    private readonly busy: () => boolean = () => false,
  ) {}

  has(view: string): boolean {
    return this.drawn.has(view) || this.givenUp.has(view);
  }

  /** Look at the frames (`.view[data-view]`) under `root` for a moment, and until every view in them has drawn. */
  look(root: ParentNode): void {
    this.root = root;
    const now = performance.now();
    if (!this.since) this.since = now;
    this.until = Math.max(this.until, now + AFTER_UPDATE_MS, this.since + EVERY_FRAME_MS);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = 0;
    }
    if (!this.frame) this.frame = requestAnimationFrame(this.tick);
  }

  stop(): void {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
    this.frame = this.timer = 0;
  }

  private tick = (): void => {
    this.frame = this.timer = 0;
    if (!this.root) return;
    if (this.busy()) {
      this.timer = window.setTimeout(this.tick, SLOW_MS);
      return;
    }
    const now = performance.now();
    let change = false;
    let waiting = false;
    for (const f of this.root.querySelectorAll<HTMLElement>('.view[data-view]')) {
      const v = f.dataset.view!;
      if (this.givenUp.has(v)) continue;
      // A view whose code has not arrived keeps its room, unwatched: its arrival looks again.
      if (f.firstElementChild && !f.firstElementChild.matches(':defined')) continue;
      // Its time to draw runs from the first look, or from its code's arrival.
      if (!this.arrived.has(v)) this.arrived.set(v, now);
      const late = now - this.arrived.get(v)! > GIVE_UP_MS;
      const isDrawn = pictureDrawn(v, f.firstElementChild);
      if (isDrawn !== this.drawn.has(v)) {
        if (isDrawn) this.drawn.add(v);
        else this.drawn.delete(v);
        change = true;
      }
      if (!isDrawn && late) {
        this.givenUp.add(v);
        change = true;
      } else if (!isDrawn) waiting = true;
    }
    if (change) this.changed();
    if (now < this.until) this.frame = requestAnimationFrame(this.tick);
    else if (waiting) this.timer = window.setTimeout(this.tick, SLOW_MS);
  };
}

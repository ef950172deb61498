// Load a view's code when the view first comes near the viewport: `${loadWhenSeen(load,
// loaded)}` on the element (or the frame around it) whose code `load` fetches; `loaded` is
// called once it has. The element waits, undefined, until then (its properties are kept and
// applied when it upgrades), so a large view costs the first load nothing. The fetch starts
// a screen before the element scrolls into sight, so a reader rarely sees it wait.
// Lit reuses a frame for another view when the views shown change: a new `load` on the
// same element watches for that one instead.

import { nothing } from 'lit';
import { directive, PartType, type ElementPart, type PartInfo } from 'lit/directive.js';
import { AsyncDirective } from 'lit/async-directive.js';

/** How far beyond the viewport an element counts as seen (its code is fetched by then): a screen's height. */
const AHEAD = '100% 0px';

/** Call `f` once `el` comes within AHEAD of the viewport; returns the way to stop watching. */
export function whenNear(el: Element, f: () => void): () => void {
  if (typeof IntersectionObserver === 'undefined') {
    f();
    return () => {};
  }
  const io = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        io.disconnect();
        f();
      }
    },
    { rootMargin: AHEAD },
  );
  io.observe(el);
  return () => io.disconnect();
}

class LoadWhenSeen extends AsyncDirective {
  private load: (() => Promise<unknown>) | null = null;
  private stop: () => void = () => {};
  private element: Element | null = null;
  private loaded: (() => void) | undefined;

  constructor(info: PartInfo) {
    super(info);
    if (info.type !== PartType.ELEMENT) throw new Error('loadWhenSeen() belongs on an element');
  }

  render(_load: (() => Promise<unknown>) | undefined, _loaded?: () => void) {
    return nothing;
  }

  update(part: ElementPart, [load, loaded]: [(() => Promise<unknown>) | undefined, (() => void)?]) {
    this.element = part.element;
    this.loaded = loaded;
    if (load === this.load) return nothing;
    this.watch(load ?? null);
    return nothing;
  }

  private watch(load: (() => Promise<unknown>) | null) {
    this.stop();
    this.stop = () => {};
    this.load = load;
    const el = this.element;
    if (!load || !el) return;
    this.stop = whenNear(el, () => {
      this.stop = () => {};
      void load().then(
        () => this.loaded?.(),
        () => undefined,
      );
    });
  }

  protected disconnected(): void {
    this.stop();
    this.stop = () => {};
  }

  protected reconnected(): void {
    this.watch(this.load);
  }
}

export const loadWhenSeen = directive(LoadWhenSeen);

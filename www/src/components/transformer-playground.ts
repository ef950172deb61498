// <transformer-playground>: the whole playground as one element. The state and what each
// change of a setting sets off live in the DOM-free store (../state/store.ts); the views
// are the rows of the registry (../views/registry.ts). This element wires the store to the
// page (the URL hash, the worker) and draws the registered views the settings show.
//
// Attributes:
//   model="file.safetensors"  the model to start with
//   preset="causal=0&text=…"  settings in the URL-hash format, applied before the hash
//   models="url/"             where manifest.json and the checkpoints are (default: beside this script)
//   no-hash                   do not read or write the page's URL hash (several widgets on one page)
//   theme="dark"              colours: light, dark or auto (the reader's system setting)
//   views="attention,output"  show only these views (names of the registry; default: the
//                             overview, the chapter bar and the open chapter)
//   lesson="kv-cache"         show this lesson (../lessons/) with its preset, without the tour
//   chrome="none"             each view's picture alone: no title, prose, controls or menu
//   keep="heads,legend"       with chrome="none": the parts of the view kept (../views/alone.ts)
//   lang="zh-Hans"            the interface's language: en or zh-Hans (default: the reader's
//                             last choice, else the browser's); the element then shows the
//                             language in use in this attribute. Each playground has its own:
//                             the page's language is not changed
//   load="eager"              start the engine at once (default: when the element comes near
//                             the viewport; every playground of the page shares one engine worker)
//
// Scripting API (read by tests, benchmarks and lesson pages; www/README.md documents it):
// `ready`, `store`, and the read-only mirrors of the store below; the lab's runs
// (`train`, `runs`, `useRun`, `exportRun`, `loadCheckpoint`, …), delegated to ../lab/ by the
// base class in ./playground-runs-api.ts.

import { withLang } from '../i18n/scope';
import { html, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { EngineClient } from '../engine/client';
import type { Arch } from '../engine/protocol';
import { LabRegistry } from '../lab/registry';
import { IdbRunStorage } from '../lab/persist';
import { LANGS, parseLang, parseTheme, type Lang, type PlaygroundState, type Theme } from '../state/url';
import { browserLang, isLoaded, loadLang, setPlaygroundLang } from '../i18n/locale';
import { errorText, progressLabel } from '../i18n/engine-text';
import { pageText } from '../i18n/page-text';
import { PlaygroundStore } from '../state/store';
import './tp-progress';
import { PlaygroundStateApi } from './playground-state-api';
import './tp-view-menu';
import type { ViewActionDetail } from './tp-view-menu';
import type { TpEmbedDialog } from './tp-embed-dialog';
import { isLocked } from '../state/locks';
import { applyAlone, partsOf } from '../views/alone';
import { parseHash } from '../state/url';
import { VIEW_NAMES, VIEWS, needsOf, viewNamed, viewsToDraw, viewsInOrder, type ViewDef } from '../views/registry';
import { KEEP_ROOM, reserveOf } from '../views/reserve';
import { DrawnViews } from '../views/drawn';
import { lazyInSight, loadViewIn, loaderOf } from '../views/load';
import { loadWhenSeen } from '../ui/lazy';
import { CHAPTER_NAMES, chapterNamed } from '../views/chapters';
import { chapterPage, keepInSight } from './tp-chapters';
import { embedSnippets, linkHash, modelLabel, settingsLabel } from '../state/share';
import { download, fileStem, svgToPng, viewToSvg, type Picture } from '../ui/export';
import { styles } from '../ui/shared';
import { afterNextPaint, nextFrame } from '../ui/frames';
import { playgroundStyles } from './playground-styles';
import { lessonEntry } from '../lessons/catalogue';
import { courseStart } from '../lessons/parts';
import { loadLessonPanel, opensLesson } from '../lessons/load';
import { lessonPresetOf } from '../lessons/implied';
import { HIDEABLE } from '../lessons/classroom';
import { trainRefusal } from '../state/locks';
import { loadProgress } from '../lessons/progress';
import { keepLessonState, lessonState } from '../lessons/lesson-state';
import { assignmentLessonHash } from '../lessons/assignment-link';
import type { RunRecord } from '../lab/types';
import { prefersReducedMotion, storedLang, storedTheme, storeLang, storeTheme } from '../ui/prefs';

export class TransformerPlayground extends PlaygroundStateApi {
  /** The words of the page around the element (its title, the offline line), in the page's language now. */
  static pageText = pageText;

  static properties = {
    model: { type: String },
    preset: { type: String },
    models: { type: String },
    noHash: { type: Boolean, attribute: 'no-hash' },
    views: { type: String },
    lesson: { type: String },
    projected: { state: true },
    chrome: { type: String },
    keep: { type: String },
  };

  /** The view shown alone on a projector ('' for none): see `project`. */
  projected = '';
  private wentFullscreen = false;

  /** `none`: each view's picture alone (../views/alone.ts); the link's `chrome` overrides it. */
  chrome = '';
  /** With chrome="none": the parts kept, comma-separated. */
  keep = '';

  /** A lesson to show (its preset applies), without the tour: one lesson in a blog post. */
  lesson = '';
  model = '';
  preset = '';
  models = '';
  noHash = false;
  views = '';

  private resolveReady!: () => void;
  /** Settles when the page first shows a real forward pass. */
  readonly ready: Promise<void> = new Promise((r) => (this.resolveReady = r));
  // The link followed is the event's: the store's own replaceState (after a model loads, say)
  // may rewrite location.hash between the navigation and this event, and must not undo it.
  private onHash = (e: HashChangeEvent) => void this.store?.applyHash(hashOf(e.newURL));

  /** The language the interface is drawn in now ('en' or 'zh-Hans'; the strings load before it changes). */
  get locale(): string {
    return this.langShown ?? this.language;
  }
  /** The language the settings ask for: the `lang` setting, else the browser's. */
  get language(): Lang {
    // Before the settings are read (the engine starts when the element comes into sight),
    // the language they will ask for.
    if (!this.store || !this.settled) return this.startLang();
    return this.store.st.lang ?? browserLang();
  }
  static styles = playgroundStyles;

  /** The views that have drawn their picture: each keeps its reserved room until then. */
  private readonly drawnViews = new DrawnViews(() => this.requestUpdate(), () => !!this.store?.gen.playing);

  /** The system asked for reduced motion when the element started. */
  reducedMotion = false;

  // ---------------------------------------------------------------- lifecycle

  /**
   * A redraw asked for while an input (a click, a key, a change) waits for its frame
   * waits until that frame has reached the screen: the click paints its own answer (the
   * switch it flipped) at once, and the views it sets off follow in a later frame. During
   * playback at full speed the redraws wait for the next frame. Any other redraw runs as
   * soon as the change is made, as usual.
   */
  protected override scheduleUpdate(): void | Promise<unknown> {
    if (this.inputPending) return afterNextPaint().then(() => super.scheduleUpdate());
    // Playback at full speed: tokens land faster than a screen shows frames, so each frame
    // draws every view once, with the latest token.
    const s = this.store;
    if (s?.gen.playing && s.st.speed === 0) return nextFrame().then(() => super.scheduleUpdate());
    return super.scheduleUpdate();
  }

  /** An input arrived and the frame after it has not been drawn yet. */
  private inputPending = false;
  private onInput = () => {
    if (this.inputPending) return;
    this.inputPending = true;
    void afterNextPaint().then(() => (this.inputPending = false));
  };

  protected willUpdate(): void {
    // The colour theme lives on the host, where every view's colours are inherited from.
    const t = this.store?.st.theme ?? 'auto';
    if (t === 'auto') this.removeAttribute('theme');
    else if (this.getAttribute('theme') !== t) this.setAttribute('theme', t);
    // The language: the strings switch (every component draws itself again), and the host
    // says which language it holds, for screen readers and for the fonts' choice of glyphs.
    // Each playground has its own language (../i18n/locale.ts): its parts draw in the
    // language of this attribute, set once the language's strings have loaded.
    const lang = this.language;
    if (!this.store || lang === this.langShown) return;
    if (!isLoaded(lang)) {
      // A widget that has not started (out of sight) loads no strings yet.
      if (this.running) void loadLang(lang).then(() => this.requestUpdate(), () => undefined);
      return;
    }
    this.langShown = lang;
    if (this.getAttribute('lang') !== lang) this.setAttribute('lang', lang);
    setPlaygroundLang(this, lang);
  }

  /** The language this playground is drawn in (null: not drawn yet). */
  private langShown: Lang | null = null;

  /** The reader chose a language (null: the browser's): it holds here, is remembered, and stays out of links. */
  private setLang(l: Lang | null) {
    storeLang(l);
    this.store?.setLang(l);
  }

  /** The reader chose a theme: it holds here, is remembered, and stays out of links. */
  private setTheme(t: Theme) {
    storeTheme(t);
    this.store?.setTheme(t);
  }

  connectedCallback(): void {
    super.connectedCallback();
    // The reader's own preferences: the theme they chose last (or the embedder's), and no
    // playback on load when their system asks for reduced motion (a link may still ask).
    this.reducedMotion = prefersReducedMotion();
    const store = new PlaygroundStore({
      engine: () => new EngineClient(),
      modelsBase: new URL(this.models || './models/', this.models ? document.baseURI : import.meta.url),
      model: this.model,
      preset: this.preset,
      views: this.views,
      defaults: {
        theme: parseTheme(this.getAttribute('theme') ?? '') ?? storedTheme(),
        lang: parseLang(this.getAttribute('lang') ?? '') ?? storedLang(),
        play: !this.reducedMotion,
        ...this.frameDefaults(),
      },
      hash: this.noHash
        ? null
        : {
            read: () => location.hash,
            write: (h) => history.replaceState(null, '', `${location.pathname}${location.search}${h ? `#${h}` : ''}`),
          },
      viewNames: VIEW_NAMES,
      chapterViews: (name) => chapterNamed(name)?.views,
      chapterNames: CHAPTER_NAMES,
      needsOf,
      changed: () => this.requestUpdate(),
      implied: (hash) => this.lessonPreset(hash),
      hideable: HIDEABLE,
      startLang: () => this.startLang(),
      lang: () => this.language,
    });
    this.store = store;
    this.lab = new LabRegistry({
      trainer: () => EngineClient.trainer(),
      useCheckpoint: (bytes, label, task, prompt) =>
        store.useCheckpoint(bytes, label, prompt ?? store.manifest.find((m) => m.task === task)?.default_prompt),
      // Only the lab draws runs, and it listens for this event (redrawing at most every
      // few frames): a chunk of training must not redraw every view of the page.
      changed: () => this.dispatchEvent(new CustomEvent('tp-runs-changed', { bubbles: true, composed: true })),
      storageFailed: (msg) => store.fail(new Error(msg)),
      storage: new IdbRunStorage(),
      refuse: (settings, defaults) => {
        const why = withLang(this.language, () => trainRefusal(store.st, settings, defaults));
        if (why) {
          store.lockNote = why;
          this.requestUpdate();
        }
        return why;
      },
    });
    if (!this.noHash) window.addEventListener('hashchange', this.onHash);
    document.addEventListener('fullscreenchange', this.onFullscreen);
    for (const type of INPUTS) this.addEventListener(type, this.onInput, { capture: true, passive: true });
    this.startWhenNear(store);
  }

  /** Waits for the element to come near the viewport before the engine starts. */
  private near: IntersectionObserver | null = null;

  /**
   * Start the engine when the element comes within a screen's height of the viewport (a
   * widget further down a post costs nothing until the reader scrolls towards it), or at
   * once with `load="eager"`.
   */
  private startWhenNear(store: PlaygroundStore): void {
    if (this.getAttribute('load') === 'eager' || typeof IntersectionObserver === 'undefined') {
      void this.run(store);
      return;
    }
    this.near = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting) || this.store !== store) return;
        this.near?.disconnect();
        this.near = null;
        void this.run(store);
      },
      { rootMargin: '100% 0px' },
    );
    this.near.observe(this);
  }

  /** The engine has been asked to start (the element came into sight, or `load="eager"`). */
  private running = false;
  /** The settings have been read and the model loaded: the language is the settings'. */
  private settled = false;

  /** The `chrome` and `keep` attributes as settings (read as a link's `chrome=` and `keep=`). */
  private frameDefaults(): Partial<PlaygroundState> {
    const q = new URLSearchParams();
    if (this.chrome) q.set('chrome', this.chrome);
    if (this.keep) q.set('keep', this.keep.replace(/\s+/g, ''));
    const { chrome, keep } = parseHash(q.toString()).state;
    return this.chrome || this.keep ? { chrome, keep } : {};
  }

  private async run(store: PlaygroundStore) {
    this.running = true;
    try {
      // A page opened on a lesson fetches the lesson panel beside the engine; the strings of
      // the language first, so that what the start says (notes about the link, progress) is in it.
      const panel = opensLesson(`${this.noHash ? '' : location.hash}&${this.preset}`, this.lesson) ? loadLessonPanel().catch(() => undefined) : null;
      await loadLang(this.startLang()).catch(() => undefined);
      await store.start();
      await panel;
      this.settled = true;
      await this.updateComplete;
      // The views in sight whose code is fetched when first seen are drawn too.
      await Promise.all(lazyInSight(this.renderRoot).map((v) => this.loadView(v).catch(() => undefined)));
      store.drawn();
      this.resolveReady();
      this.dispatchEvent(new CustomEvent('tp-ready', { detail: { ms: store.readyMs } }));
      await store.autoplay();
    } catch (e) {
      store.fail(e);
    }
  }

  /** The language the settings will ask for, before they are parsed: the link's, the preset's, the element's, the reader's, the browser's. */
  private startLang(): Lang {
    const from = (settings: string) => parseLang(new URLSearchParams(settings.replace(/^#/, '')).get('lang') ?? '');
    let fromHash: Lang | undefined;
    try {
      fromHash = this.noHash ? undefined : from(location.hash);
    } catch {
      fromHash = undefined;
    }
    return fromHash ?? from(this.preset) ?? parseLang(this.getAttribute('lang') ?? '') ?? storedLang() ?? browserLang();
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.drawnViews.stop();
    this.near?.disconnect();
    this.near = null;
    this.langShown = null;
    this.settled = false;
    setPlaygroundLang(this, null);
    window.removeEventListener('hashchange', this.onHash);
    document.removeEventListener('fullscreenchange', this.onFullscreen);
    for (const type of INPUTS) this.removeEventListener(type, this.onInput, { capture: true });
    this.store?.stop();
    this.lab?.close();
  }

  // ---------------------------------------------------------------- lessons

  /**
   * A lesson's preset, implied by `lesson=<id>` in the link (or by the `lesson` attribute,
   * which the link may not change): in a Chinese page, its Chinese one (../lessons/zh-presets.ts).
   */
  private lessonPreset(hash: string): string {
    return lessonPresetOf(hash, this.lesson, () => this.startLang());
  }

  /** Open a lesson ('' closes it and goes back to the free playground). */
  openLesson(id: string): void {
    const s = this.store;
    if (!s) return;
    // Leaving a lesson keeps where it stood; opening one returns to where it was left,
    // else starts from its own preset; closing keeps what the learner changed.
    if (s.st.lesson) keepLessonState(s.st.lesson, { hash: s.hash });
    const rest = new URLSearchParams(s.hash);
    rest.delete('lesson');
    // In an assignment, the assignment's keys (its lessons, language, locks, …) go along.
    const hash = id
      ? s.st.lessons.length
        ? assignmentLessonHash(s.hash, id, lessonState(id)?.hash, s.st.lock)
        : (lessonState(id)?.hash ?? `lesson=${encodeURIComponent(id)}`)
      : rest.toString();
    if (this.noHash) void s.applyHash(hash);
    else location.hash = hash;
  }

  /** The lesson the tour starts from: the one seen last, else the first. */
  private courseLesson(): string {
    return lessonEntry(loadProgress().last)?.id ?? courseStart();
  }

  /** Start the course: the lessons' tour, from the lesson seen last. */
  private startCourse(): void {
    this.openLesson(this.courseLesson());
  }

  // ---------------------------------------------------------------- chapters

  /** The page below the bar: the overview, the chapter bar, the open chapter's heading and views. */
  private chapters(s: PlaygroundStore, shown: string[]) {
    const lessons = !s.st.lesson && !s.st.lock.length && !s.st.hide.includes('lessons');
    return chapterPage(s, viewsInOrder(s, shown), (v) => this.frame(v, s), lessons ? `#lesson=${encodeURIComponent(this.courseLesson())}` : '');
  }

  /**
   * Open a chapter in place, below the overview, and bring its view `view` into sight (the
   * chapter's heading when '' or not shown). Where the settings name the views (`views=`),
   * the chapter's views are added to them instead.
   */
  async openChapter(chapter: string, view = ''): Promise<void> {
    const s = this.store;
    if (!s) return;
    const c = chapterNamed(chapter);
    if (s.chaptered) await s.patch({ chapter });
    else if (c) await s.patch({ views: [...new Set([...s.st.views.filter((v) => v === 'overview'), ...c.views])] });
    await this.updateComplete;
    const root = this.renderRoot;
    const target = (view && root.querySelector<HTMLElement>(`.view[data-view="${view}"]`)) || root.querySelector<HTMLElement>('[data-chapter-head]');
    root.querySelector<HTMLElement>('[data-chapter-head]')?.focus({ preventScroll: true });
    if (target) keepInSight(target, this.reducedMotion);
    if (view && s.shows(view)) await this.loadView(view);
  }

  /** The teacher page beside this script, starting from the settings as they are now. */
  private teacherLink(s: PlaygroundStore): string {
    const here = import.meta.url;
    const page = new URL('./teacher.html', here);
    page.hash = s.hash;
    return page.href;
  }

  /** The lesson panel, above the views. */
  private lessonPanel(s: PlaygroundStore) {
    void loadLessonPanel().catch(() => undefined);
    const classroom = s.st.lock.length > 0 || s.st.hide.length > 0;
    return html`<tp-lesson
      class="wide"
      lesson-id=${s.st.lesson}
      .tour=${!this.lesson && !classroom && !s.st.hide.includes('lessons')}
      .store=${s}
      .version=${++this.version}
      .findView=${(tag: string) => this.renderRoot.querySelector<HTMLElement>(`.view > ${tag}`)}
      .runs=${this.lessonRuns}
      @tp-lesson-open=${(e: CustomEvent<string>) => this.openLesson(e.detail)}
    ></tp-lesson>`;
  }

  private version = 0;
  /** The lab's runs, for an assignment's completion code. */
  private lessonRuns = (): readonly RunRecord[] => this.lab?.runs ?? [];

  // ---------------------------------------------------------------- pictures and links

  /** The drawn element of a registered view, or null when it is not shown. */
  private viewElement(name: string): HTMLElement | null {
    const v = viewNamed(name);
    return v ? this.renderRoot.querySelector<HTMLElement>(`.view[data-view="${name}"] > ${v.tag}`) : null;
  }

  /**
   * A view as drawn now, as an SVG picture with a caption (its title, the model, the
   * settings). Part of the scripting API; the SVG and PNG buttons under each view use it.
   */
  picture(name: string): Picture {
    const s = this.store;
    const v = viewNamed(name);
    const el = this.viewElement(name);
    if (!s || !v || !el) throw new Error(`the view ${name} is not shown`);
    // A view whose code is fetched when it first comes into sight has nothing to draw before.
    if (!customElements.get(v.tag)) throw new Error(`the view ${name} has not loaded yet (it loads when first scrolled into sight, or await loadView('${name}'))`);
    return viewToSvg(el, { title: v.title, model: modelLabel(s.st, s.manifest), settings: settingsLabel(s.st) });
  }

  /** Fetch the view `name`'s code now (else fetched when first seen, ../views/load.ts); settles once drawn. Scripting API. */
  async loadView(name: string): Promise<void> {
    const v = viewNamed(name);
    if (!v) throw new Error(`there is no view ${name}`);
    await loadViewIn(this, name, v.tag);
  }

  /** A link that opens the playground on this view alone, with every setting as it is now. */
  linkTo(name: string): string {
    const s = this.store;
    if (!s) throw new Error('the playground has not started');
    // The folder of this script, where index.html is. (Vite rewrites `new URL('…',
    // import.meta.url)` with a literal path as an asset import, hence the variable.)
    const here = import.meta.url;
    const page = new URL('./', here);
    page.hash = linkHash(s.st, name);
    return page.href;
  }

  /** Save a view's picture; what to say about it ('' when it went well). */
  private async save(v: ViewDef, kind: 'svg' | 'png'): Promise<string> {
    try {
      const p = this.picture(v.name);
      const stem = fileStem(v.name, this.store?.st.model ?? '');
      if (kind === 'svg') download(new Blob([p.svg], { type: 'image/svg+xml' }), `${stem}.svg`);
      else download(await svgToPng(p), `${stem}.png`);
      return '';
    } catch (e) {
      return msg(str`Could not make the picture: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Copy a view's link; what to say (with no clipboard, the link itself, to copy by hand). */
  private async copyLink(v: ViewDef): Promise<string> {
    const link = this.linkTo(v.name);
    try {
      await navigator.clipboard.writeText(link);
      return msg('Link copied.');
    } catch {
      // No clipboard (permissions, an insecure page): show the link to copy by hand.
      return link;
    }
  }

  /**
   * The snippets that embed this view in a post as it is now: the script and the element,
   * and an iframe of embed.html (the picture alone, or the full view). Scripting API.
   */
  embedSnippet(name: string, opts: { alone?: boolean; keep?: string[]; height?: number } = {}): { element: string; iframe: string } {
    const s = this.store;
    const v = viewNamed(name);
    if (!s || !v) throw new Error(`no view ${name}`);
    const here = import.meta.url;
    // The built folder's module is playground.js with embed.html beside it; the npm package's
    // module (or a site's bundle of it) has none: the element form alone, loading that module.
    const folder = new URL(here).pathname.endsWith('/playground.js');
    const lang = this.locale === 'zh-Hans' ? 'zh-Hans' : null;
    // The lab's picture is its runs' curves: its embed carries the form's run (`train=…`), which trains on load alone.
    const lab = v.name === 'lab' && !s.st.train ? (this.renderRoot.querySelector('tp-lab') as { formLink?: string } | null)?.formLink : '';
    return embedSnippets(lab ? { ...s.st, train: lab } : s.st, v.name, {
      script: folder ? new URL('./playground.js', here).href : here,
      page: folder ? new URL('./embed.html', here).href : '',
      models: this.models ? s.modelsBase.href : '',
      resize: new URL('./iframe-resize.js', here).href,
      keep: opts.alone === false ? null : (opts.keep ?? []),
      lang,
      generated: s.gen.generated.length,
      playing: s.gen.playing,
      height: opts.height ?? this.renderRoot.querySelector(`.view[data-view="${v.name}"]`)?.getBoundingClientRect().height ?? 0,
      room: this.embedRoom(s, v.name, opts.alone !== false, opts.keep ?? []),
      title: v.title,
    });
  }

  /** The room an embed of this view reserves in the post: the larger of its wide and narrow rooms (../views/reserve.ts). */
  private embedRoom(s: PlaygroundStore, view: string, alone: boolean, keep: string[]): number {
    const still = !s.st.play && !s.gen.playing && s.gen.generated.length === 0;
    const r = reserveOf(view, this.arch(s), alone ? { keep, play: !still, text: s.st.text, max: s.st.max } : null);
    return r ? Math.max(r.wide, r.narrow) : 0;
  }

  /** Open the embed dialog of a view (its code is fetched when first opened). */
  private async embed(v: ViewDef): Promise<void> {
    await import('./tp-embed-dialog');
    let d = this.renderRoot.querySelector<TpEmbedDialog>('tp-embed-dialog');
    if (!d) {
      d = document.createElement('tp-embed-dialog') as TpEmbedDialog;
      this.renderRoot.append(d);
    }
    const height = this.renderRoot.querySelector(`.view[data-view="${v.name}"]`)?.getBoundingClientRect().height ?? 0;
    d.request = { title: v.title, height, parts: partsOf(v.name), make: (alone, h, keep) => this.embedSnippet(v.name, { alone, keep: [...keep], height: h || height }) };
    d.keep = [];
    void d.show();
  }

  /** A choice of a view's "⋯" menu. */
  private async act(v: ViewDef, e: CustomEvent<ViewActionDetail>) {
    const { action, reply } = e.detail;
    if (action === 'projector') {
      reply('');
      await this.project(v.name);
      return;
    }
    if (action === 'embed') return void this.embed(v);
    reply(action === 'link' ? await this.copyLink(v) : await this.save(v, action));
  }

  // ---------------------------------------------------------------- projector

  /**
   * Show the view `name` alone, over the whole screen in large type, with the class link
   * (the page as it stands, classroom locks and all) and its QR code in a corner for those
   * who come in late; '' goes back to the page. Full screen where the browser allows it
   * (after a click); leaving full screen leaves the projector view too.
   */
  async project(name: string): Promise<void> {
    if (name && !viewNamed(name)) throw new Error(`there is no view ${name}`);
    if (name) await Promise.all([import('./tp-projector'), this.loadView(name)]);
    this.projected = name;
    await this.updateComplete;
    if (name) {
      const box = this.renderRoot.querySelector<HTMLElement>('[data-projector]');
      box?.querySelector<HTMLElement>('[data-projector-close]')?.focus();
      try {
        await box?.requestFullscreen?.();
        this.wentFullscreen = document.fullscreenElement !== null;
      } catch {
        // No full screen without a click (or in a frame that does not allow it): the view fills the window.
        this.wentFullscreen = false;
      }
    } else if (this.wentFullscreen && document.fullscreenElement) {
      this.wentFullscreen = false;
      await document.exitFullscreen().catch(() => undefined);
    }
  }

  private onFullscreen = () => {
    if (this.wentFullscreen && !document.fullscreenElement && this.projected) {
      this.wentFullscreen = false;
      void this.project('');
    }
  };

  /** The class link the projector's corner shows: the page's link as it stands. */
  private classLink(name: string): string {
    return this.noHash ? this.linkTo(name) : location.href;
  }

  /** One view over the whole screen, in large type, with the class link and its QR code. */
  private projector(s: PlaygroundStore, name: string) {
    const v = viewNamed(name)!;
    // Type as large as the screen allows, leaving the corner for the QR code.
    const zoom = Math.min(2.2, Math.max(1.2, (window.innerWidth - 260) / 680));
    return html`<div
      class="projector"
      data-projector=${name}
      role="dialog"
      aria-modal="true"
      aria-label=${msg(str`${v.title}, on a projector`, { id: 'projector.label' })}
      @keydown=${(e: KeyboardEvent) => e.key === 'Escape' && void this.project('')}
    >
      <div class="projector-stage" style=${styles(`zoom: ${zoom.toFixed(2)}`)}>${this.frame(v, s)}</div>
      <div class="projector-side">
        <button data-projector-close @click=${() => void this.project('')}>${msg('Back to the page (Esc)', { id: 'projector.close' })}</button>
        <tp-projector-link .link=${this.classLink(name)}></tp-projector-link>
      </div>
    </div>`;
  }

  /**
   * A registered view in its frame: the view draws its own card and title row; the frame
   * puts the one "⋯" menu (pictures, link) at the end of that row. The menu is left out of
   * the view's exported pictures.
   */
  private frame(v: ViewDef, s: PlaygroundStore) {
    const alone = s.st.chrome === 'none';
    const r = reserveOf(v.name, this.arch(s), alone ? s.st : null);
    // The room is kept until the view has drawn its picture, not only until the first pass (../views/drawn.ts).
    const waiting = r && (!s.lastForward || !this.drawnViews.has(v.name));
    // Shown alone, a picture that grows holds its own box (the length the generation reaches).
    const room = r && (waiting || (KEEP_ROOM.has(v.name) && !alone));
    return html`<div
      class="view"
      data-view=${v.name}
      ?data-alone=${alone}
      ?data-playing=${s.gen.playing}
      ?data-waiting=${!!room}
      style=${styles(room ? `--tp-reserve-wide: ${r.wide}px; --tp-reserve-narrow: ${r.narrow}px` : '')}
      ${loadWhenSeen(loaderOf(v.name), () => this.requestUpdate())}
    >
      ${v.render(s)}
      ${alone && !s.st.keep.includes('menu')
        ? nothing
        : html`<tp-view-menu data-export-skip .heading=${v.title} @tp-view-action=${(e: CustomEvent<ViewActionDetail>) => void this.act(v, e)}></tp-view-menu>`}
    </div>`;
  }

  /**
   * The views to draw, each in its frame. Before the engine first answers, a view that
   * waits for the model to say whether it applies (generation, for one) holds its place
   * as an empty frame of its size, so nothing below it jumps when it appears.
   */
  private frames(s: PlaygroundStore, shown: readonly string[]) {
    if (s.lastForward) return viewsToDraw(s, shown).map((v) => this.frame(v, s));
    const drawn = new Set(viewsToDraw(s, shown).map((v) => v.name));
    return VIEWS.filter((v) => shown.includes(v.name)).map((v) =>
      drawn.has(v.name)
        ? this.frame(v, s)
        : html`<div class="view" data-view-placeholder=${v.name} data-waiting style=${styles(`--tp-reserve-wide: ${reserveOf(v.name, this.arch(s), s.st.chrome === 'none' ? s.st : null)?.wide ?? 0}px; --tp-reserve-narrow: ${reserveOf(v.name, this.arch(s), s.st.chrome === 'none' ? s.st : null)?.narrow ?? 0}px`)}></div>`,
    );
  }

  /** Shown alone (`chrome=none`), each view's element carries the sheet that leaves out what is not kept. */
  protected updated(): void {
    const s = this.store;
    if (!s) return;
    if (s.lastForward) this.drawnViews.look(this.renderRoot);
    const keep = s.st.chrome === 'none' ? s.st.keep : null;
    for (const f of this.renderRoot.querySelectorAll<HTMLElement>('.view[data-view]')) {
      const el = f.firstElementChild;
      if (el && f.dataset.view) applyAlone(el, f.dataset.view, keep);
    }
  }

  /** The kind of the model loaded or being loaded (its manifest entry says it before the engine answers). */
  private arch(s: PlaygroundStore): Arch {
    return s.info?.arch ?? s.manifest.find((m) => m.file === s.st.model)?.arch ?? 'decoder_only';
  }

  /** Page-wide preferences above the controls: the colour theme and the language. */
  private bar(s: PlaygroundStore) {
    const still = this.reducedMotion && !s.gen.playing && s.gen.generated.length === 0 && s.canGenerate();
    return html`<div class="bar wide">
      ${still ? html`<span class="hint" data-reduced-motion>${msg('Your system asks for reduced motion, so generation waits for Play.')}</span>` : nothing}
      ${!s.st.lesson && !s.st.hide.includes('lessons')
        ? s.chaptered
          ? html`<button class="primary" data-tour="start" @click=${() => this.startCourse()}>${msg('Start the course', { id: 'tour.start-course' })}</button>`
          : html`<button data-tour="start" @click=${() => this.startCourse()}>${msg('Lessons', { id: 'tour.start' })}</button>`
        : nothing}
      ${this.noHash || s.st.lock.length || s.st.hide.includes('lessons')
        ? nothing
        : html`<a class="secondary" data-teacher-link href=${this.teacherLink(s)}>${msg('For teachers: a link for your class', { id: 'tour.teacher-link' })}</a>`}
      ${s.st.hide.includes('model') || isLocked(s.st, 'model')
        ? nothing
        : html`<button data-load-open @click=${() => void this.openModelLoader()}>${msg('Load a model…', { id: 'load.open' })}</button>`}
      <label
        >${msg('Language')}
        <select
          data-lang-switch
          aria-label=${msg('language of the interface')}
          @change=${(e: Event) => {
            const v = (e.target as HTMLSelectElement).value;
            this.setLang(v === 'auto' ? null : (parseLang(v) ?? null));
          }}
        >
          <option value="auto" ?selected=${s.st.lang === null}>${msg('as the browser')}</option>
          ${LANGS.map((l) => html`<option value=${l} lang=${l} ?selected=${s.st.lang === l}>${LANG_NAMES[l]}</option>`)}
        </select></label
      >
      ${s.st.hide.includes('colours') ? nothing : html`<label
        >${msg('Colours')}
        <select
          aria-label=${msg('colour theme')}
          @change=${(e: Event) => this.setTheme((e.target as HTMLSelectElement).value as Theme)}
        >
          ${(['auto', 'light', 'dark'] as const).map(
            (t) =>
              html`<option value=${t} ?selected=${s.st.theme === t}>
                ${t === 'auto' ? msg('as the system') : t === 'light' ? msg('light') : msg('dark')}
              </option>`,
          )}
        </select></label
      >`}
    </div>`;
  }

  render() {
    const s = this.store;
    if (!s) return nothing;
    if (s.error && !s.info) return html`<div class="error" role="alert">${msg(str`The playground could not start: ${errorText(s.error)}`)}</div>`;
    if (this.projected && viewNamed(this.projected)) return this.projector(s, this.projected);
    const shown = s.shownViews;
    const p = s.progress;
    return html`<div
      class="layout ${shown.length === 1 ? 'single' : ''}"
      @tp-open-chapter=${(e: CustomEvent<{ chapter: string; view: string }>) => void this.openChapter(e.detail.chapter, e.detail.view)}
      @tp-start-course=${() => this.startCourse()}
    >
      ${p
        ? html`<tp-progress
            class="wide overlay"
            data-progress=${p.phase}
            .label=${progressLabel(p.label)}
            .done=${p.done}
            .total=${p.total ?? Number.NaN}
            .unit=${p.phase === 'download' ? 'bytes' : 'steps'}
            .since=${p.since}
          ></tp-progress>`
        : nothing}
      ${s.notes.length
        ? html`<div class="notes wide" role="status" data-notes>
            <button @click=${() => s.dismissNotes()} aria-label=${msg('dismiss the notes')}>×</button>
            <strong>${msg('Some settings in the link were not used:')}</strong>
            <ul>
              ${s.notes.map((n) => html`<li>${n}</li>`)}
            </ul>
          </div>`
        : nothing}
      ${s.engineNote
        ? html`<div class="notes wide" role="status" data-engine-note>
            <button @click=${() => s.dismissEngineNote()} aria-label=${msg('dismiss')}>×</button>
            ${s.engineNote}
          </div>`
        : nothing}
      ${s.error ? html`<div class="error wide" role="alert">${errorText(s.error)}</div>` : nothing}
      ${s.lockNote
        ? html`<div class="notes wide" role="status" data-lock-note>
            <button @click=${() => ((s.lockNote = ''), this.requestUpdate())} aria-label=${msg('dismiss', { id: 'teacher.dismiss' })}>×</button>
            ${s.lockNote}
          </div>`
        : nothing}
      ${(s.chaptered || s.shows('controls')) && s.st.chrome !== 'none' ? this.bar(s) : nothing}
      ${s.st.lesson && s.st.chrome !== 'none' ? this.lessonPanel(s) : nothing}
      ${s.chaptered ? this.chapters(s, shown) : this.frames(s, shown)}
    </div>`;
  }
}

/** The events that are a reader's input (their frame is drawn before the views they set off). */
const INPUTS = ['pointerdown', 'click', 'keydown', 'input', 'change'] as const;

/** The hash (with its `#`, or '') of a URL an event names; the page's own when it cannot be read. */
function hashOf(url: string): string {
  try {
    return new URL(url).hash;
  } catch {
    return location.hash;
  }
}

/** Each language's name in itself, as a language menu shows it. */
const LANG_NAMES: Record<Lang, string> = { en: 'English', 'zh-Hans': '简体中文' };

customElements.define('transformer-playground', TransformerPlayground);

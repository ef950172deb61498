// The generation loop: play, pause and step over the engine's streaming steps, with the
// page's own timings. No DOM here: the runner tells its host about every change, and the
// host draws.

import type { EngineClient } from '../engine/client';
import type { BeamStep, GenerateStartRequest, GenerateStep, SampleDraw } from '../engine/protocol';

export interface GenStats {
  /** Page-measured: from the start request to the first token. */
  ttftMs: number | null;
  /** Engine-measured mean time of the decode steps (the first step, the prefill, excluded). */
  engineMsPerToken: number | null;
  /** Page-measured mean time between tokens, pauses excluded. */
  wallMsPerToken: number | null;
  /** Engine-measured time of the first step: the whole prompt at once, then a choice. */
  prefillMs: number | null;
  /** FLOPs of every step so far, as the engine counted them. */
  totalFlops: number;
  /** Tokens run through the model so far (with the cache: each once; without: again every step). */
  totalFed: number;
}

const NO_STATS: GenStats = { ttftMs: null, engineMsPerToken: null, wallMsPerToken: null, prefillMs: null, totalFlops: 0, totalFed: 0 };

export interface GenerationHost {
  engine(): EngineClient;
  /** What a fresh generation starts from, or null when the model cannot generate. */
  request(): GenerateStartRequest | null;
  /** Pause between tokens, in milliseconds. */
  pauseMs(): number;
  /** The runner's public state changed. */
  changed(): void;
  /** A step landed; the host redraws its traces before the next step runs. */
  afterStep(): Promise<void>;
  /** A failure that is not about the settings. */
  failed(e: unknown): void;
}

/** At full speed, the views' traces are refreshed at most this often (and after the last step). */
const FAST_REFRESH_MS = 100;
/**
 * At full speed, steps are asked for ahead (they wait in the engine's queue) up to one
 * frame's worth of the engine's own step time, and never more than AHEAD: a small model
 * runs sixteen steps while the page draws, a large one still stops where it is paused.
 */
const AHEAD = 16;
const AHEAD_MS = 16;
const ahead = (engineMs: number | null): number =>
  engineMs === null ? 2 : Math.max(1, Math.min(AHEAD, Math.floor(AHEAD_MS / Math.max(engineMs, 1e-3))));

/** A step as the engine answered it: the step, or why it failed; `at`: when it was asked for. */
type Answer = { at: number; step: GenerateStep; error?: undefined } | { at: number; step?: undefined; error: unknown };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export class GenerationRunner {
  /** Generated ids (for beam search: the best hypothesis's). */
  generated: number[] = [];
  playing = false;
  done = false;
  step: GenerateStep | null = null;
  /** Beam search: every step's beam, in order (the beam tree). */
  beamSteps: BeamStep[] = [];
  /** Sampling: every step's draw (the core's `Step.draw`), in order; null for a step that drew nothing. */
  draws: (SampleDraw | null)[] = [];
  /** Why generation cannot run with the current settings ('' when it can). */
  note = '';
  stats: GenStats = NO_STATS;

  /** Bumped by every reset: a loop or step of an older run drops its result. */
  private run = 0;
  private started = false;
  private t0 = 0;
  private stepTimes: number[] = [];
  private engineTimes: number[] = [];

  constructor(private host: GenerationHost) {}

  /** Forget the current generation; a running loop stops at its next step. */
  reset(): void {
    this.run++;
    this.started = false;
    this.playing = false;
    this.note = '';
    this.generated = [];
    this.done = false;
    this.step = null;
    this.beamSteps = [];
    this.draws = [];
    this.stepTimes = [];
    this.engineTimes = [];
    this.stats = NO_STATS;
    this.taken = 0;
    this.limit = Infinity;
    this.lastAnswer = 0;
    this.host.changed();
  }

  /** Start from the host's request; with `play`, keep stepping until done or paused. */
  async start(play: boolean): Promise<void> {
    this.reset();
    const req = this.host.request();
    if (!req) return;
    const run = this.run;
    this.limit = req.max_new_tokens;
    const t0 = performance.now();
    try {
      const started = await this.host.engine().call('generateStart', req);
      // A mask the KV cache cannot hold: every step recomputes the prefix, and the page says so.
      if (run === this.run && started.recompute) this.note = started.recompute;
    } catch (e) {
      // Settings generation cannot run with (no causal mask, a full context): say why.
      if (run === this.run) {
        this.note = e instanceof Error ? e.message : String(e);
        this.host.changed();
      }
      return;
    }
    if (run !== this.run) return;
    this.started = true;
    this.t0 = t0;
    this.playing = play;
    this.host.changed();
    if (play) await this.loop(run);
  }

  pause(): void {
    this.playing = false;
    this.host.changed();
  }

  /** Play: carry on, or start again once finished. */
  async play(): Promise<void> {
    if (!this.started || this.done) return this.start(true);
    this.playing = true;
    this.host.changed();
    await this.loop(this.run);
  }

  /** One token while paused (starting first if needed). */
  async stepOne(): Promise<void> {
    if (this.playing) return;
    if (!this.started || this.done) await this.start(false);
    if (this.started) await this.advance(this.run);
  }

  private async loop(run: number): Promise<void> {
    // Steps asked for and not yet taken, oldest first. At full speed a few wait in the
    // engine's queue, so the engine never idles while the page draws; with a pause, one.
    const asked: Promise<Answer>[] = [];
    let ok = true;
    while (this.playing && run === this.run && !this.done) {
      const pause = this.host.pauseMs();
      const depth = pause > 0 ? 1 : ahead(this.stats.engineMsPerToken);
      while (asked.length < depth && this.taken + asked.length < this.limit) asked.push(this.ask());
      ok = await this.take(run, await asked.shift()!, pause > 0);
      if (pause > 0) await sleep(pause);
    }
    // The steps already asked for have run in the engine: the page shows them too, so a
    // pause at full speed lands up to a frame's worth of steps later than it was pressed. (Past the
    // last step the engine answers with an error, which is dropped.)
    while (asked.length) {
      const a = await asked.shift()!;
      if (ok && run === this.run && !this.done) ok = await this.take(run, a, false);
    }
    // The views show the last step before playback counts as ended.
    this.wake?.();
    if (this.refreshing) await this.refreshing;
    if (run === this.run && this.playing) {
      this.playing = false;
      this.host.changed();
    }
  }

  /**
   * At full speed (no pause) the views follow the steps without holding them back: one
   * refresh at a time, at most one per `FAST_REFRESH_MS`, and always one for the last
   * step, so no step waits for a redraw and the last one is always drawn.
   */
  private refreshSoon(): void {
    this.again = true;
    if (this.refreshing) return;
    const go = async () => {
      try {
        while (this.again) {
          const wait = this.lastRefresh + FAST_REFRESH_MS - performance.now();
          if (wait > 0 && this.playing && !this.done)
            await new Promise<void>((r) => {
              this.wake = r;
              setTimeout(r, wait);
            });
          this.wake = null;
          this.again = false;
          this.lastRefresh = performance.now();
          await this.host.afterStep();
        }
      } finally {
        this.refreshing = null;
      }
    };
    this.refreshing = go();
  }

  /** The full-speed refresh in flight, whether a newer step asked for another, and when the last began. */
  private refreshing: Promise<void> | null = null;
  private again = false;
  private lastRefresh = 0;
  /** Ends the full-speed refresh's wait early (playback ended: draw the last step now). */
  private wake: (() => void) | null = null;

  /** At full speed the runner's own state (the tokens, the timings) is told once per frame. */
  private changedSoon(): void {
    if (this.frame) return;
    this.frame = true;
    const tell = () => {
      this.frame = false;
      this.host.changed();
    };
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(tell);
    else setTimeout(tell, 16);
  }

  private frame = false;

  /** One step: asked for, then taken. With `wait`, the host's refresh of the views runs before it returns. */
  private async advance(run: number, wait = true): Promise<void> {
    await this.take(run, await this.ask(), wait);
  }

  /** Asks the engine for the next step; the answer never rejects (a failure is part of it). */
  private ask(): Promise<Answer> {
    const at = performance.now();
    return this.host
      .engine()
      .call('generateStep', {})
      .then(
        (r): Answer => {
          // The page's generations are traced (it draws their attention): the full record.
          if (!('attention' in r.step)) return { at, error: new Error('the engine answered a traced generation with a compact step') };
          return { at, step: r as GenerateStep };
        },
        (error: unknown): Answer => ({ at, error }),
      );
  }

  /**
   * Takes one answered step into the runner's state; with `wait`, the views are refreshed
   * before it returns. False when the step failed (the host was told).
   */
  private async take(run: number, a: Answer, wait: boolean): Promise<boolean> {
    if (run !== this.run) return true;
    if (!a.step) {
      this.playing = false;
      this.host.failed(a.error);
      return false;
    }
    const step = a.step;
    this.taken += 1;
    const now = performance.now();
    // A step's time runs from its request, or from the answer before it when it waited in the queue.
    const from = Math.max(a.at, this.lastAnswer);
    this.lastAnswer = now;
    if (this.stats.ttftMs === null) this.stats = { ...this.stats, ttftMs: now - this.t0, prefillMs: step.step.wall_ms };
    else this.stepTimes.push(now - from);
    if (step.step.index > 0) this.engineTimes.push(step.step.wall_ms);
    this.step = step;
    if (step.step.beam) this.beamSteps = [...this.beamSteps, step.step.beam];
    this.draws = [...this.draws, step.step.draw];
    this.generated = step.generated;
    this.done = step.done;
    this.stats = {
      ...this.stats,
      engineMsPerToken: mean(this.engineTimes),
      wallMsPerToken: mean(this.stepTimes),
      totalFlops: this.stats.totalFlops + step.step.flops,
      totalFed: this.stats.totalFed + step.step.fed,
    };
    if (wait) {
      this.host.changed();
      await this.host.afterStep();
    } else {
      this.changedSoon();
      this.refreshSoon();
    }
    return true;
  }

  /** Steps taken in this run, the run's step limit, and when the last answer came. */
  private taken = 0;
  private limit = Infinity;
  private lastAnswer = 0;
}

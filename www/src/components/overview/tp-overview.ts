// <tp-overview>: the running model as one picture, drawn from the core's layer plan for the
// current input. Token chips → the embedding (with the positions where the model adds them)
// → each stack, with one of its layers drawn in full in the order it runs (the norm before
// or after each sublayer as the plan places it, the residual adds, cross-attention reading
// the encoder) and every layer as a chip below → the final norm → the output: the next-token
// probabilities and the token chosen, or a classifier's class probabilities, or a tagger's
// token per position. Every stage carries a small live picture of its tensor from the last
// forward pass (heads' attention maps, the FFN's hidden units, the residual stream's norms,
// the top probabilities), its numbers in data attributes (stages.ts says where each comes from), and is a button
// that opens the chapter explaining it (`tp-open-chapter`, detail `{ chapter, view }`).
// While the model generates, the newest token is marked along the way and each new token
// runs once through the stages (not under `prefers-reduced-motion`).

import { html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { msg, str } from '@lit/localize';
import { ifDefined } from 'lit/directives/if-defined.js';
import type { AttnSite, ForwardResult, LayerPlan, ModelInfo, Sampling, StackPlan } from '../../engine/protocol';
import { LocalizedElement } from '../../i18n/locale';
import { archName, stackName } from '../../i18n/terms';
import { emit, panel, styles } from '../../ui/shared';
import { fmt, showToken, tokenLang, viridis } from '../../ui/palette';
import { prefersReducedMotion } from '../../ui/prefs';
import {
  addsPositions,
  blockSteps,
  ffnTraceOf,
  headKind,
  positionsInAttention,
  realLength,
  residualNorms,
  shownLayer,
  stackIds,
  TARGETS,
  topOf,
  traceOf,
  type BlockStep,
  type StageKind,
} from './stages';
import { overviewStyles } from './styles';
import './tp-ov-heads';
import './tp-ov-ffn';
import { chapterNamed } from '../../views/chapters';

export class TpOverview extends LocalizedElement {
  static properties = {
    info: { attribute: false },
    plan: { attribute: false },
    forward: { attribute: false },
    modelTitle: { type: String },
    generated: { attribute: false },
    done: { type: Boolean },
    sampling: { attribute: false },
    classNames: { attribute: false },
    causal: { type: Boolean },
    text: { type: String },
    textLocked: { type: Boolean },
    shown: { state: true },
  };

  info: ModelInfo | null = null;
  plan: LayerPlan | null = null;
  /** The latest forward pass (its traces are what the stages draw). */
  forward: ForwardResult | null = null;
  modelTitle = '';
  /** The tokens generated so far (the newest is the last real position of row 0). */
  generated: readonly number[] = [];
  /** The generation has ended (nothing more is appended). */
  done = false;
  sampling: Sampling | null = null;
  classNames: readonly string[] = [];
  /** The main stack's self-attention is causal. */
  causal = true;
  /** The input text (the prompt, the source sentence or the classifier's input); edited here, it runs again. */
  text = '';
  /** A classroom link keeps the text as it set it. */
  textLocked = false;
  /** The layer drawn in full, per stack name (the reader picks it in the layer row). */
  shown: Record<string, number> = {};

  /** performance.now() when the first live picture was drawn (null until then); `data-first-live-ms` says the same. */
  firstLiveAt: number | null = null;
  private journeyOf = -1;

  static styles = [panel, overviewStyles];

  private open(kind: StageKind) {
    emit(this, 'tp-open-chapter', TARGETS[kind]);
  }

  /** A stage: a button that opens its chapter, with a title, a line on what it shows and its picture. */
  private stage(kind: StageKind, cls: string, title: string, caption: string, pic: TemplateResult | typeof nothing, attrs: { layer?: number; site?: string } = {}) {
    const t = TARGETS[kind];
    return html`<button
      class="stage ${cls}"
      data-stage=${kind}
      data-chapter=${t.chapter}
      data-view=${t.view}
      data-layer=${ifDefined(attrs.layer)}
      data-site=${ifDefined(attrs.site)}
      title=${caption}
      @click=${() => this.open(kind)}
    >
      <span class="t">${title}</span>
      <span class=${cls.includes('pill') ? 'visually-hidden' : 'c'}>${caption}</span>
      ${pic === nothing ? nothing : html`<span class="pic">${pic}</span>`}
      <span class="visually-hidden">${msg(str`Opens the chapter ${chapterTitle(t.chapter)}.`, { id: 'overview.opens' })}</span>
    </button>`;
  }

  // ---------------------------------------------------------------- pictures

  /** Token chips of a row, the newest marked. */
  private chips(ids: number[], newest: number, grows: boolean) {
    const v = this.info?.vocab ?? [];
    const pad = this.info?.pad ?? -1;
    return html`<span class="chips ${grows ? 'grows' : ''}">
      ${ids.map((id, i) =>
        id === pad && i >= realLength(ids, pad)
          ? nothing
          : html`<span class="chip ${i === newest ? 'new' : ''}" data-pos=${i} data-id=${id} lang=${ifDefined(tokenLang(v[id] ?? ''))}>${showToken(v[id] ?? `?${id}`)}</span>`,
      )}
    </span>`;
  }

  /** The residual stream's length at each position, a cell per position (viridis of ‖x‖ / max). */
  private strip(norms: number[], newest: number, label: string) {
    if (!norms.length) return html`<span class="strip" aria-hidden="true"></span>`;
    const max = Math.max(...norms.filter(Number.isFinite)) || 1;
    return html`<span class="strip" title=${label}>
      ${norms.map((n, i) => html`<span class=${i === newest ? 'new' : ''} data-pos=${i} data-norm=${n} style=${styles(`background:${viridis(n / max)}`)}></span>`)}
    </span>`;
  }

  /** Bars of the largest probabilities: token (or class name), bar, value; the box holds \`room\` rows from the start. */
  private bars(rows: [number, number][], label: (id: number) => string, attr: 'token' | 'class', room: number) {
    return html`<span class="bars" style=${styles(`min-height:calc(${room} * ${BAR_ROW}em + ${Math.max(0, room - 1) * 2}px)`)}>
      ${rows.map(
        ([id, p]) => html`<span class="tok" lang=${ifDefined(tokenLang(label(id)))}>${label(id)}</span>
          <span class="track"><span class="fill" style=${styles(`width:${100 * Math.min(1, p)}%;background:${viridis(0.25 + 0.7 * p)}`)}></span></span>
          <span class="num" data-token=${ifDefined(attr === 'token' ? id : undefined)} data-class=${ifDefined(attr === 'class' ? id : undefined)} data-prob=${p}>${fmt(p, 2)}</span>`,
      )}
    </span>`;
  }

  // ---------------------------------------------------------------- stages

  /** The newest position of a stack's row (−1 when nothing was generated yet or the stack reads the source). */
  private newest(stack: StackPlan): number {
    if (!this.generated.length || stack.input === 'source') return -1;
    const ids = stackIds(stack, this.forward);
    return realLength(ids, this.info?.pad ?? -1) - 1;
  }

  private tokensStage(stack: StackPlan) {
    const ids = stackIds(stack, this.forward);
    const source = stack.input === 'source';
    const enc = this.plan?.arch === 'encoder_decoder';
    const title = source ? msg('Source tokens') : enc ? msg('Target tokens') : msg('Tokens');
    const caption = source
      ? msg('The sentence to translate, one chip per token id.')
      : enc
        ? msg('What the decoder has written so far, from <bos>.')
        : msg('The text, split into tokens: one chip per token id.');
    // The tokens a decoder writes: their row holds its full room from the start (styles.ts, \`.chips.grows\`).
    const grows = !source && headKind(this.plan!, this.info!) === 'next';
    return this.stage('tokens', 'io', title, caption, this.chips(ids, this.newest(stack), grows), { site: stack.site });
  }

  private embeddingStage(stack: StackPlan) {
    const info = this.info!;
    const pos = info.pos_encoding;
    const caption = addsPositions(pos)
      ? msg(str`Each token becomes ${info.d_model} numbers, plus its position (${posName(pos)}). Bar: each vector's length.`)
      : positionsInAttention(pos)
        ? msg(str`Each token becomes ${info.d_model} numbers; positions act inside attention (${posName(pos)}). Bar: each vector's length.`)
        : msg(str`Each token becomes ${info.d_model} numbers, with no position at all. Bar: each vector's length.`);
    const title = addsPositions(pos) ? msg('Embedding + positions') : msg('Embedding');
    const norms = residualNorms(this.forward, stack.site, 0);
    return this.stage('embedding', 'io', title, caption, this.strip(norms, this.newest(stack), msg('length of each position vector entering the first layer')), { site: stack.site });
  }

  private step(stack: StackPlan, st: BlockStep, layer: number) {
    const info = this.info!;
    if (st.kind === 'norm') {
      const name = st.norm === 'batch_norm' ? msg('BatchNorm', { id: 'overview.batch-norm' }) : msg('LayerNorm', { id: 'overview.layer-norm' });
      const title = st.adds ? msg(str`Add & ${name}`) : name;
      const caption =
        st.norm === 'batch_norm'
          ? msg('Normalises each feature with statistics taken over the batch.')
          : st.placement === 'before'
            ? msg("Rescales each position's vector to mean 0 and variance 1 before the sublayer (pre-LN).")
            : msg("Adds the sublayer's input back, then rescales each vector to mean 0 and variance 1 (post-LN).");
      return this.stage('norm', 'pill', title, caption, nothing, { layer, site: stack.site });
    }
    if (st.kind === 'add') {
      return this.stage('add', 'pill add', '⊕', msg("The residual connection: the sublayer's output is added to its input."), nothing, { layer, site: stack.site });
    }
    if (st.kind === 'ffn') {
      const act = info.activation === 'gelu' ? 'GELU' : 'ReLU';
      const ids = stackIds(stack, this.forward);
      const last = Math.max(0, realLength(ids, info.pad) - 1);
      const pic = html`<tp-ov-ffn .trace=${ffnTraceOf(this.forward, stack.site, layer)} .last=${last} .mark=${stack.input !== 'source'} data-site=${stack.site} data-layer=${layer}></tp-ov-ffn
        ><span class="ffn-axis small muted" aria-hidden="true">${msg(str`${info.d_ff} units →`)}</span>`;
      return this.stage('ffn', 'ffn', msg('Feed-forward'), msg(str`The same ${info.d_model} → ${info.d_ff} → ${info.d_model} network with ${act}, on each position alone.`), pic, {
        layer,
        site: stack.site,
      });
    }
    const site = (st.site ?? stack.site) as AttnSite;
    const trace = traceOf(this.forward, site, layer);
    const cross = st.kind === 'cross_attention';
    const masked = !cross && stack.site === 'decoder_self' && this.causal;
    const title = cross ? msg('Cross-attention') : masked ? msg('Masked self-attention') : msg('Self-attention');
    const pos = info.pos_encoding;
    const caption = cross
      ? msg(str`Queries from the decoder, keys and values from the encoder's output; ${info.n_heads} heads.`)
      : positionsInAttention(pos)
        ? msg(str`Each token looks at the others (${info.n_heads} heads, ${posName(pos)} inside); a map per head.`)
        : msg(str`Each token looks at the others and mixes in what it finds; a map per head (${info.n_heads}).`);
    const ids = stackIds(stack, this.forward);
    const last = Math.max(0, realLength(ids, info.pad) - 1);
    return this.stage(
      cross ? 'cross_attention' : 'self_attention',
      'attn',
      title,
      caption,
      html`<tp-ov-heads .trace=${trace} .last=${last} .heads=${info.n_heads} .mark=${stack.input !== 'source'} data-site=${site} data-layer=${layer}></tp-ov-heads>`,
      { layer, site },
    );
  }

  /** A stack: its name, one layer in full (the steps in the plan's order), and every layer as a chip. */
  private stackGroup(stack: StackPlan) {
    const layer = shownLayer(stack, this.shown[stack.name]);
    const steps = blockSteps(stack);
    // Steps grouped by sublayer, so each sublayer's residual arc spans its own steps.
    const units: BlockStep[][] = [];
    for (const st of steps) (units[st.sublayer] ??= []).push(st);
    const newest = this.newest(stack);
    const L = stack.layers;
    return html`<div class="stack" data-stack=${stack.name} data-layers=${L} data-shown-layer=${layer}>
      <div class="stack-head">
        <button
          class="name"
          data-stage="block"
          data-chapter="blocks"
          data-view="architecture"
          @click=${() => emit(this, 'tp-open-chapter', { chapter: 'blocks', view: 'architecture' })}
        >
          ${stackLabel(stack.name, L)}<span class="visually-hidden"> ${msg(str`Opens the chapter ${chapterTitle('blocks')}.`, { id: 'overview.opens' })}</span>
        </button>
        <span class="small muted">${msg(str`layer ${layer + 1} of ${L}`)}</span>
      </div>
      <div class="block" data-layer=${layer}>
        ${units.map(
          (u, i) => html`${i > 0 ? html`<span class="arrow" aria-hidden="true"></span>` : nothing}<span class="unit ${stack.sublayers[i]?.residual ? 'res' : ''}"
              >${u.map((st, k) => html`${k > 0 ? html`<span class="arrow" aria-hidden="true"></span>` : nothing}${this.step(stack, st, layer)}`)}</span
            >`,
        )}
      </div>
      <div class="layers" role="group" aria-label=${msg('the layers: pick one to draw in full')}>
        ${Array.from(
          { length: L },
          (_, l) => html`<button
            aria-pressed=${l === layer}
            data-layer-chip=${l}
            aria-label=${msg(str`draw layer ${l + 1} in full`)}
            @click=${() => (this.shown = { ...this.shown, [stack.name]: l })}
          >
            <span>${msg(str`layer ${l + 1}`)}</span>
            ${this.strip(residualNorms(this.forward, stack.site, l + 1), newest, msg(str`length of each position vector after layer ${l + 1}`))}
          </button>`,
        )}
      </div>
    </div>`;
  }

  private finalNorm(stack: StackPlan) {
    return this.stage('final_norm', 'pill', msg('Final LayerNorm'), msg("One LayerNorm on the stack's output, after its last layer."), nothing, { site: stack.site });
  }

  private headStages() {
    const info = this.info!;
    const plan = this.plan!;
    const f = this.forward;
    const kind = headKind(plan, info);
    if (kind === 'classes') {
      const p = f?.class_probs ?? null;
      const rows: [number, number][] = p ? Array.from(p, (x, c) => [c, x]) : [];
      return this.stage(
        'classes',
        'out',
        msg('Class probabilities'),
        msg('The classifier reads the encoder and gives a probability to each class.'),
        this.bars(rows, (c) => this.classNames[c] ?? msg(str`class ${c}`), 'class', info.num_classes),
      );
    }
    if (kind === 'tags') {
      const ids = f?.tokens[0] ?? [];
      const n = realLength(ids, info.pad);
      const v = info.vocab;
      const pred = f?.predicted ?? [];
      return this.stage(
        'tags',
        'out',
        msg('Output per position'),
        msg('The most likely output token at every position.'),
        html`<span class="tags">
          ${pred.slice(0, n).map(
            (id, i) => html`<span data-pos=${i} data-token=${id}><span>${showToken(v[ids[i]] ?? '')}</span><b>${showToken(v[id] ?? `${id}`)}</b></span>`,
          )}
        </span>`,
      );
    }
    const v = info.vocab;
    const top = topOf(f?.model_probs ?? null, 5);
    const logits = this.stage(
      'logits',
      'out',
      msg('Next-token probabilities'),
      msg(str`Logits, then softmax over all ${v.length} tokens: the five most likely.`),
      this.bars(top, (id) => showToken(v[id] ?? `${id}`), 'token', 5),
    );
    return html`${logits}<span class="arrow" aria-hidden="true"></span>${this.nextStage()}`;
  }

  /** What the chooser does with the distribution: greedy's pick, or what sampling and beams keep. */
  private nextStage() {
    const info = this.info!;
    const v = info.vocab;
    const f = this.forward;
    const s = this.sampling?.strategy ?? 'greedy';
    const k = s === 'beam' ? Math.min(3, this.sampling?.beam_width ?? 3) : 3;
    const shaped = topOf(f?.next_probs ?? null, k).filter(([, p]) => p > 0);
    // The line is there, unseen, while nothing is appended, so that it takes its room from the start.
    const looping = this.generated.length > 0 && !this.done;
    const loop = html`<span class="loop" style=${styles(looping ? '' : 'visibility:hidden')} aria-hidden=${looping ? 'false' : 'true'}>${msg('↩ appended to the tokens, and the model runs again')}</span>`;
    if (s === 'greedy') {
      const [id] = shaped[0] ?? [-1];
      return this.stage(
        'next',
        'next',
        msg('Next token'),
        msg('Greedy decoding takes the most likely token.'),
        html`<span class="big" data-token=${id} lang=${ifDefined(tokenLang(v[id] ?? ''))}>${id >= 0 ? showToken(v[id] ?? `${id}`) : ' '}</span>${loop}`,
      );
    }
    const caption = s === 'sample' ? msg('Sampling draws one of these (after temperature, top-k and top-p).') : msg('Beam search keeps several continuations.');
    return this.stage('next', 'next', msg('Next token'), caption, html`${this.bars(shaped, (id) => showToken(v[id] ?? `${id}`), 'token', k)}${loop}`);
  }

  /** One row of the picture: a stack from its tokens to what it hands on. */
  private row(stack: StackPlan, last: boolean) {
    const memory = !last && this.plan?.stacks.some((s) => s.reads_memory);
    return html`<div class="flow" data-row=${stack.name}>
      ${this.tokensStage(stack)}<span class="arrow" aria-hidden="true"></span>${this.embeddingStage(stack)}<span class="arrow" aria-hidden="true"></span>${this.stackGroup(stack)}
      ${stack.final_norm ? html`<span class="arrow" aria-hidden="true"></span>${this.finalNorm(stack)}` : nothing}
      <span class="arrow" aria-hidden="true"></span>
      ${memory
        ? this.stage('memory', 'memory', msg("The encoder's output"), msg("Read as keys and values by every cross-attention of the decoder below."), nothing, { site: stack.site })
        : this.headStages()}
    </div>`;
  }

  render() {
    const info = this.info;
    const plan = this.plan;
    if (!info || !plan) return html`<section class="card" aria-busy="true"><header><h2>${msg('The model at a glance')}</h2></header></section>`;
    const layers = plan.stacks.map((s) => s.layers).join(' + ');
    return html`<section class="card" aria-labelledby="ov-h" data-arch=${plan.arch} data-live=${this.forward ? '1' : '0'} data-first-live-ms=${ifDefined(this.firstLiveAt ?? undefined)}>
      <header>
        <h2 id="ov-h">${msg('The model at a glance')}</h2>
        <span class="sub"
          >${this.modelTitle ? html`<span data-model-text>${this.modelTitle}</span> · ` : nothing}${msg(
            str`${archName(plan.arch)}, ${layers} layers, ${info.n_heads} heads, d_model ${info.d_model}, ${info.params} parameters`,
          )}</span
        >
      </header>
      ${this.textBox(plan)}
      <div class="rows">${plan.stacks.map((s, i) => this.row(s, i === plan.stacks.length - 1))}</div>
      <p class="legend">
        ${msg(
          'Every picture is the model’s own numbers for this input. Heads: rows are queries, columns keys, brighter is more attention (√p), grey is masked; the pink row and chip are the newest token. Feed-forward: a row per position, a column per hidden unit, brighter is larger. Bars: dark is short, yellow long. Click any stage to open the chapter that explains it.',
          { id: 'overview.legend' },
        )}
      </p>
    </section>`;
  }

  /** The text the picture runs on, editable where it is drawn (the input chapter has the batch and the chips' details). */
  private textBox(plan: LayerPlan) {
    const label = plan.arch === 'encoder_decoder' ? msg('Source sentence') : plan.arch === 'encoder_only' ? msg('Input') : msg('Prompt');
    return html`<label class="text-box"
      ><span>${label}</span
      ><input
        type="text"
        data-overview-text
        spellcheck="false"
        autocomplete="off"
        maxlength="200"
        .value=${this.text}
        ?disabled=${this.textLocked}
        @input=${(e: Event) => emit(this, 'tp-text', (e.target as HTMLInputElement).value)}
    /></label>`;
  }

  protected updated(changed: PropertyValues<this>): void {
    if (this.forward && this.firstLiveAt === null) {
      this.firstLiveAt = performance.now();
      this.requestUpdate();
    }
    // A new token: it runs once through the stages, left to right.
    if (changed.has('forward') && this.generated.length !== this.journeyOf) {
      const had = this.journeyOf;
      this.journeyOf = this.generated.length;
      if (had >= 0 && this.generated.length > 0 && !prefersReducedMotion()) this.journey();
    }
  }

  private journey() {
    const stages = [...this.renderRoot.querySelectorAll<HTMLElement>('.flow:last-child .stage')];
    stages.forEach((el, i) =>
      el.animate?.([{ boxShadow: '0 0 0 0 rgba(228,0,124,0)' }, { boxShadow: '0 0 0 3px rgba(228,0,124,0.55)' }, { boxShadow: '0 0 0 0 rgba(228,0,124,0)' }], {
        duration: 420,
        delay: i * 45,
        easing: 'ease-out',
      }),
    );
  }
}

/** The height of one row of probability bars, in em of the bars' text (styles.ts, \`.bars\`). */
const BAR_ROW = 1.3;

/** A position encoding's name in words. */
function posName(pos: string): string {
  switch (pos) {
    case 'sinusoidal':
      return msg('sinusoidal');
    case 'learned':
      return msg('learned');
    case 'rope':
      return 'RoPE';
    case 'alibi':
      return 'ALiBi';
    case 'relative':
      return msg('relative, Shaw');
    default:
      return pos;
  }
}

/** "Decoder × 2 layers", in the page's language. */
function stackLabel(name: string, layers: number): string {
  if (name === 'encoder') return msg(str`Encoder × ${layers} layers`);
  if (name === 'decoder') return msg(str`Decoder × ${layers} layers`);
  return `${stackName(name)} × ${layers}`;
}

/** A chapter's title, as the chapter bar shows it. */
function chapterTitle(name: string): string {
  return chapterNamed(name)?.title() ?? name;
}

customElements.define('tp-overview', TpOverview);

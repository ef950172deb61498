// Beam search as a tree: every hypothesis the engine's beam search kept, finished or cut
// off, step by step, each with its log-probability and its length-penalised score. The
// tree grows as the generation plays. Each step of the engine reports the live hypotheses
// (their `parent` indexes the previous step's live list), those that finished, and the
// best extensions that fell out of the beam; a live hypothesis that no later step extends
// was dropped. Nothing is computed here but the layout.

import { html, css, svg, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { BeamStep, Hypothesis, ModelInfo } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { emit, panel, scrollLabel, scrollRegion } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';

/** What became of a node of the tree. */
type Kind = 'live' | 'finished' | 'pruned' | 'dropped';

interface Node {
  id: string;
  depth: number;
  kind: Kind;
  hyp: Hypothesis | null;
  parent: Node | null;
  children: Node[];
  y: number;
}

const ROW = 18;
const COL = 124;

/** The tree of every step's hypotheses, children in the engine's order (best first). */
export function beamTree(steps: BeamStep[]): { root: Node; best: Node | null; nodes: Node[] } {
  const root: Node = { id: 'root', depth: 0, kind: 'live', hyp: null, parent: null, children: [], y: 0 };
  const nodes: Node[] = [];
  let prev: Node[] = [root];
  steps.forEach((s, k) => {
    const make = (h: Hypothesis, kind: Kind, i: number): Node => {
      const parent = prev[h.parent ?? 0] ?? root;
      const n: Node = { id: `${k}-${kind}-${i}`, depth: k + 1, kind, hyp: h, parent, children: [], y: 0 };
      parent.children.push(n);
      nodes.push(n);
      return n;
    };
    const live = s.live.map((h, i) => make(h, 'live', i));
    s.newly_finished.forEach((h, i) => make(h, 'finished', i));
    s.pruned.forEach((h, i) => make(h, 'pruned', i));
    prev = live;
  });
  // A live hypothesis without children after a later step was dropped from the beam.
  for (const n of nodes) if (n.kind === 'live' && n.depth < steps.length && n.children.length === 0) n.kind = 'dropped';
  let best: Node | null = null;
  for (const n of nodes) if (n.kind === 'finished' && (!best || n.hyp!.score > best.hyp!.score)) best = n;
  return { root, best, nodes };
}

export class TpBeams extends LocalizedElement {
  static properties = {
    info: { attribute: false },
    steps: { attribute: false },
    strategy: { type: String },
    auto: { type: Boolean },
    generated: { attribute: false },
    done: { type: Boolean },
    lock: { attribute: false },
  };

  /** Classroom mode: the settings the link locked (a locked decoding rule disables the switch to beam search, saying why). */
  lock: readonly string[] = [];

  info: ModelInfo | null = null;
  /** Every beam step of the running generation, in order. */
  steps: BeamStep[] = [];
  strategy = 'greedy';
  /** Switch to beam search by itself (the view shown alone, `chrome=none`: its picture needs no click). */
  auto = false;
  private autoAsked = false;

  protected updated(): void {
    // Once the model is loaded (before, the page's settings are not read yet).
    if (this.auto && this.info && this.strategy !== 'beam' && !this.autoAsked) {
      this.autoAsked = true;
      emit(this, 'tp-beam', null);
    }
  }
  /** The generator's answer so far (the best hypothesis). */
  generated: number[] = [];
  done = false;

  static styles = [
    panel,
    css`
      .wrap {
        overflow: auto;
        max-height: 620px;
        border: 1px solid var(--tp-line);
        border-radius: 4px;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .legend {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
      }
      .k-live {
        color: var(--tp-accent);
      }
      .k-finished {
        color: #21908d;
      }
      .k-pruned,
      .k-dropped {
        color: var(--tp-muted);
      }
    `,
  ];

  private tok(id: number): string {
    return showToken(this.info?.vocab[id] ?? `${id}`);
  }

  render() {
    if (this.strategy !== 'beam') {
      return html`<section class="card" aria-labelledby="h">
        <h2 id="h">${msg('Beam search tree')}</h2>
        <p>${msg('Beam search keeps the few most probable partial sequences instead of one. Switch the decoding to beam search to grow its tree.')}</p>
        <button data-setting="strategy" ?disabled=${!!whyLocked(this.lock, 'strategy')} @click=${() => emit(this, 'tp-beam', null)}>${msg('Use beam search')}</button>${lockedNote('strategy', whyLocked(this.lock, 'strategy'))}
      </section>`;
    }
    const { root, best, nodes } = beamTree(this.steps);
    // Layout: depth first, one row per leaf; a parent sits level with its first child.
    let row = 0;
    const place = (n: Node) => {
      if (!n.children.length) n.y = row++;
      else {
        n.children.forEach(place);
        n.y = n.children[0].y;
      }
    };
    place(root);
    const W = (this.steps.length + 1) * COL + 60;
    const H = Math.max(1, row) * ROW + 10;
    const X = (d: number) => 6 + d * COL;
    const Y = (y: number) => 12 + y * ROW;
    const edges = nodes.map((n) => {
      const parent = n.parent!;
      const faint = n.kind === 'pruned' || n.kind === 'dropped';
      return svg`<path d=${`M${X(parent.depth) + (parent === root ? 34 : 86)},${Y(parent.y) - 4} C${X(n.depth) - 24},${Y(parent.y) - 4} ${X(n.depth) - 28},${Y(n.y) - 4} ${X(n.depth) - 2},${Y(n.y) - 4}`}
        fill="none" stroke=${faint ? 'var(--tp-line)' : 'var(--tp-accent)'} stroke-dasharray=${n.kind === 'pruned' ? '3 3' : 'none'} stroke-width=${n === best ? 2.5 : 1.2}></path>`;
    });
    const sep = this.info?.tokenizer_kind === 'word' ? ' ' : '';
    const label = (h: Hypothesis) => h.tokens.map((t) => this.tok(t)).join(sep);
    const glyph: Record<Kind, string> = { live: '', finished: ' ✓', pruned: ' ✂', dropped: ' ✗' };
    const drawn = nodes.map((n) => {
      const h = n.hyp!;
      const last = h.tokens.length ? this.tok(h.tokens[h.tokens.length - 1]) : '';
      const faint = n.kind === 'pruned' || n.kind === 'dropped';
      return svg`<g class="node" data-kind=${n.kind} data-depth=${n.depth} data-tokens=${h.tokens.join(',')} data-log-prob=${h.log_prob} data-score=${h.score} data-best=${n === best ? '1' : '0'}
          opacity=${faint ? 0.45 : 1}>
        <title>${label(h)} — ${kindName(n.kind)}; log p = ${fmt(h.log_prob, 3)}, ${msg('score')} = ${fmt(h.score, 3)}</title>
        <text x=${X(n.depth)} y=${Y(n.y)} font-size="12" font-family="var(--tp-mono)" font-weight=${n === best ? 700 : 400}
          fill=${n.kind === 'finished' ? '#21908d' : faint ? 'var(--tp-muted)' : 'var(--tp-fg)'}>${last}${glyph[n.kind]}</text>
        <text x=${X(n.depth) + 26} y=${Y(n.y)} font-size="9" fill="var(--tp-muted)">${fmt(h.log_prob, 2)} / ${fmt(h.score, 2)}</text>
      </g>`;
    });
    const counts = (k: Kind) => nodes.filter((n) => n.kind === k).length;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Beam search tree')} <span class="sub">${msg(str`${this.steps.length} steps`)}${this.done ? msg(', finished') : ''}</span></h2>
      <p>
        ${msg(html`Each step extends every kept hypothesis by every token and keeps the most probable extensions (log p, the sum of the tokens' log-probabilities). A hypothesis that ends with &lt;eos&gt; is finished; finished ones are compared by their score, log p divided by the length penalty ((5 + length)/6)<sup>0.6</sup>, so a longer answer is not punished just for having more tokens. Each node shows its token, then log p / score.`)}
      </p>
      <div class="legend">
        <span class="k-live">${msg(str`kept (${counts('live')})`)}</span>
        <span class="k-finished">✓ ${msg(str`finished (${counts('finished')})`)}</span>
        <span class="k-pruned">✂ ${msg(str`cut off: the best extensions that fell out of the beam (${counts('pruned')})`)}</span>
        <span class="k-dropped">✗ ${msg(str`kept, then dropped (${counts('dropped')})`)}</span>
      </div>
      ${best
        ? html`<p data-best-tokens=${best.hyp!.tokens.join(',')} data-generated=${this.generated.join(',')}>
            ${msg('Best finished so far:')} <b class="mono">${label(best.hyp!)}</b> (log p ${fmt(best.hyp!.log_prob, 3)}, ${msg('score')} ${fmt(best.hyp!.score, 3)})${this.done
              ? msg(' — the generator’s answer.')
              : msg('.')}
          </p>`
        : nothing}
      ${this.steps.length
        ? html`<div class="wrap" ${scrollRegion(scrollLabel())}>
            <svg width=${W} height=${H} viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${msg(str`beam search tree: ${nodes.length} hypotheses over ${this.steps.length} steps`)}>
              <text x=${X(0)} y=${Y(root.y)} font-size="12" fill="var(--tp-muted)">${msg('start')}</text>
              ${edges}${drawn}
            </svg>
          </div>`
        : html`<p class="muted">${msg('Play or step the generation to grow the tree.')}</p>`}
    </section>`;
  }
}

/** A node's kind in words. */
function kindName(k: Kind): string {
  return k === 'live' ? msg('kept') : k === 'finished' ? msg('finished') : k === 'pruned' ? msg('cut off') : msg('dropped');
}

customElements.define('tp-beams', TpBeams);

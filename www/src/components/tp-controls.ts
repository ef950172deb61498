// The model picker and the run-time switches: causal mask, padding mask, √d_k scaling,
// position encoding and design choice (each loads the model trained with it), backend and
// seed.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { modelDescription, modelTitle, modelVariant } from '../i18n/models';
import { posEncodingName } from '../i18n/terms';
import type { BackendInfo, ManifestEntry, ModelInfo } from '../engine/protocol';
import { backendSummary, trainNoteText } from '../i18n/engine-text';
import type { PlaygroundState } from '../state/url';
import { emit, panel } from '../ui/shared';
import { num } from '../ui/format';
import { maskName } from '../ui/mask-name';
import { lockedNote, whyLocked } from '../ui/locked';

const ARCH_NAMES: Record<string, () => string> = {
  decoder_only: () => msg('Decoder-only'),
  encoder_decoder: () => msg('Encoder-decoder'),
  encoder_only: () => msg('Encoder-only'),
};

export class TpControls extends LocalizedElement {
  static properties = {
    manifest: { attribute: false },
    state: { attribute: false },
    info: { attribute: false },
    causalDefault: { type: Boolean },
    trainNote: { attribute: false },
    draw: { type: Number },
    locked: { attribute: false },
    hide: { attribute: false },
    backendInfo: { attribute: false },
  };

  manifest: ManifestEntry[] = [];
  state: PlaygroundState | null = null;
  info: ModelInfo | null = null;
  causalDefault = true;
  /** What the engine said about the last train-mode pass (null in eval mode). */
  trainNote: string | null = null;
  /** How many times the forward pass was run again. */
  draw = 0;
  /** Classroom mode: settings the learner may not change (their controls are disabled). */
  locked: string[] = [];
  /** Classroom mode: controls not drawn (names of ../lessons/classroom.ts). */
  hide: string[] = [];
  /** Which backend runs and why (the badge's numbers): the control says what runs beside what it asks. */
  backendInfo: BackendInfo | null = null;

  /** Is this control drawn, and may its setting change? */
  private shown(control: string): boolean {
    return !this.hide.includes(control);
  }
  private isLocked(setting: string): boolean {
    return whyLocked(this.locked, setting) !== '';
  }
  /** The note beside a locked control (nothing when it is free). */
  private lockNote(setting: string) {
    return lockedNote(setting, whyLocked(this.locked, setting));
  }

  static styles = [
    panel,
    css`
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: 10px 18px;
        align-items: center;
        font-size: var(--tp-text-md);
      }
      label {
        display: inline-flex;
        gap: 5px;
        align-items: center;
        max-width: 100%;
        min-width: 0;
      }
      select {
        max-width: 100%;
        min-width: 0;
        flex: 1 1 auto;
      }
      .desc {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin: 6px 0 10px;
      }
      fieldset {
        border: none;
        padding: 0;
        margin: 0;
        display: inline-flex;
        gap: 6px;
        align-items: center;
      }
      legend {
        float: left;
        margin-right: 6px;
      }
      input[type='number'] {
        width: 8em;
      }
      fieldset.backend {
        flex-wrap: wrap;
        max-width: 100%;
      }
      .runs {
        color: var(--tp-muted);
        font-size: 0.82rem;
        overflow-wrap: anywhere;
        flex: 1 1 14em;
        min-width: 0;
      }
    `,
  ];

  private set(patch: Partial<PlaygroundState>) {
    emit(this, 'tp-state', patch);
  }

  render() {
    const st = this.state;
    if (!st) return nothing;
    const current = this.manifest.find((m) => m.file === st.model);
    const arches = [...new Set(this.manifest.map((m) => m.arch))];
    // Same architecture, task and W_Q/W_K choice, other position encodings: the models to
    // switch between (the shared-W_Q = W_K model and the design siblings differ in more
    // than their positions).
    const siblings = !current
      ? []
      : current.variant
        ? [current]
        : this.manifest.filter((m) => m.arch === current.arch && m.task === current.task && !!m.share_qk === !!current.share_qk && !m.variant);
    // The model a design sibling differs from, and every sibling of it.
    const base = current?.variant_of ?? current?.file;
    const designs = this.manifest.filter((m) => m.file === base || m.variant_of === base);
    // The siblings get their own group in the picker, under their base model's title.
    const groups = arches.map((a) => ({ label: ARCH_NAMES[a]?.() ?? a, models: this.manifest.filter((m) => m.arch === a && !m.variant) }));
    for (const of of new Set(this.manifest.filter((m) => m.variant_of).map((m) => m.variant_of!))) {
      const known = this.manifest.find((m) => m.file === of);
      const title = known ? modelTitle(known) : of;
      groups.push({ label: msg(str`${title} — siblings, each trained with another design`), models: this.manifest.filter((m) => m.variant_of === of) });
    }
    const causal = st.causal ?? this.causalDefault;
    // A switch that does nothing on this model or under these settings is disabled, and
    // says why beside it.
    const check = (key: 'causal' | 'pad' | 'scale', label: string, value: boolean, patch: (v: boolean) => Partial<PlaygroundState>, help: string, why = '') => {
      if (!this.shown(key)) return nothing;
      const locked = whyLocked(this.locked, key);
      return html`<label title=${locked || why || help}
            ><input
              type="checkbox"
              data-setting=${key}
              ?disabled=${!!locked || !!why}
              aria-describedby=${locked || why ? `why-${key}` : nothing}
              .checked=${value}
              @change=${(e: Event) => this.set(patch((e.target as HTMLInputElement).checked))}
            />${label}${locked
              ? lockedNote(key, locked, `why-${key}`)
              : why
                ? html` <span class="why small muted" id=${`why-${key}`} data-why=${key}>(${why})</span>`
                : nothing}</label
          >`;
    };
    // The mask editor's rule replaces the causal switch on the main stack (Switches.mask).
    const causalWhy = st.mask ? msg(str`the mask editor's rule decides: ${maskName(st.mask)}`) : '';
    const scaleWhy = !this.info
      ? ''
      : this.info.score === 'dot'
        ? msg("this model's scores are plain dot products, never divided by √d_k")
        : this.info.score === 'additive'
          ? msg("this model's scores are additive, w·tanh(q + k), never divided by √d_k")
          : '';
    return html`<section class="card" aria-label=${msg('model and switches')}>
      <div class="row">
        ${this.shown('model') ? html`<label
          >${msg('Model')}
          <select aria-label=${msg('model')} data-setting="model" ?disabled=${this.isLocked('model')} @change=${(e: Event) => this.set({ model: (e.target as HTMLSelectElement).value })}>
            ${groups.map(
              (g) => html`<optgroup label=${g.label}>
                ${g.models.map((m) => html`<option value=${m.file} ?selected=${m.file === st.model}>${modelTitle(m)}</option>`)}
              </optgroup>`,
            )}
          </select></label
        >${this.lockNote('model')}` : nothing}
        ${this.shown('position') ? html`<label
          >${msg('Position encoding')}
          <select
            aria-label=${msg('position encoding (loads the model trained with it)')}
            data-setting="model"
            ?disabled=${siblings.length < 2 || this.isLocked('model')}
            @change=${(e: Event) => this.set({ model: (e.target as HTMLSelectElement).value })}
          >
            ${siblings.map((m) => html`<option value=${m.file} ?selected=${m.file === st.model}>${posEncodingName(m.pos_encoding)}</option>`)}
          </select></label
        >${this.shown('model') ? nothing : this.lockNote('model')}` : nothing}
        ${designs.length > 1 && this.shown('design')
          ? html`<label
              >${msg('Design')}
              <select
                aria-label=${msg('design choice (loads the model trained with it)')}
                data-setting="model"
                ?disabled=${this.isLocked('model')}
                @change=${(e: Event) => this.set({ model: (e.target as HTMLSelectElement).value })}
              >
                ${designs.map((m) => html`<option value=${m.file} ?selected=${m.file === st.model}>${m.variant ? modelVariant(m) : msg('as shipped (pre-LN, residuals, scaled dot)', { id: 'controls.design-default' })}</option>`)}
              </select></label
            >`
          : nothing}
      </div>
      ${current ? html`<p class="desc" data-model-text>${modelDescription(current)}</p>` : nothing}
      <div class="row">
        ${check('causal', msg('causal mask'), causal, (v) => ({ causal: v }), msg('queries may not look at later keys'), causalWhy)}
        ${check('pad', msg('padding mask'), st.pad, (v) => ({ pad: v }), msg('pad keys get weight 0'))}
        ${check('scale', msg('scale by √d_k'), st.scale, (v) => ({ scale: v }), msg('divide scores by the square root of the head size'), scaleWhy)}
        ${this.shown('backend') ? html`<fieldset class="backend">
          <legend>${msg('backend')}</legend>
          ${(['auto', 'webgpu', 'cpu'] as const).map(
            (b) => html`<label title=${b === 'auto' ? msg('WebGPU where it agrees with the CPU and is faster for this model, measured on this device', { id: 'controls.backend-auto-title' }) : nothing}><input type="radio" name="backend" data-setting="backend" ?disabled=${this.isLocked('backend')} .checked=${st.backend === b} @change=${() => this.set({ backend: b })} />${b === 'auto' ? msg('Auto', { id: 'engine.backend-auto' }) : b === 'webgpu' ? 'WebGPU' : 'CPU'}</label>`,
          )}
          ${this.lockNote('backend')}
          <span class="runs" role="status" data-backend-runs=${this.backendInfo?.backend ?? ''}>${backendSummary(st.backend, this.backendInfo)}</span>
        </fieldset>` : nothing}
        ${this.shown('seed') ? html`<label
          >${msg('seed')}
          <input
            data-setting="seed"
            ?disabled=${this.isLocked('seed')}
            type="number"
            min="0"
            max="4294967295"
            .value=${String(st.seed)}
            @change=${(e: Event) => {
              const v = Number((e.target as HTMLInputElement).value);
              if (Number.isInteger(v) && v >= 0 && v <= 4294967295) this.set({ seed: v });
            }}
        />${this.lockNote('seed')}</label>` : nothing}
        ${this.shown('mode') ? html`<fieldset>
          <legend title=${msg("train mode: dropout active, BatchNorm with the batch's statistics; eval mode: neither")}>${msg('forward pass')}</legend>
          ${(['eval', 'train'] as const).map(
            (m) => html`<label><input type="radio" name="mode" data-setting="mode" value=${m} ?disabled=${this.isLocked('mode')} .checked=${st.mode === m} @change=${() => this.set({ mode: m })} />${m === 'eval' ? msg('eval mode') : msg('train mode')}</label>`,
          )}${this.lockNote('mode')}
        </fieldset>` : nothing}
        ${st.mode === 'train' && this.shown('drop')
          ? html`<label title=${msg("dropout probability for train mode; empty: the model's own")}
              >${msg('dropout p')}
              <input
                type="number"
                aria-label=${msg('dropout probability in train mode')}
                data-setting="drop"
                ?disabled=${this.isLocked('drop')}
                min="0"
                max="0.9"
                step="0.05"
                placeholder=${this.info ? msg(str`model's ${num(this.info.dropout)}`) : ''}
                .value=${st.drop === null ? '' : String(st.drop)}
                @change=${(e: Event) => {
                  const raw = (e.target as HTMLInputElement).value.trim();
                  const v = Number(raw);
                  if (raw === '') this.set({ drop: null });
                  else if (Number.isFinite(v) && v >= 0 && v <= 0.9) this.set({ drop: v });
                }}
            />${this.lockNote('drop')}</label>`
          : nothing}
        ${this.shown('rerun') ? html`<button data-control="rerun" title=${msg('run the forward pass again (train mode: with the next seed)')} @click=${() => emit(this, 'tp-rerun', null)}>${msg('run again')}</button>` : nothing}
        ${st.ablate.length
          ? html`<button data-setting="ablate" ?disabled=${this.isLocked('ablate')} @click=${() => this.set({ ablate: [] })}>${st.ablate.length === 1 ? msg('switch the ablated head back on') : msg(str`switch all ${st.ablate.length} ablated heads back on`)}</button>${this.lockNote('ablate')}`
          : nothing}
      </div>
      ${st.mode === 'train'
        ? html`<p class="desc" role="status" data-draw=${this.draw}>${this.trainNote ? trainNoteText(this.trainNote) : msg('train mode')} · ${msg(str`draw ${this.draw} (seed ${st.seed + this.draw}). Generation always runs in eval mode.`)}</p>`
        : nothing}
    </section>`;
  }
}

customElements.define('tp-controls', TpControls);

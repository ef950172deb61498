// The lab's form: every setting of a run, grouped, each saying what it does and why it does
// not apply to the chosen task where it does not; and the summary of the model the page
// uses, with the settings it was trained with. The lab element holds the form's values
// and applies each edit.

import { html, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { archName, notForTask, taskDescription } from '../i18n/terms';
import type { ModelInfo } from '../engine/protocol';
import type { RunDefaults, RunRecord } from './host';
import { FIELDS, GROUPS, fieldShown, getField, type FieldDef, type FieldKey, type Settings, type Value } from './fields';
import { int } from '../ui/format';
import { lockedNote } from '../ui/locked';

/** What the form shows of the lab's state, and where an edit goes. */
export interface SettingsFormView {
  /** The settings the form shows. */
  readonly form: Settings | null;
  /** The engine's defaults and notes for the form's task. */
  readonly defaults: RunDefaults | null;
  /** The run whose settings the form was filled from ("train again with one change"). */
  readonly from: RunRecord | undefined;
  /** What the link's settings had that was refused, one sentence each. */
  readonly linkNotes: readonly string[];
  /** Why the form cannot be edited ('' when it can): a classroom link locked the lab's settings. */
  readonly locked?: string;
  edit(key: FieldKey, v: Value): void;
}

/** The run (or file) the page's model came from, with its settings. */
export interface UsedModel {
  what: string;
  settings: Settings | null;
  info: ModelInfo;
}

/** A value of a setting in words, for the "in use" summary. */
function valueText(f: FieldDef, v: Value): string {
  if (v === null) return f.control.kind === 'number' && f.control.nullable ? f.control.nullable() : f.control.kind === 'select' ? (f.control.options.find(([k]) => k === '')?.[1] ?? '–') : '–';
  if (typeof v === 'boolean') return v ? msg('on', { id: 'lab.value-on' }) : msg('off', { id: 'lab.value-off' });
  if (f.control.kind === 'select') return f.control.options.find(([k]) => k === String(v))?.[1] ?? String(v);
  return String(v);
}

/** Why a field does not apply to the form's task, in words; '' when it does. */
function noteOf(defaults: RunDefaults | null, key: FieldKey): string {
  const d = defaults;
  if (!d) return '';
  const base = key.startsWith('lr.') ? 'lr' : key;
  return notForTask(d.not_for_task[key] ?? d.not_for_task[base] ?? '');
}

/** The input of one field: a list, a checkbox, or a number (with its "none" box where it may be none). */
function control(view: SettingsFormView, f: FieldDef, off: boolean) {
  const v = getField(view.form!, f.key);
  const id = `f-${f.key.replace('.', '-')}`;
  const c = f.control;
  if (c.kind === 'select') {
    return html`<select
      id=${id}
      name=${f.key}
      ?disabled=${off}
      @change=${(e: Event) => {
        const s = (e.target as HTMLSelectElement).value;
        view.edit(f.key, s === '' ? null : s);
      }}
    >
      ${c.options.map(([k, t]) => html`<option value=${k} ?selected=${(v ?? '') === k}>${t}</option>`)}
    </select>`;
  }
  if (c.kind === 'bool') {
    return html`<input id=${id} name=${f.key} type="checkbox" ?disabled=${off} .checked=${v === true} @change=${(e: Event) => view.edit(f.key, (e.target as HTMLInputElement).checked)} />`;
  }
  const number = html`<input
    id=${id}
    name=${f.key}
    type="number"
    min=${c.min}
    max=${c.max}
    step=${c.step}
    required
    ?disabled=${off || (c.nullable !== undefined && v === null)}
    .value=${v === null ? '' : String(v)}
    @change=${(e: Event) => {
      const input = e.target as HTMLInputElement;
      const x = Number(input.value);
      const ok = input.value !== '' && Number.isFinite(x) && x >= c.min && x <= c.max && (!c.integer || Number.isInteger(x));
      input.setCustomValidity(ok ? '' : c.integer ? msg(str`${f.label}: a whole number from ${c.min} to ${c.max}`) : msg(str`${f.label}: a number from ${c.min} to ${c.max}`));
      if (ok) view.edit(f.key, x);
    }}
  />`;
  if (c.nullable === undefined) return number;
  return html`<span class="nullable"
    >${number}<label
      ><input
        type="checkbox"
        ?disabled=${off}
        .checked=${v === null}
        @change=${(e: Event) => view.edit(f.key, (e.target as HTMLInputElement).checked ? null : c.min === 1 ? 8 : c.min)}
      />${c.nullable()}</label
    ></span
  >`;
}

/** One field: its label, its input, what it does, and why it does not apply to the task where it does not. */
function field(view: SettingsFormView, f: FieldDef) {
  if (!view.form || !fieldShown(view.form, f.key)) return nothing;
  const note = noteOf(view.defaults, f.key);
  const id = `f-${f.key.replace('.', '-')}`;
  return html`<div class="field ${note ? 'off' : ''}" data-field=${f.key}>
    <label for=${id}>${f.label}</label>
    ${control(view, f, note !== '' && f.key !== 'task')}
    <p class="help" id=${`${id}-help`}>${f.help}</p>
    ${note ? html`<p class="note" data-note=${f.key}>${msg('Not for this task:')} ${note}</p>` : nothing}
  </div>`;
}

/** The form: the task's description, the fields by group, and what the link or the run it came from says. */
export function settingsForm(view: SettingsFormView) {
  if (!view.form) return html`<p class="muted small">${msg("Reading the task's defaults…")}</p>`;
  const from = view.from;
  return html`<form class="settings" @submit=${(e: Event) => e.preventDefault()} novalidate>
    ${view.locked ? html`<p class="small" data-form-locked>${lockedNote('train', view.locked)}</p>` : nothing}
    ${view.defaults ? html`<p class="intro">${taskDescription(view.defaults.settings.task, view.defaults.description)}</p>` : nothing}
    <div class="groups">
      ${GROUPS.map(
        ([g, title]) => html`<fieldset data-group=${g} ?disabled=${!!view.locked}>
          <legend>${title}</legend>
          ${FIELDS.filter((f) => f.group === g).map((f) => field(view, f))}
        </fieldset>`,
      )}
    </div>
    ${view.linkNotes.length
      ? html`<div class="alert" role="status" data-link-notes>
          ${msg('Some settings of the link were not used:')}
          <ul>
            ${view.linkNotes.map((n) => html`<li>${n}</li>`)}
          </ul>
        </div>`
      : nothing}
    ${from ? html`<p class="from" data-from=${from.id}>${msg(str`These are the settings of ${from.name}: change one and press Train to compare.`)}</p>` : nothing}
  </form>`;
}

/** The model the page uses now (a run's or a file's): its shape, and the run's settings where there is a run. */
export function usedBox(u: UsedModel | null) {
  if (!u) return nothing;
  const s = u.settings;
  return html`<section class="used" data-used aria-label=${msg('the model the page uses')}>
    <strong>${msg(str`The page's model is ${u.what}`)}</strong>
    <span class="muted small">— ${archName(u.info.arch)}, d_model ${u.info.d_model}, ${msg(str`${u.info.n_heads} heads, ${u.info.encoder_layers + u.info.decoder_layers} layers, ${int(u.info.params)} parameters`)}</span>
    ${s
      ? html`<dl>
          ${FIELDS.filter((f) => fieldShown(s, f.key)).map((f) => html`<div><dt>${f.label}</dt><dd>${valueText(f, getField(s, f.key))}</dd></div>`)}
        </dl>`
      : nothing}
  </section>`;
}

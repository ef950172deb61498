// The lab's table of runs: each run's name (renamed in place), how its settings differ
// from the others', its status and final numbers, where its steps run, and the buttons
// that act on it. The lab element holds the selection and does the actions.

import { html, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import type { RunRecord } from './host';
import type { Settings } from './fields';
import { METRIC_WORDS, backendDetail, backendText } from './run-text';
import { alarmText } from '../lab/health';

/** Why a run failed: the health alarm it stopped at, in the page's language, else its stored reason. */
function errorOf(r: RunRecord): string {
  const stop = r.status === 'failed' ? r.alarms?.find((a) => a.stopped) : undefined;
  return stop ? alarmText(stop, r.settings) : (r.error ?? '');
}

/** What the buttons of the lab are doing to a run until the engine answers. */
export type BusyAction = 'pause' | 'resume' | 'stop' | 'stepOnce';

/** What the table shows of the lab's own state. */
export interface RunTableState {
  /** The run the buttons act on. */
  readonly selected: string | null;
  /** The run being renamed. */
  readonly renaming: string | null;
  /** Runs whose pause, resume, stop or single step is under way. */
  readonly busy: ReadonlyMap<string, BusyAction>;
}

/** What the table's controls ask the lab to do. */
export interface RunTableActions {
  select(id: string): void;
  startRename(r: RunRecord): void;
  rename(r: RunRecord, input: HTMLInputElement): void;
  cancelRename(): void;
  hide(r: RunRecord, hidden: boolean): void;
  remove(r: RunRecord): void;
  again(r: RunRecord): void;
  use(r: RunRecord, label: string): void;
  exportRun(r: RunRecord): void;
  exportCsv(r: RunRecord): void;
  /** A text run's text, as the .txt file `tplay train --text-file` reads. */
  exportText(r: RunRecord): void;
}

const STATUS_WORDS: Record<string, string> = {
  get running() {
    return msg('training');
  },
  get paused() {
    return msg('paused');
  },
  get stopped() {
    return msg('stopped');
  },
  get done() {
    return msg('done');
  },
  get failed() {
    return msg('failed');
  },
};

const BUSY_WORDS: Record<BusyAction, string> = {
  get pause() {
    return msg('pausing…');
  },
  get resume() {
    return msg('resuming…');
  },
  get stop() {
    return msg('stopping…');
  },
  get stepOnce() {
    return msg('taking one step…');
  },
};

/** A number for the table: four significant digits, '–' for none. */
function n4(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The runs, one row each, with their final numbers and their buttons. */
export function runTable(runs: readonly RunRecord[], labelOf: Map<string, string>, colorOf: Map<string, string>, at: RunTableState, on: RunTableActions) {
  if (!runs.length) return html`<p class="muted small">${msg('No runs yet: press Train, or pick an experiment.')}</p>`;
  return html`<div class="table">
    <table>
      <caption class="visually-hidden">
        ${msg('The runs, with their final numbers')}
      </caption>
      <thead>
        <tr>
          <th scope="col">${msg('act on')}</th>
          <th scope="col">${msg('run')}</th>
          <th scope="col">${msg('differs by')}</th>
          <th scope="col">${msg('status')}</th>
          <th scope="col" class="num">${msg('step')}</th>
          <th scope="col" class="num">${msg('training loss')}</th>
          <th scope="col" class="num">${msg('held-out loss')}</th>
          <th scope="col" class="num">${msg('held-out metric')}</th>
          <th scope="col" class="num">${msg('time')}</th>
          <th scope="col" class="num">${msg('steps/s')}</th>
          <th scope="col">${msg('runs on')}</th>
          <th scope="col">${msg('actions')}</th>
        </tr>
      </thead>
      <tbody>
        ${runs.map((r) => {
          const last = r.log.length ? r.log.at(r.log.length - 1) : undefined;
          const ev = r.log.lastEval();
          const label = labelOf.get(r.id) ?? '';
          return html`<tr class="${r.hidden ? 'hidden' : ''} ${r.id === at.selected ? 'selected' : ''}" data-run=${r.id} data-status=${r.status} data-busy=${at.busy.get(r.id) ?? ''}>
            <td>
              <input
                type="radio"
                name="act-on"
                .checked=${r.id === at.selected}
                aria-label=${msg(str`the buttons act on ${r.name}`, { id: 'lab.table.act-on' })}
                @change=${() => on.select(r.id)}
              />
            </td>
            <td>
              <span class="swatch" data-color=${colorOf.get(r.id) ?? ''}></span>
              ${at.renaming === r.id
                ? html`<input
                    type="text"
                    aria-label=${`new name for ${r.name}`}
                    .value=${r.name}
                    @keydown=${(e: KeyboardEvent) => {
                      if (e.key === 'Enter') on.rename(r, e.target as HTMLInputElement);
                      if (e.key === 'Escape') on.cancelRename();
                    }}
                    @blur=${(e: Event) => on.rename(r, e.target as HTMLInputElement)}
                  />`
                : html`<span data-name>${r.name}</span>`}
            </td>
            <td class="label" data-label>${r.hidden ? '(hidden)' : label}</td>
            <td class=${`status-${r.status}`} title=${errorOf(r)}>${at.busy.has(r.id) ? BUSY_WORDS[at.busy.get(r.id)!] : (STATUS_WORDS[r.status] ?? r.status)}${r.status === 'failed' && r.error ? `: ${errorOf(r)}` : ''}</td>
            <td class="num">${last ? Number(last.step) : 0} / ${Number((r.settings as unknown as Settings).steps ?? 0)}</td>
            <td class="num">${n4(last?.loss)}</td>
            <td class="num">${n4(ev?.loss)}</td>
            <td class="num">${ev ? `${(100 * ev.metric).toFixed(1)} % ${METRIC_WORDS[ev.metric_name] ?? ev.metric_name}` : '–'}</td>
            <td class="num">${seconds(r.elapsed_ms)}</td>
            <td class="num">${r.steps_per_s ? r.steps_per_s.toFixed(1) : '–'}</td>
            <td data-backend=${r.backend?.kind ?? ''} title=${backendDetail(r.backend)}>${backendText(r.backend)}</td>
            <td>
              <div class="row-actions">
                <button @click=${() => on.hide(r, !r.hidden)} aria-pressed=${r.hidden ? 'true' : 'false'}>${r.hidden ? msg('show') : msg('hide')}</button>
                <button @click=${() => on.startRename(r)}>${msg('rename')}</button>
                <button @click=${() => on.remove(r)} aria-label=${msg(str`delete ${r.name}`)}>${msg('delete')}</button>
                <button @click=${() => on.again(r)} data-again>${msg('train again with one change')}</button>
                <button @click=${() => on.use(r, label)} data-use ?disabled=${r.log.length === 0}>${msg('use this run')}</button>
                <button @click=${() => on.exportRun(r)} ?disabled=${r.log.length === 0}>.safetensors</button>
                <button @click=${() => on.exportCsv(r)} ?disabled=${r.log.length === 0}>CSV</button>
                ${typeof r.settings.text === 'string' ? html`<button @click=${() => on.exportText(r)} data-export-text>.txt</button>` : nothing}
              </div>
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

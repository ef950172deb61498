// One live plot of the lab, drawn by uPlot: lines over training steps, axes with their
// units, the values under the pointer in the legend, and SVG/PNG export of the plot as it
// is drawn (../ui/export.ts). The canvas takes its colours from the page's palette, read
// when the plot is built, so it follows the light and dark themes.
//
// uPlot's stylesheet is a file of the build linked inside the shadow root (the page's
// Content-Security-Policy allows styles from the page's own origin only); uPlot itself
// sizes and places its parts through the CSSOM, which the policy allows.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { getLocale, LocalizedElement } from '../i18n/locale';
import uPlot from 'uplot';
import uplotCss from 'uplot/dist/uPlot.min.css?url';
import { panel } from '../ui/shared';
import { download, svgToPng, viewToSvg } from '../ui/export';

/** One line of a plot. */
export interface Line {
  label: string;
  color: string;
  /** [x, y] points in increasing x; a null y leaves a gap. */
  points: readonly (readonly [number, number | null])[];
  /** A dash pattern in CSS pixels (held-out values, planned curves). */
  dash?: number[];
  width?: number;
  /** Draw a dot at each point and no line (the current step's marker). */
  dotsOnly?: boolean;
}

/** The palette's colours as the canvas needs them (CSS variables do not reach a canvas). */
function paletteOf(el: Element) {
  const cs = getComputedStyle(el);
  const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
  return { fg: v('--tp-fg', '#1c1f24'), muted: v('--tp-muted', '#5b6470'), line: v('--tp-line', '#d9dde3') };
}

/** Numbers on an axis: short, exponent form for the very small or large. */
function tick(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e5) return v.toExponential(1);
  return String(Number(v.toPrecision(3)));
}

/** A value in the legend: four significant digits. */
function value(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(3);
  return String(Number(v.toPrecision(4)));
}

export class TpLabPlot extends LocalizedElement {
  static properties = {
    heading: { type: String },
    yLabel: { attribute: false },
    xLabel: { attribute: false },
    lines: { attribute: false },
    yLog: { attribute: false },
    themeKey: { attribute: false },
    caption: { attribute: false },
    empty: { attribute: false },
  };

  /** The plot's title (above it, and in exported pictures). */
  heading = '';
  /** The y axis's name with its unit. */
  yLabel = '';
  xLabel = '';
  lines: readonly Line[] = [];
  /** Plot y on a log₁₀ axis (non-positive values are left out). */
  yLog = false;
  /** Changes when the page's colours change (the plot is then rebuilt in the new palette). */
  themeKey = '';
  /** What an exported picture's caption says beside the title. */
  caption: { model: string; settings: string } = { model: '', settings: '' };
  /** What the plot says when no run has points. */
  empty = '';

  /** The colours the canvas was last drawn in (the page's palette when it was built). */
  palette: { fg: string; muted: string; line: string } | null = null;
  private chart: uPlot | null = null;
  private shape = '';
  private resize: ResizeObserver | null = null;
  private said = '';

  static styles = [
    panel,
    css`
      :host {
        display: block;
        min-width: 0;
      }
      .card {
        padding: 8px 10px;
        margin: 0;
      }
      h3 {
        font-size: var(--tp-text-md);
        margin: 0;
      }
      .head {
        display: flex;
        align-items: baseline;
        gap: 6px;
        margin-bottom: var(--tp-space-1);
      }
      .head .sp {
        flex: 1;
      }
      .head button {
        padding: 0 7px;
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
      }
      .plot {
        min-height: 40px;
      }
      .none {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin: 6px 0;
      }
      .said {
        font-size: var(--tp-text-xs);
        color: var(--tp-error);
      }
      /* uPlot's legend, in the page's type and colours. */
      .plot .u-legend {
        font-size: var(--tp-text-xs);
        color: var(--tp-fg);
        text-align: left;
      }
      .plot .u-legend .u-marker {
        border-radius: 2px;
      }
      .plot .u-legend th {
        font-weight: normal;
      }
      .plot .u-legend.u-inline tr {
        margin-right: 10px;
      }
      .plot .uplot {
        font-family: var(--tp-sans);
        width: auto;
      }
    `,
  ];

  /** The uPlot instance (null before the first run has points). */
  get uplot(): uPlot | null {
    return this.chart;
  }

  /** The numbers drawn now, per line: what the canvas shows (read by the browser tests). */
  drawn(): { label: string; points: [number, number][] }[] {
    const u = this.chart;
    if (!u) return [];
    const xs = u.data[0] as number[];
    return u.series.slice(1).map((s, i) => {
      const ys = u.data[i + 1] as (number | null | undefined)[];
      const points: [number, number][] = [];
      xs.forEach((x, k) => {
        const y = ys[k];
        if (y !== null && y !== undefined) points.push([x, y]);
      });
      return { label: String(s.label ?? ''), points };
    });
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resize?.disconnect();
    this.resize = null;
    this.chart?.destroy();
    this.chart = null;
    this.shape = '';
  }

  private data(): uPlot.AlignedData {
    const lines = this.lines;
    if (!lines.length) return [[]];
    const tables: uPlot.AlignedData[] = lines.map((l) => {
      const xs: number[] = [];
      const ys: (number | null)[] = [];
      for (const [x, y] of l.points) {
        xs.push(x);
        ys.push(y === null || !Number.isFinite(y) || (this.yLog && y <= 0) ? null : y);
      }
      return [xs, ys] as uPlot.AlignedData;
    });
    return tables.length === 1 ? tables[0] : uPlot.join(tables);
  }

  private box(): HTMLElement | null {
    return this.renderRoot.querySelector<HTMLElement>('.plot');
  }

  private build() {
    const box = this.box();
    if (!box) return;
    this.chart?.destroy();
    this.chart = null;
    if (!this.lines.some((l) => l.points.length)) return;
    const pal = paletteOf(this);
    this.palette = pal;
    const axis = (label: string): uPlot.Axis => ({
      label,
      stroke: pal.muted,
      labelFont: '12px system-ui, sans-serif',
      font: '11px system-ui, sans-serif',
      grid: { stroke: pal.line, width: 1 },
      ticks: { stroke: pal.line, width: 1, size: 4 },
      values: (_u, vals) => vals.map((v) => (v === null ? '' : tick(v))),
    });
    const series: uPlot.Series[] = [
      { label: msg('step'), value: (_u, v) => (v === null ? '–' : String(Math.round(v))) },
      ...this.lines.map(
        (l): uPlot.Series =>
          l.dotsOnly
            ? {
                label: l.label,
                stroke: l.color,
                fill: l.color,
                paths: () => null,
                points: { show: true, size: 9, stroke: l.color, fill: l.color },
                value: (_u, v) => value(v),
                spanGaps: false,
              }
            : {
                label: l.label,
                stroke: l.color,
                width: l.width ?? 1.6,
                dash: l.dash,
                spanGaps: true,
                points: { show: false },
                value: (_u, v) => value(v),
              },
      ),
    ];
    const width = Math.max(200, Math.floor(box.clientWidth || 360));
    this.chart = new uPlot(
      {
        width,
        height: 190,
        series,
        scales: { x: { time: false }, y: this.yLog ? { distr: 3 } : { auto: true } },
        axes: [axis(this.xLabel || msg('training step')), { ...axis(this.yLabel), size: 56 }],
        legend: { live: true },
        cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      },
      this.data(),
      box,
    );
  }

  protected firstUpdated(): void {
    const box = this.box();
    if (!box || typeof ResizeObserver === 'undefined') return;
    let last = box.clientWidth;
    this.resize = new ResizeObserver(() => {
      const w = box.clientWidth;
      if (this.chart && w > 0 && Math.abs(w - last) > 1) {
        last = w;
        this.chart.setSize({ width: Math.max(200, Math.floor(w)), height: 190 });
      }
    });
    this.resize.observe(box);
  }

  protected updated(): void {
    // The same lines in the same colours: new numbers only. Anything else: build anew.
    const shape = JSON.stringify([getLocale(), this.themeKey, this.yLog, this.yLabel, this.lines.map((l) => [l.label, l.color, l.dash, l.dotsOnly, l.width])]);
    const hasPoints = this.lines.some((l) => l.points.length);
    if (shape !== this.shape || !this.chart || !hasPoints) {
      this.shape = shape;
      this.build();
    } else {
      this.chart.setData(this.data());
    }
  }

  private async save(kind: 'svg' | 'png') {
    try {
      const card = this.renderRoot.querySelector('.card');
      if (!card) return;
      const p = viewToSvg(card, { title: this.heading, model: this.caption.model, settings: this.caption.settings });
      const stem = `lab-${this.heading.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
      if (kind === 'svg') download(new Blob([p.svg], { type: 'image/svg+xml' }), `${stem}.svg`);
      else download(await svgToPng(p), `${stem}.png`);
      this.said = '';
    } catch (e) {
      this.said = msg(str`Could not make the picture: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.requestUpdate();
  }

  render() {
    const any = this.lines.some((l) => l.points.length);
    return html`<link rel="stylesheet" href=${uplotCss} />
      <figure class="card" aria-label=${this.heading}>
        <div class="head">
          <h3>${this.heading}</h3>
          <span class="sp"></span>
          <span class="said" role="status">${this.said}</span>
          <button data-export-skip @click=${() => void this.save('svg')} aria-label=${msg(str`save the plot ${this.heading} as an SVG picture`)}>SVG</button>
          <button data-export-skip @click=${() => void this.save('png')} aria-label=${msg(str`save the plot ${this.heading} as a PNG picture`)}>PNG</button>
        </div>
        ${any ? nothing : html`<p class="none">${this.empty || msg("No run yet.")}</p>`}
        <div class="plot"></div>
      </figure>`;
  }
}

customElements.define('tp-lab-plot', TpLabPlot);

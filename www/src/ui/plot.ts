// A small SVG line chart for the explanation views: several named series over one x
// axis (linear or log₂), each point a circle carrying its numbers in data attributes so a
// test (or a screen reader, through the table beside it) reads exactly what is drawn.
// The charts here have tens of points; SVG keeps them crisp, accessible and stylable
// without a plotting library in the first load.

import { html, svg, type SVGTemplateResult, type TemplateResult } from 'lit';
import { msg } from '@lit/localize';

export interface Series {
  name: string;
  /** [x, y] pairs; a non-finite y leaves a gap. */
  points: [number, number][];
  /** A CSS colour. */
  color: string;
  dashed?: boolean;
  /** Draw a circle at each point (default true). */
  dots?: boolean;
}

export interface ChartOptions {
  width?: number;
  height?: number;
  xLabel: string;
  yLabel: string;
  /** Plot x on a log₂ axis. */
  xLog?: boolean;
  /** Plot y on a log₁₀ axis. */
  yLog?: boolean;
  /** The y range; default: the data's range (from 0 on a linear axis). */
  yMin?: number;
  yMax?: number;
  /** Extra horizontal guides: [y, label]. */
  guides?: [number, string][];
  /** A vertical guide at this x, with a label. */
  vguide?: [number, string];
  /** Ticks on the x axis (default: the first series' x values, thinned). */
  xTicks?: number[];
}

const PAD = { l: 52, r: 20, t: 12, b: 34 };

function niceTicks(lo: number, hi: number, n = 4): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(6)));
  return out;
}

function tickText(v: number): string {
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.01 || a >= 1e5)) return v.toExponential(0);
  return String(Number(v.toPrecision(3)));
}

/** The chart as an SVG fragment (put it inside an <svg> with the returned viewBox). */
export function lineChart(series: Series[], o: ChartOptions): { viewBox: string; body: SVGTemplateResult } {
  const W = o.width ?? 420;
  const H = o.height ?? 220;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => Number.isFinite(y) && (!o.yLog || y > 0));
  const fx = (x: number) => (o.xLog ? Math.log2(x) : x);
  const fy = (y: number) => (o.yLog ? Math.log10(y) : y);
  const x0 = fx(Math.min(...xs));
  const x1 = fx(Math.max(...xs));
  const yLo = o.yMin ?? (o.yLog ? Math.min(...ys) : Math.min(0, ...ys));
  const yHi = o.yMax ?? Math.max(...ys);
  const y0 = fy(yLo);
  const y1 = fy(yHi) === y0 ? y0 + 1 : fy(yHi);
  const X = (x: number) => PAD.l + ((fx(x) - x0) / (x1 - x0 || 1)) * (W - PAD.l - PAD.r);
  const Y = (y: number) => H - PAD.b - ((fy(Math.min(Math.max(y, yLo), yHi)) - y0) / (y1 - y0)) * (H - PAD.t - PAD.b);
  const yTicks = o.yLog
    ? niceTicks(y0, y1, 4).filter((e) => Number.isInteger(e)).map((e) => 10 ** e)
    : niceTicks(yLo, yHi, 4);
  let xTicks = o.xTicks ?? [...new Set(series[0]?.points.map((p) => p[0]) ?? [])];
  if (xTicks.length > 12) xTicks = xTicks.filter((_, i) => i % Math.ceil(xTicks.length / 10) === 0);
  const path = (s: Series) => {
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (!Number.isFinite(y) || (o.yLog && y <= 0)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`;
      pen = true;
    }
    return d;
  };
  const body = svg`
    ${yTicks.map((v) => svg`<line x1=${PAD.l} x2=${W - PAD.r} y1=${Y(v)} y2=${Y(v)} stroke="var(--tp-line)" stroke-width="0.5"></line>
      <text x=${PAD.l - 4} y=${Y(v) + 3} text-anchor="end" font-size="10" fill="var(--tp-muted)">${tickText(v)}</text>`)}
    ${xTicks.map((v) => svg`<text x=${X(v)} y=${H - PAD.b + 13} text-anchor="middle" font-size="10" fill="var(--tp-muted)">${tickText(v)}</text>`)}
    <line x1=${PAD.l} y1=${H - PAD.b} x2=${W - PAD.r} y2=${H - PAD.b} stroke="var(--tp-muted)"></line>
    <line x1=${PAD.l} y1=${PAD.t} x2=${PAD.l} y2=${H - PAD.b} stroke="var(--tp-muted)"></line>
    ${(o.guides ?? []).map(([y, label]) => svg`<line x1=${PAD.l} x2=${W - PAD.r} y1=${Y(y)} y2=${Y(y)} stroke="var(--tp-warn)" stroke-dasharray="3 3"></line>
      <text x=${W - PAD.r} y=${Y(y) - 3} text-anchor="end" font-size="10" fill="var(--tp-fg)">${label}</text>`)}
    ${o.vguide
      ? svg`<line x1=${X(o.vguide[0])} x2=${X(o.vguide[0])} y1=${PAD.t} y2=${H - PAD.b} stroke="var(--tp-warn)" stroke-dasharray="3 3"></line>
        <text x=${X(o.vguide[0]) + 3} y=${PAD.t + 9} font-size="10" fill="var(--tp-fg)">${o.vguide[1]}</text>`
      : ''}
    ${series.map(
      (s) => svg`<path d=${path(s)} fill="none" stroke=${s.color} stroke-width="2" stroke-dasharray=${s.dashed ? '5 3' : 'none'}></path>
        ${s.dots === false
          ? ''
          : s.points
              .filter(([, y]) => Number.isFinite(y) && (!o.yLog || y > 0))
              .map(([x, y]) => svg`<circle cx=${X(x)} cy=${Y(y)} r="3" fill=${s.color} data-series=${s.name} data-x=${x} data-y=${y}><title>${s.name}: ${tickText(x)} → ${tickText(y)}</title></circle>`)}`,
    )}
    <text x=${(W + PAD.l) / 2} y=${H - 4} text-anchor="middle" font-size="11" fill="var(--tp-muted)">${o.xLabel}</text>
    <text x="11" y=${(H - PAD.b + PAD.t) / 2} text-anchor="middle" font-size="11" fill="var(--tp-muted)" transform=${`rotate(-90 11 ${(H - PAD.b + PAD.t) / 2})`}>${o.yLabel}</text>
  `;
  return { viewBox: `0 0 ${W} ${H}`, body };
}

/** A legend row for the series of a chart. */
export function legendItems(series: Series[]): { name: string; color: string; dashed: boolean }[] {
  return series.map((s) => ({ name: s.name, color: s.color, dashed: !!s.dashed }));
}

/** A short line in a series' colour for a legend (an SVG, so no inline style is needed).
 * Named by its line style, which is what tells the series apart without colour. */
export function swatch(color: string, dashed = false): TemplateResult {
  return html`<svg width="18" height="8" role="img" aria-label=${dashed ? msg('dashed line') : msg('solid line')}><line x1="0" y1="4" x2="18" y2="4" stroke=${color} stroke-width="3" stroke-dasharray=${dashed ? '4 2' : 'none'}></line></svg>`;
}

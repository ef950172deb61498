// Colours of the lab's runs: one per run, told apart by people with the common colour
// vision deficiencies (after Okabe and Ito), in a lighter set for the dark theme.

export type Theme = 'light' | 'dark';

const LIGHT = ['#0b62b8', '#c84f00', '#00875f', '#b8458c', '#9c7000', '#3f8fc9', '#6b4fc4', '#4d4d4d'];
const DARK = ['#79b4ff', '#ff9d5c', '#4fd6a6', '#f291cf', '#f0c350', '#8fd3ff', '#b9a6ff', '#d0d0d0'];

/** The colour of the i-th run. */
export function runColor(i: number, theme: Theme): string {
  const set = theme === 'dark' ? DARK : LIGHT;
  return set[((i % set.length) + set.length) % set.length];
}

function rgb(hex: string): [number, number, number] {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex.trim());
  return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : [128, 128, 128];
}

/** `color` moved a fraction `t` of the way towards `toward` (a lighter or darker shade). */
export function shade(color: string, toward: string, t: number): string {
  const a = rgb(color);
  const b = rgb(toward);
  const k = Math.max(0, Math.min(1, t));
  return `#${a.map((v, i) => Math.round(v + (b[i] - v) * k).toString(16).padStart(2, '0')).join('')}`;
}

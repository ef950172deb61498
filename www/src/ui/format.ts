// Numbers as a reader reads them. Every component that prints a number the engine sent
// goes through one of these, so `p = 0.10000000149011612` (an f32 setting widened to f64)
// reads `p = 0.1`, a probability reads 0.123, a count reads 12,345, and a value too small
// or too large for decimals reads 1.2e-5. Chinese writes numbers as English does (the
// same digits, comma groups and decimal point), so one form serves both languages; the
// grouping goes through Intl with the interface's language all the same.
//
// No DOM, no state: tests/unit/format.test.mjs checks each rule.

/** −∞, ∞ and NaN as the page writes them (∞ has no ASCII form). */
function special(x: number): string | null {
  if (x === Number.NEGATIVE_INFINITY) return '−∞';
  if (x === Number.POSITIVE_INFINITY) return '∞';
  if (Number.isNaN(x)) return 'NaN';
  return null;
}

// Signs stay the ASCII hyphen-minus: what the page prints can be read back as a number
// (Number(text)) by scripts, tests and screen readers alike.
/** `1.2e-5`, `1.2e5` (no `+`). */
function expo(x: number, digits: number): string {
  return x.toExponential(digits).replace('e+', 'e');
}

const groupers = new Map<string, Intl.NumberFormat>();
function grouper(lang: string): Intl.NumberFormat {
  let g = groupers.get(lang);
  if (!g) {
    g = new Intl.NumberFormat(lang === 'zh-Hans' ? 'zh-Hans-CN' : 'en-US', { maximumFractionDigits: 0 });
    groupers.set(lang, g);
  }
  return g;
}

/** The interface's language, as the document says it ('en' where none). */
function docLang(): string {
  return typeof document !== 'undefined' && document.documentElement.lang.startsWith('zh') ? 'zh-Hans' : 'en';
}

/**
 * A measured value to `sig` significant digits, in its shortest form: 0.1, 0.0123, 12.3,
 * 1.2e-5; whole numbers up to 1e5 as they are (4000), larger ones with an exponent.
 */
export function num(x: number, sig = 4): string {
  const s = special(x);
  if (s) return s;
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1e-4 || a >= 1e6) return expo(x, Math.max(0, sig - 1)).replace(/\.?0+e/, 'e');
  return String(Number(x.toPrecision(sig)));
}

/**
 * A value with `digits` decimals (probabilities, scores: 0.123), or with an exponent where
 * those decimals would show nothing (1.2e-5) or too much (1.2e5).
 */
export function fixed(x: number, digits = 3): string {
  const s = special(x);
  if (s) return s;
  const a = Math.abs(x);
  if (a !== 0 && (a < 10 ** -digits || a >= 1e5)) return expo(x, 2);
  const t = x.toFixed(digits);
  // -0.000 reads as 0.000.
  return Number(t) === 0 ? (0).toFixed(digits) : t;
}

/** A count in groups of three (12,345 parameters), in the interface's language. */
export function int(n: number, lang: string = docLang()): string {
  const s = special(n);
  if (s) return s;
  return grouper(lang).format(Math.round(n));
}

/** A share in [0, 1] as a percentage with `digits` decimals (12.5 %). */
export function percent(x: number, digits = 1): string {
  const s = special(x);
  if (s) return s;
  return `${(100 * x).toFixed(digits)} %`;
}

/** A size as the page writes it: "812 B", "340 kB", "1.2 MB", "4.3 GB". */
export function bytes(n: number): string {
  const s = special(n);
  if (s) return s;
  const unit = (x: number, u: string) => `${x.toFixed(x >= 10 ? 0 : 1)} ${u}`;
  if (n >= 1e9) return unit(n / 1e9, 'GB');
  if (n >= 1e6) return unit(n / 1e6, 'MB');
  if (n >= 1e3) return unit(n / 1e3, 'kB');
  return `${n} B`;
}

/** Milliseconds as the page writes a duration (0.42 ms, 12.3 ms, 1.25 s). */
export function ms(x: number): string {
  const s = special(x);
  if (s) return s;
  if (x >= 1000) return `${num(x / 1000, 3)} s`;
  return `${num(x, 3)} ms`;
}

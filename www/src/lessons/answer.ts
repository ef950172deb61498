// Reading a typed answer: the number a learner types off a view, in the forms a person
// writes it ("0.0011", "1.1e-3", "1,5", full-width digits from a Chinese input method).
// Anything else (a word, a trailing "%") is not a number, and nothing is committed.

/** The number typed, or null when the text is not one. */
export function parseNumber(text: string): number | null {
  let t = text
    .trim()
    // Full-width digits and signs (a Chinese input method) as their ASCII forms.
    .replace(/[\uff10-\uff19]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0xfee0))
    .replace(/[\uff0e\u3002]/g, '.')
    .replace(/[\uff0c]/g, ',')
    .replace(/[\u2212\uff0d]/g, '-')
    .replace(/[\uff0b]/g, '+')
    .replace(/[\s\u00a0\u202f]/g, '');
  // One comma and no point: a decimal comma ("1,5"); otherwise commas group thousands.
  if (!t.includes('.') && (t.match(/,/g) ?? []).length === 1 && !/,\d{3}$/.test(t)) t = t.replace(',', '.');
  else t = t.replace(/,(?=\d{3}(\D|$))/g, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return null;
  const x = Number(t);
  return Number.isFinite(x) ? x : null;
}

/** Is `x` within `tolerance` of the engine's value `expected`? */
export function isRight(x: number, expected: number, tolerance: number): boolean {
  // A hair of slack for the decimal form of an f32 the page printed.
  return Math.abs(x - expected) <= Math.max(0, tolerance) + Math.abs(expected) * 1e-6 + 1e-12;
}

// Values handed to the views stay the same objects while their numbers stay the same, so a
// view does not draw again for a change that is not its own (see `PlaygroundStore.keep`).

/** One empty list for every "nothing yet" (a fresh `[]` would read as a change to a view). */
export const EMPTY: never[] = Object.freeze([]) as unknown as never[];

/** Structural equality of plain values: primitives, arrays and plain objects of them. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!(k in b) || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

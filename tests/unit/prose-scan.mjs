// What tests/unit/prose-numbers.test.mjs looks for in the page's view and lesson code: a
// number typed into a sentence. Every figure about a model (a ratio such as "2×", a count,
// a percentage, a decimal) is the engine's and reaches a sentence as a placeholder `${…}`
// of its msg() string; the text around the placeholders holds no digits but those of
// formulas, symbols and the few constants listed in ALLOWED below, each with its reason.

/** The first argument of every `msg(` call in `source`: its literal text, placeholders as `⟨⟩`, and its line. */
export function msgStrings(source) {
  const out = [];
  const re = /\bmsg\(\s*/g;
  let m;
  while ((m = re.exec(source))) {
    const at = m.index + m[0].length;
    const lit = literalAt(source, at);
    if (lit) out.push({ text: lit.text, line: source.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** A string or template literal (optionally tagged `str` / `html`) starting at `i`, or null. */
function literalAt(s, i) {
  const tag = /^(str|html)\s*`/.exec(s.slice(i, i + 8));
  if (tag) return template(s, i + tag[0].length);
  if (s[i] === '`') return template(s, i + 1);
  if (s[i] === "'" || s[i] === '"') return quoted(s, i);
  return null;
}

function quoted(s, i) {
  const q = s[i];
  let text = '';
  for (let k = i + 1; k < s.length; k++) {
    if (s[k] === '\\') {
      text += s[k + 1];
      k++;
    } else if (s[k] === q) return { text, end: k + 1 };
    else text += s[k];
  }
  return null;
}

/** A template literal's text from just after its opening backtick; each `${…}` becomes ⟨⟩. */
function template(s, i) {
  let text = '';
  for (let k = i; k < s.length; k++) {
    if (s[k] === '\\') {
      text += s[k + 1];
      k++;
    } else if (s[k] === '`') return { text, end: k + 1 };
    else if (s[k] === '$' && s[k + 1] === '{') {
      k = skipExpression(s, k + 2) - 1;
      text += '⟨⟩';
    } else text += s[k];
  }
  return null;
}

/** The index just after the `}` that closes an expression starting at `i` (strings and templates inside skipped). */
function skipExpression(s, i) {
  let depth = 1;
  for (let k = i; k < s.length; k++) {
    const c = s[k];
    if (c === "'" || c === '"') k = quoted(s, k).end - 1;
    else if (c === '`') k = template(s, k + 1).end - 1;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return k + 1;
  }
  return s.length;
}

/**
 * Digits that are not figures about a model, each with why. A pattern's match is blanked
 * before the text is searched for digits.
 */
export const ALLOWED = [
  // Symbols that carry an index or a size in their name: W_1, b₁, head_1, x_t, L2 norm, f32, d_k.
  { re: /[A-Za-z_\u0370-\u03ff][0-9]+/g, why: 'an index or size written into a symbol (W_1, L2, f32)' },
  { re: /_[0-9]+/g, why: 'a subscript' },
  // A number inside a formula: next to ·, /, ^, √, a bracket or an exponent sign.
  { re: /[0-9.]+\s*(?=[·/^(]|\s*[·/]\s*[A-Za-z(√]|\s*\([a-z])/g, why: 'a coefficient of a formula (2·C·n, 1/√d_model)' },
  { re: /(?<=[·/^√]\s?)[0-9.]+/g, why: 'a term of a formula (1/(1 − p), √(d_model/2), 1/√d_k)' },
  { re: /[0-9]+(?=[A-Za-z])/g, why: 'a coefficient written against its symbol (2i)' },
  { re: /(?<=\^\(?−?)[0-9.]+/g, why: 'an exponent' },
  // 0 and 1 as mathematical constants: weight 0, probability 1, between −1 and 1, 0 or −∞.
  { re: /(?<![0-9.])[−-]?[01](?!\.?[0-9]|\s*[%×])/g, why: 'the constants 0 and 1' },
  // A table's own rows and a layer's label ("row 2", "layer 2"): names of the drawing, not measurements.
  { re: /(?<=\b(?:row|rows|layer|L) )[0-9]+\b/g, why: 'a row or layer label' },
  // Constants of the formulas the page writes out: powers of ten (10⁻⁵, ε) and the base of
  // sinusoidal positions and RoPE (10000).
  { re: /10(?=[⁻⁰¹²³⁴⁵⁶⁷⁸⁹])/g, why: 'a power of ten in a formula' },
  { re: /\b10000\b/g, why: 'the base of sinusoidal positions and RoPE' },
  // The 2017 paper (Vaswani et al.), named by its year.
  { re: /\b2017\b/g, why: 'a year' },
];

/** Whole strings that hold a number on purpose, not about a model: [file suffix, text, why]. */
export const ALLOWED_STRINGS = [
  ['lessons/lessons.ts', 'Set the warmup to 400 steps.', "the lesson's instruction: a value for the learner to type, not a measurement"],
  ['lessons/lessons.ts', 'The peak is always at step = warmup, and a shorter warmup gives a higher peak: (d_model · warmup)^−0.5.', 'a formula'],
  ['components/tp-cost.ts', 'FLOPs are 2 × the multiply-adds of matrix products; lookups, norms, softmax and activations are left out.', 'the definition of a FLOP count'],
  ['components/tp-output.ts', 'Show the top 12', "the view's own list length, not a model figure"],
  ['components/tp-schedule.ts', 'warmup must be a whole number of steps from 100 to 200000', "the range the input accepts"],
  [
    'components/tp-beams.ts',
    "Each step extends every kept hypothesis by every token and keeps the most probable extensions (log p, the sum of the tokens' log-probabilities). A hypothesis that ends with &lt;eos&gt; is finished; finished ones are compared by their score, log p divided by the length penalty ((5 + length)/6)<sup>0.6</sup>, so a longer answer is not punished just for having more tokens. Each node shows its token, then log p / score.",
    'the length-penalty formula (GNMT) with its constants',
  ],
  // The lab's experiments are titled by the settings their runs differ in (lab-view/fields.ts PRESETS, the runs beside each title).
  ['lab-view/fields.ts', 'No residual vs residual, 6 layers', "an experiment's own setting (its runs' n_layers), not a model's measurement"],
  ['lab-view/fields.ts', 'Post-LN vs pre-LN, 6 layers', "an experiment's own setting (its runs' n_layers), not a model's measurement"],
  ['lab-view/fields.ts', 'Warmup 400 vs 4000', "an experiment's own settings (its runs' warmup), not a model's measurement"],
  ['lab-view/fields.ts', 'Dropout 0 vs 0.3', "an experiment's own settings (its runs' dropout), not a model's measurement"],
  [
    'lab-view/fields.ts',
    'Where the steps run: auto times the run’s first steps on the CPU and on WebGPU and keeps WebGPU only where its losses agree with the CPU’s and it is faster per step; WebGPU only; or the CPU. The curves agree to about one part in 10,000; the run says where it ran and why.',
    'the tolerance tests/browser/lab-gpu.test.mjs holds a GPU run to against the CPU run (1e-4 relative)',
  ],
  ['components/tp-parallel.ts', "each time is the median of ⟨⟩ measurements, each an average of runs back to back spanning at least 20 ms (the page's clock ticks in tenths of a millisecond)", "how the page's own clock is read, not a model figure"],
];

/** The digits left in a msg() string once placeholders and the allowed patterns are removed. */
export function strayNumbers(text) {
  let t = text.replaceAll('⟨⟩', ' ');
  for (const { re } of ALLOWED) t = t.replace(re, (m) => ' '.repeat(m.length));
  return [...t.matchAll(/[0-9]+(?:[.,][0-9]+)?\s*(?:%|×)?/g)].map((m) => m[0].trim());
}

/** Every msg() string of `source` (from `file`) that shows a typed number, with the numbers. */
export function findTypedNumbers(source, file = '') {
  return msgStrings(source)
    .filter(({ text }) => !ALLOWED_STRINGS.some(([f, t]) => file.endsWith(f) && t === text))
    .map(({ text, line }) => ({ file, line, text, numbers: strayNumbers(text) }))
    .filter((f) => f.numbers.length > 0);
}

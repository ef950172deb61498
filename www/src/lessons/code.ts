// The completion code a student hands in at the end of an assignment: who they are, which
// assignment, each assigned lesson's answer and whether it was right, and the final metric of
// the assigned lab run, packed into bytes with a version, a length and a CRC-32, and written
// in Crockford's base32 after `TP` (letters and digits only: a QR code's compact alphanumeric
// mode holds it, and a person can type it; O is read as 0, I and L as 1). The layout is
// www/README.md's "Completion codes". Pure functions, no DOM, no strings for people: a refused
// code says why by a reason name the page words.

/** The format's version, the first byte of every code. */
export const CODE_VERSION = 1;
/** What every code starts with. */
export const CODE_PREFIX = 'TP';
/** Longest text read as a code (the longest code is 362 bytes: 580 characters and the prefix). */
export const MAX_CODE_TEXT = 600;
export const MAX_NAME_BYTES = 48;
export const MAX_ANSWER_BYTES = 15;
export const MAX_LESSONS = 16;
export const MAX_RUNS = 4;

export interface CodeLesson {
  /** The answer as committed (an option index or the number as typed); '' when not answered. */
  answer: string;
  answered: boolean;
  right: boolean;
  /** Tries so far (kept up to 63). */
  tries: number;
}

export interface CodeRun {
  /** The task's metric at the last evaluation, 0…1 (kept to 1/10000). */
  metric: number;
  /** The held-out loss at the last evaluation (kept to 1/1000, at most 65.535). */
  loss: number;
  /** Steps taken (kept up to 16777215). */
  steps: number;
}

export interface Completion {
  version: number;
  student: string;
  /** The assignment's id (assignmentId). */
  assignment: number;
  /** In the assignment's order. */
  lessons: CodeLesson[];
  runs: CodeRun[];
}

export type CodeRefusal = 'empty' | 'oversize' | 'not-a-code' | 'version' | 'truncated' | 'extra' | 'checksum' | 'malformed';

export type Decoded = { ok: true; code: Completion; text: string } | { ok: false; reason: CodeRefusal; version?: number };

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** CRC-32 (IEEE, as zip and PNG use it). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** FNV-1a, 32 bits, of a string's UTF-8 bytes. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(text)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function toBase32(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
}

/** Bytes of base32 text (Crockford's reading of O, I and L), or null for a character outside it. */
export function fromBase32(text: string): Uint8Array | null {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const ch of text.toUpperCase()) {
    const c = ch === 'O' ? '0' : ch === 'I' || ch === 'L' ? '1' : ch;
    const v = ALPHABET.indexOf(c);
    if (v < 0) return null;
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((acc >>> (bits - 8)) & 255);
      bits -= 8;
    }
    acc &= (1 << bits) - 1;
  }
  return Uint8Array.from(out);
}

/** The first `max` bytes of a string's UTF-8, never cutting a character. */
function utf8Cut(text: string, max: number): Uint8Array {
  const enc = new TextEncoder();
  let out = enc.encode(text);
  if (out.length <= max) return out;
  let s = '';
  for (const ch of text) {
    const next = enc.encode(s + ch);
    if (next.length > max) break;
    s += ch;
  }
  out = enc.encode(s);
  return out;
}

/** The assignment's id as people see it (seven base32 characters). */
export function assignmentLabel(id: number): string {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, id >>> 0);
  return toBase32(b);
}

/** A completion as its code text (`TP…`). Fields beyond the format's limits are cut to them. */
export function encodeCompletion(c: Omit<Completion, 'version'>): string {
  const out: number[] = [CODE_VERSION, 0, 0, (c.assignment >>> 24) & 255, (c.assignment >>> 16) & 255, (c.assignment >>> 8) & 255, c.assignment & 255];
  const name = utf8Cut(c.student, MAX_NAME_BYTES);
  out.push(name.length, ...name);
  const lessons = c.lessons.slice(0, MAX_LESSONS);
  out.push(lessons.length);
  for (const l of lessons) {
    const tries = Math.max(0, Math.min(63, Math.round(l.tries) || 0));
    out.push((l.answered ? 128 : 0) | (l.answered && l.right ? 64 : 0) | tries);
    if (l.answered) {
      const a = utf8Cut(l.answer, MAX_ANSWER_BYTES);
      out.push(a.length, ...a);
    }
  }
  const runs = c.runs.slice(0, MAX_RUNS);
  out.push(runs.length);
  for (const r of runs) {
    const m = Math.max(0, Math.min(10000, Math.round((Number.isFinite(r.metric) ? r.metric : 0) * 10000)));
    const loss = Math.max(0, Math.min(65535, Math.round((Number.isFinite(r.loss) ? r.loss : 65.535) * 1000)));
    const steps = Math.max(0, Math.min(0xffffff, Math.round(r.steps) || 0));
    out.push(m >> 8, m & 255, loss >> 8, loss & 255, (steps >> 16) & 255, (steps >> 8) & 255, steps & 255);
  }
  out[1] = (out.length + 4) >> 8;
  out[2] = (out.length + 4) & 255;
  const bytes = Uint8Array.from(out);
  const crc = crc32(bytes);
  const all = new Uint8Array(bytes.length + 4);
  all.set(bytes);
  new DataView(all.buffer).setUint32(bytes.length, crc);
  return CODE_PREFIX + toBase32(all);
}

/** Read a code's text (spaces and hyphens ignored, any case). Never throws. */
export function decodeCompletion(text: string): Decoded {
  if (typeof text !== 'string') return { ok: false, reason: 'not-a-code' };
  if (text.length > MAX_CODE_TEXT * 2) return { ok: false, reason: 'oversize' };
  const t = text.replace(/[\s-]/g, '').toUpperCase();
  if (t === '') return { ok: false, reason: 'empty' };
  if (t.length > MAX_CODE_TEXT) return { ok: false, reason: 'oversize' };
  if (!t.startsWith(CODE_PREFIX)) return { ok: false, reason: 'not-a-code' };
  const bytes = fromBase32(t.slice(CODE_PREFIX.length));
  if (!bytes) return { ok: false, reason: 'not-a-code' };
  // Shorter than the smallest code (a header, an empty name, no lessons, no runs, the CRC).
  if (bytes.length < 13) return { ok: false, reason: 'truncated' };
  if (bytes[0] !== CODE_VERSION) return { ok: false, reason: 'version', version: bytes[0] };
  if (bytes.length < 3) return { ok: false, reason: 'truncated' };
  const len = (bytes[1] << 8) | bytes[2];
  if (bytes.length < len) return { ok: false, reason: 'truncated' };
  // base32 pads to whole characters: at most one byte's worth of trailing bits is left over.
  if (bytes.length > len) return { ok: false, reason: 'extra' };
  if (len < 13) return { ok: false, reason: 'malformed' };
  const body = bytes.subarray(0, len - 4);
  const crc = new DataView(bytes.buffer, bytes.byteOffset + len - 4, 4).getUint32(0);
  if (crc32(body) !== crc) return { ok: false, reason: 'checksum' };
  let i = 3;
  const need = (n: number) => {
    if (i + n > body.length) throw new Error('short');
  };
  try {
    need(4);
    const assignment = new DataView(body.buffer, body.byteOffset + i, 4).getUint32(0);
    i += 4;
    need(1);
    const n = body[i++];
    if (n > MAX_NAME_BYTES) return { ok: false, reason: 'malformed' };
    need(n);
    const student = new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(i, i + n));
    i += n;
    need(1);
    const k = body[i++];
    if (k > MAX_LESSONS) return { ok: false, reason: 'malformed' };
    const lessons: CodeLesson[] = [];
    for (let j = 0; j < k; j++) {
      need(1);
      const s = body[i++];
      const answered = (s & 128) !== 0;
      let answer = '';
      if (answered) {
        need(1);
        const a = body[i++];
        if (a > MAX_ANSWER_BYTES) return { ok: false, reason: 'malformed' };
        need(a);
        answer = new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(i, i + a));
        i += a;
      } else if (s & 64) return { ok: false, reason: 'malformed' };
      lessons.push({ answer, answered, right: (s & 64) !== 0, tries: s & 63 });
    }
    need(1);
    const r = body[i++];
    if (r > MAX_RUNS) return { ok: false, reason: 'malformed' };
    const runs: CodeRun[] = [];
    for (let j = 0; j < r; j++) {
      need(7);
      const m = (body[i] << 8) | body[i + 1];
      const loss = (body[i + 2] << 8) | body[i + 3];
      const steps = (body[i + 4] << 16) | (body[i + 5] << 8) | body[i + 6];
      i += 7;
      if (m > 10000) return { ok: false, reason: 'malformed' };
      runs.push({ metric: m / 10000, loss: loss / 1000, steps });
    }
    if (i !== body.length) return { ok: false, reason: 'malformed' };
    return { ok: true, code: { version: CODE_VERSION, student, assignment, lessons, runs }, text: t };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
}

/** Every candidate code in pasted text (one per line, or separated by spaces or commas). */
export function codesIn(text: string): string[] {
  if (typeof text !== 'string') return [];
  return text
    .slice(0, 200_000)
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .slice(0, 500);
}

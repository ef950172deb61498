// The teacher's side of completion codes: reading codes (typed, pasted in bulk, or a QR code
// photographed), checking them against the assignment on the page, and the class table as
// CSV. No DOM here but the image decoding (a canvas).

import { msg, str } from '@lit/localize';
import { assignmentLabel, CODE_VERSION, codesIn, decodeCompletion, type Completion, type CodeRefusal } from '../lessons/code';
import type { Assignment } from '../lessons/assignment';

/** A code read: its student's completion, or why it was refused. */
export type Read = { ok: true; code: Completion; text: string } | { ok: false; text: string; why: string };

/** Why a code was refused, in the page's language. */
export function refusal(reason: CodeRefusal | 'assignment', extra?: { version?: number; of?: number }): string {
  switch (reason) {
    case 'empty':
      return msg('There is no code in it.', { id: 'teacher.code.empty' });
    case 'oversize':
      return msg('Too long to be a completion code.', { id: 'teacher.code.oversize' });
    case 'not-a-code':
      return msg('Not a completion code: codes start with TP and hold only letters and digits.', { id: 'teacher.code.not-a-code' });
    case 'version':
      return msg(str`Made by another version of the playground (format ${extra?.version ?? '?'}); this page reads format ${CODE_VERSION}.`, { id: 'teacher.code.version' });
    case 'truncated':
      return msg('Incomplete: characters are missing at the end.', { id: 'teacher.code.truncated' });
    case 'extra':
      return msg('Characters were added to the end of the code.', { id: 'teacher.code.extra' });
    case 'checksum':
      return msg('The checksum does not match: the code was edited or mistyped.', { id: 'teacher.code.checksum' });
    case 'malformed':
      return msg('The code’s contents do not make sense: it was edited or mistyped.', { id: 'teacher.code.malformed' });
    case 'assignment':
      return msg(str`The code belongs to another assignment (${assignmentLabel(extra?.of ?? 0)}), not to this one.`, { id: 'teacher.code.assignment' });
  }
}

/** Read every code of pasted text against the assignment (its id and lesson count). */
export function readCodes(text: string, a: Assignment): Read[] {
  return codesIn(text).map((t) => readCode(t, a));
}

export function readCode(t: string, a: Assignment): Read {
  const shown = t.length > 60 ? `${t.slice(0, 60)}…` : t;
  const d = decodeCompletion(t);
  if (!d.ok) return { ok: false, text: shown, why: refusal(d.reason, { version: d.version }) };
  if (d.code.assignment !== a.id || d.code.lessons.length !== a.lessons.length) return { ok: false, text: shown, why: refusal('assignment', { of: d.code.assignment }) };
  return { ok: true, code: d.code, text: d.text };
}

/** The text of a QR code in an image file (a photo of a student's screen), or null when none is found. */
export async function qrOfImage(file: Blob): Promise<string | null> {
  const bitmap = await createImageBitmap(file);
  // A phone photo is large: a QR code is still read at a longest side of 1600 pixels.
  const k = Math.min(1, 1600 / Math.max(bitmap.width, bitmap.height));
  const w = Math.max(1, Math.round(bitmap.width * k));
  const h = Math.max(1, Math.round(bitmap.height * k));
  const canvas = document.createElement('canvas');
  canvas.width = w;
  canvas.height = h;
  const g = canvas.getContext('2d', { willReadFrequently: true });
  if (!g) return null;
  g.drawImage(bitmap, 0, 0, w, h);
  bitmap.close();
  const img = g.getImageData(0, 0, w, h);
  // The decoder is loaded when the first photo is read, not with the page.
  const { default: jsQR } = await import('jsqr');
  const found = jsQR(img.data, w, h, { inversionAttempts: 'attemptBoth' });
  return found ? found.data : null;
}

/** One cell of CSV: quoted when needed; a leading = + - @ is prefixed so that a spreadsheet never runs it as a formula. */
export function csvCell(v: string | number): string {
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The class table as CSV: one row per student, per lesson its answer, right or not and the tries, then the lab run. */
export function classCsv(a: Assignment, rows: readonly Completion[]): string {
  const head = ['student', ...a.lessons.flatMap((l) => [`${l.id} answer`, `${l.id} right`, `${l.id} tries`]), 'run metric', 'run loss', 'run steps'];
  const lines = [head.map(csvCell).join(',')];
  for (const r of rows) {
    const run = r.runs[0];
    lines.push(
      [
        r.student,
        ...r.lessons.flatMap((l) => (l.answered ? [l.answer, l.right ? 'yes' : 'no', l.tries] : ['', '', 0])),
        run ? run.metric : '',
        run ? run.loss : '',
        run ? run.steps : '',
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

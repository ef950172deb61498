// A QR code (uqr) drawn into a canvas, black on white with a quiet border, each module a
// whole number of pixels so that a phone reads it off a screen or a projector.

import { encode } from 'uqr';

/** Draw `text` as a QR code about `px` pixels wide; returns the code's size in modules. */
export function drawQr(canvas: HTMLCanvasElement, text: string, px = 320): number {
  const qr = encode(text, { ecc: 'M', border: 2 });
  const scale = Math.max(2, Math.floor(px / qr.size));
  canvas.width = qr.size * scale;
  canvas.height = qr.size * scale;
  const g = canvas.getContext('2d');
  if (!g) return qr.size;
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = '#000000';
  qr.data.forEach((row, y) => row.forEach((dark, x) => dark && g.fillRect(x * scale, y * scale, scale, scale)));
  canvas.dataset.modules = String(qr.size);
  return qr.size;
}

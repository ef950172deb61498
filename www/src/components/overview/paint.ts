// The overview's small matrix pictures (head thumbnails, the FFN strip): one colour per cell,
// each cell `sx` × `sy` pixels (the CSS scales the canvas), the newest position's row outlined.

type Rgb = readonly [number, number, number];

/** The outline of the newest position's row: the overview's "newest" colour. */
const NEWEST = '#e4007c';

/**
 * Paint a rows × cols matrix into `canvas`, cell k = i·cols + j coloured by `colour(k)`, and
 * outline row `last` with a line `line` pixels wide (none when `last` is negative or the matrix
 * has one row).
 */
export function paintGrid(canvas: HTMLCanvasElement, rows: number, cols: number, sx: number, sy: number, colour: (k: number) => Rgb, last: number, line: number): void {
  const w = cols * sx;
  const h = rows * sy;
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(w, h);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const [r, g, b] = colour(i * cols + j);
      for (let y = 0; y < sy; y++) {
        for (let x = 0; x < sx; x++) {
          const o = ((i * sy + y) * w + j * sx + x) * 4;
          img.data[o] = r;
          img.data[o + 1] = g;
          img.data[o + 2] = b;
          img.data[o + 3] = 255;
        }
      }
    }
  }
  ctx.putImageData(img, 0, 0);
  if (last >= 0 && rows > 1) {
    ctx.strokeStyle = NEWEST;
    ctx.lineWidth = line;
    ctx.strokeRect(0.5, last * sy + 0.5, w - 1, sy - 1);
  }
}

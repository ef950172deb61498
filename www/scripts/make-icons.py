"""Draws the app icons in www/public/icons/: a causal attention map (a lower triangle of
viridis cells, the diagonal brightest) on a dark square. Pure Python, no packages:
`python3 www/scripts/make-icons.py` rewrites the PNGs."""

import struct
import zlib
from pathlib import Path

VIRIDIS = [(68, 1, 84), (59, 81, 139), (33, 144, 141), (92, 200, 99), (253, 231, 37)]
BG = (20, 22, 26)
N = 6  # cells per side


def colour(t):
    x = t * (len(VIRIDIS) - 1)
    i = min(len(VIRIDIS) - 2, int(x))
    f = x - i
    return tuple(round(a + (b - a) * f) for a, b in zip(VIRIDIS[i], VIRIDIS[i + 1]))


def pixel(x, y, size, margin):
    inner = size - 2 * margin
    u, v = (x - margin) / inner, (y - margin) / inner
    if not (0 <= u < 1 and 0 <= v < 1):
        return BG
    i, j = int(v * N), int(u * N)
    cu, cv = u * N - j, v * N - i
    if cu < 0.08 or cv < 0.08 or j > i:  # gaps between cells; the masked upper triangle
        return BG
    return colour(1.0 if i == j else 0.15 + 0.5 * (j + 1) / (i + 1))


def png(size, margin):
    rows = b"".join(
        b"\x00" + bytes(c for x in range(size) for c in pixel(x, y, size, margin)) for y in range(size)
    )
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


out = Path(__file__).resolve().parent.parent / "public" / "icons"
out.mkdir(parents=True, exist_ok=True)
for size in (192, 512):
    (out / f"icon-{size}.png").write_bytes(png(size, size // 8))
    # Maskable: the map inside the central safe zone (80% circle).
    (out / f"maskable-{size}.png").write_bytes(png(size, size // 4))

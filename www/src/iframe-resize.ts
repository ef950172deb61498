// For a page that embeds the playground in an <iframe> of embed.html: sizes each frame to
// the playground inside it, from the frame's own `tplay-size` messages. Include it once,
// anywhere on the page: <script src=".../iframe-resize.js"></script>. Only the frame that
// sent a message is resized, and only its height changes.

window.addEventListener('message', (e: MessageEvent) => {
  const d = e.data as { type?: unknown; height?: unknown } | null;
  if (!d || d.type !== 'tplay-size' || typeof d.height !== 'number' || !Number.isFinite(d.height)) return;
  const height = Math.max(0, Math.min(100_000, d.height));
  for (const f of Array.from(document.querySelectorAll('iframe'))) {
    if (f.contentWindow === e.source) f.style.height = `${height}px`;
  }
});

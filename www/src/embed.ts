// The entry of embed.html, the page meant for an <iframe>: one playground whose views and
// settings come from the frame's URL hash (`embed.html#views=attention&causal=0`), which
// tells the page around it how tall it is, so the frame can fit its content without a
// scroll bar. The message is `{ type: 'tplay-size', height }` (CSS pixels) to the parent;
// iframe-resize.js applies it, or any listener of your own.

import './app';

let last = -1;
function post(): void {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === last || window.parent === window) return;
  last = height;
  window.parent.postMessage({ type: 'tplay-size', height }, '*');
}

new ResizeObserver(post).observe(document.documentElement);
window.addEventListener('load', post);

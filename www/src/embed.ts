// The entry of embed.html, the page meant for an <iframe>: one playground whose views and
// settings come from the frame's URL hash (`embed.html#views=attention&causal=0`), which
// tells the page around it how tall it is, so the frame can fit its content without a
// scroll bar. The message is `{ type: 'tplay-size', height }` (CSS pixels) to the parent;
// iframe-resize.js applies it, or any listener of your own.
//
// The frame is a guest: it installs no service worker (which would download the whole
// build, every model included, on the host's reader's connection) unless the host asks for
// it with `embed.html?sw=1#…`; it fetches only what its views need. Its document takes the
// playground's language, for screen readers.

if (new URLSearchParams(location.search).get('sw') === '1') void import('./app');

let last = -1;
function post(): void {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === last || window.parent === window) return;
  last = height;
  window.parent.postMessage({ type: 'tplay-size', height }, '*');
}

new ResizeObserver(post).observe(document.documentElement);
window.addEventListener('load', post);

/** The frame's document says the language its playground is drawn in. */
function followLanguage(): void {
  const el = document.querySelector('transformer-playground');
  if (!el) return;
  const copy = () => {
    const lang = el.getAttribute('lang');
    if (lang && document.documentElement.lang !== lang) document.documentElement.lang = lang;
  };
  new MutationObserver(copy).observe(el, { attributes: true, attributeFilter: ['lang'] });
  copy();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', followLanguage, { once: true });
else followLanguage();

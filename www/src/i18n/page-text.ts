// The words of the page around the element, in the page's language: the offline and
// new-version line (../app.ts) and the page's title. app.ts is kept free of Lit, so that
// playground.js stays one file; it reads these through the element's class
// (`TransformerPlayground.pageText()`), which holds the page's strings and their translations.

import { msg, str } from '@lit/localize';

export interface PageText {
  /** The document's title. */
  title: string;
  /** A new version is waiting. */
  update: string;
  /** The page and its models work offline now. */
  offlineReady: string;
  /** The offline copy could not be made, and why (the browser's words). */
  error: (detail: string) => string;
  reload: string;
  later: string;
  laterLabel: string;
  ok: string;
  okLabel: string;
}

export function pageText(): PageText {
  return {
    title: msg('Transformer Playground', { id: 'page.title' }),
    update: msg('A new version of the playground is ready.', { id: 'page.update' }),
    offlineReady: msg('The playground and its models are saved: it now works without a network.', { id: 'page.offline-ready' }),
    error: (detail) => msg(str`The page could not be saved for offline use: ${detail}`, { id: 'page.offline-error' }),
    reload: msg('Reload', { id: 'page.reload' }),
    later: msg('Later', { id: 'page.later' }),
    laterLabel: msg('Later: keep this version for now', { id: 'page.later-label' }),
    ok: msg('OK', { id: 'page.ok' }),
    okLabel: msg('OK, dismiss this note', { id: 'page.ok-label' }),
  };
}

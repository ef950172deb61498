// The list of shipped models (models/manifest.json), fetched once per address for every
// playground of the page.

import { msg, str } from '@lit/localize';

/** The model lists fetched, by URL: the playgrounds of one page fetch theirs once. */
const manifests = new Map<string, Promise<unknown>>();

export function manifestAt(url: string): Promise<unknown> {
  let p = manifests.get(url);
  if (!p) {
    p = fetch(url).then((resp) => {
      if (!resp.ok) throw new Error(msg(str`cannot load the model list (HTTP ${resp.status}) from ${url}: copy the playground's models folder there, or name where it is with the element's models attribute`, { id: 'start.no-models' }));
      return resp.json();
    });
    // A failure is not kept: the next playground (or a reload) asks again.
    p.catch(() => manifests.delete(url));
    manifests.set(url, p);
  }
  return p;
}

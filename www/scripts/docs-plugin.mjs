// A Vite plugin that puts docs/model.md and its Chinese translation docs/model.zh-Hans.md
// into the build under the same names, so the lessons' "the model, exactly" links (the
// Chinese page opens the Chinese one) work from any static host and offline, without a
// server of the repository's.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function docs() {
  return {
    name: 'tplay-docs',
    generateBundle() {
      for (const name of ['model.md', 'model.zh-Hans.md']) {
        this.emitFile({ type: 'asset', fileName: `docs/${name}`, source: readFileSync(join(here, '../../docs', name)) });
      }
    },
  };
}

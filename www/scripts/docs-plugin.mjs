// A Vite plugin that puts docs/model.md into the build as docs/model.md, so the lessons'
// "the model, exactly" links work from any static host and offline, without a server of
// the repository's.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function docs() {
  return {
    name: 'tplay-docs',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'docs/model.md', source: readFileSync(join(here, '../../docs/model.md')) });
    },
  };
}

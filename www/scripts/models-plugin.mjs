// A Vite plugin that puts the shipped models (models/*.safetensors and their manifest.json)
// into the build under models/, so they are part of the bundle the service worker keeps
// for offline use. `TPLAY_MODELS` may name another folder with the same layout.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function models() {
  const dir = resolve(process.env.TPLAY_MODELS ?? join(here, '../../models'));
  return {
    name: 'tplay-models',
    generateBundle() {
      if (!existsSync(join(dir, 'manifest.json'))) {
        this.error(`no ${join(dir, 'manifest.json')}: the page needs the shipped models and their manifest`);
      }
      for (const f of readdirSync(dir)) {
        if (f.endsWith('.safetensors') || f.endsWith('.json')) {
          this.emitFile({ type: 'asset', fileName: `models/${f}`, source: readFileSync(join(dir, f)) });
        }
      }
    },
  };
}

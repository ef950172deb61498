// Builds the npm package `transformer-playground` into dist-npm/ (`npm run build:npm`):
// the element's library build (vite.npm.config.ts) into dist-npm/dist/, its types
// (npm/transformer-playground.d.ts and the core's own types, src/engine/generated.ts, which
// are types alone), the package's package.json and README.md (from npm/), and the
// Content-Security-Policy its files need (content-security-policy.txt, and _headers for
// static hosts that read one). `npm pack dist-npm` makes the tarball.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const www = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(www, 'dist-npm');
const vite = join(www, 'node_modules/vite/bin/vite.js');

execFileSync(process.execPath, [vite, 'build', '--config', 'vite.npm.config.ts', '--logLevel', 'warn'], { cwd: www, stdio: 'inherit' });

mkdirSync(join(out, 'dist'), { recursive: true });
copyFileSync(join(www, 'npm/transformer-playground.d.ts'), join(out, 'dist/transformer-playground.d.ts'));
copyFileSync(join(www, 'src/engine/generated.ts'), join(out, 'dist/engine-types.d.ts'));
copyFileSync(join(www, 'npm/README.md'), join(out, 'README.md'));
copyFileSync(join(www, 'content-security-policy.txt'), join(out, 'content-security-policy.txt'));
copyFileSync(join(www, 'public/_headers'), join(out, '_headers'));
writeFileSync(join(out, 'package.json'), readFileSync(join(www, 'npm/package.json')));
console.log(`the npm package is in ${out} (npm pack ${out})`);

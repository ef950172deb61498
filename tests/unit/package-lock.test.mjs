// A fresh clone's `npm install` leaves www/package-lock.json as committed: the lock names
// every package of www/package.json at a version it allows, in the format the npm on this
// machine writes. Checked on a copy of the two files with `npm install --package-lock-only
// --offline` and an empty cache: npm resolves from the lock alone (a package the lock lacks
// would need the registry and fails here), and whatever it would write differs from the
// committed lock byte for byte if anything is out of date. No network, under a second.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const www = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'www');
// The lock is written by npm 11 (it records the `libc` of platform-specific packages, which
// npm 9 and 10 drop on rewrite); an older npm rewrites any such lock, which is why
// `cargo xtask test` installs with `npm ci` (never writes the lock) rather than `npm install`.
const npmMajor = Number(spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout.split('.')[0]);
const older = npmMajor < 11 ? `npm ${npmMajor} writes an older lock format; the lock is npm 11's` : false;

test('npm_install_in_a_fresh_clone_leaves_package_lock_json_unchanged', { skip: older }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tplay-lock-'));
  try {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(www, f), join(dir, f));
    const r = spawnSync('npm', ['install', '--package-lock-only', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(dir, '.cache')], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `npm install needs more than the lock holds:\n${r.stderr}`);
    const before = readFileSync(join(www, 'package-lock.json'), 'utf8');
    const after = readFileSync(join(dir, 'package-lock.json'), 'utf8');
    assert.ok(after === before, 'npm install rewrote www/package-lock.json: commit the lock npm writes (`npm install` in www/)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

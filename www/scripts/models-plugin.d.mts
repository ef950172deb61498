import type { Plugin } from 'vite';
/** The shipped models, emitted into the build under models/. */
export function models(): Plugin;

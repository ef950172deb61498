// Types of ./docs-plugin.mjs for vite.config.ts.
import type { Plugin } from 'vite';
export function docs(): Plugin;

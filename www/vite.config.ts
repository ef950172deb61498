import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { models } from './scripts/models-plugin.mjs';
import { docs } from './scripts/docs-plugin.mjs';

// The page is `public/index.html`, copied as is; it embeds the playground the way a blog
// post would, with one <script type="module" src="./app.js"> (the playground plus its
// offline support). The bundle's entries therefore have stable names, and the models are
// fetched from `models/` beside them. Every URL is relative (base './'), so the built
// folder works from any path of any static host.

export default defineConfig({
  base: './',
  publicDir: 'public',
  plugins: [
    models(),
    docs(),
    // A service worker (Workbox) that keeps the page, the engine and every shipped model
    // for use without a network after one visit. The page registers it itself (src/app.ts)
    // once it is live, and says when a new version is waiting.
    VitePWA({
      injectRegister: null,
      registerType: 'prompt',
      filename: 'sw.js',
      manifestFilename: 'manifest.webmanifest',
      manifest: {
        name: 'Transformer Playground',
        short_name: 'Transformers',
        description: 'A tiny, really trained transformer running in your browser: every attention map, probability and cache entry as it generates.',
        start_url: './',
        scope: './',
        display: 'standalone',
        background_color: '#14161a',
        theme_color: '#2f5bd3',
        icons: [
          { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: 'icons/maskable-192.png', sizes: '192x192', type: 'image/png', purpose: 'maskable' },
          { src: 'icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      workbox: {
        globPatterns: ['**/*.{html,js,css,wasm,json,safetensors,png,svg,webmanifest,md}'],
        // The engine's wasm and the models are larger than Workbox's default limit.
        maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
        // Files whose names carry a content hash need no revision of their own.
        dontCacheBustURLsMatching: /-[A-Za-z0-9_-]{8}\.(js|wasm|css)$/,
        cleanupOutdatedCaches: true,
        // A static host has no route for other paths: navigations are never rewritten.
        navigateFallback: null,
      },
    }),
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: {
      input: { playground: 'src/main.ts', app: 'src/app.ts', embed: 'src/embed.ts', 'iframe-resize': 'src/iframe-resize.ts', teacher: 'src/teacher.ts' },
      // The views fetched when first seen (src/views/load.ts) import what they share with the
      // first screen from playground.js itself, instead of from small files split off it.
      preserveEntrySignatures: 'allow-extension',
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  worker: {
    format: 'es',
    rollupOptions: { output: { entryFileNames: 'assets/[name]-[hash].js' } },
  },
});

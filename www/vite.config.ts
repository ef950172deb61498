import { defineConfig } from 'vite';

// The page is `public/index.html`, copied as is; it embeds the playground the way a blog
// post would, with one <script type="module" src="./playground.js">. The bundle's entry
// therefore has a stable name, and the models are fetched from `models/` beside it.
export default defineConfig({
  base: './',
  publicDir: 'public',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: {
      input: { playground: 'src/main.ts' },
      preserveEntrySignatures: 'exports-only',
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

import { defineConfig, type Plugin } from 'vite';
import { models } from './scripts/models-plugin.mjs';

// The npm package's build (`npm run build:npm`, see scripts/build-npm.mjs): the element as
// one ES module, `transformer-playground.js`, with its engine worker, the wasm core and the
// shipped models beside it, into dist-npm/dist/. The app's build (vite.config.ts) is not
// touched. Names carry no hashes (the package's version names the files), nothing is
// minified (the consumer's bundler minifies), and every file is found relative to the
// module's own URL, in the plain form `new URL('./x', import.meta.url)` that bundlers
// (Vite, webpack 5, Rollup, esbuild with a plugin) recognise: a bundler that builds the
// consumer's page bundles the worker again and copies the wasm with it.

/** Vite writes `new URL(new URL('a', import.meta.url).href, '' + import.meta.url)`; a
 * consumer's bundler sees only the plain form, so write that. */
function plainAssetUrls(): Plugin {
  const nested = /new URL\(\s*(?:\/\*[^*]*\*\/\s*)?new URL\(\s*(["'`])([^"'`]+)\1\s*,\s*import\.meta\.url\s*\)\.href\s*,\s*(?:(["'`])\3\s*\+\s*)?import\.meta\.url\s*\)/g;
  return {
    name: 'tplay-plain-asset-urls',
    generateBundle(_, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk') continue;
        chunk.code = chunk.code
          .replace(nested, (_m, _q, path: string) => `new URL(${JSON.stringify(path.startsWith('.') ? path : `./${path}`)}, import.meta.url)`)
          // A preload with nothing to preload is the import itself; the consumer's bundler
          // adds its own helper under Vite's name, so none of Vite's names stay here.
          .replace(/__vitePreload\(\s*\(\)\s*=>\s*(import\([^()]*\))\s*,\s*\[\]\s*,\s*import\.meta\.url\s*\)/g, '$1')
          .replace(/__vitePreload/g, '__tplayPreload')
          .replace(/__vite__mapDeps/g, '__tplay__mapDeps');
      }
    },
  };
}

export default defineConfig({
  base: './',
  publicDir: false,
  plugins: [models(), plainAssetUrls()],
  build: {
    outDir: 'dist-npm/dist',
    emptyOutDir: true,
    target: 'es2022',
    minify: false,
    // The wasm stays a file of its own (never a data: URL, which a strict policy refuses).
    assetsInlineLimit: 0,
    // No preload helper (__vite__mapDeps): the consumer's bundler adds its own.
    modulePreload: false,
    rollupOptions: {
      input: { 'transformer-playground': 'src/main.ts' },
      preserveEntrySignatures: 'exports-only',
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: 'assets/[name].js',
        assetFileNames: 'assets/[name][extname]',
      },
    },
  },
  worker: {
    format: 'es',
    plugins: () => [plainAssetUrls()],
    rollupOptions: { output: { entryFileNames: 'assets/[name].js', chunkFileNames: 'assets/[name].js', assetFileNames: 'assets/[name][extname]' } },
  },
});

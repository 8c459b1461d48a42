import { defineConfig } from 'vite';

/**
 * The preload, bundled to one CommonJS file: with `sandbox: true` Electron loads preloads as
 * classic scripts with a `require` that knows only `electron` and a few polyfills, so ES modules
 * and relative imports do not work there.
 */
export default defineConfig({
  logLevel: 'warn',
  build: {
    outDir: 'out/electron/preload',
    emptyOutDir: false,
    minify: false,
    // Electron 45 ships Chromium 142.
    target: 'chrome142',
    lib: { entry: 'electron/preload/preload.ts', formats: ['cjs'], fileName: () => 'preload.cjs' },
    rolldownOptions: { external: ['electron'] },
  },
});

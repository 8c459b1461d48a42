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
    // A syntax floor, not Electron's version: Electron 45 runs Chromium 156 (electron-to-chromium's
    // table; the electron npm package does not record it), and the renderer uses the same floor.
    target: 'chrome142',
    lib: { entry: 'electron/preload/preload.ts', formats: ['cjs'], fileName: () => 'preload.cjs' },
    rolldownOptions: { external: ['electron'] },
  },
});

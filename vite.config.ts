import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The renderer: renderer/ → out/ui/, served at app://sluice/ by the main process. */
export default defineConfig({
  root: 'renderer',
  base: './',
  logLevel: 'warn',
  plugins: [react()],
  build: {
    outDir: '../out/ui',
    emptyOutDir: true,
    target: 'chrome142',
    // Chromium supports modulepreload natively; the polyfill would only add code.
    modulePreload: { polyfill: false },
  },
});

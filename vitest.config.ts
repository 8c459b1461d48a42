import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    globalSetup: ['test/setup/require-root.ts'],
    // Device tests spawn real processes and move real bytes; their time is I/O, not CPU.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: more workers only make the device tests fight over them.
    maxWorkers: 2,
  },
});

// Lint, and the layer rules: which part of Sluice may import which.
//   worker/common, electron/common  shared contracts: no Node, no Electron, no DOM
//   worker/                         engine, helper, CLI: Node only; never electron/ or renderer/
//   electron/                       main + preload: may use worker/; never renderer/
//   electron/core                   the main process's logic: Node only, Electron by type at most
//   renderer/                       the sandboxed UI: only the two common folders, no Node, no Electron
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = { group: ['node:*'], message: 'This layer runs without Node (see eslint.config.js).' };
const ELECTRON = { name: 'electron', message: 'Only electron/ may import Electron.' };

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-artifacts/**', 'worker/engine/xxh64-module.ts'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  {
    files: ['worker/**/*.ts'],
    ignores: ['worker/common/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [ELECTRON], patterns: [{ group: ['**/electron/**', '**/renderer/**'], message: 'worker/ imports nothing from electron/ or renderer/.' }] }],
    },
  },
  {
    files: ['worker/common/**/*.ts', 'electron/common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [ELECTRON],
          patterns: [NODE_BUILTINS, { regex: '^\\.\\./(?!(\\.\\./)*(worker/|electron/)?common/)', message: 'Shared contracts import only other shared contracts.' }],
        },
      ],
    },
  },
  {
    files: ['electron/**/*.ts'],
    ignores: ['electron/common/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/renderer/**'], message: 'electron/ never imports the renderer.' }] }],
    },
  },
  {
    // The main process's logic runs (and is tested) under plain Node; Electron objects come in by interface.
    files: ['electron/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ ...ELECTRON, message: 'electron/core runs under plain Node: take Electron objects by interface (see flash-session.ts DesktopEffects).', allowTypeImports: true }],
          patterns: [{ group: ['**/renderer/**', '**/electron/main/**', '**/electron/preload/**'], message: 'electron/core depends on nothing above it.' }],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [ELECTRON],
          patterns: [
            NODE_BUILTINS,
            { regex: '/worker/(?!common/)', message: 'The renderer may use worker/common only.' },
            { regex: '/electron/(?!common/)', message: 'The renderer may use electron/common only.' },
          ],
        },
      ],
    },
  },
  {
    // The CLI talks to people through stdout/stderr directly; tests and build scripts may log.
    files: ['test/**/*.ts', 'build/scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);

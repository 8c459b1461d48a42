// Lint, and the one table of which layer may import which (after VS Code's code-layering rule).
// The folders name the runtime a file needs and the privileges it runs with:
//   common/       pure TypeScript: contracts (helper, decoder, app IPC) and domain types. No Node, no DOM.
//   node/         Node utilities every process may use: descriptors, tools, framing, the channel.
//   writer/       the one pump, the targets, verification, the OS seams: what root runs.
//   privileged/   the helper's entry and its end of the channel. Root runs exactly privileged,
//                 writer, node and common (test/architecture/helper-closure.test.ts checks it).
//   user/         everything that runs as the user: images and their decoders, drives, backup,
//                 files, and the launcher that starts the helper.
//   cli/          the `sluice` command.
//   electron/     core (the app's logic, plain Node), main (Electron glue), preload.
//   renderer/     the sandboxed UI.
import tseslint from 'typescript-eslint';

/** Layer → the layers it may import. Anything not listed is refused, at error level. */
const LAYERS = {
  common: [],
  node: ['common'],
  writer: ['common', 'node'],
  privileged: ['common', 'node', 'writer'],
  user: ['common', 'node', 'writer'],
  cli: ['common', 'node', 'writer', 'user'],
  'electron/core': ['common', 'node', 'writer', 'user'],
  'electron/main': ['common', 'node', 'user', 'electron/core'],
  'electron/preload': ['common'],
  renderer: ['common'],
};

/** Layers whose code root may run: no npm package but the schema validator. */
const ROOT_SIDE = new Set(['common', 'node', 'writer', 'privileged']);
/** Layers that run without Node. */
const NO_NODE = new Set(['common', 'renderer', 'electron/preload']);
/** Where Electron may be imported (electron/core only by type: it runs under plain Node). */
const ELECTRON_ALLOWED = new Set(['electron/main', 'electron/preload']);

const layerNames = Object.keys(LAYERS);

/** The import patterns one layer is refused. */
function restrictionsFor(layer) {
  const allowed = new Set([layer, ...LAYERS[layer]]);
  // A layer nested in another (electron/core in electron/) is refused by its own name, so that
  // electron/main may import electron/core without being allowed the whole of electron/.
  const refused = layerNames.filter((other) => !allowed.has(other) && !layer.startsWith(`${other}/`));
  const patterns = refused.map((other) => ({
    regex: `(^|/)${other.replace('/', '\\/')}(/|$)`,
    message: `${layer}/ may import only ${[...LAYERS[layer]].join(', ') || 'nothing outside itself'} (the layer table in eslint.config.js).`,
  }));
  if (NO_NODE.has(layer)) patterns.push({ regex: '^node:', message: `${layer}/ runs without Node.` });
  if (ROOT_SIDE.has(layer)) {
    patterns.push({ regex: '^(?!node:|\\.|valibot$)', message: `${layer}/ runs as root: no npm package but valibot.` });
  }
  const electron = { name: 'electron', message: 'Only electron/main and electron/preload import Electron.' };
  const paths = ELECTRON_ALLOWED.has(layer) ? [] : layer === 'electron/core' ? [{ ...electron, message: 'electron/core runs under plain Node: take Electron objects by interface (see flash-session.ts DesktopEffects).', allowTypeImports: true }] : [electron];
  return { paths, patterns };
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-artifacts/**', 'writer/xxh64-module.ts'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  ...layerNames.map((layer) => {
    // The most specific folder wins: electron/core's rules, not electron/'s.
    const nested = layerNames.filter((other) => other.startsWith(`${layer}/`)).map((other) => `${other}/**`);
    return {
      files: [`${layer}/**/*.ts`, `${layer}/**/*.tsx`],
      ignores: nested,
      rules: { 'no-restricted-imports': ['error', restrictionsFor(layer)] },
    };
  }),
  {
    // The CLI talks to people through stdout/stderr directly; tests and build scripts may log.
    files: ['test/**/*.ts', 'build/scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);

export { LAYERS };

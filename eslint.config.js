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
// Why these names: VS Code names its layers after the runtime a file needs (common/, node/), and so
// do these; writer/ and privileged/ say what root runs and why, user/ everything that runs as the
// person at the keyboard. common/ rather than shared/: the steering documents live in ../shared.
import { builtinModules } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import tseslint from 'typescript-eslint';

/** Layer → the layers it may import. Anything not listed is refused, at error level. */
export const LAYERS = {
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

/**
 * user/'s folders, lowest first. A folder may import the folders of the levels before its own,
 * never one beside it or above it: parsers and formats at the bottom, the jobs that combine them on
 * top, so that nothing inside user/ runs back up.
 */
export const USER_LEVELS = [
  ['customise', 'iso', 'drives', 'files', 'erase'],
  ['images'],
  ['cache', 'installer', 'launcher'],
  ['backup', 'catalogue', 'station'],
];

/** The level of user/FOLDER in USER_LEVELS, or -1 for a folder not listed there. */
function userLevel(folder) {
  return USER_LEVELS.findIndex((level) => level.includes(folder));
}

/** Why user/`from` may not import user/`to`, or null when it may. */
function userRefusal(from, to) {
  if (from === to) return null;
  const [own, target] = [userLevel(from), userLevel(to)];
  if (own === -1) return `user/${from}/ has no level: add it to USER_LEVELS in eslint.config.js.`;
  if (target !== -1 && target < own) return null;
  const may = USER_LEVELS.slice(0, own).flat();
  return `user/${from}/ may not import user/${to}/: it may import only ${may.join(', ') || 'no other user/ folder'} (USER_LEVELS in eslint.config.js).`;
}

/** Layers whose code root may run: no npm package but the schema validator. */
const ROOT_SIDE = new Set(['common', 'node', 'writer', 'privileged']);
/** Layers that run without Node. */
const NO_NODE = new Set(['common', 'renderer', 'electron/preload']);
/** Where Electron may be imported; electron/core only by type, since it runs under plain Node. */
const ELECTRON = { 'electron/main': 'yes', 'electron/preload': 'yes', 'electron/core': 'types' };

const ROOT = import.meta.dirname;
/** Longest first, so that electron/core is found before a shorter name could claim it. */
const byLength = Object.keys(LAYERS).sort((a, b) => b.length - a.length);

/** The layer a repository-relative path belongs to, or null (tests, build scripts, configs). */
function layerOf(path) {
  return byLength.find((layer) => path === layer || path.startsWith(`${layer}/`)) ?? null;
}

/** An absolute path as a repository-relative one with forward slashes. */
function repoPath(absolute) {
  return relative(ROOT, absolute).split('\\').join('/');
}

/** Why `layer` may not import `specifier` (from `file`), or null when it may. */
function refusal(layer, file, specifier, typeOnly) {
  if (specifier.startsWith('.')) {
    const path = repoPath(resolve(dirname(file), specifier));
    const target = layerOf(path);
    if (layer === 'user' && target === 'user') return userRefusal(repoPath(file).split('/')[1], path.split('/')[1]);
    if (target === null || target === layer || LAYERS[layer].includes(target)) return null;
    return `${layer}/ may not import ${target}/: it may import only ${LAYERS[layer].join(', ') || 'itself'} (the layer table in eslint.config.js).`;
  }
  if (specifier === 'electron') {
    const allowed = ELECTRON[layer];
    if (allowed === 'yes' || (allowed === 'types' && typeOnly)) return null;
    return allowed === 'types'
      ? `${layer}/ runs under plain Node: take Electron objects by interface (see electron/core/desktop-job.ts DesktopEffects).`
      : `${layer}/ may not import Electron.`;
  }
  if (specifier.startsWith('node:') || builtinModules.includes(specifier))
    return NO_NODE.has(layer) ? `${layer}/ runs without Node.` : null;
  if (ROOT_SIDE.has(layer) && specifier !== 'valibot')
    return `${layer}/ runs as root: it may import no npm package but valibot.`;
  return null;
}

/** sluice/layers: every import (static, re-export, dynamic with a literal) checked against LAYERS. */
const layersRule = {
  meta: { type: 'problem', schema: [], messages: { refused: '{{why}}' } },
  create(context) {
    const file = context.filename;
    const layer = layerOf(relative(ROOT, file).split('\\').join('/'));
    if (layer === null) return {};
    const check = (node, typeOnly) => {
      if (node.source?.type !== 'Literal' || typeof node.source.value !== 'string') return;
      const why = refusal(layer, file, node.source.value, typeOnly);
      if (why !== null) context.report({ node: node.source, messageId: 'refused', data: { why } });
    };
    return {
      ImportDeclaration: (node) =>
        check(
          node,
          node.importKind === 'type' ||
            (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type')),
        ),
      ExportNamedDeclaration: (node) => check(node, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, false),
    };
  },
};

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-artifacts/**', 'writer/xxh64-module.ts'] },
  ...tseslint.configs.recommended,
  {
    plugins: { sluice: { rules: { layers: layersRule } } },
    rules: {
      'sluice/layers': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  {
    // A function a reader takes in at one sitting; longer flows are named steps. Tests are exempt:
    // a describe block is a list, not a flow.
    files: ['**/*.ts'],
    ignores: ['test/**'],
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  {
    // A React component is mostly markup, so it gets more room than a flow; past that it is several
    // components, or a hook beside one.
    files: ['**/*.tsx'],
    ignores: ['test/**'],
    rules: { 'max-lines-per-function': ['error', { max: 200 }] },
  },
  {
    // The CLI talks to people through stdout/stderr directly; tests and build scripts may log.
    files: ['test/**/*.ts', 'build/scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);

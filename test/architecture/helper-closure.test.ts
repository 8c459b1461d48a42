/**
 * What root runs, computed rather than remembered: every module the built helper entry reaches.
 * Root parses nothing from an image, so none of them may be an image parser (user/images and
 * everything else under user/), the CLI or the app, and the only npm package among them may be
 * the schema validator that checks the messages root is sent. Root runs the helper's bundle
 * (out/run/helper.js, build/scripts/bundle-processes.ts), so the bundle is held to the same walk:
 * the modules the bundler put in it, and the files and packages it loads.
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { posix } from 'node:path';
import { moduleGraph, packageName } from '../support/module-graph.js';
import type { BundleManifest } from '../../build/scripts/bundle-processes.js';

const HELPER_ENTRY = 'out/privileged/main.js';
/** The layers root runs (eslint.config.js names them too). */
const ROOT_LAYERS = ['out/common/', 'out/node/', 'out/writer/', 'out/privileged/'];

function read(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

/** The modules each bundle holds, as the build recorded them (paths under out/). */
function bundled(): BundleManifest {
  return JSON.parse(readFileSync('out/run/bundles.json', 'utf8')) as BundleManifest;
}

it('the helper reaches only common, node, writer and privileged, and no npm package but valibot', () => {
  const closure = moduleGraph([HELPER_ENTRY], read);
  const files = [...closure.files].sort();
  console.log(`helper closure: ${files.length} files of the built tree, packages: ${[...closure.packages].join(', ')}`);
  expect(closure.missing).toEqual([]);
  expect(files.filter((file) => !ROOT_LAYERS.some((layer) => file.startsWith(layer)))).toEqual([]);
  expect([...closure.packages]).toEqual(['valibot']);
  expect(closure.electron).toBe(false);
});

it('the walk would see a parser if one were imported: the decoder entry reaches the image parsers and their packages', () => {
  // The same walk from the decoder's entry, which must find what the helper's must not.
  const closure = moduleGraph(['out/user/images/decode/main.js'], read);
  expect([...closure.files]).toContain('out/user/images/formats/qcow2.js');
  expect([...closure.packages].sort()).toEqual(['@balena/udif', 'fast-xml-parser', 'valibot', 'xz-decompress']);
});

it('the helper’s bundle holds only modules of that closure and valibot’s, and loads only its own files', () => {
  const closure = moduleGraph([HELPER_ENTRY], read);
  const modules = bundled().helper.map((path) => posix.normalize(`out/${path}`));
  expect(modules).toContain(HELPER_ENTRY);
  const [packaged, own] = [
    modules.filter((file) => file.startsWith('node_modules/')),
    modules.filter((file) => !file.startsWith('node_modules/')),
  ];
  expect(own.filter((file) => !closure.files.has(file))).toEqual([]);
  // valibot is bundled in (build/scripts/bundle-processes.ts BUNDLED_PACKAGES), and is the only package root's code imports.
  expect([...new Set(packaged.map((file) => packageName(file.slice('node_modules/'.length))))]).toEqual(['valibot']);
  const loaded = moduleGraph(['out/run/helper.js'], read);
  expect(loaded.missing).toEqual([]);
  expect([...loaded.files].filter((file) => !file.startsWith('out/run/helper'))).toEqual([]);
  expect([...loaded.packages]).toEqual([]);
});

it('the bundle check would see a parser: the decoder’s bundle holds the image parsers', () => {
  expect(bundled().decoder).toContain('user/images/formats/qcow2.js');
});

/**
 * The sandboxed renderer has no Node and no Electron: everything it reaches from its entry is in
 * renderer/ or in common/, and it names neither a Node built-in nor Electron.
 */
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { expect, it } from 'vitest';
import { moduleGraph } from '../support/module-graph.js';

/** A source import names the built file (.js); the source is .ts or .tsx beside it. */
function sourceOf(from: string, specifier: string): string {
  const path = posix.normalize(posix.join(posix.dirname(from), specifier));
  if (!path.endsWith('.js')) return path;
  const base = path.slice(0, -'.js'.length);
  return existsSync(`${base}.tsx`) ? `${base}.tsx` : `${base}.ts`;
}

it('the renderer reaches only renderer/ and common/, with no Node built-in and no Electron', () => {
  const closure = moduleGraph(
    ['renderer/src/main.tsx'],
    (file) => (existsSync(file) ? readFileSync(file, 'utf8') : null),
    sourceOf,
  );
  const files = [...closure.files].filter((file) => !file.endsWith('.css'));
  console.log(`renderer closure: ${files.length} source files, packages: ${[...closure.packages].sort().join(', ')}`);
  expect(closure.missing.filter((file) => !file.endsWith('.css'))).toEqual([]);
  expect(files.filter((file) => !file.startsWith('renderer/') && !file.startsWith('common/'))).toEqual([]);
  expect([...closure.builtins]).toEqual([]);
  expect(closure.electron).toBe(false);
  expect([...closure.packages].sort()).toEqual(['react', 'react-dom', 'valibot']);
});

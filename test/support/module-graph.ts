import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import ts from 'typescript';
import { packageName } from '../../build/scripts/package-name.js';

export { packageName };

export interface ModuleGraph {
  /** Every file reached, entries included. */
  files: Set<string>;
  /** Reached files that `read` could not find. */
  missing: string[];
  /** npm packages named by reached files (Node's built-ins and Electron are counted apart). */
  packages: Set<string>;
  /** Node built-ins named (`node:fs`, `fs`). */
  builtins: Set<string>;
  /** Whether any reached file names `electron`. */
  electron: boolean;
}

/**
 * Every file reachable from `entries` through relative imports (static, dynamic, require, and
 * `export … from`), as TypeScript's scanner sees them, and what else they name. `resolve` maps a
 * relative specifier from a file to the file it means (the built tree: as is; the sources: .js
 * to .ts); `read` returns null for a file that is not there.
 */
export function moduleGraph(
  entries: readonly string[],
  read: (file: string) => string | null,
  resolve: (from: string, specifier: string) => string = (from, specifier) =>
    posix.normalize(posix.join(posix.dirname(from), specifier)),
): ModuleGraph {
  const graph: ModuleGraph = {
    files: new Set(),
    missing: [],
    packages: new Set(),
    builtins: new Set(),
    electron: false,
  };
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (graph.files.has(file)) continue;
    graph.files.add(file);
    const source = read(file);
    if (source === null) {
      graph.missing.push(file);
      continue;
    }
    for (const { fileName: specifier } of ts.preProcessFile(source, true, true).importedFiles) {
      if (specifier.startsWith('.')) queue.push(resolve(file, specifier));
      else if (specifier.startsWith('node:') || builtinModules.includes(specifier)) graph.builtins.add(specifier);
      else if (specifier === 'electron') graph.electron = true;
      else graph.packages.add(packageName(specifier));
    }
  }
  return graph;
}

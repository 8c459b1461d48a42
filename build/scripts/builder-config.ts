/**
 * Reads the packaging configuration: electron-builder.yml parsed strictly (a duplicate key or a
 * YAML warning is an error, not a silent override) and typed as electron-builder's own
 * Configuration. Used by the build scripts and the packaging tests.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Configuration } from 'electron-builder';
import { parseDocument } from 'yaml';

export function parseYamlStrictly(path: string): unknown {
  const document = parseDocument(readFileSync(path, 'utf8'), { uniqueKeys: true, prettyErrors: true });
  const problems = [...document.errors, ...document.warnings];
  if (problems.length > 0) throw new Error(`${path}: ${problems.map((problem) => problem.message).join('\n')}`);
  return document.toJS();
}

export function loadBuilderConfig(): Configuration {
  return parseYamlStrictly(resolve('electron-builder.yml')) as Configuration;
}

/**
 * Reads the packaging configuration the way the tests need it: electron-builder.yml parsed
 * strictly (a duplicate key or a YAML warning is an error, not a silent override) and typed as
 * electron-builder's own Configuration.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
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

/** Parses XML, failing on any warning or error the parser reports. */
export function parseXmlStrictly(path: string): Document {
  const problems: string[] = [];
  const report = (message: string) => void problems.push(message);
  const document = new DOMParser({ errorHandler: { warning: report, error: report, fatalError: report } }).parseFromString(
    readFileSync(path, 'utf8'),
    'text/xml',
  );
  if (problems.length > 0) throw new Error(`${path}: ${problems.join('\n')}`);
  return document as unknown as Document;
}

/** An fpm `source=destination` mapping from a deb or rpm `fpm` argument list. */
export function fpmFileMappings(args: readonly string[] | null | undefined): { source: string; destination: string }[] {
  return (args ?? [])
    .filter((arg) => !arg.startsWith('-') && arg.includes('='))
    .map((arg) => {
      const [source, destination] = arg.split('=') as [string, string];
      return { source, destination };
    });
}

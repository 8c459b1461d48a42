/**
 * What the packaging tests read besides electron-builder.yml (build/scripts/builder-config.ts):
 * XML parsed strictly, and fpm's file mappings.
 */
import { readFileSync } from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';

/** Parses XML, failing on any warning or error the parser reports. */
export function parseXmlStrictly(path: string): Document {
  const problems: string[] = [];
  const report = (message: string) => void problems.push(message);
  const document = new DOMParser({
    errorHandler: { warning: report, error: report, fatalError: report },
  }).parseFromString(readFileSync(path, 'utf8'), 'text/xml');
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

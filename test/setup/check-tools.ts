/**
 * `npm test` runs this first: on Linux, every command of test/setup/packages.list must be there,
 * or the run stops with one line naming the packages to install (instead of a score of test files
 * failing each on its own missing tool). Elsewhere the Linux tools are not expected: the macOS and
 * Windows jobs run the tests that need none (vitest.config.ts, project "portable").
 */
import { constants, readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTool } from '../../node/run-tool.js';

export interface ListedPackage {
  readonly name: string;
  /** Commands looked up on PATH, or absolute paths of files the package installs. */
  readonly provides: readonly string[];
}

/** npm runs scripts, and vitest its tests, from the project's root. */
export const PACKAGE_LIST = 'test/setup/packages.list';

export function parsePackageList(text: string): ListedPackage[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .filter((words) => words[0] !== '')
    .map(([name = '', ...provides]) => ({ name, provides: provides.filter((word) => word !== '-') }));
}

async function present(command: string): Promise<boolean> {
  if (isAbsolute(command))
    return access(command, constants.R_OK).then(
      () => true,
      () => false,
    );
  return (await findTool(command)) !== null;
}

/** The packages of which something is missing, each with what was not found. */
export async function missingPackages(list: readonly ListedPackage[]): Promise<{ name: string; missing: string[] }[]> {
  const result = [];
  for (const pkg of list) {
    const missing = [];
    for (const command of pkg.provides) if (!(await present(command))) missing.push(command);
    if (missing.length > 0) result.push({ name: pkg.name, missing });
  }
  return result;
}

export function missingLine(missing: readonly { name: string; missing: string[] }[]): string {
  const what = missing.flatMap((pkg) => pkg.missing).join(', ');
  const names = missing.map((pkg) => pkg.name).join(' ');
  return `The tests need ${what}, missing here: run \`sudo npm run setup:test\` (Debian/Ubuntu packages: ${names}).`;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.platform === 'linux') {
  // Administrators' tools (losetup, sfdisk, mkfs.*) live in sbin, which a user's PATH may lack.
  process.env['PATH'] = [process.env['PATH'] ?? '', '/usr/local/sbin', '/usr/sbin', '/sbin'].join(delimiter);
  const missing = await missingPackages(parsePackageList(readFileSync(PACKAGE_LIST, 'utf8')));
  if (missing.length > 0) {
    process.stderr.write(`${missingLine(missing)}\n`);
    process.exitCode = 1;
  }
}

/**
 * Finds the Electron runtime that `npm install` provides, for `npm start` and `npm run dev`.
 * Never downloads noisily: Electron's own resolver would, with a stack trace when offline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** What to tell someone whose machine has no Electron runtime. */
export const NO_ELECTRON_MESSAGE =
  'Sluice cannot open its window: the Electron runtime is not installed and could not be downloaded; run `npx install-electron` while online, or use the command line (`npx sluice --help`).';

/** The Electron binary, or null. */
function installedBinary(): string | null {
  if (process.env['ELECTRON_OVERRIDE_DIST_PATH']) return join(process.env['ELECTRON_OVERRIDE_DIST_PATH'], 'electron');
  const packageDir = dirname(require.resolve('electron/package.json'));
  const pathFile = join(packageDir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : null;
  const binary = relative === null ? null : join(packageDir, 'dist', relative);
  return binary !== null && existsSync(binary) ? binary : null;
}

/** Electron 45 fetches its binary on first use rather than at install; try that once, quietly. */
function installElectron(): boolean {
  if (process.env['ELECTRON_SKIP_BINARY_DOWNLOAD']) return false;
  const installer = join(dirname(require.resolve('electron/package.json')), 'install.js');
  return spawnSync(process.execPath, [installer], { stdio: 'ignore', timeout: 300_000 }).status === 0;
}

/** The Electron binary, installing it first if that is allowed and possible; null when there is none. */
export function findElectron(): string | null {
  return installedBinary() ?? (installElectron() ? installedBinary() : null);
}

/**
 * `npm start`: opens the desktop app with the Electron runtime that `npm install` provides.
 * Where that runtime is missing (installed with ELECTRON_SKIP_BINARY_DOWNLOAD, or offline), it
 * says so in one sentence instead of a stack trace.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const require = createRequire(import.meta.url);

/** The Electron binary, or null. Does not download: Electron's own resolver would, noisily. */
function electronBinary(): string | null {
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

const binary = electronBinary() ?? (installElectron() ? electronBinary() : null);
if (binary === null) {
  process.stderr.write(
    'Sluice cannot open its window: the Electron runtime is not installed and could not be downloaded; run `npx install-electron` while online, or use the command line (`npx sluice --help`).\n',
  );
  process.exit(1);
}
const app = spawn(binary, [resolve('.'), ...process.argv.slice(2)], { stdio: 'inherit' });
app.on('exit', (code, signal) => process.exit(signal === null ? (code ?? 0) : 1));

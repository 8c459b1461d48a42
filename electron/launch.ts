/**
 * `npm start`: opens the desktop app with the Electron runtime that `npm install` provides.
 * Where that runtime is missing (installed with ELECTRON_SKIP_BINARY_DOWNLOAD, or offline), it
 * says so in one sentence instead of a stack trace.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { findElectron, NO_ELECTRON_MESSAGE } from './electron-binary.js';

const binary = findElectron();
if (binary === null) {
  process.stderr.write(`${NO_ELECTRON_MESSAGE}\n`);
  process.exit(1);
}
const app = spawn(binary, [resolve('.'), ...process.argv.slice(2)], { stdio: 'inherit' });
app.on('exit', (code, signal) => process.exit(signal === null ? (code ?? 0) : 1));

/**
 * `npm run dev`: rebuilds the renderer on every change and shows it.
 *
 *  - With the Electron runtime installed: the app itself, whose window reloads after each rebuild
 *    (main-process and preload changes need a restart).
 *  - Without it (machines where the binary cannot be downloaded): the same built renderer in any
 *    browser, through the test bridge (test/e2e/bridge) against the real main-process core, on
 *    127.0.0.1 with a one-time token in the URL. There is no native file dialog there: pass the
 *    image to offer as an argument (`npm run dev -- ~/Downloads/os.img`), or drop a file from
 *    that image's folder.
 */
import { cacheDir } from '../../user/cache/cache-dir.js';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { build } from 'vite';
import { findElectron } from '../../electron/electron-binary.js';
import { startBridge } from '../../test/e2e/bridge/bridge-server.js';
import { startHelper } from '../../user/launcher/launch.js';

async function main(): Promise<void> {
  const watcher = await build({ configFile: resolve('vite.config.ts'), logLevel: 'info', build: { watch: {} } });
  const stopWatching = async () => {
    if ('close' in watcher) await watcher.close();
  };

  const electron = findElectron();
  if (electron !== null) {
    const app = spawn(electron, [resolve('.')], { stdio: 'inherit', env: { ...process.env, SLUICE_DEV: '1' } });
    app.on('exit', (code) => void stopWatching().then(() => process.exit(code ?? 0)));
    return;
  }

  const image = process.argv[2] === undefined ? null : resolve(process.argv[2]);
  const bridge = await startBridge({
    uiDir: resolve('out/ui'),
    shimFile: resolve('out/test/e2e/bridge/page-shim.js'),
    dropDir: image === null ? process.cwd() : dirname(image),
    settingsFile: join(mkdtempSync(join(tmpdir(), 'sluice-dev-')), 'settings.json'),
    launchHelper: startHelper,
    cacheDir: cacheDir(),
  });
  bridge.answerDialog(image);
  console.log(
    `No Electron runtime here: open the renderer in a browser instead (reload after a rebuild):\n  ${bridge.url}`,
  );
  process.on('SIGINT', () => void Promise.all([bridge.close(), stopWatching()]).then(() => process.exit(0)));
}

await main();

/**
 * The Electron main process: the composition root. Everything with logic lives in electron/core
 * (no Electron imports, tested under Node); this file and its neighbours only connect it to
 * Electron's window, IPC, dialogs and desktop integration.
 */
import { homedir } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, protocol, shell } from 'electron';
import { cacheDir, catalogueIconsDir } from '../../user/cache/cache-dir.js';
import { chooseElevation, onPath } from '../../user/launcher/elevation/choose.js';
import type { Elevation } from '../../user/launcher/elevation/types.js';
import { armsOnce, armStation } from '../../user/launcher/armed-station.js';
import {
  appImageHelperProgram,
  builtHelperProgram,
  packagedHelperProgram,
  type HelperProgram,
} from '../../user/launcher/helper-program.js';
import { startHelper } from '../../user/launcher/launch.js';
import { decoderOutputFor } from '../../user/launcher/transport.js';
import { EVENT_CHANNELS } from '../../common/contracts/ipc-channels.js';
import { createAppService } from '../core/app-service.js';
import { ImageHandOff } from '../core/image-hand-off.js';
import { APP_ENTRY_URL, APP_SCHEME } from '../core/security.js';
import { SettingsStore } from '../core/settings-store.js';
import { registerAppProtocol } from './app-protocol.js';
import { pickBackupFileWithDialog } from './backup-dialog.js';
import { electronDesktopEffects } from './desktop-effects.js';
import { reloadOnRendererRebuild } from './dev-reload.js';
import { pickImageWithDialog } from './image-dialog.js';
import { registerIpcHandlers } from './ipc.js';
import { guardQuitDuringJob } from './quit-guard.js';
import { createMainWindow, denyAllPermissions, lockDownWebContents } from './window.js';

const UI_DIR = fileURLToPath(new URL('../../ui/', import.meta.url));
/** Bundled to CommonJS by Vite (vite.preload.config.ts): a sandboxed preload cannot load ES modules. */
const PRELOAD = fileURLToPath(new URL('../preload/preload.cjs', import.meta.url));

protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);
app.enableSandbox();
app.on('web-contents-created', (_event, contents) => lockDownWebContents(contents));

/** Images the system hands over: from the command line at start and from a second instance (Windows, Linux), from open-file (macOS). */
const handOff = new ImageHandOff({ platform: process.platform, appInArguments: process.defaultApp === true }, (line) =>
  process.stderr.write(`${line}\n`),
);

function bringWindowForward(): void {
  if (!app.isReady()) return;
  const [window] = BrowserWindow.getAllWindows();
  if (window?.isMinimized()) window.restore();
  window?.focus();
}

/** Set by the AppImage runtime to the AppImage file this app runs from (user/launcher/helper-program.ts). */
const appImage = process.env['APPIMAGE'];

/**
 * The Apple team that signs releases, which root checks the app bundle against before it runs the
 * helper (macBundleCheck): package.json "macTeamId", set by the release workflow; absent in
 * development and unsigned builds.
 */
function macTeamId(): string | null {
  const id = (JSON.parse(readFileSync(join(app.getAppPath(), 'package.json'), 'utf8')) as { macTeamId?: unknown })
    .macTeamId;
  return typeof id === 'string' && id !== '' ? id : null;
}

/**
 * How the app gets the helper root: through the system's own dialog (pkexec, osascript, UAC);
 * packaged, it is the launcher script in resources (build/HELPER.md), otherwise this runtime on the build.
 */
function helperLaunch(): { elevation: Elevation; program: HelperProgram } {
  return {
    elevation: chooseElevation({
      platform: process.platform,
      isRoot: process.getuid?.() === 0,
      frontEnd: 'app',
      interactive: false,
      installed: onPath,
    }),
    program: !app.isPackaged
      ? builtHelperProgram()
      : appImage !== undefined
        ? appImageHelperProgram(appImage, process.getuid?.() ?? -1)
        : packagedHelperProgram(process.resourcesPath, process.platform, macTeamId()),
  };
}

async function openWindow(): Promise<void> {
  denyAllPermissions();
  const cache = cacheDir();
  registerAppProtocol(UI_DIR, catalogueIconsDir(cache));
  const settings = await SettingsStore.open(join(app.getPath('userData'), 'settings.json'));
  if (settings.problem !== null) process.stderr.write(`sluice: ${settings.problem}\n`);

  const window = createMainWindow(PRELOAD);
  const service = createAppService({
    settings,
    // The helper gets root through the system's own dialog (pkexec, osascript, UAC); packaged, it
    // is the launcher script in resources (build/HELPER.md), otherwise this runtime on the build.
    launchHelper: (options) => startHelper({ ...options, ...helperLaunch() }),
    decoderOutput: () => decoderOutputFor(helperLaunch().elevation),
    // One password for a whole station where each card would otherwise ask on its own (Linux).
    armStation: (limits, image) => {
      const launch = helperLaunch();
      return armsOnce(launch.elevation, image) ? armStation({ limits, ...launch }) : null;
    },
    pickImage: () => pickImageWithDialog(window),
    sshDir: join(homedir(), '.ssh'),
    pickBackupFile: (suggestedName) => pickBackupFileWithDialog(window, suggestedName),
    openExternal: (url) => shell.openExternal(url),
    showInFolder: (path) => shell.showItemInFolder(path),
    effects: electronDesktopEffects(window),
    emit: (event, payload) => {
      if (!window.isDestroyed()) window.webContents.send(EVENT_CHANNELS[event], payload);
    },
    handOff,
    cacheDir: cache,
    stationLog: join(app.getPath('userData'), 'station-log.jsonl'),
  });
  registerIpcHandlers(service);
  guardQuitDuringJob(window, service);
  window.on('closed', () => void service.close());
  if (!app.isPackaged && process.env['SLUICE_DEV'] === '1') reloadOnRendererRebuild(UI_DIR, window);
  await window.loadURL(APP_ENTRY_URL);
}

// One Sluice at a time: a second window would be a second drive scanner and could start a second
// flash. A second start hands its command line (a double-clicked image) to this one and quits.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  handOff.openCommandLine(process.argv, process.cwd());
  app.on('second-instance', (_event, argv, workingDirectory) => {
    bringWindowForward();
    handOff.openCommandLine(argv, workingDirectory);
  });
  // macOS: before `ready` too, when a double-click is what starts Sluice.
  app.on('open-file', (event, path) => {
    event.preventDefault();
    bringWindowForward();
    handOff.openFile(path);
  });
  app.on('window-all-closed', () => app.quit());
  void app.whenReady().then(openWindow);
}

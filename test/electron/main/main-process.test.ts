/**
 * The Electron glue, as built (out/electron/main/main.js), with a recording stand-in for the
 * `electron` module: the Electron binary cannot be downloaded on this machine, so this checks the
 * wiring (window options, app:// protocol, IPC sender checks, navigation lock-down) rather than
 * Electron itself.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXTERNAL_LINKS } from '../../../common/app/links.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS } from '../../../common/contracts/ipc-channels.js';
import { CONTENT_SECURITY_POLICY, mainWindowOptions } from '../../../electron/core/security.js';
import { scratchDir } from '../../support/loop-device.js';

type Listener = (...args: unknown[]) => unknown;

const fake = vi.hoisted(() => {
  const record = {
    sandboxEnabled: false,
    schemes: [] as unknown[],
    protocolHandlers: new Map<string, (request: Request) => Promise<Response>>(),
    ipcHandlers: new Map<string, Listener>(),
    appListeners: new Map<string, Listener>(),
    windows: [] as { options: Record<string, unknown>; loaded: string[]; listeners: Map<string, Listener[]> }[],
    opened: [] as string[],
    userData: '',
    /** app.on registrations and whenReady, in the order main.js made them. */
    sequence: [] as string[],
    ready: false,
    /** What main sent the page: [channel, payload]. */
    sent: [] as [string, unknown][],
    focused: 0,
  };
  class BrowserWindow {
    readonly loaded: string[] = [];
    readonly listeners = new Map<string, Listener[]>();
    readonly webContents = {
      send: (channel: string, payload: unknown) => void record.sent.push([channel, payload]),
      reloadIgnoringCache: () => undefined,
    };
    constructor(readonly options: Record<string, unknown>) {
      record.windows.push(this);
    }
    static getAllWindows() {
      return record.windows;
    }
    isMinimized() {
      return false;
    }
    focus() {
      record.focused += 1;
    }
    loadURL(url: string) {
      this.loaded.push(url);
      return Promise.resolve();
    }
    on(event: string, listener: Listener) {
      this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
      return this;
    }
    once(event: string, listener: Listener) {
      return this.on(event, listener);
    }
    isDestroyed() {
      return false;
    }
    setProgressBar() {}
  }
  const electron = {
    app: {
      isPackaged: false,
      enableSandbox: () => void (record.sandboxEnabled = true),
      on: (event: string, listener: Listener) => {
        record.sequence.push(event);
        record.appListeners.set(event, listener);
      },
      whenReady: () => {
        record.sequence.push('whenReady');
        record.ready = true;
        return Promise.resolve();
      },
      isReady: () => record.ready,
      requestSingleInstanceLock: () => true,
      getPath: () => record.userData,
      quit: () => undefined,
    },
    protocol: {
      registerSchemesAsPrivileged: (schemes: unknown[]) => void record.schemes.push(...schemes),
      handle: (scheme: string, handler: (request: Request) => Promise<Response>) =>
        void record.protocolHandlers.set(scheme, handler),
    },
    ipcMain: { handle: (channel: string, handler: Listener) => void record.ipcHandlers.set(channel, handler) },
    session: {
      defaultSession: { setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined },
    },
    shell: { openExternal: async (url: string) => void record.opened.push(url) },
    nativeTheme: { shouldUseDarkColors: false },
    dialog: { showOpenDialog: async () => ({ canceled: true, filePaths: [] }), showMessageBoxSync: () => 0 },
    Notification: Object.assign(function Notification() {}, { isSupported: () => false }),
    powerSaveBlocker: { start: () => 1, stop: () => undefined },
    BrowserWindow,
  };
  return { record, electron };
});

vi.mock('electron', () => ({ ...fake.electron, default: fake.electron }));

const PRELOAD = resolve('out/electron/preload/preload.cjs');
const MAIN = resolve('out/electron/main/main.js');
const { record } = fake;
/** Images main.js is asked to open: on its own command line, by a second instance, by macOS. */
const images = scratchDir();
const startArgv = process.argv;

beforeAll(async () => {
  record.userData = scratchDir();
  for (const name of ['started-with.img', 'second.img', 'mac.img'])
    writeFileSync(join(images, name), Buffer.alloc(64 * 1024, name.length));
  // As `electron . started-with.img` run in that folder: Electron's default app, the project, the file.
  process.argv = ['/src/sluice/node_modules/electron/dist/electron', '/src/sluice', 'started-with.img'];
  Object.defineProperty(process, 'defaultApp', { value: true, configurable: true });
  const cwd = vi.spyOn(process, 'cwd').mockReturnValue(images);
  try {
    await import(MAIN);
  } finally {
    process.argv = startArgv;
    cwd.mockRestore();
  }
  await vi.waitFor(() => expect(record.windows[0]?.loaded).toHaveLength(1));
});

afterAll(() => {
  // Closing the window stops the core's drive scanner.
  for (const listener of record.windows[0]?.listeners.get('closed') ?? []) listener();
  Reflect.deleteProperty(process, 'defaultApp');
});

const fromAppPage = { senderFrame: { url: 'app://sluice/index.html', parent: null } };

function imagesOpened(): unknown[] {
  return record.sent.filter(([channel]) => channel === EVENT_CHANNELS.imageOpened).map(([, payload]) => payload);
}

describe('the Electron main process, as built', () => {
  it('opens one sandboxed window with the locked webPreferences and the bundled CommonJS preload', () => {
    expect(record.sandboxEnabled).toBe(true);
    expect(record.windows).toHaveLength(1);
    expect(record.windows[0]?.options['webPreferences']).toStrictEqual(mainWindowOptions(PRELOAD, true).webPreferences);
    expect(existsSync(PRELOAD)).toBe(true);
    expect(record.windows[0]?.loaded).toEqual(['app://sluice/index.html']);
  });

  it('serves the built renderer at app://sluice/ with the CSP, and nothing outside it', async () => {
    expect(record.schemes).toEqual([
      { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
    ]);
    const handler = record.protocolHandlers.get('app');
    if (handler === undefined) throw new Error('no app:// handler');
    const page = await handler(new Request('app://sluice/index.html'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await page.text()).toContain('<div id="root">');
    expect((await handler(new Request('app://sluice/%2e%2e/%2e%2e/package.json'))).status).toBe(404);
    expect((await handler(new Request('app://elsewhere/index.html'))).status).toBe(404);
  });

  it('handles every channel of the contract, and only for the app page in the top frame', async () => {
    expect([...record.ipcHandlers.keys()].sort()).toEqual(Object.values(INVOKE_CHANNELS).sort());
    const getSettings = record.ipcHandlers.get(INVOKE_CHANNELS.getSettings);
    if (getSettings === undefined) throw new Error('no settings handler');
    const from = (url: string, parent: unknown = null) => ({ senderFrame: { url, parent } });
    await expect(getSettings(from('app://sluice/index.html'))).resolves.toMatchObject({
      ok: true,
      value: { verify: true, eject: true, showVirtual: false, notifications: true, capacityCheck: true },
    });
    for (const event of [
      from('app://sluice/index.html', {}),
      from('https://evil.example/'),
      from('file:///tmp/x.html'),
      { senderFrame: null },
    ]) {
      await expect(getSettings(event)).resolves.toMatchObject({ ok: false, error: { code: 'untrusted-sender' } });
    }
    const selectImage = record.ipcHandlers.get(INVOKE_CHANNELS.selectImage);
    await expect(selectImage?.(from('app://sluice/index.html'), { path: '/etc/shadow' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid-request' },
    });
  });

  it('locks every web page down: no navigation, no <webview>, new windows only as our own links in the browser', () => {
    const created = record.appListeners.get('web-contents-created');
    const listeners = new Map<string, Listener>();
    let openHandler: Listener = () => undefined;
    const contents = {
      on: (event: string, listener: Listener) => void listeners.set(event, listener),
      setWindowOpenHandler: (handler: Listener) => void (openHandler = handler),
    };
    created?.({}, contents);
    for (const event of ['will-navigate', 'will-redirect', 'will-attach-webview']) {
      let prevented = false;
      listeners.get(event)?.({ preventDefault: () => void (prevented = true) });
      expect(prevented, event).toBe(true);
    }
    expect(openHandler({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    expect(openHandler({ url: EXTERNAL_LINKS.fakeCardTest })).toEqual({ action: 'deny' });
    expect(record.opened).toEqual([EXTERNAL_LINKS.fakeCardTest]);
  });

  it('lets the window close when no flash is running', () => {
    let prevented = false;
    for (const listener of record.windows[0]?.listeners.get('close') ?? [])
      listener({ preventDefault: () => void (prevented = true) });
    expect(prevented).toBe(false);
  });

  it('takes the single-instance lock, and listens for open-file before `ready` (macOS sends it before, when a double-click starts Sluice)', () => {
    expect(record.sequence.indexOf('open-file')).toBeGreaterThanOrEqual(0);
    expect(record.sequence.indexOf('open-file')).toBeLessThan(record.sequence.indexOf('whenReady'));
    expect(record.sequence).toContain('second-instance');
  });

  it('hands the image on its own command line to the page once the page says it listens, not before', async () => {
    expect(imagesOpened()).toEqual([]);
    const pageReady = record.ipcHandlers.get(INVOKE_CHANNELS.pageReady);
    await expect(pageReady?.(fromAppPage)).resolves.toEqual({ ok: true, value: null });
    await vi.waitFor(() => expect(imagesOpened()).toHaveLength(1));
    expect(imagesOpened()[0]).toMatchObject({
      ok: true,
      value: { source: join(images, 'started-with.img'), name: 'started-with.img', format: 'raw' },
    });
  });

  it('a second instance brings the window forward and hands over its file, relative to its own working directory', async () => {
    const focused = record.focused;
    const secondInstance = record.appListeners.get('second-instance');
    secondInstance?.(
      {},
      [
        '/src/sluice/node_modules/electron/dist/electron',
        '--allow-file-access-from-files',
        '/src/sluice',
        'second.img',
      ],
      images,
      {},
    );
    expect(record.focused).toBe(focused + 1);
    await vi.waitFor(() => expect(imagesOpened()).toHaveLength(2));
    expect(imagesOpened()[1]).toMatchObject({ ok: true, value: { source: join(images, 'second.img') } });
  });

  it('open-file: handled (preventDefault) and handed over', async () => {
    let prevented = false;
    record.appListeners.get('open-file')?.({ preventDefault: () => void (prevented = true) }, join(images, 'mac.img'));
    expect(prevented).toBe(true);
    await vi.waitFor(() => expect(imagesOpened()).toHaveLength(3));
    expect(imagesOpened()[2]).toMatchObject({ ok: true, value: { source: join(images, 'mac.img') } });
  });
});

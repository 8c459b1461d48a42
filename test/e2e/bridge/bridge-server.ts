/**
 * The browser test transport: a small HTTP server on 127.0.0.1 that serves the built renderer
 * (same files, same CSP as Electron's app:// protocol) and carries the preload contract over HTTP
 * and Server-Sent Events to the real main-process core (electron/core). Only the Electron glue is
 * left out: the window, ipcMain and the desktop effects, which are recorded here instead.
 *
 * It is a test transport, not a product: it listens on loopback only, and every request must
 * carry the random token the test opened the page with (as a cookie), so no other local process
 * or web page can drive it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { EmitEvent } from '../../../common/contracts/ipc-contract.js';
import type { SettingsPatch } from '../../../common/contracts/settings.js';
import type { AppService } from '../../../electron/core/app-service.js';
import type { HelperLauncher } from '../../../electron/core/flash-session.js';
import { isCatalogueIconPath, readCatalogueIcon } from '../../../electron/core/catalogue-icons.js';
import { ImageHandOff } from '../../../electron/core/image-hand-off.js';
import { rendererHeaders, resolveRendererFile } from '../../../electron/core/renderer-files.js';
import { SettingsStore } from '../../../electron/core/settings-store.js';
import { catalogueIconsDir } from '../../../user/cache/cache-dir.js';
import { builtCreateAppService } from '../../support/built-modules.js';

const COOKIE = 'sluice-bridge';
const MAX_BODY_BYTES = 64 * 1024;

export interface BridgeOptions {
  /** The built renderer (out/ui). */
  uiDir: string;
  /** The compiled page shim (out/test/e2e/bridge/page-shim.js). */
  shimFile: string;
  /** Where files the test drops onto the page live. */
  dropDir: string;
  settingsFile: string;
  initialSettings?: SettingsPatch | undefined;
  launchHelper: HelperLauncher;
  /** The Customise step's ~/.ssh; default: .ssh in dropDir. */
  sshDir?: string | undefined;
  /** The app's cache folder (images, saved catalogues, icons). */
  cacheDir: string;
}

/** What the Electron glue would have done, for the tests to check. */
export interface RecordedEffects {
  /** Keep-awake blocks taken and released. */
  sleepBlocks: number;
  sleepReleases: number;
  /** Every taskbar progress value set, null meaning "removed". */
  progress: (number | null)[];
  notifications: { title: string; body: string }[];
}

export interface Bridge {
  /** Open this in the browser: it carries the token. */
  url: string;
  service: AppService;
  effects: RecordedEffects;
  openedLinks: string[];
  /** Files "Show in folder" asked the file manager for. */
  shownFiles: string[];
  /** The path the next "Choose image…" dialog answers with (null: the user closed it). */
  answerDialog(path: string | null): void;
  /** The path the next backup save dialog answers with (null: the user closed it), and the names it was offered. */
  answerSaveDialog(path: string | null): void;
  suggestedNames: string[];
  /**
   * Where the system's hand-over arrives, as in electron/main/main.ts: openCommandLine is
   * Sluice's own command line at start (call it before the page loads) or a second instance's
   * (Windows, Linux); openFile is macOS's open-file.
   */
  handOff: ImageHandOff;
  /** Lines the hand-off printed for arguments it cannot open (stderr under Electron). */
  notes: string[];
  close(): Promise<void>;
}

function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

function cookieToken(request: IncomingMessage): string | undefined {
  const pairs = (request.headers.cookie ?? '').split(';').map((part) => part.trim().split('='));
  return pairs.find(([name]) => name === COOKIE)?.[1];
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const token = randomBytes(24).toString('hex');
  const settings = await SettingsStore.open(options.settingsFile);
  if (options.initialSettings !== undefined) await settings.update(options.initialSettings);
  const effects: RecordedEffects = { sleepBlocks: 0, sleepReleases: 0, progress: [], notifications: [] };
  const openedLinks: string[] = [];
  const shownFiles: string[] = [];
  const clients = new Set<ServerResponse>();
  let dialogAnswer: string | null = null;
  let saveDialogAnswer: string | null = null;
  const suggestedNames: string[] = [];
  const notes: string[] = [];
  // This machine's command lines, from a packaged Sluice: no app path among the arguments.
  const handOff = new ImageHandOff(
    { platform: process.platform, appInArguments: false },
    (line) => void notes.push(line),
  );

  const emit: EmitEvent = (event, payload) => {
    const frame = `data: ${JSON.stringify({ event, payload })}\n\n`;
    for (const client of clients) client.write(frame);
  };
  const createAppService = await builtCreateAppService();
  const service = createAppService({
    settings,
    launchHelper: options.launchHelper,
    pickImage: async () => dialogAnswer,
    sshDir: options.sshDir ?? join(options.dropDir, '.ssh'),
    pickBackupFile: async (suggestedName) => {
      suggestedNames.push(suggestedName);
      return saveDialogAnswer;
    },
    openExternal: async (url) => void openedLinks.push(url),
    showInFolder: (path) => void shownFiles.push(path),
    effects: {
      preventSleep: () => {
        effects.sleepBlocks += 1;
        return () => void (effects.sleepReleases += 1);
      },
      setProgress: (fraction) => void effects.progress.push(fraction),
      notify: (title, body) => void effects.notifications.push({ title, body }),
    },
    emit,
    handOff,
    cacheDir: options.cacheDir,
    stationLog: join(options.dropDir, 'station-log.jsonl'),
  });

  const shim = `const SLUICE_BRIDGE = ${JSON.stringify({ dropDir: options.dropDir })};\n${await readFile(options.shimFile, 'utf8')}`;

  const serveFile = async (response: ServerResponse, pathname: string): Promise<void> => {
    const file = resolveRendererFile(options.uiDir, pathname);
    if (file === null) return void response.writeHead(404).end();
    let body = await readFile(file.path);
    if (file.contentType.startsWith('text/html')) {
      // The shim must define window.sluice before the renderer's module runs: module scripts run in document order.
      body = Buffer.from(
        body.toString('utf8').replace('<head>', '<head>\n    <script type="module" src="/__bridge/shim.js"></script>'),
      );
    }
    response.writeHead(200, rendererHeaders(file.contentType)).end(body);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse, origin: string): Promise<void> => {
    const url = new URL(request.url ?? '/', origin);
    const fromQuery = url.searchParams.get('token') ?? undefined;
    if (tokenMatches(token, fromQuery)) {
      response.setHeader('set-cookie', `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    } else if (!tokenMatches(token, cookieToken(request))) {
      return void response.writeHead(403).end();
    }
    if (url.pathname === '/__bridge/shim.js')
      return void response.writeHead(200, rendererHeaders('text/javascript; charset=utf-8')).end(shim);
    if (url.pathname === '/__bridge/events') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      response.write(': connected\n\n');
      clients.add(response);
      request.on('close', () => clients.delete(response));
      return;
    }
    if (url.pathname.startsWith('/__bridge/invoke/')) {
      // Like ipcMain's sender check: only the page this server served may call.
      if (request.method !== 'POST' || request.headers.origin !== origin) return void response.writeHead(403).end();
      let result: ApiResult<unknown>;
      try {
        result = await service.invoke(url.pathname.slice('/__bridge/invoke/'.length), await readBody(request));
      } catch (error) {
        result = {
          ok: false,
          error: { code: 'invalid-request', message: error instanceof Error ? error.message : String(error) },
        };
      }
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    }
    if (request.method !== 'GET') return void response.writeHead(405).end();
    if (isCatalogueIconPath(url.pathname)) {
      const icon = await readCatalogueIcon(catalogueIconsDir(options.cacheDir), url.pathname);
      return void (icon === null
        ? response.writeHead(404).end()
        : response.writeHead(200, rendererHeaders(icon.contentType)).end(icon.bytes));
    }
    await serveFile(response, url.pathname);
  };

  const server = createServer((request, response) => {
    handle(request, response, origin).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${origin}/?token=${token}`,
    service,
    effects,
    openedLinks,
    shownFiles,
    answerDialog: (path) => {
      dialogAnswer = path;
    },
    answerSaveDialog: (path) => {
      saveDialogAnswer = path;
    },
    suggestedNames,
    handOff,
    notes,
    close: async () => {
      await service.close();
      for (const client of clients) client.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The test bridge's stand-in for the preload: implements SluiceApi over HTTP (calls) and
 * Server-Sent Events (pushes) to bridge-server.ts, and exposes it as window.sluice before the
 * renderer's own module runs. The renderer cannot tell it from Electron's preload.
 *
 * Runs in the browser. The server prepends `const SLUICE_BRIDGE = {...}` when it serves this file.
 */
import type { EventPayloads, SluiceApi, Unsubscribe } from '../../../common/contracts/ipc-contract.js';
import type { EventName, InvokeMethod } from '../../../common/contracts/ipc-channels.js';

declare const SLUICE_BRIDGE: {
  /** Where dropped files live: the browser knows a dropped file's name, Electron's webUtils its path. */
  dropDir: string;
};

const listeners = new Map<EventName, Set<(payload: never) => void>>();
const events = new EventSource('/__bridge/events');
/*
 * Electron delivers a push to listeners registered before the call that caused it; over HTTP the
 * event stream must be open first, or a push answering a call (imageOpened after pageReady) would
 * go to no one. So calls wait for it.
 */
const streamOpen = new Promise<void>((resolve) => events.addEventListener('open', () => resolve(), { once: true }));

async function invoke(method: InvokeMethod, ...args: unknown[]): Promise<never> {
  await streamOpen;
  const response = await fetch(`/__bridge/invoke/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  return (await response.json()) as never;
}

events.onmessage = (message: { data: string }) => {
  const { event, payload } = JSON.parse(message.data) as { event: EventName; payload: never };
  for (const listener of listeners.get(event) ?? []) listener(payload);
};

function subscribe<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void): Unsubscribe {
  const set = listeners.get(event) ?? new Set();
  listeners.set(event, set);
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}

const api: SluiceApi = {
  getSettings: () => invoke('getSettings'),
  updateSettings: (patch) => invoke('updateSettings', patch),
  chooseImage: () => invoke('chooseImage'),
  selectImage: (path) => invoke('selectImage', path),
  openImageUrl: (url) => invoke('openImageUrl', url),
  chooseSourceDrive: (device) => invoke('chooseSourceDrive', device),
  clearImage: () => invoke('clearImage'),
  readCatalogue: (source) => invoke('readCatalogue', source),
  chooseCatalogueOs: (source, path) => invoke('chooseCatalogueOs', source, path),
  getCache: () => invoke('getCache'),
  clearCache: () => invoke('clearCache'),
  confirmDrive: (confirmation) => invoke('confirmDrive', confirmation),
  listDrives: () => invoke('listDrives'),
  startFlash: (request) => invoke('startFlash', request),
  chooseBackupFile: (device, compress) => invoke('chooseBackupFile', device, compress),
  startBackup: (request) => invoke('startBackup', request),
  startCheck: (device, medium) => invoke('startCheck', device, medium),
  startErase: (request) => invoke('startErase', request),
  chooseCompareImage: (device) => invoke('chooseCompareImage', device),
  startCompare: (device) => invoke('startCompare', device),
  showBackupFile: () => invoke('showBackupFile'),
  cancelJob: () => invoke('cancelJob'),
  openExternal: (url) => invoke('openExternal', url),
  pageReady: () => invoke('pageReady'),
  sealCustomisation: (draft) => invoke('sealCustomisation', draft),
  previewCustomisation: (profile, cards) => invoke('previewCustomisation', profile, cards),
  listSshKeys: () => invoke('listSshKeys'),
  armStation: (request) => invoke('armStation', request),
  stopStation: () => invoke('stopStation'),
  exportStationLog: () => invoke('exportStationLog'),
  pathForFile: (file) => `${SLUICE_BRIDGE.dropDir}/${file.name}`,
  onDrivesChanged: (listener) => subscribe('drivesChanged', listener),
  onJobProgress: (listener) => subscribe('jobProgress', listener),
  onJobEnd: (listener) => subscribe('jobEnd', listener),
  onImageOpened: (listener) => subscribe('imageOpened', listener),
  onDownload: (listener) => subscribe('download', listener),
  onStationRow: (listener) => subscribe('stationRow', listener),
  onStationStatus: (listener) => subscribe('stationStatus', listener),
};

Object.defineProperty(globalThis, 'sluice', { value: Object.freeze(api), enumerable: true });

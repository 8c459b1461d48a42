/**
 * The page's only door to the main process: window.sluice, one function per capability. Runs
 * sandboxed, so Vite bundles it to CommonJS (vite.preload.config.ts); it imports the channel
 * names and types, nothing with logic.
 */
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import { EVENT_CHANNELS, INVOKE_CHANNELS } from '../../common/contracts/ipc-channels.js';
import type { SluiceApi, Unsubscribe } from '../../common/contracts/ipc-contract.js';

/** Passes the payload on and nothing else: the IPC event would hand the page `sender`, i.e. ipcRenderer itself. */
function subscribe<T>(channel: string, listener: (payload: T) => void): Unsubscribe {
  const forward = (_event: IpcRendererEvent, payload: T): void => listener(payload);
  ipcRenderer.on(channel, forward);
  return () => {
    ipcRenderer.removeListener(channel, forward);
  };
}

const api: SluiceApi = {
  getSettings: () => ipcRenderer.invoke(INVOKE_CHANNELS.getSettings),
  updateSettings: (patch) => ipcRenderer.invoke(INVOKE_CHANNELS.updateSettings, patch),
  chooseImage: () => ipcRenderer.invoke(INVOKE_CHANNELS.chooseImage),
  selectImage: (path) => ipcRenderer.invoke(INVOKE_CHANNELS.selectImage, path),
  openImageUrl: (url) => ipcRenderer.invoke(INVOKE_CHANNELS.openImageUrl, url),
  chooseSourceDrive: (device) => ipcRenderer.invoke(INVOKE_CHANNELS.chooseSourceDrive, device),
  clearImage: () => ipcRenderer.invoke(INVOKE_CHANNELS.clearImage),
  readCatalogue: (source) => ipcRenderer.invoke(INVOKE_CHANNELS.readCatalogue, source),
  chooseCatalogueOs: (source, path) => ipcRenderer.invoke(INVOKE_CHANNELS.chooseCatalogueOs, source, path),
  getCache: () => ipcRenderer.invoke(INVOKE_CHANNELS.getCache),
  clearCache: () => ipcRenderer.invoke(INVOKE_CHANNELS.clearCache),
  listDrives: () => ipcRenderer.invoke(INVOKE_CHANNELS.listDrives),
  confirmDrive: (confirmation) => ipcRenderer.invoke(INVOKE_CHANNELS.confirmDrive, confirmation),
  startFlash: (request) => ipcRenderer.invoke(INVOKE_CHANNELS.startFlash, request),
  chooseBackupFile: (device, compress) => ipcRenderer.invoke(INVOKE_CHANNELS.chooseBackupFile, device, compress),
  startBackup: (request) => ipcRenderer.invoke(INVOKE_CHANNELS.startBackup, request),
  startCheck: (device, medium) => ipcRenderer.invoke(INVOKE_CHANNELS.startCheck, device, medium),
  startErase: (request) => ipcRenderer.invoke(INVOKE_CHANNELS.startErase, request),
  chooseCompareImage: (device) => ipcRenderer.invoke(INVOKE_CHANNELS.chooseCompareImage, device),
  startCompare: (device) => ipcRenderer.invoke(INVOKE_CHANNELS.startCompare, device),
  showBackupFile: () => ipcRenderer.invoke(INVOKE_CHANNELS.showBackupFile),
  cancelJob: () => ipcRenderer.invoke(INVOKE_CHANNELS.cancelJob),
  openExternal: (url) => ipcRenderer.invoke(INVOKE_CHANNELS.openExternal, url),
  pageReady: () => ipcRenderer.invoke(INVOKE_CHANNELS.pageReady),
  sealCustomisation: (draft) => ipcRenderer.invoke(INVOKE_CHANNELS.sealCustomisation, draft),
  previewCustomisation: (profile, cards) => ipcRenderer.invoke(INVOKE_CHANNELS.previewCustomisation, profile, cards),
  listSshKeys: () => ipcRenderer.invoke(INVOKE_CHANNELS.listSshKeys),
  armStation: (request) => ipcRenderer.invoke(INVOKE_CHANNELS.armStation, request),
  stopStation: () => ipcRenderer.invoke(INVOKE_CHANNELS.stopStation),
  exportStationLog: () => ipcRenderer.invoke(INVOKE_CHANNELS.exportStationLog),
  pathForFile: (file) => webUtils.getPathForFile(file as Parameters<typeof webUtils.getPathForFile>[0]),
  onDrivesChanged: (listener) => subscribe(EVENT_CHANNELS.drivesChanged, listener),
  onJobProgress: (listener) => subscribe(EVENT_CHANNELS.jobProgress, listener),
  onJobEnd: (listener) => subscribe(EVENT_CHANNELS.jobEnd, listener),
  onImageOpened: (listener) => subscribe(EVENT_CHANNELS.imageOpened, listener),
  onDownload: (listener) => subscribe(EVENT_CHANNELS.download, listener),
  onStationRow: (listener) => subscribe(EVENT_CHANNELS.stationRow, listener),
  onStationStatus: (listener) => subscribe(EVENT_CHANNELS.stationStatus, listener),
};

contextBridge.exposeInMainWorld('sluice', api);

/**
 * IPC channel names, written once. Kept apart from the schemas so the sandboxed preload bundle
 * carries the names and nothing else.
 */
export const INVOKE_CHANNELS = {
  getSettings: 'sluice:settings:get',
  updateSettings: 'sluice:settings:update',
  chooseImage: 'sluice:image:choose',
  selectImage: 'sluice:image:select',
  openImageUrl: 'sluice:image:open-url',
  chooseSourceDrive: 'sluice:image:source-drive',
  clearImage: 'sluice:image:clear',
  readCatalogue: 'sluice:catalogue:read',
  chooseCatalogueOs: 'sluice:catalogue:choose',
  getCache: 'sluice:cache:get',
  clearCache: 'sluice:cache:clear',
  listDrives: 'sluice:drives:list',
  confirmDrive: 'sluice:drives:confirm',
  startFlash: 'sluice:flash:start',
  chooseBackupFile: 'sluice:backup:choose-file',
  startBackup: 'sluice:backup:start',
  showBackupFile: 'sluice:backup:show-file',
  startCheck: 'sluice:check:start',
  startErase: 'sluice:erase:start',
  chooseCompareImage: 'sluice:compare:choose-image',
  startCompare: 'sluice:compare:start',
  cancelJob: 'sluice:job:cancel',
  openExternal: 'sluice:shell:open-external',
  pageReady: 'sluice:page:ready',
  sealCustomisation: 'sluice:customise:seal',
  previewCustomisation: 'sluice:customise:preview',
  listSshKeys: 'sluice:customise:ssh-keys',
  armStation: 'sluice:station:arm',
  stopStation: 'sluice:station:stop',
  exportStationLog: 'sluice:station:export',
} as const;

export type InvokeMethod = keyof typeof INVOKE_CHANNELS;

/** Main → renderer pushes. */
export const EVENT_CHANNELS = {
  drivesChanged: 'sluice:drives:changed',
  jobProgress: 'sluice:job:progress',
  jobEnd: 'sluice:job:end',
  imageOpened: 'sluice:image:opened',
  download: 'sluice:job:download',
  stationRow: 'sluice:station:row',
  stationStatus: 'sluice:station:status',
} as const;

export type EventName = keyof typeof EVENT_CHANNELS;

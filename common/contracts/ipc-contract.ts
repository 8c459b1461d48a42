/**
 * The app's IPC contract, typed once: the preload implements SluiceApi, the main process
 * implements ApiHandlers and checks every call against INVOKE_ARGS, the renderer calls
 * window.sluice. Channel names live in ipc-channels.ts.
 */
import * as v from 'valibot';
import type { ApiResult } from './api-result.js';
import type { EventName, InvokeMethod } from './ipc-channels.js';
import type { ImageInfo } from '../domain/image.js';
import type { Progress } from '../domain/progress.js';
import {
  BackupCompressionSchema,
  BackupRequestSchema,
  DevicePathSchema,
  DriveConfirmationSchema,
  EraseRequestSchema,
  FlashRequestSchema,
  ImagePathSchema,
  ImageUrlSchema,
  type BackupRequest,
  type DriveConfirmation,
  type DriveInfo,
  type EraseRequest,
  type FlashRequest,
  type JobEnd,
} from './app-models.js';
import {
  CustomisationDraftSchema,
  PreviewCardsSchema,
  type CustomisationDraft,
  type CustomisationPreview,
  type SshKeyFile,
} from './customise.js';
import { ProfileSchema, type Profile } from '../domain/customisation.js';
import { CataloguePathSchema, CatalogueSourceSchema, type CacheView, type CatalogueView } from './catalogue-view.js';
import { SettingsPatchSchema, type Settings, type SettingsPatch } from './settings.js';
import { StationRequestSchema, type StationRequest, type StationStatus } from './station-models.js';
import type { StationRow } from '../domain/station.js';
import { MediumSchema } from './helper-protocol.js';

/** A file from a drop event; the DOM's File in the renderer. */
export interface DroppedFile {
  readonly name: string;
}

export type Unsubscribe = () => void;

/** window.sluice: one function per capability, nothing else. */
export interface SluiceApi {
  getSettings(): Promise<ApiResult<Settings>>;
  /** Changes some settings and returns them all, as saved. */
  updateSettings(patch: SettingsPatch): Promise<ApiResult<Settings>>;
  /** Opens the native file dialog; null when the user closed it without choosing. */
  chooseImage(): Promise<ApiResult<ImageInfo | null>>;
  /** Chooses the image at `path` (a dropped file). */
  selectImage(path: string): Promise<ApiResult<ImageInfo>>;
  /** Chooses the image at an http(s) address: probed now, downloaded while it is written. */
  openImageUrl(url: string): Promise<ApiResult<ImageInfo>>;
  /** Chooses a whole drive as what is written (a clone): copied by the helper, bit for bit. */
  chooseSourceDrive(device: string): Promise<ApiResult<ImageInfo>>;
  clearImage(): Promise<ApiResult<null>>;
  /** Reads a catalogue document: a repository in the settings, or a category's subitems_url from a document read before. */
  readCatalogue(source: string): Promise<ApiResult<CatalogueView>>;
  /** Chooses the OS at `path` in the document read from `source`: from the image cache when it holds it, else downloaded while it is written. */
  chooseCatalogueOs(source: string, path: string[]): Promise<ApiResult<ImageInfo>>;
  /** The image cache: where it is, its limit, what it holds. */
  getCache(): Promise<ApiResult<CacheView>>;
  /** Deletes every image the cache holds (saved catalogues stay, for the list offline); refused while a job runs. */
  clearCache(): Promise<ApiResult<CacheView>>;
  listDrives(): Promise<ApiResult<DriveInfo[]>>;
  /** What the person typed to confirm an internal disk: kept by the core when it is the drive's name, refused otherwise. */
  confirmDrive(confirmation: DriveConfirmation): Promise<ApiResult<null>>;
  /** Starts writing the chosen image; progress and the end arrive as events. */
  startFlash(request: FlashRequest): Promise<ApiResult<null>>;
  /**
   * Opens the native save dialog for a backup of `device`, suggesting a name that fits the
   * compression; null when the user closed it. The main process keeps the answer for startBackup.
   */
  chooseBackupFile(device: string, compress: BackupRequest['compress']): Promise<ApiResult<string | null>>;
  /** Starts saving the drive into the file chosen for it; progress and the end arrive as the flash events do. */
  startBackup(request: BackupRequest): Promise<ApiResult<null>>;
  /** Shows the file the last backup saved in the system's file manager. */
  showBackupFile(): Promise<ApiResult<null>>;
  /**
   * Checks `device` for fake capacity (what `sluice check` does): test blocks written and read
   * back, every one put back; the end arrives as a jobEnd event of kind check.
   */
  /** `medium`: the one the user saw in the drive (Drive.medium); the drive is refused if it holds another now. */
  startCheck(device: string, medium: string | null): Promise<ApiResult<null>>;
  /**
   * Makes `device` a normal empty drive again (what `sluice erase` does): one FAT32 or exFAT
   * partition; the end arrives as a jobEnd event of kind erase.
   */
  startErase(request: EraseRequest): Promise<ApiResult<null>>;
  /** Opens the open dialog for an image to compare `device` with, and probes it; null when the user closed it. */
  chooseCompareImage(device: string): Promise<ApiResult<ImageInfo | null>>;
  /** Compares `device` with the image chosen for it, writing nothing (what `sluice verify` does); the end arrives as a jobEnd event of kind verify. */
  startCompare(device: string): Promise<ApiResult<null>>;
  /** Asks the running job (a flash or a backup) to stop; its end arrives as a jobEnd event with `cancelled` results. */
  cancelJob(): Promise<ApiResult<null>>;
  /** Opens one of the app's own links (links.ts) in the browser. */
  openExternal(url: string): Promise<ApiResult<null>>;
  /**
   * The page has subscribed to the push events: an image the system handed over before this
   * (a double-click that started Sluice) arrives now as imageOpened, later ones as they come.
   */
  pageReady(): Promise<ApiResult<null>>;
  /**
   * Turns the Customise form into a profile: a password typed is hashed, a Wi-Fi passphrase turned
   * into its PSK, and the whole checked. The page keeps only the answer.
   */
  sealCustomisation(draft: CustomisationDraft): Promise<ApiResult<Profile>>;
  /** What `profile` writes onto each of `cards` cards with the chosen image, or why it cannot (no method, no room, ...). */
  previewCustomisation(profile: Profile, cards: number): Promise<ApiResult<CustomisationPreview>>;
  /** The user's public keys (~/.ssh/id_*.pub), offered for import. */
  listSshKeys(): Promise<ApiResult<SshKeyFile[]>>;
  /** Arms a flashing station with the chosen image: every card that appears from now on and fits the rules is written on its own. */
  armStation(request: StationRequest): Promise<ApiResult<StationStatus>>;
  /** Takes no more cards and cancels the cards being written; resolves once every card is logged. */
  stopStation(): Promise<ApiResult<StationStatus>>;
  /** Writes the station's log as CSV beside it and shows it in the file manager; returns the CSV's path. */
  exportStationLog(): Promise<ApiResult<string>>;
  /** The file's path on disk, or '' for a file that has none (dragged out of a web page). */
  pathForFile(file: DroppedFile): string;
  onDrivesChanged(listener: (drives: DriveInfo[]) => void): Unsubscribe;
  onJobProgress(listener: (progress: Progress) => void): Unsubscribe;
  onJobEnd(listener: (end: JobEnd) => void): Unsubscribe;
  /** An image the system asked Sluice to open (double-click, "Open with", command line): chosen, or why not. */
  onImageOpened(listener: (opened: ApiResult<ImageInfo>) => void): Unsubscribe;
  /** A flash's download, apart from its writing: how far it got, and that it was resumed after a drop. */
  onDownload(listener: (download: DownloadProgress) => void): Unsubscribe;
  /** A station row appeared or changed (phase, progress, its end). */
  onStationRow(listener: (row: StationRow) => void): Unsubscribe;
  onStationStatus(listener: (status: StationStatus) => void): Unsubscribe;
}

/** A flash's download as the progress screen shows it beside the writing. */
export interface DownloadProgress {
  /** Bytes of the download received so far. */
  bytesDone: number;
  /** Bytes of the whole download, when the server or the catalogue says. */
  bytesTotal: number | null;
  /** Bytes per second since the download started. */
  speed: number;
  /** The last thing the download said (a dropped connection resumed), or null. */
  notice: string | null;
}

/** What each push event carries. */
export interface EventPayloads {
  drivesChanged: DriveInfo[];
  jobProgress: Progress;
  jobEnd: JobEnd;
  /** Chosen exactly as a dropped file is (selectImage), or refused: not found, unreadable, or `busy` while a flash runs. */
  imageOpened: ApiResult<ImageInfo>;
  download: DownloadProgress;
  stationRow: StationRow;
  stationStatus: StationStatus;
}

/** Sends a push event to the page, whatever the transport (Electron IPC, or the test bridge). */
export type EmitEvent = <E extends EventName>(event: E, payload: EventPayloads[E]) => void;

/** The argument list each invoke channel accepts; anything else is refused before a handler runs. */
export const INVOKE_ARGS = {
  getSettings: v.strictTuple([]),
  updateSettings: v.strictTuple([SettingsPatchSchema]),
  chooseImage: v.strictTuple([]),
  selectImage: v.strictTuple([ImagePathSchema]),
  openImageUrl: v.strictTuple([ImageUrlSchema]),
  chooseSourceDrive: v.strictTuple([DevicePathSchema]),
  clearImage: v.strictTuple([]),
  readCatalogue: v.strictTuple([CatalogueSourceSchema]),
  chooseCatalogueOs: v.strictTuple([CatalogueSourceSchema, CataloguePathSchema]),
  getCache: v.strictTuple([]),
  clearCache: v.strictTuple([]),
  listDrives: v.strictTuple([]),
  confirmDrive: v.strictTuple([DriveConfirmationSchema]),
  startFlash: v.strictTuple([FlashRequestSchema]),
  chooseBackupFile: v.strictTuple([DevicePathSchema, BackupCompressionSchema]),
  startBackup: v.strictTuple([BackupRequestSchema]),
  showBackupFile: v.strictTuple([]),
  startCheck: v.strictTuple([DevicePathSchema, MediumSchema]),
  startErase: v.strictTuple([EraseRequestSchema]),
  chooseCompareImage: v.strictTuple([DevicePathSchema]),
  startCompare: v.strictTuple([DevicePathSchema]),
  cancelJob: v.strictTuple([]),
  openExternal: v.strictTuple([v.pipe(v.string(), v.maxLength(2048))]),
  pageReady: v.strictTuple([]),
  sealCustomisation: v.strictTuple([CustomisationDraftSchema]),
  previewCustomisation: v.strictTuple([ProfileSchema, PreviewCardsSchema]),
  listSshKeys: v.strictTuple([]),
  armStation: v.strictTuple([StationRequestSchema]),
  stopStation: v.strictTuple([]),
  exportStationLog: v.strictTuple([]),
} satisfies { [K in InvokeMethod]: v.GenericSchema<unknown, Parameters<SluiceApi[K]>> };

/** The main process's side: every invoke method, called with already-validated arguments. */
export type ApiHandlers = { [K in InvokeMethod]: (...args: Parameters<SluiceApi[K]>) => ReturnType<SluiceApi[K]> };

import * as v from 'valibot';
import { isAllowedExternalUrl } from '../../common/app/links.js';
import { ok, refuse, type ApiResult } from '../../common/contracts/api-result.js';
import type { AppJobKind } from '../../common/contracts/app-models.js';
import type { InvokeMethod } from '../../common/contracts/ipc-channels.js';
import { INVOKE_ARGS, type ApiHandlers, type EmitEvent } from '../../common/contracts/ipc-contract.js';
import { errorText } from '../../common/domain/error-details.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { ImageCache } from '../../user/cache/image-cache.js';
import { AppCatalogue } from './app-catalogue.js';
import { BackupFiles } from './backup-files.js';
import { startErase, startCheck } from './card-jobs.js';
import { ChosenImage } from './chosen-image.js';
import { previewCustomisation, sealDraft, sshKeyFiles } from './customise.js';
import type { DesktopEffects } from './desktop-job.js';
import type { DriveScannerOptions } from '../../user/drives/scanner.js';
import { DriveConfirmations } from './drive-confirmations.js';
import { DriveListing } from './drive-listing.js';
import type { HelperLauncher } from './flash-session.js';
import { startFlash, type FlashPieces } from './flash-start.js';
import { ImageComparison } from './image-comparison.js';
import type { ImageHandOff } from './image-hand-off.js';
import { probeImage, probeImageUrl, probeSourceDrive } from './image-probe.js';
import { JobRunner } from './job-runner.js';
import type { SettingsStore } from './settings-store.js';
import { StationService, type StationArmer } from './station-service.js';

/** Everything the app's logic needs from the outside world; the composition root (Electron or the test bridge) provides it. */
export interface AppServiceDeps {
  settings: SettingsStore;
  /** Starts the privileged helper: startHelper with the app's elevation (electron/main/main.ts); tests pass a loop-only launcher. */
  launchHelper: HelperLauncher;
  /**
   * How a decoder hands its image to the helper (decoderOutputFor the app's elevation): 'relayed'
   * where the elevation tool passes no descriptors (osascript, UAC). 'stream' when omitted.
   */
  decoderOutput?: () => 'stream' | 'relayed';
  /** Arms a station's root side once for its whole batch; null where each card's helper asks on its own (StationService). */
  armStation?: StationArmer;
  /** The native open dialog; null when the user closed it. */
  pickImage(): Promise<string | null>;
  /** The native save dialog for a backup, offering `suggestedName`; null when the user closed it. */
  pickBackupFile(suggestedName: string): Promise<string | null>;
  openExternal(url: string): Promise<void>;
  /** Opens the file manager at a file (a saved backup). */
  showInFolder(path: string): void;
  effects: DesktopEffects;
  emit: EmitEvent;
  /** Where the user's SSH keys are (~/.ssh): the Customise step offers id_*.pub from it. */
  sshDir: string;
  /** Images the system hands over (double-click, "Open with", command line); the service takes them once the page is ready. */
  handOff: ImageHandOff;
  /** The cache folder: downloaded images, saved catalogues and their icons (user/cache/cache-dir.ts). */
  cacheDir: string;
  /** The flashing station's JSON Lines log. */
  stationLog: string;
  /**
   * Lists the drives; the system's own listing when omitted. Tests of internal disks pass the real
   * listing with one of their loop devices shown as one: this machine has none it may write.
   */
  listDrives?: DriveScannerOptions['list'];
}

export interface AppService {
  readonly handlers: ApiHandlers;
  /** Checks `args` against the channel's schema, then calls its handler. Never throws. */
  invoke(method: string, args: unknown): Promise<ApiResult<unknown>>;
  /** What is running: a flash, a clone, a backup, or nothing. */
  runningJob(): AppJobKind | null;
  /** Cancels the running job and waits until the helper has stopped and closed the device. */
  cancelJobAndWait(): Promise<void>;
  close(): Promise<void>;
}

function isInvokeMethod(method: string): method is InvokeMethod {
  return Object.hasOwn(INVOKE_ARGS, method);
}

/** The pieces of the app's logic: each holds the state of one thing, and the handlers only compose them. */
interface AppPieces extends FlashPieces {
  deps: AppServiceDeps;
  backups: BackupFiles;
  comparison: ImageComparison;
}

function createPieces(deps: AppServiceDeps): AppPieces {
  const runner = new JobRunner((end) => {
    backups.ended(end);
    deps.emit('jobEnd', end);
  });
  const drives = new DriveListing(
    () => image.current,
    (list) => deps.emit('drivesChanged', list),
    deps.listDrives,
  );
  const image = new ChosenImage(runner, () => drives.republish());
  const confirmations = new DriveConfirmations(drives);
  const backups = new BackupFiles(runner, drives, confirmations, deps.settings, deps);
  /** The image cache with the settings' limit: a batch or a station decodes its image into it once. */
  const imageCache = () => new ImageCache(deps.cacheDir, deps.settings.get().cacheLimitBytes);
  const station = new StationService(runner, {
    launch: deps.launchHelper,
    armRoot: deps.armStation ?? (() => null),
    effects: deps.effects,
    emit: deps.emit,
    logPath: deps.stationLog,
    exact: () => deps.settings.get().exact,
    virtual: () => deps.settings.get().showVirtual,
    notifications: () => deps.settings.get().notifications,
    showInFolder: (path) => deps.showInFolder(path),
    cache: imageCache,
  });
  return {
    deps,
    runner,
    drives,
    confirmations,
    image,
    backups,
    station,
    imageCache,
    decoderOutput: deps.decoderOutput ?? (() => 'stream'),
    catalogue: new AppCatalogue(deps.settings, deps.cacheDir),
    comparison: new ImageComparison(runner, drives, deps.settings, () => deps.pickImage()),
    settings: deps.settings,
    emit: deps.emit,
    session: {
      launch: deps.launchHelper,
      effects: deps.effects,
      onProgress: (progress) => deps.emit('jobProgress', progress),
    },
  };
}

/** The image never changes under an armed station: its screen names the image every card gets. */
function stationArmed(station: StationService): ApiResult<never> | null {
  return station.armed
    ? refuse('busy', 'The flashing station is armed with this image: stop it before choosing another.')
    : null;
}

/** Choosing the image: a file, a URL, a drive to clone, a catalogue entry; and its customisation's preview. */
function imageHandlers(pieces: AppPieces) {
  const { deps, image, station, drives, catalogue } = pieces;
  const selectImage = async (path: string) => stationArmed(station) ?? image.choose(path, probeImage);
  return {
    chooseImage: async () => {
      const armed = stationArmed(station);
      if (armed !== null) return armed;
      const path = await deps.pickImage();
      return path === null ? ok(null) : selectImage(path);
    },
    selectImage,
    openImageUrl: async (url) => stationArmed(station) ?? image.choose(url, probeImageUrl),
    chooseSourceDrive: async (device) => {
      const armed = stationArmed(station);
      if (armed !== null) return armed;
      const drive = await drives.find(device);
      return drive.ok ? image.choose(device, () => probeSourceDrive(drive.value)) : drive;
    },
    clearImage: async () => stationArmed(station) ?? image.clear(),
    chooseCatalogueOs: (source, path) => image.choose(path.at(-1) ?? source, () => catalogue.probe(source, path)),
    previewCustomisation: async (profile, cards) => {
      const chosen = image.current;
      if (chosen === null) return refuse('no-image', 'Choose an image first.');
      return previewCustomisation(chosen, profile, cards, (os, c) => catalogue.prepareCustomised(os, c));
    },
  } satisfies Partial<ApiHandlers>;
}

/** The catalogues and the image cache. */
function catalogueHandlers({ catalogue, runner }: AppPieces) {
  return {
    readCatalogue: (source) => catalogue.read(source),
    getCache: async () => ok(await catalogue.cacheView()),
    clearCache: async () => {
      // A flash may be writing into the cache (or reading from it) right now.
      const busy = runner.busy();
      return busy ?? ok(await catalogue.clearCache());
    },
  } satisfies Partial<ApiHandlers>;
}

/** The drives, and the jobs on them: flash, backup, check, erase, compare; one at a time. */
function jobHandlers(pieces: AppPieces) {
  const { drives, backups, comparison, runner, session } = pieces;
  return {
    listDrives: async () => ok(await drives.current()),
    confirmDrive: (confirmation) => pieces.confirmations.confirm(confirmation),
    startFlash: (request) => startFlash(pieces, request),
    chooseBackupFile: (device, compress) => backups.choose(device, compress),
    startBackup: (request) => backups.start(request, session),
    showBackupFile: async () => backups.show(),
    startCheck: (device, medium) => startCheck(pieces, device, medium),
    startErase: (request) => startErase(pieces, request),
    chooseCompareImage: (device) => comparison.choose(device),
    startCompare: (device) => comparison.start(device, session),
    cancelJob: async () => runner.cancel(),
  } satisfies Partial<ApiHandlers>;
}

/** The flashing station. */
function stationHandlers({ image, station }: AppPieces) {
  return {
    armStation: async (request) => {
      const named = image.forFlash(request.image);
      if (!named.ok) return named;
      const unchanged = await image.unchanged(named.value);
      return unchanged.ok ? station.arm(request, named.value) : unchanged;
    },
    stopStation: () => station.stop(),
    exportStationLog: () => station.exportCsv(),
  } satisfies Partial<ApiHandlers>;
}

/** Settings, links, the customisation's secrets and keys: no job, no drive. */
function settingsHandlers(deps: AppServiceDeps) {
  return {
    getSettings: async () => ok(deps.settings.get()),
    updateSettings: async (patch) => ok(await deps.settings.update(patch)),
    openExternal: async (url) => {
      if (!isAllowedExternalUrl(url)) return refuse('link-not-allowed', 'Sluice opens only its own links.');
      await deps.openExternal(url);
      return ok(null);
    },
    sealCustomisation: async (draft) => sealDraft(draft),
    listSshKeys: async () => ok(await sshKeyFiles(deps.sshDir)),
  } satisfies Partial<ApiHandlers>;
}

/**
 * The app's logic behind its IPC: each piece holds the state of one thing (the job, the drives,
 * the chosen image, the backup's files), and the handlers only compose them.
 */
export function createAppService(deps: AppServiceDeps): AppService {
  const pieces = createPieces(deps);
  const { runner, station, drives } = pieces;
  const handlers: ApiHandlers = {
    ...settingsHandlers(deps),
    ...imageHandlers(pieces),
    ...catalogueHandlers(pieces),
    ...jobHandlers(pieces),
    ...stationHandlers(pieces),
    pageReady: async () => {
      deps.handOff.connect(openHandedOver);
      return ok(null);
    },
  };

  const invoke = async (method: string, args: unknown): Promise<ApiResult<unknown>> => {
    if (!isInvokeMethod(method)) return refuse('invalid-request', `No such call: ${method.slice(0, 64)}.`);
    const parsed = v.safeParse(INVOKE_ARGS[method], args);
    if (!parsed.success)
      return refuse(
        'invalid-request',
        `Invalid arguments for ${method}: ${parsed.issues.map((issue) => issue.message).join('; ')}`,
      );
    try {
      // The schema's output is exactly this handler's parameter list (INVOKE_ARGS is checked against ApiHandlers).
      const handler = handlers[method] as (...validated: unknown[]) => Promise<ApiResult<unknown>>;
      return await handler(...(parsed.output as unknown[]));
    } catch (error) {
      return refuse('internal', `Something went wrong in Sluice: ${errorText(error)}`);
    }
  };

  /** A path the system handed over, checked and chosen exactly as a dropped file's; the page learns the outcome from imageOpened. */
  function openHandedOver(path: string): void {
    void invoke('selectImage', [path]).then((result) => deps.emit('imageOpened', result as ApiResult<ImageInfo>));
  }

  return {
    handlers,
    invoke,
    runningJob: () => runner.running(),
    cancelJobAndWait: () => runner.cancelAndWait(),
    close: async () => {
      // No start is taken from here on (runner.close says so at once), then the rest winds down.
      const closing = runner.close();
      await station.stop();
      await drives.stop();
      await closing;
    },
  };
}

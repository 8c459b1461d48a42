import * as v from 'valibot';
import { isAllowedExternalUrl } from '../../common/app/links.js';
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { DriveInfo, EraseRequest, FlashRequest } from '../../common/contracts/app-models.js';
import type { InvokeMethod } from '../../common/contracts/ipc-channels.js';
import { INVOKE_ARGS, type ApiHandlers, type EmitEvent } from '../../common/contracts/ipc-contract.js';
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import { cardsOf, nextCardAfter, type Profile } from '../../common/domain/customisation.js';
import type { JobEnd } from '../../common/contracts/app-models.js';
import {
  customisedOf,
  prepareCustomised,
  previewCustomisation,
  sealDraft,
  sshKeyFiles,
  type Customised,
} from './customise.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { CatalogueImage } from '../../user/catalogue/catalogue-image.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { judgeDrive } from '../../common/domain/verdict.js';
import type { AppJobKind } from '../../common/contracts/app-models.js';
import { openSourceFeed } from '../../user/images/feed/source-feed.js';
import { AppCatalogue } from './app-catalogue.js';
import { BackupFiles } from './backup-files.js';
import { ImageComparison } from './image-comparison.js';
import { ChosenImage } from './chosen-image.js';
import type { DesktopEffects } from './desktop-job.js';
import { DriveListing, notListed } from './drive-listing.js';
import { targetRefusal } from './drive-view.js';
import { reportDownload } from './download-progress.js';
import { ImageCache } from '../../user/cache/image-cache.js';
import { StationService, type StationArmer } from './station-service.js';
import { startFlashSession, type FlashSessionJob, type HelperLauncher, type SessionDeps } from './flash-session.js';
import { startProbeSession } from './probe-session.js';
import { startEraseSession } from './erase-session.js';
import { planErase } from '../../user/erase/erase-drive.js';
import type { ImageHandOff } from './image-hand-off.js';
import { probeImage, probeImageUrl, probeSourceDrive } from './image-probe.js';
import { JobRunner } from './job-runner.js';
import type { SettingsStore } from './settings-store.js';

/** Everything the app's logic needs from the outside world; the composition root (Electron or the test bridge) provides it. */
export interface AppServiceDeps {
  settings: SettingsStore;
  /** Starts the privileged helper: startHelper with the app's elevation (electron/main/main.ts); tests pass a loop-only launcher. */
  launchHelper: HelperLauncher;
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
  /** The flashing station's JSON Lines log (issue 19). */
  stationLog: string;
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

/**
 * After a customised flash: the saved profile of that name gives its next card the number after
 * the cards customised, so a classroom set flashed a few at a time gets pi-1, pi-2, ... once each.
 */
async function countCards(settings: SettingsStore, profile: Profile, end: JobEnd): Promise<void> {
  const next = nextCardAfter(profile.nextCard, end.results);
  const { profiles } = settings.get();
  if (next === profile.nextCard || !profiles.some((p) => p.name === profile.name)) return;
  await settings.update({
    profiles: profiles.map((p) => (p.name === profile.name ? { ...p, nextCard: Math.max(p.nextCard, next) } : p)),
  });
}

function isInvokeMethod(method: string): method is InvokeMethod {
  return Object.hasOwn(INVOKE_ARGS, method);
}

/**
 * The app's logic behind its IPC: each piece holds the state of one thing (the job, the drives,
 * the chosen image, the backup's files), and the handlers below only compose them.
 */
export function createAppService(deps: AppServiceDeps): AppService {
  const runner = new JobRunner((end) => {
    backups.ended(end);
    deps.emit('jobEnd', end);
  });
  const drives = new DriveListing(
    () => image.current,
    (list) => deps.emit('drivesChanged', list),
  );
  const image = new ChosenImage(runner, () => drives.republish());
  const backups = new BackupFiles(runner, drives, deps.settings, deps);
  const catalogue = new AppCatalogue(deps.settings, deps.cacheDir);
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
  const comparison = new ImageComparison(runner, drives, deps.settings, () => deps.pickImage());
  const session: SessionDeps = {
    launch: deps.launchHelper,
    effects: deps.effects,
    onProgress: (progress) => deps.emit('jobProgress', progress),
  };

  const anotherCard = (device: string): ApiResult<never> =>
    refuse(
      'target-not-found',
      `${device} holds another card than the one you chose (swapped in the same reader?). Choose the drive again.`,
    );

  /** Why `request`'s drives may not be written, from the app's own listing and the shared rules; the helper checks every device again from its own look. */
  const refuseTargets = (request: FlashRequest): ApiResult<never> | null => {
    const listed = drives.judged();
    for (const [i, device] of request.targets.entries()) {
      const drive = listed.find((d) => d.device === device);
      if (drive === undefined) return notListed(device);
      const chosen = request.media?.[i];
      if (chosen !== undefined && chosen !== drive.medium) return anotherCard(device);
      const refusal = targetRefusal(drive, request.confirmedSystemDrives.includes(device));
      if (refusal !== null) return refused(refusal);
    }
    return null;
  };

  const startFlash = (request: FlashRequest): Promise<ApiResult<null>> =>
    runner.whileStarting(async () => {
      // Targets are checked against the app's own listing; right after start-up that is the first one.
      await drives.current();
      if (station.armed) return refuse('busy', 'The flashing station is armed: stop it before flashing by hand.');
      const named = image.forFlash(request);
      if (!named.ok) return named;
      const chosen = named.value;
      const refusal = refuseTargets(request) ?? (await image.unchanged(chosen));
      if (!refusal.ok) return refusal;
      const profile = request.customise ?? null;
      /** A catalogue entry is prepared (and its customisation planned) once, for its flash, below. */
      const cards = profile === null ? null : cardsOf(profile, request.targets.length);
      let customised: Customised | null = null;
      if (profile !== null && chosen.source.kind !== 'catalogue') {
        try {
          customised = await prepareCustomised(chosen, profile, request.targets.length, (os, c) =>
            catalogue.prepareCustomised(os, c),
          );
        } catch (error) {
          if (error instanceof JobError) return refused(error.failure);
          throw error;
        }
      }
      let input: FlashSessionJob['input'];
      /** Whether the image is downloaded as it is written (a URL, or a catalogue entry not in the cache). */
      let downloading = chosen.info.origin === 'url';
      /** After the flash: a cached download that failed its checks is removed (user/catalogue/catalogue-image.ts). */
      let settle: CatalogueImage['settle'] = async () => undefined;
      if (chosen.source.kind === 'drive') {
        input = { kind: 'drive', device: chosen.source.device, medium: chosen.source.medium };
      } else {
        try {
          let prepared: PreparedImage;
          if (chosen.source.kind === 'catalogue') {
            const entry = await catalogue.prepareForFlash(chosen.source.os, cards ?? undefined);
            ({ prepared, settle } = entry);
            downloading = entry.from === 'download';
            if (cards !== null) customised = customisedOf(prepared);
          } else {
            prepared = chosen.source.prepared;
          }
          // Several cards from a decoder: decoded once into the cache, each card reading the copy at its own pace.
          const decodeOnce =
            request.targets.length > 1 ? (bytes: number) => imageCache().decodedCopy(bytes) : undefined;
          input = {
            kind: 'feed',
            feed: await openSourceFeed(customised?.prepared ?? prepared, {
              leaveOut: deps.settings.get().exact ? 'nothing' : 'all',
              decodeOnce,
            }),
          };
        } catch (error) {
          if (error instanceof JobError) return refused(error.failure);
          return refuse(
            'source-read-error',
            `${chosen.info.name} could not be opened for writing: ${errorText(error)}`,
          );
        }
      }
      // Another job may have started while this one was being prepared.
      const busy = runner.busy();
      if (busy !== null) {
        if (input.kind === 'feed') await input.feed.close();
        return busy;
      }
      const settings = deps.settings.get();
      // The media checked above go to the helper, which refuses a drive that holds another by the time it opens it (a swap during the password prompt).
      const media = request.targets.map((device) => drives.judged().find((d) => d.device === device)?.medium ?? null);
      const started = startFlashSession(
        {
          input,
          targets: request.targets,
          media,
          verify: settings.verify,
          eject: settings.eject,
          capacityCheck: settings.capacityCheck,
          notify: settings.notifications,
          overlays: customised?.customisation.overlays,
        },
        session,
      );
      const stopReporting =
        downloading && input.kind === 'feed'
          ? reportDownload(input.feed, chosen.info.sourceSize, (download) => deps.emit('download', download))
          : () => undefined;
      runner.run({
        ...started,
        done: started.done.then(async (end) => {
          stopReporting();
          await settle(end.results).catch(() => undefined);
          // A saved profile's {n} counts on past the cards customised, before the page hears of the end.
          if (customised !== null && profile !== null) await countCards(deps.settings, profile, end);
          return end;
        }),
      });
      return ok(null);
    });

  /**
   * A drive to check or erase, refused as a target would be whatever image is chosen (neither
   * writes the image); internal disks are refused outright: both are offered for cards and sticks.
   */
  const cardOrStick = async (device: string, medium: string | null): Promise<ApiResult<DriveInfo>> => {
    const drive = await drives.find(device);
    if (!drive.ok) return drive;
    // The card the user saw when they chose it, which is what the helper is then told to accept.
    if (drive.value.medium !== medium) return anotherCard(device);
    const refusal = targetRefusal({ ...drive.value, verdicts: judgeDrive(drive.value, null) }, false);
    return refusal === null ? drive : refused(refusal);
  };

  const startProbe = (device: string, medium: string | null): Promise<ApiResult<null>> =>
    runner.whileStarting(async () => {
      const drive = await cardOrStick(device, medium);
      if (!drive.ok) return drive;
      const busy = runner.busy();
      if (busy !== null) return busy;
      runner.run(startProbeSession(drive.value, deps.settings.get().notifications, session));
      return ok(null);
    });

  const startErase = (request: EraseRequest): Promise<ApiResult<null>> =>
    runner.whileStarting(async () => {
      const drive = await cardOrStick(request.device, request.medium);
      if (!drive.ok) return drive;
      let plan;
      try {
        plan = planErase(drive.value, request.label);
      } catch (error) {
        return refuse(
          'invalid-request',
          `${request.device} cannot be erased so: ${errorText(error)}. Nothing was written.`,
        );
      }
      const busy = runner.busy();
      if (busy !== null) return busy;
      runner.run(startEraseSession(drive.value, plan, deps.settings.get().notifications, session));
      return ok(null);
    });

  /** The image never changes under an armed station: its screen names the image every card gets. */
  const stationArmed = (): ApiResult<never> | null =>
    station.armed
      ? refuse('busy', 'The flashing station is armed with this image: stop it before choosing another.')
      : null;
  const selectImage = async (path: string) => stationArmed() ?? image.choose(path, probeImage);

  const handlers: ApiHandlers = {
    getSettings: async () => ok(deps.settings.get()),
    updateSettings: async (patch) => ok(await deps.settings.update(patch)),
    chooseImage: async () => {
      const armed = stationArmed();
      if (armed !== null) return armed;
      const path = await deps.pickImage();
      return path === null ? ok(null) : selectImage(path);
    },
    selectImage,
    openImageUrl: async (url) => stationArmed() ?? image.choose(url, probeImageUrl),
    chooseSourceDrive: async (device) => {
      const armed = stationArmed();
      if (armed !== null) return armed;
      const drive = await drives.find(device);
      return drive.ok ? image.choose(device, () => probeSourceDrive(drive.value)) : drive;
    },
    clearImage: async () => stationArmed() ?? image.clear(),
    readCatalogue: (source) => catalogue.read(source),
    chooseCatalogueOs: (source, path) => image.choose(path.at(-1) ?? source, () => catalogue.probe(source, path)),
    getCache: async () => ok(await catalogue.cacheView()),
    clearCache: async () => {
      // A flash may be writing into the cache (or reading from it) right now.
      const busy = runner.busy();
      return busy ?? ok(await catalogue.clearCache());
    },
    listDrives: async () => ok(await drives.current()),
    startFlash,
    chooseBackupFile: (device, compress) => backups.choose(device, compress),
    startBackup: (request) => backups.start(request, session),
    showBackupFile: async () => backups.show(),
    startProbe,
    startErase,
    chooseCompareImage: (device) => comparison.choose(device),
    startCompare: (device) => comparison.start(device, session),
    cancelJob: async () => runner.cancel(),
    openExternal: async (url) => {
      if (!isAllowedExternalUrl(url)) return refuse('link-not-allowed', 'Sluice opens only its own links.');
      await deps.openExternal(url);
      return ok(null);
    },
    armStation: async (request) => {
      const named = image.forFlash({ image: request.image, targets: [], confirmedSystemDrives: [] });
      if (!named.ok) return named;
      const unchanged = await image.unchanged(named.value);
      return unchanged.ok ? station.arm(request, named.value) : unchanged;
    },
    stopStation: () => station.stop(),
    exportStationLog: () => station.exportCsv(),
    pageReady: async () => {
      deps.handOff.connect(openHandedOver);
      return ok(null);
    },
    sealCustomisation: async (draft) => sealDraft(draft),
    previewCustomisation: async (profile, cards) => {
      const chosen = image.current;
      if (chosen === null) return refuse('no-image', 'Choose an image first.');
      return previewCustomisation(chosen, profile, cards, (os, c) => catalogue.prepareCustomised(os, c));
    },
    listSshKeys: async () => ok(await sshKeyFiles(deps.sshDir)),
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

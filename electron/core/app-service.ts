import { basename } from 'node:path';
import * as v from 'valibot';
import { checkBackup } from '../../user/backup/drive-backup.js';
import { DriveScanner, MAX_SCAN_INTERVAL_MS } from '../../user/drives/scanner.js';
import { fail, ok, type ApiResult } from '../../common/contracts/api-result.js';
import type { InvokeMethod } from '../../common/contracts/ipc-channels.js';
import { INVOKE_ARGS, type ApiHandlers, type EmitEvent } from '../../common/contracts/ipc-contract.js';
import { isAllowedExternalUrl } from '../../common/app/links.js';
import type { BackupRequest, DriveInfo, FlashEnd, FlashProgress, FlashRequest, ImageInfo, JobKind } from '../../common/contracts/app-models.js';
import { startBackupSession, suggestedBackupName } from './backup-session.js';
import type { DesktopEffects, JobSession } from './desktop-job.js';
import { judgeDrives, targetRefusal } from './drive-view.js';
import { startFlashSession, type FlashSessionJob, type HelperLauncher } from './flash-session.js';
import type { ImageHandOff } from './image-hand-off.js';
import { openSourceFeed } from '../../user/images/source-feed.js';
import { checkSourceDrive, fileIdentity, ImageProbeError, probeImage, probeImageUrl, probeSourceDrive, type FileIdentity, type ProbedImage } from './image-probe.js';
import type { SettingsStore } from './settings-store.js';
import { errorText } from '../../common/domain/error-details.js';

/** Everything the app's logic needs from the outside world; the composition root (Electron or the test bridge) provides it. */
export interface AppServiceDeps {
  settings: SettingsStore;
  /** Starts the privileged helper: startHelper with the app's elevation (electron/main/main.ts); tests pass a loop-only launcher. */
  launchHelper: HelperLauncher;
  /** The native open dialog; null when the user closed it. */
  pickImage(): Promise<string | null>;
  /** The native save dialog for a backup, offering `suggestedName`; null when the user closed it. */
  pickBackupFile(suggestedName: string): Promise<string | null>;
  openExternal(url: string): Promise<void>;
  /** Opens the file manager at a file (a saved backup). */
  showInFolder(path: string): void;
  effects: DesktopEffects;
  emit: EmitEvent;
  /** Images the system hands over (double-click, "Open with", command line); the service takes them once the page is ready. */
  handOff: ImageHandOff;
}

export interface AppService {
  readonly handlers: ApiHandlers;
  /** Checks `args` against the channel's schema, then calls its handler. Never throws. */
  invoke(method: string, args: unknown): Promise<ApiResult<unknown>>;
  /** What is running: a flash, a backup, or nothing. */
  runningJob(): JobKind | null;
  /** Cancels a running flash (or backup) and waits until the helper has stopped and closed the device. */
  cancelFlashAndWait(): Promise<void>;
  close(): Promise<void>;
}

const JOB_RUNNING = 'Sluice is already flashing or backing up a drive; wait for it to end.';

function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

function isInvokeMethod(method: string): method is InvokeMethod {
  return Object.hasOwn(INVOKE_ARGS, method);
}

export function createAppService(deps: AppServiceDeps): AppService {
  let image: ProbedImage | null = null;
  let session: JobSession | null = null;
  /**
   * Where the user chose to save a backup of which drive (as it was then: a card swapped in the
   * same reader is another drive), in which format; startBackup writes there and nowhere else.
   */
  let backupFile: { device: string; path: string; compress: BackupRequest['compress']; size: number | null; description: string } | null = null;
  /** Starts under way (checks before the job runs), and a cancel that arrived during one. */
  let starting = 0;
  let cancelWhileStarting = false;
  let closed = false;
  /** The file the last backup saved and verified: the only path "Show in folder" opens. */
  let savedBackup: string | null = null;

  /** The drives with their verdicts, which depend on the chosen image too: either changing republishes them. */
  const judgedDrives = (): DriveInfo[] => judgeDrives(scanner.drives, image);
  const publishDrives = (): void => deps.emit('drivesChanged', judgedDrives());
  // One listing's events arrive together; the page gets the new list once, after the last of them.
  let publishQueued = false;
  /*
   * Every drive is listed, system disks and virtual drives too; which of them the picker shows is
   * the page's business (isDriveShown, with its "show all drives" toggle and the showVirtual
   * setting), so both act at once and a chosen internal disk stays listed while the toggle is off.
   *
   * Polled once a second, the slowest the scanner allows: a card inserted shows within 2 s (the
   * issue; the scanner tests saw 91-845 ms). Measured here, 100 listings each, CPU with lsblk,
   * 2-core VM shared with other jobs: 21 ms per listing of cards and disks, 28-33 ms with the loop
   * devices (a second lsblk), so about 3% of one core. The interim watcher polled every 2 s for
   * 1.3-1.7%, but a card plugged in just after a listing then showed only after 2 s plus the
   * listing's own 25-50 ms.
   */
  const scanner = new DriveScanner({
    showAll: true,
    showVirtual: true,
    intervalMs: MAX_SCAN_INTERVAL_MS,
    onEvent: () => {
      if (publishQueued) return;
      publishQueued = true;
      queueMicrotask(() => {
        publishQueued = false;
        publishDrives();
      });
    },
    onError: (error) => process.stderr.write(`sluice: could not list the drives (${error.message}); showing the last list until it works again.\n`),
  });
  const firstListing = scanner.start();

  const notListed = (device: string): ApiResult<never> => fail('unknown-drive', `${device} is not among the drives Sluice sees now. Was it unplugged?`);

  /** The drive at `device` in the app's own listing; right after start-up, the first listing. */
  const listedDrive = async (device: string): Promise<ApiResult<DriveInfo>> => {
    await firstListing;
    const drive = judgedDrives().find((d) => d.device === device);
    return drive === undefined ? notListed(device) : ok(drive);
  };

  /** Runs a job (a flash or a backup) as the one running: its end goes to the page as flashEnd. */
  const run = (started: JobSession): void => {
    session = started;
    // The page showed its progress screen at once, and Cancel on it came before the job existed.
    if (cancelWhileStarting) started.cancel();
    cancelWhileStarting = false;
    // A session's end never rejects; were it to, the app must not stay busy for good.
    const noEnd = (error: unknown): FlashEnd => {
      process.stderr.write(`sluice: a ${started.kind} ended without a result: ${errorText(error)}\n`);
      return { job: started.kind, results: [], verify: false, seconds: 0 };
    };
    void started.done.catch(noEnd).then((end) => {
      session = null;
      const [saved] = end.results;
      if (end.job === 'backup' && saved?.status === 'ok') savedBackup = saved.target;
      deps.emit('flashEnd', end);
    });
  };
  /** Runs the checks of a start with the service marked as starting, so a cancel meanwhile is kept; refused once closing. */
  const whileStarting = async (start: () => Promise<ApiResult<null>>): Promise<ApiResult<null>> => {
    if (closed) return fail('busy', 'Sluice is closing.');
    starting += 1;
    try {
      const result = await start();
      if (!result.ok) cancelWhileStarting = false;
      return result;
    } finally {
      starting -= 1;
    }
  };
  const sessionDeps = () => ({ launch: deps.launchHelper, effects: deps.effects, onProgress: (progress: FlashProgress) => deps.emit('flashProgress', progress) });

  /** Chooses the image `probe` finds at `where` (a path or a URL). */
  const choose = async (where: string, probe: (where: string) => Promise<ProbedImage>): Promise<ApiResult<ImageInfo>> => {
    // Refused, not queued for later: the image under a running flash never changes, and one that
    // appeared once the flash ended would be what "Flash another drive" writes, unlike what the screen showed.
    if (session !== null) {
      const why = session.kind === 'flash' ? 'a flash is running, and Sluice never changes the image under it. Open it again when the flash has ended.' : 'a backup is running. Open it again when the backup has ended.';
      return fail('busy', `${basename(where)} was not opened: ${why}`);
    }
    try {
      image = await probe(where);
    } catch (error) {
      if (error instanceof ImageProbeError) return fail(error.code, error.message);
      throw error;
    }
    publishDrives();
    return ok(image.info);
  };
  const selectImage = (path: string) => choose(path, probeImage);

  /** Why the request cannot start, or null: the shared safety rules over the app's own listing. The helper checks every device again from its own look. */
  const refuseRequest = (request: FlashRequest, chosen: ProbedImage): ApiResult<never> | null => {
    if (session !== null) return fail('busy', JOB_RUNNING);
    if (chosen.info.path !== request.imagePath) return fail('no-image', 'Choose the image again: it is not the one Sluice has open.');
    const drives = judgedDrives();
    for (const device of request.targets) {
      const drive = drives.find((d) => d.device === device);
      if (drive === undefined) return notListed(device);
      const refusal = targetRefusal(drive, request.confirmedSystemDrives.includes(device));
      if (refusal !== null) return fail('drive-blocked', refusal.message);
    }
    return null;
  };

  const handlers: ApiHandlers = {
    getSettings: async () => ok(deps.settings.get()),
    updateSettings: async (patch) => ok(await deps.settings.update(patch)),
    chooseImage: async () => {
      const path = await deps.pickImage();
      return path === null ? ok(null) : selectImage(path);
    },
    selectImage,
    openImageUrl: (url) => choose(url, probeImageUrl),
    chooseSourceDrive: async (device) => {
      const drive = await listedDrive(device);
      return drive.ok ? choose(device, () => probeSourceDrive(drive.value)) : drive;
    },
    chooseBackupFile: async (device, compress) => {
      if (session !== null) return fail('busy', JOB_RUNNING);
      const drive = await listedDrive(device);
      if (!drive.ok) return drive;
      try {
        await checkSourceDrive(drive.value);
      } catch (error) {
        if (error instanceof ImageProbeError) return fail(error.code, error.message);
        throw error;
      }
      const path = await deps.pickBackupFile(suggestedBackupName(drive.value, compress, new Date()));
      backupFile = path === null ? null : { device, path, compress, size: drive.value.size, description: drive.value.description };
      return ok(path);
    },
    startBackup: (request) =>
      whileStarting(async () => {
        if (session !== null) return fail('busy', JOB_RUNNING);
        const chosen = backupFile;
        if (chosen === null || chosen.device !== request.device || chosen.path !== request.file || chosen.compress !== request.compress) return fail('no-backup-file', 'Choose where to save the backup again.');
        // The drive as listed now must be the one chosen; checkBackup below looks at it afresh.
        const drive = await listedDrive(request.device);
        if (!drive.ok) return drive;
        if (drive.value.size !== chosen.size || drive.value.description !== chosen.description) {
          backupFile = null;
          return fail('unknown-drive', `${request.device} is not the drive that was chosen (another card in the same reader?). Choose Back up… on it again.`);
        }
        // The same checks `sluice backup` makes: the drive afresh, the file's path, the file not on the drive.
        const checked = await checkBackup(request.device, request.file);
        if ('refused' in checked) return fail('drive-blocked', checked.refused.message);
        if (session !== null) return fail('busy', JOB_RUNNING);
        backupFile = null;
        const settings = deps.settings.get();
        run(
          startBackupSession(
            { drive: request.device, file: request.file, driveSize: checked.driveSize, compress: request.compress, trimToPartitions: request.trimToPartitions, verify: settings.verify, notify: settings.notifications },
            sessionDeps(),
          ),
        );
        return ok(null);
      }),
    clearImage: async () => {
      if (session !== null) return fail('busy', JOB_RUNNING);
      image = null;
      publishDrives();
      return ok(null);
    },
    listDrives: async () => {
      await firstListing;
      return ok(judgedDrives());
    },
    startFlash: (request) =>
      whileStarting(async () => {
        // Targets are checked against the app's own listing; right after start-up that is the first one.
        await firstListing;
        const chosen = image;
        if (chosen === null) return fail('no-image', 'Choose an image first.');
        const refusal = refuseRequest(request, chosen);
        if (refusal !== null) return refusal;
        if (chosen.local !== null) {
          const now = await fileIdentity(chosen.info.path).catch(() => null);
          if (now === null) return fail('image-not-found', `${chosen.info.name} is no longer where it was chosen (${chosen.info.path}). Choose it again.`);
          if (!sameFile(chosen.local.identity, now)) return fail('image-changed', `${chosen.info.name} changed on disk after it was chosen. Choose it again to check it.`);
        }
        let input: FlashSessionJob['input'];
        if (chosen.source.kind === 'drive') {
          input = { kind: 'drive', device: chosen.source.device, size: chosen.info.uncompressedSize ?? 0 };
        } else {
          try {
            input = { kind: 'feed', feed: await openSourceFeed(chosen.source.prepared) };
          } catch (error) {
            return fail('image-unreadable', `${chosen.info.name} could not be opened for writing: ${errorText(error)}`);
          }
        }
        // Another job may have started while this one was being prepared.
        if (session !== null) {
          if (input.kind === 'feed') await input.feed.close();
          return fail('busy', JOB_RUNNING);
        }
        const settings = deps.settings.get();
        run(startFlashSession({ input, targets: request.targets, verify: settings.verify, eject: settings.eject, notify: settings.notifications }, sessionDeps()));
        return ok(null);
      }),
    showBackupFile: async () => {
      if (savedBackup === null) return fail('no-backup-file', 'No backup has been saved yet.');
      deps.showInFolder(savedBackup);
      return ok(null);
    },
    cancelFlash: async () => {
      if (session === null && starting > 0) {
        cancelWhileStarting = true;
        return ok(null);
      }
      if (session === null) return fail('not-flashing', 'Nothing is running.');
      session.cancel();
      return ok(null);
    },
    openExternal: async (url) => {
      if (!isAllowedExternalUrl(url)) return fail('link-not-allowed', 'Sluice opens only its own links.');
      await deps.openExternal(url);
      return ok(null);
    },
    pageReady: async () => {
      deps.handOff.connect(openHandedOver);
      return ok(null);
    },
  };

  const invoke = async (method: string, args: unknown): Promise<ApiResult<unknown>> => {
    if (!isInvokeMethod(method)) return fail('invalid-request', `No such call: ${method.slice(0, 64)}.`);
    const parsed = v.safeParse(INVOKE_ARGS[method], args);
    if (!parsed.success) return fail('invalid-request', `Invalid arguments for ${method}: ${parsed.issues.map((issue) => issue.message).join('; ')}`);
    try {
      // The schema's output is exactly this handler's parameter list (INVOKE_ARGS is checked against ApiHandlers).
      const handler = handlers[method] as (...validated: unknown[]) => Promise<ApiResult<unknown>>;
      return await handler(...(parsed.output as unknown[]));
    } catch (error) {
      return fail('internal', `Something went wrong in Sluice: ${errorText(error)}`);
    }
  };

  /** A path the system handed over, checked and chosen exactly as a dropped file's; the page learns the outcome from imageOpened. */
  function openHandedOver(path: string): void {
    void invoke('selectImage', [path]).then((result) => deps.emit('imageOpened', result as ApiResult<ImageInfo>));
  }

  return {
    handlers,
    invoke,
    runningJob: () => session?.kind ?? null,
    cancelFlashAndWait: async () => {
      const running = session;
      if (running === null) return;
      running.cancel();
      await running.done;
    },
    close: async () => {
      closed = true;
      await scanner.stop();
      const running = session;
      if (running !== null) {
        running.cancel();
        await running.done;
      }
    },
  };
}

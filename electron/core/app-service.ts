import { fstat, type Stats } from 'node:fs';
import * as v from 'valibot';
import { fail, ok, type ApiResult } from '../common/api-result.js';
import type { InvokeMethod } from '../common/ipc-channels.js';
import { INVOKE_ARGS, type ApiHandlers, type EmitEvent } from '../common/ipc-contract.js';
import { isAllowedExternalUrl } from '../common/links.js';
import { VERDICT_EFFECT, VERDICT_TEXT, type DriveInfo, type FlashRequest } from '../common/models.js';
import { toDriveInfos } from './drive-view.js';
import type { WatchDrives } from './drive-watcher.js';
import type { ScannedDrive } from './scanned-drive.js';
import { startFlashSession, type DesktopEffects, type FlashSession, type HelperLauncher } from './flash-session.js';
import { ImageProbeError, openImageForApp, probeImage, type FileIdentity, type ProbedImage } from './image-probe.js';
import type { SettingsStore } from './settings-store.js';

/** Everything the app's logic needs from the outside world; the composition root (Electron or the test bridge) provides it. */
export interface AppServiceDeps {
  settings: SettingsStore;
  /** Seam: the drives scanner (issue 4) provides this; pollingDriveWatcher() until then. */
  watchDrives: WatchDrives;
  /** Seam: the elevated launch (issue 5) provides this; worker/helper/launch.ts startHelper until then. */
  launchHelper: HelperLauncher;
  /** The native open dialog; null when the user closed it. */
  pickImage(): Promise<string | null>;
  openExternal(url: string): Promise<void>;
  effects: DesktopEffects;
  ejectDrive(device: string): Promise<void>;
  emit: EmitEvent;
}

export interface AppService {
  readonly handlers: ApiHandlers;
  /** Checks `args` against the channel's schema, then calls its handler. Never throws. */
  invoke(method: string, args: unknown): Promise<ApiResult<unknown>>;
  isFlashing(): boolean;
  /** Cancels a running flash and waits until the helper has stopped and closed the device. */
  cancelFlashAndWait(): Promise<void>;
  close(): Promise<void>;
}

function sameFile(a: FileIdentity, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

function fstatFd(fd: number): Promise<Stats> {
  return new Promise((resolve, reject) => fstat(fd, (error, st) => (error ? reject(error) : resolve(st))));
}

function isInvokeMethod(method: string): method is InvokeMethod {
  return Object.hasOwn(INVOKE_ARGS, method);
}

export function createAppService(deps: AppServiceDeps): AppService {
  let image: ProbedImage | null = null;
  let session: FlashSession | null = null;
  let scanned: ScannedDrive[] = [];
  let drives: DriveInfo[] = [];

  /** The picker's list depends on the drives and on the image (verdicts); either changing republishes it. */
  const publishDrives = (): void => {
    drives = toDriveInfos(scanned, image);
    deps.emit('drivesChanged', drives);
  };
  const watcher = deps.watchDrives(
    () => ({ includeVirtual: deps.settings.get().showVirtual }),
    (list) => {
      scanned = list;
      publishDrives();
    },
  );

  const selectImage = async (path: string): Promise<ApiResult<ProbedImage['info']>> => {
    if (session !== null) return fail('busy', 'A flash is running; wait for it to end or cancel it before choosing another image.');
    try {
      image = await probeImage(path);
    } catch (error) {
      if (error instanceof ImageProbeError) return fail(error.code, error.message);
      throw error;
    }
    publishDrives();
    return ok(image.info);
  };

  /** Why the request cannot start, or null. The helper re-checks every device itself; this is the app's own rule. */
  const refuseRequest = (request: FlashRequest, chosen: ProbedImage): ApiResult<never> | null => {
    if (session !== null) return fail('busy', 'A flash is already running.');
    if (chosen.info.path !== request.imagePath) return fail('no-image', 'Choose the image again: it is not the one Sluice has open.');
    if (!chosen.info.supported) return fail('image-unsupported', `${chosen.info.name} is a ${chosen.info.format} image; this version writes raw images only.`);
    for (const device of request.targets) {
      const drive = drives.find((d) => d.device === device);
      if (drive === undefined) return fail('unknown-drive', `${device} is not among the drives Sluice sees now. Was it unplugged?`);
      const blocking = drive.verdicts.find((verdict) => VERDICT_EFFECT[verdict] === 'blocks');
      if (blocking !== undefined) return fail('drive-blocked', `${drive.name} (${device}) cannot be written: ${VERDICT_TEXT[blocking].reason}`);
      if (drive.verdicts.includes('system') && !request.confirmedSystemDrives.includes(device)) {
        return fail('drive-blocked', `${drive.name} (${device}) is a system drive; confirm it by typing its name first.`);
      }
    }
    return null;
  };

  const handlers: ApiHandlers = {
    getSettings: async () => ok(deps.settings.get()),
    updateSettings: async (patch) => {
      const before = deps.settings.get();
      const after = await deps.settings.update(patch);
      if (before.showVirtual !== after.showVirtual) await watcher.refresh();
      return ok(after);
    },
    chooseImage: async () => {
      const path = await deps.pickImage();
      return path === null ? ok(null) : selectImage(path);
    },
    selectImage,
    clearImage: async () => {
      if (session !== null) return fail('busy', 'A flash is running.');
      image = null;
      publishDrives();
      return ok(null);
    },
    listDrives: async () => {
      await watcher.ready;
      return ok(drives);
    },
    startFlash: async (request) => {
      // Targets are checked against the app's own scan; right after start-up that is the first one.
      await watcher.ready;
      const chosen = image;
      if (chosen === null) return fail('no-image', 'Choose an image first.');
      const refusal = refuseRequest(request, chosen);
      if (refusal !== null) return refusal;
      let opened;
      try {
        opened = await openImageForApp(chosen.info.path);
      } catch (error) {
        if (error instanceof ImageProbeError) return fail(error.code, error.message);
        throw error;
      }
      if (!sameFile(chosen.identity, await fstatFd(opened.fd))) {
        await opened.close();
        return fail('image-changed', `${chosen.info.name} changed on disk after it was chosen. Choose it again to check it.`);
      }
      const settings = deps.settings.get();
      const current = session = startFlashSession(
        {
          image: opened,
          targets: request.targets.map((device) => drives.find((d) => d.device === device)).filter((d): d is DriveInfo => d !== undefined),
          verify: settings.verify,
          eject: settings.eject,
          notify: settings.notifications,
        },
        { launch: deps.launchHelper, effects: deps.effects, ejectDrive: deps.ejectDrive, onProgress: (progress) => deps.emit('flashProgress', progress) },
      );
      void current.done.then((end) => {
        session = null;
        deps.emit('flashEnd', end);
      });
      return ok(null);
    },
    cancelFlash: async () => {
      if (session === null) return fail('not-flashing', 'No flash is running.');
      session.cancel();
      return ok(null);
    },
    openExternal: async (url) => {
      if (!isAllowedExternalUrl(url)) return fail('link-not-allowed', 'Sluice opens only its own links.');
      await deps.openExternal(url);
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
      return fail('internal', `Something went wrong in Sluice: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  return {
    handlers,
    invoke,
    isFlashing: () => session !== null,
    cancelFlashAndWait: async () => {
      const running = session;
      if (running === null) return;
      running.cancel();
      await running.done;
    },
    close: async () => {
      watcher.stop();
      const running = session;
      if (running !== null) {
        running.cancel();
        await running.done;
      }
    },
  };
}

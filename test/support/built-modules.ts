/**
 * Modules that start processes from the build's bundles (out/run/helper.js, decoder.js, probe.js:
 * node/process-entries.ts finds them from its own place in out/), loaded from the build output as
 * `npm start` runs them: vitest runs the sources, which have no out/ around them. `npm test` builds
 * first.
 */
import { resolve } from 'node:path';
import type * as AppServiceModule from '../../electron/core/app-service.js';
import type * as ImageProbeModule from '../../electron/core/image-probe.js';
import type * as HelperLaunch from '../../user/launcher/launch.js';
import type * as ProbeLaunch from '../../user/images/processes/probe-launch.js';
import type * as Probe from '../../user/images/probe/probe.js';
import type * as CatalogueLaunch from '../../user/catalogue/catalogue-launch.js';
import type * as DecoderLaunch from '../../user/images/processes/decoder-launch.js';
import type * as PipeReader from '../../user/images/decode/pipe-reader.js';
import type * as DecodedReader from '../../user/images/decode/decoded-reader.js';
import type * as DriveMapLaunch from '../../user/backup/drive-map-launch.js';
import type * as DriveBackup from '../../user/backup/drive-backup.js';

export async function builtStartHelper(): Promise<typeof HelperLaunch.startHelper> {
  return ((await import(resolve('out/user/launcher/launch.js'))) as typeof HelperLaunch).startHelper;
}

/** The app's core as built: its flashes start the built decoder for compressed images. */
export async function builtCreateAppService(): Promise<typeof AppServiceModule.createAppService> {
  return ((await import(resolve('out/electron/core/app-service.js'))) as typeof AppServiceModule).createAppService;
}

/** The main process's image probe as built: it starts the built probe process, which reads a compressed image's partition table through the built decoder. */
export async function builtImageProbe(): Promise<typeof ImageProbeModule> {
  return (await import(resolve('out/electron/core/image-probe.js'))) as typeof ImageProbeModule;
}

/** The probe process's launcher as built: it starts the built probe (out/run/probe.js). */
export async function builtProbeLaunch(): Promise<typeof ProbeLaunch> {
  return (await import(resolve('out/user/images/processes/probe-launch.js'))) as typeof ProbeLaunch;
}

/** The probe's own logic as built, run in this process: what the probe process should answer. */
export async function builtProbe(): Promise<typeof Probe> {
  return (await import(resolve('out/user/images/probe/probe.js'))) as typeof Probe;
}

/** The catalogue process's launcher as built: it starts the built catalogue reader (out/run/catalogue.js). */
export async function builtCatalogueLaunch(): Promise<typeof CatalogueLaunch> {
  return (await import(resolve('out/user/catalogue/catalogue-launch.js'))) as typeof CatalogueLaunch;
}

/** The decoder's launcher as built: it starts the built decoder (out/run/decoder.js). */
export async function builtDecoderLaunch(): Promise<typeof DecoderLaunch> {
  return (await import(resolve('out/user/images/processes/decoder-launch.js'))) as typeof DecoderLaunch;
}

/** The decoder's pipe reader as built: it starts its thread from the built out/run/pipe-reader-thread.js. */
export async function builtDrainPipe(): Promise<typeof PipeReader.drainPipe> {
  return ((await import(resolve('out/user/images/decode/pipe-reader.js'))) as typeof PipeReader).drainPipe;
}

/** The decoded-image reader as built: its runs start the built decoder (out/run/decoder.js). */
export async function builtDecodedReader(): Promise<typeof DecodedReader.decodedReader> {
  return ((await import(resolve('out/user/images/decode/decoded-reader.js'))) as typeof DecodedReader).decodedReader;
}

/** The drive map reader's launcher as built: it starts the built reader (out/run/drive-map.js). */
export async function builtDriveMapLaunch(): Promise<typeof DriveMapLaunch> {
  return (await import(resolve('out/user/backup/drive-map-launch.js'))) as typeof DriveMapLaunch;
}

/** A whole backup as built: a backup of the used blocks starts the built drive map reader (out/run/drive-map.js). */
export async function builtBackupDrive(): Promise<typeof DriveBackup.backupDrive> {
  return ((await import(resolve('out/user/backup/drive-backup.js'))) as typeof DriveBackup).backupDrive;
}

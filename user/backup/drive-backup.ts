/**
 * A whole backup, as the CLI and the app both run it: the checks that can be made before anyone
 * is asked for a password, then the root helper sending the drive's bytes out while this process
 * (the user) writes and verifies the file.
 */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Progress } from '../../common/domain/progress.js';
import { helperNotStarted, helperWithoutResult, type TargetResult } from '../../common/domain/result.js';
import type { Failure } from '../../common/domain/failure.js';
import { JobError, toFailure } from '../../common/domain/failure.js';
import { checkFileTargetPath } from '../files/file-target.js';
import type { ByteSource } from '../../node/byte-source.js';
import { currentPlatform } from '../../writer/platform/index.js';
import { refuseSource } from '../../writer/source-device.js';
import type { HelperLaunchOptions, LaunchedHelper } from '../launcher/launch.js';
import { backupToFile } from './backup-file.js';
import { shrinkSaved } from './shrink-saved.js';
import type { BackupCompression } from '../../common/domain/backup-compression.js';

type FailedResult = Extract<TargetResult, { status: 'failed' }>;

export interface BackupOptions {
  drive: string;
  file: string;
  compress: BackupCompression | null;
  trimToPartitions: boolean;
  /** Read every byte of the drive, free space too; otherwise only what its filesystems use (backup-plan.ts). */
  allBlocks: boolean;
  /** Shrink the saved raw file's last filesystem and cut the file after it (shrink.ts; shrinkRefusal says where it cannot). */
  shrink?: boolean | undefined;
  verify: boolean;
}

/**
 * Whether `drive` may be backed up into `file`, from this process's own look (the helper checks
 * the drive again on its own): the drive's size, or the failed result to report.
 */
export async function checkBackup(
  drive: string,
  file: string,
): Promise<{ driveSize: number; driveMedium: string | null } | { refused: FailedResult }> {
  const refuse = (target: string, failure: Failure) => ({
    refused: { status: 'failed', target, bytes: 0, ...failure } as const,
  });
  const platform = await currentPlatform();
  const facts = await platform.inspect(drive);
  const refusal = refuseSource(facts);
  if (refusal !== null) return refuse(drive, refusal);
  try {
    await checkFileTargetPath(file);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    return refuse(file, error.failure);
  }
  // The drive is unmounted before it is read: a file on it would land in an empty mountpoint.
  const folder = await stat(dirname(resolve(file))).catch(() => null);
  if (folder !== null && facts.devices.includes(folder.dev)) {
    return refuse(file, {
      code: 'target-is-source',
      message: `${file} would be stored on ${drive}, the drive being backed up. Save the backup on another drive.`,
    });
  }
  return { driveSize: facts.size, driveMedium: await platform.medium(facts) };
}

export interface DriveBackup extends BackupOptions {
  /** From checkBackup. */
  driveSize: number;
  /** The medium the user chose in the drive (Drive.medium; checkBackup's look): the helper reads no other card. */
  driveMedium: string | null;
  /** Starts the helper with the front end's elevation, given the read request; the drive's bytes come out through its driveBytes. */
  launch(options: Pick<HelperLaunchOptions, 'job'>): LaunchedHelper;
  /** Stops the helper and the file writer; the result is then `cancelled` and the partial file gone. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
}

/** Runs one backup after checkBackup; resolves with the file's result (or the drive's, when the helper refused it), never rejects. */
export async function backupDrive(job: DriveBackup): Promise<TargetResult> {
  let helper: LaunchedHelper;
  try {
    helper = job.launch({
      job: {
        kind: 'backup',
        source: job.drive,
        size: job.driveSize,
        medium: job.driveMedium,
        ...(job.allBlocks ? {} : { requested: true }),
      },
    });
  } catch (error) {
    return helperNotStarted(job.drive, 'reading', error, 'Nothing was saved.');
  }
  const stopHelper = (): void => helper.cancel();
  job.signal?.addEventListener('abort', stopHelper, { once: true });
  if (job.signal?.aborted === true) stopHelper();
  let source: ByteSource | null = null;
  try {
    const running = await helper.ready;
    source = await helper.driveBytes;
    if (running === null || source === null) {
      await source?.close();
      const [refused] = await helper.result;
      return refused ?? helperWithoutResult(job.drive, 'reading', 'Nothing was saved.');
    }
    const from = source;
    const result = await backupToFile({
      source: from,
      drive: job.drive,
      driveSize: job.driveSize,
      target: job.file,
      compress: job.compress,
      trimToPartitions: job.trimToPartitions,
      ask: job.allBlocks ? null : (ranges, last) => helper.readRanges(ranges, last),
      verify: job.verify,
      sourceFailure: async (): Promise<Failure | null> => {
        const [read] = await helper.result;
        return read?.status === 'failed' ? { code: read.code, message: read.message, offset: read.offset } : null;
      },
      signal: job.signal,
      onProgress: job.onProgress,
    });
    // Past the trimmed end the helper finds nobody reading, and stops; one still waiting for read
    // messages (the plan failed before it asked for the used ranges) is told to stop.
    if (result.status !== 'ok') helper.cancel();
    await from.close();
    source = null;
    await helper.result;
    return job.shrink === true && result.status === 'ok' ? await shrinkSaved(job.file, result) : result;
  } catch (error) {
    // Not reached by any failure backupToFile knows (it reports those); the helper must not be left
    // blocked on a pipe nobody reads, with the drive unmounted.
    helper.cancel();
    await source?.close();
    return { status: 'failed', target: job.file, bytes: 0, ...toFailure(error) };
  } finally {
    job.signal?.removeEventListener('abort', stopHelper);
  }
}

import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Failure } from '../../common/result.js';
import { backupToFile } from '../../backup/backup-file.js';
import type { BackupCompression } from '../../backup/compressor.js';
import { FlashError } from '../../engine/errors.js';
import { checkFileTargetPath } from '../../engine/file-target.js';
import { closeFd } from '../../engine/io.js';
import { currentPlatform } from '../../engine/platform/index.js';
import { refuseSource } from '../../engine/source-device.js';
import { chooseElevation, onPath } from '../../helper/elevation/choose.js';
import { startHelper } from '../../helper/launch.js';
import { createOsPipe } from '../../sources/os-pipe.js';
import { cancelOnSigint } from '../cancel.js';
import { exitCodeFor } from '../exit-codes.js';
import { createReporter } from '../reporter.js';
import { confirmReplace, reportOne } from './flash-to-file.js';

export interface BackupArgs {
  drive: string;
  file: string;
  compress: BackupCompression | null;
  trimToPartitions: boolean;
  verify: boolean;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/**
 * `sluice backup DRIVE FILE [--compress zstd|xz|gz] [--trim-to-partitions]`: the helper reads the
 * drive (root, read-only, after its checks) into a pipe; this process writes the file as the user.
 */
export async function backupCommand(args: BackupArgs): Promise<number> {
  const { drive, file } = args;
  // The helper checks again on its own; asking first gives the answer before any password prompt.
  const facts = await (await currentPlatform()).inspect(drive);
  const refusal = refuseSource(facts);
  if (refusal !== null) return reportOne(args.json, { status: 'failed', target: drive, bytes: 0, ...refusal });
  try {
    await checkFileTargetPath(file);
  } catch (error) {
    if (!(error instanceof FlashError)) throw error;
    return reportOne(args.json, { status: 'failed', target: file, bytes: 0, ...error.failure });
  }
  // The drive is unmounted before it is read: a file on it would land in an empty mountpoint.
  const folder = await stat(dirname(resolve(file))).catch(() => null);
  if (folder !== null && facts.devices.includes(folder.dev)) {
    return reportOne(args.json, { status: 'failed', target: file, bytes: 0, code: 'target-is-source', message: `${file} would be stored on ${drive}, the drive being backed up. Save the backup on another drive.` });
  }
  const refused = await confirmReplace(file, args.yes);
  if (refused !== null) return refused;

  const interactive = process.stdin.isTTY === true;
  const pipe = await createOsPipe();
  const job = startHelper({
    source: pipe.writeFd,
    start: { source: drive },
    elevation: chooseElevation({ platform: process.platform, isRoot: process.getuid?.() === 0, frontEnd: 'cli', interactive, prefer: args.elevate, installed: onPath }),
    interactive,
    onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
  });
  const running = await job.ready;
  // The helper has its own copy of the write end now (or never will); ours would hide the end of the stream.
  await closeFd(pipe.writeFd);
  if (running === null) {
    await closeFd(pipe.readFd);
    const results = await job.result;
    for (const r of results) createReporter(args.json).result(r);
    return exitCodeFor(results);
  }
  const reporter = createReporter(args.json);
  const controller = new AbortController();
  const stopListening = cancelOnSigint(() => {
    controller.abort();
    job.cancel();
  });
  const result = await backupToFile({
    source: pipe.readFd,
    drive,
    driveSize: facts.size,
    target: file,
    compress: args.compress,
    trimToPartitions: args.trimToPartitions,
    verify: args.verify,
    sourceFailure: async (): Promise<Failure | null> => {
      const [read] = await job.result;
      return read?.status === 'failed' ? { code: read.code, message: read.message, offset: read.offset } : null;
    },
    signal: controller.signal,
    onProgress: (p) => reporter.progress(p),
  });
  // Past the trimmed end the helper finds nobody reading, and stops.
  await closeFd(pipe.readFd);
  await job.result;
  stopListening();
  reporter.end();
  reporter.result(result);
  return exitCodeFor([result]);
}

import type { BackupCompression } from '../../common/domain/backup-compression.js';
import { backupDrive, checkBackup } from '../../user/backup/drive-backup.js';
import { FileTarget } from '../../user/files/file-target.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { cancelOnSigint } from '../cancel.js';
import { namedDrives } from '../drive-names.js';
import { exitCodeFor } from '../exit-codes.js';
import { createReporter } from '../reporter.js';
import { confirmReplace } from './flash-to-file.js';
import { reportOne } from '../reporter.js';
import { findDrive } from '../../user/drives/list-drives.js';
import { unconfirmedInternalDisk } from '../internal-disk.js';
import { askText } from '../prompt.js';

export interface BackupArgs {
  drive: string;
  file: string;
  compress: BackupCompression | null;
  trimToPartitions: boolean;
  allBlocks: boolean;
  shrink: boolean;
  verify: boolean;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/**
 * `sluice backup DRIVE FILE [--compress zstd|xz|gz] [--trim-to-partitions] [--all-blocks]`: the
 * helper reads the drive (root, read-only, after its checks) into a pipe, only the ranges this
 * process asks for unless --all-blocks; this process writes the file as the user.
 */
export async function backupCommand(args: BackupArgs): Promise<number> {
  const { file } = args;
  const [drive = args.drive] = await namedDrives([args.drive]);
  // Asked here first, the answer comes before any password prompt.
  const checked = await checkBackup(drive, file);
  if ('refused' in checked) return reportOne(args.json, checked.refused);
  const listed = await findDrive(drive).catch(() => undefined);
  const unconfirmed = await unconfirmedInternalDisk(
    drive,
    listed,
    process.stdin.isTTY === true && !args.yes ? askText : null,
  );
  if (unconfirmed !== null) return reportOne(args.json, unconfirmed);
  const refused = await confirmReplace(file, args.yes);
  if (refused !== null) return refused;

  const reporter = createReporter(args.json, 'backup');
  const controller = new AbortController();
  const stopListening = cancelOnSigint(
    () => controller.abort(),
    `The drive was only read. The unfinished ${FileTarget.partialPath(file)} is left behind; delete it.`,
  );
  const result = await backupDrive({
    drive,
    file,
    driveSize: checked.driveSize,
    driveMedium: checked.driveMedium,
    compress: args.compress,
    trimToPartitions: args.trimToPartitions,
    allBlocks: args.allBlocks,
    shrink: args.shrink,
    verify: args.verify,
    launch: (options) =>
      startHelper({
        ...options,
        ...cliHelperOptions(args.elevate),
      }),
    signal: controller.signal,
    onProgress: (p) => reporter.progress(p),
  });
  stopListening();
  reporter.end();
  reporter.result(result);
  return exitCodeFor([result]);
}

import { JobError, toFailure } from '../../common/domain/failure.js';
import type { TargetResult } from '../../common/domain/result.js';
import { formatBytes } from '../../common/domain/units.js';
import { readDrive } from '../../user/backup/read-drive.js';
import { openInstallerSource, type InstallerSource } from '../../user/installer/installer-job.js';
import { checkStick, differences, type StickCheck } from '../../user/installer/verify-stick.js';
import { startHelper } from '../../user/launcher/launch.js';
import { namedDrives } from '../drive-names.js';
import { EXIT } from '../exit-codes.js';
import { cliHelperOptions } from '../helper-options.js';
import { reportOne } from '../reporter.js';

export interface VerifyInstallerArgs {
  image: string;
  target: string;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

function verdict(target: string, check: StickCheck, seconds: number): TargetResult {
  if (check.problems.length > 0)
    return { status: 'failed', target, bytes: check.bytes, code: 'verify-mismatch', message: differences(check) };
  return { status: 'ok', target, bytes: check.bytes, written: false, verified: true, seconds };
}

/**
 * `sluice verify ISO DEVICE --iso-mode files`: compares every file of the ISO with the installer
 * stick's (user/installer/verify-stick.ts). The ISO is read here, as the user; the drive through
 * the helper's range reads, as a backup reads it. Writes nothing.
 */
export async function verifyInstallerCommand(args: VerifyInstallerArgs): Promise<number> {
  const [target = args.target] = await namedDrives([args.target]);
  let source: InstallerSource;
  try {
    source = await openInstallerSource(args.image, false);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    return reportOne(args.json, { status: 'failed', target, bytes: 0, ...error.failure });
  }
  try {
    const started = performance.now();
    const iso = { tree: source.tree, readAt: source.readAt, path: args.image };
    const { result, value } = await readDrive(
      { drive: target, launch: (options) => startHelper({ ...options, ...cliHelperOptions(args.elevate) }) },
      (readAt) => checkStick(iso, readAt, target),
    );
    if (value === null) return reportOne(args.json, result);
    const checked = verdict(target, value, (performance.now() - started) / 1000);
    if (checked.status === 'ok' && !args.json) {
      process.stdout.write(
        `${target}: every file of ${args.image} (${value.files} files, ${formatBytes(value.bytes)}) is on the stick, identical.\n`,
      );
      return EXIT.ok;
    }
    return reportOne(args.json, checked);
  } catch (error) {
    return reportOne(args.json, { status: 'failed', target, bytes: 0, ...toFailure(error) });
  } finally {
    await source.close();
  }
}

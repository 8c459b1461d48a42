import type { Drive } from '../common/domain/drive.js';
import { formatBytes } from '../common/domain/units.js';
import { judgeDrive } from '../common/domain/verdict.js';
import { findDrive } from '../user/drives/list-drives.js';
import { reportOne } from './reporter.js';
import { refuseTargets } from './commands/target-verdicts.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { confirm } from './prompt.js';

/** What a command will do to a drive (said before asking), or why it cannot (a usage error). */
export type DrivePlan = { warning: string } | { problem: string };

/**
 * The drive a command that writes to a whole drive without an image (erase, check) is about to
 * touch: listed by this computer, planned (`plan`), judged by the same rules as a flash's targets
 * (the system disk and read-only drives refused; an internal disk only after its name is typed),
 * and confirmed with `--yes` or at the terminal after the plan's warning. Returns the drive, or
 * the exit code after saying why not; nothing is written either way.
 */
export async function checkedDrive(
  target: string,
  args: { yes: boolean; json: boolean },
  plan: (drive: Drive & { size: number }) => DrivePlan,
): Promise<Drive | number> {
  const listed = await findDrive(target);
  if (listed === undefined || listed.size === null) {
    return reportOne(args.json, {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-not-found',
      message: `${target} is not a drive this computer lists (or it holds no medium); nothing was written.`,
    });
  }
  const drive = { ...listed, size: listed.size };
  const planned = plan(drive);
  if ('problem' in planned) {
    process.stderr.write(`sluice: ${planned.problem} Nothing was written.\n`);
    return EXIT.usage;
  }
  const interactive = process.stdin.isTTY === true;
  if (!args.yes && !interactive) {
    process.stderr.write(
      'sluice: refusing to write to a drive without confirmation; pass --yes when running without a terminal.\n',
    );
    return EXIT.usage;
  }
  const refused = await refuseTargets([{ target, drive, verdicts: judgeDrive(drive, null) }], interactive && !args.yes);
  if (refused.length > 0) {
    for (const r of refused) reportOne(args.json, r);
    return exitCodeFor(refused);
  }
  if (!args.yes) {
    process.stderr.write(
      `${planned.warning.replace('DRIVE', `${target}  ${drive.description || 'unnamed drive'}, ${formatBytes(drive.size)}`)}\n`,
    );
    if (!(await confirm('Continue?'))) {
      process.stderr.write('Nothing was written.\n');
      return EXIT.cancelled;
    }
  }
  return drive;
}

import type { Drive } from '../../common/domain/drive.js';
import type { TargetResult } from '../../common/domain/result.js';
import {
  judgeDrive,
  refusalFailure,
  refusalOf,
  verdictEffect,
  type ImageFacts,
  type Verdict,
} from '../../common/domain/verdict.js';
import { imageFacts } from '../../user/drives/image-facts.js';
import { listDrivesFor } from '../../user/drives/list-drives.js';
import { askText } from '../prompt.js';
import { errorText } from '../../common/domain/error-details.js';

/** One named target, the drive the OS lists under that name (if any), and the verdicts on writing the image to it. */
export interface JudgedTarget {
  target: string;
  drive: Drive | undefined;
  verdicts: Verdict[];
}

/**
 * The OS's listing of drives for judging `targets` (listDrivesFor: virtual and system drives
 * included, since a device named on the command line is judged whatever a list would show). A listing that fails is said, and
 * gives none: the helper's checks still stand. A command may start it early, so that lsblk runs
 * while the image is probed (on a flash the two took about 100 ms each, one after the other).
 */
export function listTargetDrives(targets: readonly string[]): Promise<Drive[]> {
  return listDrivesFor(targets).catch((error: unknown) => {
    process.stderr.write(`sluice: could not list drives (${errorText(error)}); relying on the writer's own checks.\n`);
    return [] as Drive[];
  });
}

/**
 * Judges each target with the shared rules, from `listing` (listTargetDrives). A target the listing
 * does not know (a partition, a file) gets no verdicts here; the helper's own checks refuse what
 * must be refused.
 */
export async function judgeTargets(
  imagePath: string,
  imageSize: Pick<ImageFacts, 'size' | 'atLeast'>,
  targets: readonly string[],
  listing: Promise<Drive[]> = listTargetDrives(targets),
): Promise<JudgedTarget[]> {
  const drives = await listing;
  const image = await imageFacts(imagePath, imageSize, drives);
  return targets.map((target) => {
    const drive = drives.find((d) => d.device === target);
    return { target, drive, verdicts: drive === undefined ? [] : judgeDrive(drive, image) };
  });
}

/** Per target, the medium the listing saw in it: the helper refuses a drive that holds another by then. */
export function mediaOf(judged: readonly JudgedTarget[]): (string | null)[] {
  return judged.map((j) => j.drive?.medium ?? null);
}

/**
 * The targets that may not be written, as failed results: what the rules refuse, and internal
 * disks unless the user types the disk's name at the terminal (never with --yes, where nobody
 * would be asked). Prints the warnings and notes on the others.
 */
export async function refuseTargets(judged: readonly JudgedTarget[], interactive: boolean): Promise<TargetResult[]> {
  const refused: TargetResult[] = [];
  for (const { target, verdicts } of judged) {
    const refusal = refusalOf(verdicts);
    if (refusal !== undefined) {
      refused.push({ status: 'failed', target, bytes: 0, ...refusalFailure(refusal) });
      continue;
    }
    for (const verdict of verdicts) {
      const effect = verdictEffect(verdict);
      if (effect === 'warn' || effect === 'note')
        process.stderr.write(`sluice: ${effect === 'warn' ? 'warning' : 'note'}: ${verdict.message}\n`);
    }
    const internal = verdicts.find((v) => v.kind === 'system');
    if (internal === undefined) continue;
    process.stderr.write(`sluice: ${internal.message}\n`);
    const typed = interactive ? await askText(`Type ${target} to erase it: `) : '';
    if (typed !== target) {
      const hint = interactive
        ? ' The name typed did not match; nothing was written.'
        : ' Run without --yes to be asked for its name.';
      refused.push({
        status: 'failed',
        target,
        bytes: 0,
        code: 'target-system',
        message: `${internal.message}${hint}`,
      });
    }
  }
  return refused;
}

import { judgeDrive } from '../../common/domain/verdict.js';
import type { TargetResult } from '../../common/domain/result.js';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { formatBytes, formatDuration } from '../../common/domain/units.js';
import { errorText } from '../../common/domain/error-details.js';
import { FILESYSTEM_NAMES } from '../../common/domain/erase.js';
import { eraseJob, planErase } from '../../user/erase/erase-drive.js';
import { planBytes, type ErasePlan } from '../../user/erase/volume.js';
import { listDrives } from '../../user/drives/list-drives.js';
import { chooseElevation, onPath } from '../../user/launcher/elevation/choose.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cancelOnSigint } from '../cancel.js';
import { namedDrives } from '../drive-names.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { reportOne } from './flash-to-file.js';
import { refuseTargets } from './target-verdicts.js';

export interface EraseArgs {
  device: string;
  label: string | null;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** What `sluice erase --json` prints beside the result: the volume it made. */
function eraseReport(target: string, plan: ErasePlan) {
  return {
    type: 'erase',
    target,
    filesystem: plan.filesystem,
    label: plan.label,
    partitionStart: plan.partitionStart,
    partitionBytes: plan.partitionBytes,
    clusterBytes: plan.clusterBytes,
    writtenBytes: planBytes(plan),
  };
}

function eraseLine(result: TargetResult, plan: ErasePlan): string {
  if (result.status !== 'ok') return '';
  const named = plan.label === null ? '' : ` labelled "${plan.label}"`;
  return `${result.target}: erased to one empty ${FILESYSTEM_NAMES[plan.filesystem]} partition${named} of ${formatBytes(plan.partitionBytes)} (${plan.clusterBytes / 1024} KiB clusters); ${formatBytes(planBytes(plan))} of tables written and read back in ${formatDuration(result.seconds)}, the rest of the drive left as it was.`;
}

/**
 * `sluice erase DEVICE [--label NAME]`: makes the drive a normal empty one again, as the SD
 * Association's formatter does (user/erase/volume.ts), through the flash path: a block-mapped
 * stream of the tables only, head blanked first and written last, then read back.
 */
export async function eraseCommand(args: EraseArgs): Promise<number> {
  const [target = args.device] = await namedDrives([args.device]);
  const drives = await listDrives({ showAll: true, showVirtual: true });
  const drive = drives.find((d) => d.device === target);
  if (drive === undefined || drive.size === null) {
    return reportOne(args.json, { status: 'failed', target, bytes: 0, code: 'target-not-found', message: `${target} is not a drive this computer lists (or it holds no medium); nothing was written.` });
  }
  let plan: ErasePlan;
  try {
    plan = planErase(drive, args.label);
  } catch (error) {
    process.stderr.write(`sluice: ${target} cannot be erased this way: ${errorText(error)}. Nothing was written.\n`);
    return EXIT.usage;
  }
  const interactive = process.stdin.isTTY === true;
  if (!args.yes && !interactive) {
    process.stderr.write('sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n');
    return EXIT.usage;
  }
  const refused = await refuseTargets([{ target, drive, verdicts: judgeDrive(drive, null) }], interactive && !args.yes);
  if (refused.length > 0) {
    for (const r of refused) reportOne(args.json, r);
    return exitCodeFor(refused);
  }
  if (!args.yes) {
    process.stderr.write(`This will ERASE everything on:\n  ${target}  ${drive.description || 'unnamed drive'}, ${formatBytes(drive.size)}\nand leave one empty ${FILESYSTEM_NAMES[plan.filesystem]} partition on it.\n`);
    if (!(await confirm('Continue?'))) {
      process.stderr.write('Nothing was written.\n');
      return EXIT.cancelled;
    }
  }
  const reporter = createReporter(args.json);
  const { source, job: eraseFlash } = await eraseJob(target, plan);
  const job = startHelper({
    source: source.fd,
    job: eraseFlash,
    elevation: chooseElevation({ platform: process.platform, isRoot: process.getuid?.() === 0, frontEnd: 'cli', interactive, prefer: args.elevate, installed: onPath }),
    interactive,
    onProgress: (p) => reporter.progress(p),
    onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
  });
  const stopListening = cancelOnSigint(() => job.cancel(), DRIVE_INCOMPLETE);
  const results = await job.result;
  stopListening();
  await source.dispose();
  reporter.end();
  for (const r of results) {
    if (args.json) {
      if (r.status === 'ok') process.stdout.write(`${JSON.stringify(eraseReport(target, plan))}\n`);
      reporter.result(r);
    } else {
      const line = eraseLine(r, plan);
      if (line === '') reporter.result(r);
      else process.stdout.write(`${line}\n`);
    }
  }
  return exitCodeFor(results);
}

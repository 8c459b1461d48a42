import type { TargetResult } from '../../common/domain/result.js';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { formatBytes, formatDuration } from '../../common/domain/units.js';
import { errorText } from '../../common/domain/error-details.js';
import { FILESYSTEM_NAMES } from '../../common/domain/erase.js';
import { eraseJob, planErase } from '../../user/erase/erase-drive.js';
import { planBytes, type ErasePlan } from '../../user/erase/volume.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { cancelOnSigint } from '../cancel.js';
import { checkedDrive } from '../checked-drive.js';
import { namedDrives } from '../drive-names.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { createReporter } from '../reporter.js';

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
  let plan: ErasePlan | null = null;
  const drive = await checkedDrive(target, args, (listed) => {
    try {
      plan = planErase(listed, args.label);
    } catch (error) {
      return { problem: `${target} cannot be erased this way: ${errorText(error)}.` };
    }
    return {
      warning: `This will ERASE everything on:\n  DRIVE\nand leave one empty ${FILESYSTEM_NAMES[plan.filesystem]} partition on it.`,
    };
  });
  if (typeof drive === 'number' || plan === null) return typeof drive === 'number' ? drive : EXIT.usage;
  const reporter = createReporter(args.json, 'erase');
  const { source, job: eraseFlash } = await eraseJob(drive, plan);
  const job = startHelper({
    source: source.fd,
    job: eraseFlash,
    ...cliHelperOptions(args.elevate),
    onProgress: (p) => reporter.progress(p),
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

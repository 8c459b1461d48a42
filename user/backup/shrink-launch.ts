/**
 * `--shrink` in the shrinker's own process (shrink-process/main.ts), as the user, for the app's
 * main process and the CLI alike: the backup's filesystems are parsed where running out of memory,
 * crashing or never finishing costs only that process.
 */
import * as v from 'valibot';
import { ShrinkReply } from '../../common/contracts/shrink-protocol.js';
import { failedReply, jobError, type JobError } from '../../common/domain/failure.js';
import { processEntry } from '../../node/process-entries.js';
import { askLimitedChild, notStarted, type ChildLimits } from '../images/processes/limited-child.js';
import type { Shrunk } from './shrink.js';

/**
 * The drive map reader's memory (a FAT32 of 32 GB has 32 MiB of FAT); the time of e2fsck, resize2fs
 * and e2fsck again on a filesystem of several GiB, each allowed 30 minutes by shrink.ts.
 */
export const SHRINK_LIMITS: ChildLimits = { heapMiB: 128, memoryMiB: 200, timeMs: 100 * 60_000 };

function checkedReply(message: unknown, file: string, length: number): Shrunk | null | JobError {
  const reply = v.safeParse(ShrinkReply, message);
  if (!reply.success) return jobError('internal', `The shrinker sent an answer of the wrong shape about ${file}.`);
  const { output } = reply;
  if (output.type === 'small') return null;
  if (output.type === 'failed') {
    return failedReply(output);
  }
  if (output.before !== length || output.after > length)
    return jobError('internal', `The shrinker said ${file} grew, or was another length before.`);
  return { before: output.before, after: output.after, fault: output.fault };
}

/**
 * Shrinks the raw backup `file` (shrink.ts shrinkBackup) in the shrinker's process. Rejects as
 * shrinkBackup does: a JobError that is not `internal` before the file changed; an `internal` one
 * (a limit, a crash) when it may have changed part-way.
 */
export function shrinkInChild(
  file: string,
  length: number,
  limits: ChildLimits = SHRINK_LIMITS,
): Promise<Shrunk | null> {
  return askLimitedChild(
    processEntry('shrink'),
    { type: 'shrink', file, length },
    limits,
    (message) => checkedReply(message, file, length),
    {
      overLimit: (what) =>
        jobError(
          'internal',
          what === 'time'
            ? `Shrinking ${file} took more than ${Math.round(limits.timeMs / 60_000)} minutes, so Sluice stopped it`
            : `Shrinking ${file} needed more than ${what === 'heap' ? limits.heapMiB : limits.memoryMiB} MiB of memory (its filesystem is damaged or hostile), so Sluice stopped it`,
        ),
      stopped: (why) => jobError('internal', `The shrinker stopped unexpectedly (${why})`),
      notStarted: notStarted('The shrinker'),
    },
  );
}

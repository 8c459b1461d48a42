/**
 * Which ranges of a drive a backup of the used blocks reads, found in the drive map reader's own
 * process (drive-map/main.ts), as the user, for the app's main process and the CLI alike: the
 * drive's filesystems are parsed where running out of memory, crashing or never finishing costs
 * only that process. It gets the probe's memory cap and a time limit; the bytes it asks for are
 * read here, through the helper, one range at a time.
 */
import * as v from 'valibot';
import { DriveMapQuestion, DriveMapReply, type DriveMapBytes } from '../../common/contracts/drive-map-protocol.js';
import type { Extent } from '../../common/domain/extents.js';
import type { JobError } from '../../common/domain/failure.js';
import { failedReply, jobError } from '../../common/domain/failure.js';
import { processEntry } from '../../node/process-entries.js';
import { MAX_READ_BYTES, type ReadImage } from '../images/free-space/image-reader.js';
import { askLimitedChild, notStarted, type ChildLimits } from '../images/processes/limited-child.js';

/**
 * As the probe's (probe-launch.ts: its readers hold the same 1 MiB questions and extent lists). The
 * time covers the drive's reads too: an ext4 filesystem of 64 GB has 512 KiB of block bitmaps, a
 * FAT32 one of 32 GB with 4 KiB clusters 32 MiB of FAT, 2 s on a 20 MB/s card.
 */
export const DRIVE_MAP_LIMITS: ChildLimits = { heapMiB: 128, memoryMiB: 200, timeMs: 120_000 };

/** The reader's answer, checked: sorted, disjoint, non-empty ranges inside the first `length` bytes. */
function checkedRanges(message: unknown, length: number, drive: string): Extent[] | JobError {
  const reply = v.safeParse(DriveMapReply, message);
  if (!reply.success)
    return jobError('protocol-error', `The drive map reader sent an answer of the wrong shape about ${drive}.`);
  if (reply.output.type === 'failed') {
    return failedReply(reply.output);
  }
  let end = 0;
  for (const [offset, size] of reply.output.ranges) {
    if (size === 0 || offset < end || offset + size > length)
      return jobError('protocol-error', `The drive map reader named ranges of ${drive} out of order or off it.`);
    end = offset + size;
  }
  return reply.output.ranges;
}

/**
 * The ranges of the drive's first `length` bytes a backup reads (used-blocks.ts usedRanges), from
 * the reader's process; `read` gets the bytes it asks for. Rejects with `read`'s own error, or a
 * JobError for a reader that went past a limit or stopped without an answer.
 */
export function usedRangesInChild(
  read: ReadImage,
  length: number,
  drive: string,
  limits: ChildLimits = DRIVE_MAP_LIMITS,
): Promise<Extent[]> {
  // Questions are answered in the order asked: `read` reads one stream from the helper.
  let previous: Promise<unknown> = Promise.resolve();
  const answer = (message: unknown): Promise<DriveMapBytes> | null => {
    const question = v.safeParse(DriveMapQuestion, message);
    if (!question.success) return null;
    const { offset, length: wanted } = question.output;
    const reply = previous.then(async (): Promise<DriveMapBytes> => {
      const bytes = await read(offset, Math.min(wanted, MAX_READ_BYTES));
      return { type: 'bytes', base64: bytes?.toString('base64') ?? null };
    });
    previous = reply.catch(() => undefined);
    return reply;
  };
  return askLimitedChild(
    processEntry('drive-map'),
    { type: 'map', length },
    limits,
    (message) => checkedRanges(message, length, drive),
    {
      overLimit: (what) =>
        jobError(
          'source-corrupt',
          what === 'time'
            ? `Reading the filesystems of ${drive} took more than ${Math.round(limits.timeMs / 1000)} s, so Sluice stopped; nothing was saved. Back it up with --all-blocks (every byte) instead.`
            : `The filesystems of ${drive} are damaged or hostile: reading their maps needed more than ${what === 'heap' ? limits.heapMiB : limits.memoryMiB} MiB of memory, so Sluice stopped; nothing was saved. Back it up with --all-blocks (every byte) instead.`,
        ),
      stopped: (why) => jobError('internal', `The drive map reader stopped unexpectedly (${why}); nothing was saved.`),
      notStarted: notStarted('The drive map reader'),
    },
    answer,
  );
}

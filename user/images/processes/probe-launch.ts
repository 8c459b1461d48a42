/**
 * Probing an image in its own process (probe/main.ts), for the app's main process and the CLI: an
 * image from the internet is parsed where running out of memory, crashing or never finishing
 * costs only that process. The probe gets a memory cap and a time limit; past either it is
 * killed, and the caller gets a JobError that says so, while its own event loop never waited on
 * the parsing.
 */
import * as v from 'valibot';
import { ProbeReply } from '../../../common/contracts/probe-protocol.js';
import { failedReply, jobError, type JobError } from '../../../common/domain/failure.js';
import { askLimitedChild, notStarted, type ChildLimits } from './limited-child.js';
import { isUrl } from '../../../common/domain/image.js';
import { processEntry } from '../../../node/process-entries.js';
import type { ImageRequest, PreparedImage } from '../probe/probe.js';

const PROBE_ENTRY = processEntry('probe');

export type ProbeLimits = ChildLimits;

/**
 * Measured here (Node 24; VmHWM, the kernel's own peak resident set): a probe of a 1 GiB .img.xz
 * (342 blocks, its GPT read through a decoder) peaks at 64 MB, of which bare Node is 43 MB, and
 * answers in 0.2-0.4 s. The heaviest honest image measured before bmap.ts took its element limit, a
 * raw image with a bmap of 152,000 ranges, peaked at 160-177 MB and needed 33-48 MiB of heap; the
 * parser now refuses more than about 43,000 ranges, which cost it about 90 MB.
 * - heapMiB 128: a probe that fills its heap with tables or strings is stopped by V8 at 184-188 MB
 *   resident, 0.4-0.6 s in; that is well over twice what the heaviest honest image needs.
 * - memoryMiB 200 (210 MB), looked at every 20 ms: buffers and typed arrays live outside V8's heap.
 *   A qcow2 whose every L1 entry names one L2 table made the probe allocate 512 MiB of cluster
 *   entries at about 1 GB/s: without the watch it held 786 MB for 7 s before V8 gave up; with it,
 *   it is killed after 0.5-0.6 s at 214-218 MB. The two keep the probe under 256 MB.
 * - timeMs: local files get 30 s. An honest probe reads headers, indexes and a decoder's first MiB
 *   (the 0.2-0.4 s above), so only a damaged file, or a disk or share that stopped answering, gets
 *   near it. Downloads get 60 s: the first bytes, a checksum file, and range requests for an xz
 *   index (each allowed 10 s by http-source.ts) on a slow connection.
 */
export const DEFAULT_PROBE_LIMITS: Readonly<Record<'file' | 'url', ProbeLimits>> = {
  file: { heapMiB: 128, memoryMiB: 200, timeMs: 30_000 },
  url: { heapMiB: 128, memoryMiB: 200, timeMs: 60_000 },
};

/** Why the probe was stopped, in words for the person who chose the image. */
function overLimit(request: ImageRequest, what: 'memory' | 'heap' | 'time', limits: ProbeLimits): JobError {
  if (what !== 'time') {
    const mib = what === 'memory' ? limits.memoryMiB : limits.heapMiB;
    return jobError(
      'source-corrupt',
      `${request.image} is damaged or hostile: reading what it holds needed more than ${mib} MiB of memory, so Sluice stopped. Nothing was written.`,
    );
  }
  const seconds = Math.round(limits.timeMs / 1000);
  if (isUrl(request.image)) {
    return jobError(
      'source-read-error',
      `Reading what ${request.image} holds took more than ${seconds} s (a slow, stalled or hostile server), so Sluice stopped. Nothing was written; try again later.`,
    );
  }
  return jobError(
    'source-corrupt',
    `Reading what ${request.image} holds took more than ${seconds} s, so Sluice stopped: the image is damaged or hostile, or the disk it is on stopped answering. Nothing was written.`,
  );
}

/**
 * The probe's answer, checked: the image, or the JobError it names. An answer about another image
 * than the one asked for is refused: what it names is opened for the flash (as root under sudo,
 * when the helper reads the file itself), so a probe a hostile image got the better of must not
 * choose it.
 */
export function checkedAnswer(request: ImageRequest, message: unknown): PreparedImage | JobError {
  const reply = v.safeParse(ProbeReply, message);
  if (!reply.success)
    return jobError(
      'protocol-error',
      `The image probe sent an answer of the wrong shape: ${v.summarize(reply.issues).slice(0, 500)}`,
    );
  if (reply.output.type === 'prepared') {
    const { prepared } = reply.output;
    const location = prepared.plan.location;
    const named = location.kind === 'file' ? location.path : location.url;
    if (prepared.info.source !== request.image || named !== request.image)
      return jobError(
        'protocol-error',
        `The image probe answered about another image (${named}) than ${request.image}; nothing was opened.`,
      );
    // What each card gets must be for the cards asked about, and only when asked.
    if ((prepared.customisation?.overlays.length ?? 0) !== (request.customise?.length ?? 0))
      return jobError(
        'protocol-error',
        'The image probe planned the customisation of another number of cards than were asked for; nothing was written.',
      );
    return prepared;
  }
  return failedReply(reply.output);
}

/**
 * Probes `request` (user/images/probe/probe.ts prepareImage) in a probe process with `limits`, as the
 * user (the invoking user under sudo: image-child.ts). Resolves with what it found, once checked
 * against the probe protocol's schema; rejects with a JobError for bad input, for a probe that
 * went past a limit (once its process is gone), and for one that stopped without an answer. The
 * first of these counts.
 */
export function prepareImageInChild(
  request: ImageRequest,
  limits: ProbeLimits = DEFAULT_PROBE_LIMITS[isUrl(request.image) ? 'url' : 'file'],
): Promise<PreparedImage> {
  return askLimitedChild(PROBE_ENTRY, request, limits, (message) => checkedAnswer(request, message), {
    overLimit: (what) => overLimit(request, what, limits),
    stopped: (why) =>
      jobError(
        'source-read-error',
        `The image probe stopped unexpectedly (${why}); ${request.image} was not read to the end.`,
      ),
    notStarted: notStarted('The image probe'),
  });
}

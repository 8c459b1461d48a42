import type { Progress } from '../common/domain/progress.js';
import type { TargetResult } from '../common/domain/result.js';
import { judgeDrive, refusalFailure } from '../common/domain/verdict.js';
import { alignDown, alignUp } from './job-memory.js';
import { compareRead, type Comparison, type Differences } from './compare.js';
import { ABANDONED, allocatePumpMemory, DEFAULT_REQUEST, unlessAborted } from './pump.js';
import { refusedStop, targetReadFailure } from './failures.js';
import { mergeExtents, type Extent } from '../common/domain/extents.js';
import { readStream } from './read-stream.js';
import type { SkipInbox } from './skip-inbox.js';
import { EXTENT_ALIGN, streamLayoutOf, type StreamLayout } from './stream-layout.js';
import { readSpan } from './verify-written.js';
import { jobError, toFailure } from '../common/domain/failure.js';
import { closeFd, readFully } from '../node/io.js';
import { openInspected } from './open-device.js';
import { currentPlatform } from './platform/index.js';
import { NOTHING_HELD, type DevicePlatform } from './platform/types.js';
import { COMPARES, openSameMedium } from './medium-check.js';
import { ProgressMeter } from './progress-meter.js';
import { safetyFacts } from './target-check.js';
import type { WriteTarget } from './write-target.js';
import { applyOverlay, outsideImage, type OverlayPiece } from './overlay.js';

/** A verify-only job: compare a device that was written earlier against the image, writing nothing. */
export interface VerifyImageJob {
  source: number;
  imageSize: number | null;
  /** The source is the image file itself, readable at any offset: ranges left out are never read. */
  sourceSeekable?: boolean | undefined;
  /** The source carries only these ranges of the image (as a flash's: stream-layout.ts); the rest is not compared. */
  extents?: readonly Extent[] | undefined;
  /** Where the decoder's skip messages arrive: free space it leaves out of the stream as it goes, which is not compared either. */
  skips?: SkipInbox | undefined;
  target: string;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  platform?: DevicePlatform | undefined;
  /** Refuse anything but a disk: the helper reads as root, and a file is its owner's to compare. */
  disksOnly?: boolean | undefined;
  /** The medium the user chose in the drive (Drive.medium): a drive that holds another is not compared. */
  medium?: string | null | undefined;
  /** The customisation the drive was given after the image: compared in place of the image's bytes there. */
  overlay?: Promise<readonly OverlayPiece[]> | undefined;
}

/**
 * Reads the image and the device side by side, bypassing the page cache on the device, and names
 * the exact first byte that differs (compareWithImage).
 */
export async function verifyImage(job: VerifyImageJob): Promise<TargetResult> {
  const platform = job.platform ?? (await currentPlatform());
  const started = performance.now();
  const facts = await platform.inspect(job.target);
  const target = job.target;
  if (!facts.exists)
    return {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-not-found',
      message: `${target} does not exist: was the drive unplugged?`,
    };
  if (job.disksOnly === true && !facts.isBlockDevice)
    return {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-not-block-device',
      message: `${target} is not a disk; compare a file without administrator rights.`,
    };
  const tooSmall = judgeDrive(safetyFacts(facts), { size: job.imageSize, storedOn: null }).find(
    (v) => v.kind === 'too-small',
  );
  if (facts.isBlockDevice && tooSmall !== undefined)
    return { status: 'failed', target, bytes: 0, ...refusalFailure(tooSmall) };
  if (facts.isPartition && job.disksOnly === true)
    return {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-is-partition',
      message: `${target} is a partition, not a whole disk. Compare the disk it belongs to (for example /dev/sdb, not /dev/sdb1).`,
    };
  let fd: number;
  try {
    const open = async () => ({
      fd: await openInspected(facts, platform.readFlags, (error) => targetReadFailure(target, error, 0).failure),
      hold: NOTHING_HELD,
    });
    ({ fd } = await openSameMedium(facts, platform, job.medium ?? null, COMPARES, open));
  } catch (error) {
    return { status: 'failed', target, bytes: 0, ...toFailure(error) };
  }
  const reader: TargetReader = {
    path: target,
    read: (buffer, offset, length, position) =>
      readFully(fd, buffer, offset, alignUp(length, facts.logicalBlockSize), position).then((got) =>
        Math.min(got, length),
      ),
  };
  try {
    return await compareWithImage({ ...job, started }, reader);
  } finally {
    await closeFd(fd);
  }
}

/** What compareWithImage reads: a target's bytes, past any cache (see WriteTarget.read). */
export type TargetReader = Pick<WriteTarget, 'path' | 'read'>;

/**
 * Reads the image and the target side by side and names the exact first byte that differs. The
 * image is read through the pump while the target's bytes at the same offset are read into a
 * third region and compared. Used by `sluice verify` and to verify a file that the kernel copied
 * (user/files/flash-to-file.ts), whose bytes never passed through a hash.
 */
export async function compareWithImage(
  job: Pick<
    VerifyImageJob,
    'source' | 'sourceSeekable' | 'imageSize' | 'extents' | 'skips' | 'signal' | 'onProgress' | 'overlay'
  > & { started: number },
  reader: TargetReader,
): Promise<TargetResult> {
  const target = reader.path;
  let layout: StreamLayout;
  try {
    layout = streamLayoutOf(job);
  } catch (error) {
    job.skips?.close();
    return { status: 'failed', target, bytes: 0, ...toFailure(error) };
  }
  const overlay = job.overlay === undefined ? [] : await unlessAborted(job.overlay, job.signal);
  if (overlay === ABANDONED) {
    job.skips?.close();
    return { status: 'cancelled', target, bytes: 0 };
  }
  const memory = allocatePumpMemory(DEFAULT_REQUEST, DEFAULT_REQUEST);
  const device = memory.extra;
  const meter = new ProgressMeter('verifying', target, layout.streamBytes, (p) => job.onProgress?.(p));
  let position = 0;
  /** Stream bytes read so far: ranges left out from now on must lie after them. */
  let received = 0;
  job.skips?.open((extents) => {
    layout.omit(extents, received);
    meter.total = layout.streamBytes;
  });
  let compared: Comparison;
  try {
    compared = await compareRead({
      halves: memory.halves,
      from: 0,
      length: null,
      read: async (into, length, at) => {
        const got = await readStream(job.source, job.sourceSeekable === true, layout, into, length, at);
        received = Math.max(received, at + got);
        return got;
      },
      check: async (image, at, differences) => {
        // The customisation lies at device offsets; a stream that leaves ranges out reaches them piece by piece.
        for (const piece of layout.pieces(at, image.length))
          applyOverlay(
            image.subarray(piece.bufferOffset, piece.bufferOffset + piece.length),
            piece.deviceOffset,
            overlay,
          );
        const n = image.length;
        const got = await readSpan(reader, layout, device, n, at);
        if (got < n) {
          const end = layout.deviceOffset(at + got);
          throw jobError('verify-mismatch', `${target} ends at byte offset ${end}, before the image does.`, {
            offset: end,
          });
        }
        if (image.compare(device, 0, n, 0, n) === 0) return;
        for (let i = 0; i < n; i++) if (image[i] !== device[i]) differences.note(layout.deviceOffset(at + i));
      },
      advanced: (at) => {
        position = at;
        meter.update(at);
      },
      signal: job.signal,
    });
  } catch (error) {
    return { status: 'failed', target, bytes: position, ...toFailure(error) };
  } finally {
    job.skips?.close();
  }
  if (compared.end !== 'cancelled') {
    try {
      await compareLeftOutOverlay(reader, layout, overlay, device, compared.differences);
    } catch (error) {
      return { status: 'failed', target, bytes: position, ...toFailure(error) };
    }
  }
  if (compared.end === 'cancelled') {
    // A skip the job refused stopped it (see SkipInbox.refusal): that is its reason.
    const refused = job.skips?.refusal;
    const failure = refused !== undefined && refused !== null ? toFailure(refused) : refusedStop(job.signal);
    return failure !== null
      ? { status: 'failed', target, bytes: compared.at, ...failure }
      : { status: 'cancelled', target, bytes: compared.at };
  }
  meter.finish();
  return outcome(job, target, layout, position, compared.differences, overlay);
}

/** A comparison that ran to its end: ok, or the first thing wrong with the target, the image or the customisation. */
function outcome(
  job: Pick<VerifyImageJob, 'imageSize'> & { started: number },
  target: string,
  layout: StreamLayout,
  position: number,
  differences: Differences,
  overlay: readonly OverlayPiece[],
): TargetResult {
  const streamBytes = layout.streamBytes;
  if (streamBytes !== null && position !== streamBytes) {
    const offset = layout.deviceOffset(position);
    return {
      status: 'failed',
      target,
      bytes: position,
      code: 'source-truncated',
      message: `The image ended after ${offset} of its ${job.imageSize ?? streamBytes} bytes.`,
      offset,
    };
  }
  const imageBytes = job.imageSize ?? position;
  const outside = outsideImage(overlay, imageBytes);
  if (outside !== null)
    return {
      status: 'failed',
      target,
      bytes: position,
      code: 'protocol-error',
      message: `The customisation to compare reaches past the image's ${imageBytes} bytes (from offset ${outside}).`,
    };
  const { count, first } = differences;
  if (count > 0) {
    return {
      status: 'failed',
      target,
      bytes: position,
      code: 'verify-mismatch',
      message: `${target} differs from the image: ${count === 1 ? '1 byte differs' : `${count} bytes differ`}, the first at byte offset ${first}.`,
      offset: first,
    };
  }
  return {
    status: 'ok',
    target,
    bytes: position,
    written: false,
    verified: true,
    seconds: (performance.now() - job.started) / 1000,
    ...(layout.leftOut > 0 ? { skipped: layout.leftOut } : {}),
  };
}

/**
 * Compares the customisation bytes that lie in ranges the stream left out with the target, noting
 * each byte that differs. The customisation writes new files into clusters that were free in the
 * image, which a flash leaves out (common/domain/skipped.ts) and the stream's comparison never
 * reaches; they are no longer free on the card, so they are read back like every byte written.
 */
async function compareLeftOutOverlay(
  reader: TargetReader,
  layout: StreamLayout,
  overlay: readonly OverlayPiece[],
  buffer: Buffer,
  differences: Differences,
): Promise<void> {
  const ranges = layout.notCarried(mergeExtents(overlay.map((p): Extent => [p.offset, p.bytes.length])));
  for (const [offset, length] of ranges) {
    const end = offset + length;
    for (let at = offset; at < end;) {
      // Direct reads start and end on a block: read the aligned span around the bytes.
      const start = alignDown(at, EXTENT_ALIGN);
      const span = Math.min(buffer.length, alignUp(end, EXTENT_ALIGN) - start);
      const until = Math.min(end, start + span);
      let got: number;
      try {
        got = await reader.read(buffer, 0, span, start);
      } catch (error) {
        throw targetReadFailure(reader.path, error, start);
      }
      if (start + got < until)
        throw jobError(
          'verify-mismatch',
          `${reader.path} ends at byte offset ${start + got}, before its customisation does.`,
          { offset: start + got },
        );
      const expected = Buffer.alloc(until - at);
      applyOverlay(expected, at, overlay);
      for (let i = 0; i < expected.length; i++) if (expected[i] !== buffer[at - start + i]) differences.note(at + i);
      at = until;
    }
  }
}

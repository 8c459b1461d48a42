import type { Progress } from '../common/domain/progress.js';
import type { Failure } from '../common/domain/result.js';
import { formatBytes } from '../common/domain/units.js';
import { alignDown } from './job-memory.js';
import { targetReadFailure } from './failures.js';
import type { GrainHashes } from './grain-hashes.js';
import { readFully } from '../node/io.js';
import { ProgressMeter } from './progress-meter.js';
import type { StreamLayout } from './stream-layout.js';
import type { WriteTarget } from './write-target.js';

/** How verification of one target ended: null when every byte matched. */
export type VerifyOutcome = null | { status: 'cancelled' } | { status: 'failed'; failure: Failure };

interface VerifyWrittenArgs {
  targets: readonly WriteTarget[];
  /** The job's chunk region; each target reads into its own slice of it. */
  chunk: Buffer;
  /** Stream bytes written; the hashes are keyed by stream offset. */
  imageBytes: number;
  layout: StreamLayout;
  hashes: GrainHashes;
  job: { source: number; sourceSeekable: boolean; signal?: AbortSignal | undefined };
  emit: (progress: Progress) => void;
}

/** The first byte at which `a` and `b` differ, or -1. */
function firstDifference(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : length;
}

/**
 * Reads every target back with direct I/O (the page cache would only tell us what we wrote, not
 * what the card stored) and compares it grain by grain with the hashes taken while writing.
 * Targets are verified at the same time; each reads into one of its two slices of the buffer
 * while the other is being hashed.
 */
export async function verifyWritten(args: VerifyWrittenArgs): Promise<Map<WriteTarget, VerifyOutcome>> {
  const { targets, chunk, imageBytes, layout, hashes, job, emit } = args;
  const slice = alignDown(Math.floor(chunk.length / targets.length / 2), hashes.grain);
  const outcomes = await Promise.all(
    targets.map(async (target, i): Promise<VerifyOutcome> => {
      const base = 2 * i * slice;
      const regions: readonly [Buffer, Buffer] = [chunk.subarray(base, base + slice), chunk.subarray(base + slice, base + 2 * slice)];
      const meter = new ProgressMeter('verifying', target.path, imageBytes, emit);
      /**
       * Reads the device bytes of the stream span at `position` into `region`, piece by piece
       * where the layout maps it; resolves to the bytes read (short only where the device ended)
       * or the failure.
       */
      const readSpan = async (region: Buffer, position: number): Promise<number | VerifyOutcome> => {
        let done = 0;
        for (const piece of layout.pieces(position, Math.min(slice, imageBytes - position))) {
          let got: number;
          try {
            got = await target.read(region, piece.bufferOffset, piece.length, piece.deviceOffset);
          } catch (error) {
            return { status: 'failed', failure: targetReadFailure(target.path, error, piece.deviceOffset).failure };
          }
          done += got;
          if (got < piece.length) break;
        }
        return done;
      };
      let badGrains = 0;
      let firstBad = -1;
      let pending = imageBytes > 0 ? readSpan(regions[0], 0) : null;
      let turn: 0 | 1 = 0;
      for (let position = 0; pending !== null; position += slice, turn = turn === 0 ? 1 : 0) {
        const got = await pending;
        if (typeof got !== 'number') return got;
        const length = Math.min(slice, imageBytes - position);
        if (got < length) {
          const end = layout.deviceOffset(position + got);
          return { status: 'failed', failure: { code: 'verify-read-error', message: `${target.path} ended at byte ${end} while being verified.`, offset: end } };
        }
        if (job.signal?.aborted) return { status: 'cancelled' };
        pending = position + slice < imageBytes ? readSpan(regions[turn === 0 ? 1 : 0], position + slice) : null;
        const bytes = regions[turn].subarray(0, length);
        let firstBadHere = -1;
        hashes.compare(bytes, position, (grainOffset) => {
          badGrains += 1;
          if (firstBadHere < 0) firstBadHere = grainOffset;
        });
        if (firstBad < 0 && firstBadHere >= 0) firstBad = await pinpoint(job, layout, bytes, position, firstBadHere, hashes.grain);
        meter.update(position + length);
      }
      meter.finish();
      if (badGrains === 0) return null;
      return {
        status: 'failed',
        failure: {
          code: 'verify-mismatch',
          message: `Verification failed on ${target.path}: ${badGrains === 1 ? '1 block' : `${badGrains} blocks`} of ${formatBytes(hashes.grain)} ${badGrains === 1 ? 'differs' : 'differ'} from the image, the first at byte offset ${firstBad}. The card may be counterfeit or failing; try another card.`,
          offset: firstBad,
          badBlocks: badGrains,
        },
      };
    }),
  );
  return new Map(targets.map((t, i) => [t, outcomes[i] ?? null]));
}

/**
 * The device offset of the exact first differing byte inside a bad grain (given as a stream
 * offset), when the image can be re-read at that offset; otherwise the grain's own offset. Runs
 * once per target, only on failure, so its small allocation is off the hot path.
 */
async function pinpoint(job: VerifyWrittenArgs['job'], layout: StreamLayout, deviceBytes: Buffer, position: number, grainOffset: number, grain: number): Promise<number> {
  if (!job.sourceSeekable || layout.sparse) return layout.deviceOffset(grainOffset);
  const start = grainOffset - position;
  const device = deviceBytes.subarray(start, Math.min(start + grain, deviceBytes.length));
  const image = Buffer.allocUnsafe(device.length);
  const got = await readFully(job.source, image, 0, device.length, grainOffset).catch(() => 0);
  const at = firstDifference(image.subarray(0, got), device);
  return at < 0 ? grainOffset : grainOffset + at;
}

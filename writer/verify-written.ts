import type { Progress } from '../common/domain/progress.js';
import type { Failure } from '../common/domain/failure.js';
import { formatBytes } from '../common/domain/units.js';
import { alignDown } from './job-memory.js';
import { compareRead, grainCheck, grainMismatch, type Comparison, type Differences } from './compare.js';
import { targetReadFailure } from './failures.js';
import { toFailure } from '../common/domain/failure.js';
import type { GrainHashes } from './grain-hashes.js';
import { readFully } from '../node/io.js';
import { ProgressMeter } from './progress-meter.js';
import type { StreamLayout } from './stream-layout.js';
import type { WriteTarget } from './write-target.js';

/**
 * How verification of one target ended: null when every byte matched. A mismatch carries what
 * differs, for a repair (repair.ts).
 */
export type VerifyOutcome =
  null | { status: 'cancelled' } | { status: 'failed'; failure: Failure; differences?: Differences };

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
 * Reads the device bytes of `length` stream bytes at `position` into `region`, piece by piece where
 * the layout maps them; resolves to the bytes read, short only where the device ended.
 */
export async function readSpan(
  target: Pick<WriteTarget, 'path' | 'read'>,
  layout: StreamLayout,
  region: Buffer,
  length: number,
  position: number,
): Promise<number> {
  let done = 0;
  for (const piece of layout.pieces(position, length)) {
    let got: number;
    try {
      got = await target.read(region, piece.bufferOffset, piece.length, piece.deviceOffset);
    } catch (error) {
      throw targetReadFailure(target.path, error, piece.deviceOffset);
    }
    done += got;
    if (got < piece.length) break;
  }
  return done;
}

/**
 * Reads every target back with direct I/O (the page cache would only tell us what we wrote, not
 * what the card stored) and compares it grain by grain with the hashes taken while writing.
 * Targets are verified at the same time, each through its own two slices of the buffer.
 */
export async function verifyWritten(args: VerifyWrittenArgs): Promise<Map<WriteTarget, VerifyOutcome>> {
  const { targets, chunk, imageBytes, layout, hashes, job, emit } = args;
  const slice = alignDown(Math.floor(chunk.length / targets.length / 2), hashes.grain);
  const againstHashes = grainCheck(hashes);
  const outcomes = await Promise.all(
    targets.map(async (target, i): Promise<VerifyOutcome> => {
      const base = 2 * i * slice;
      const meter = new ProgressMeter('verifying', target.path, imageBytes, emit);
      let compared: Comparison;
      try {
        compared = await compareRead({
          halves: [chunk.subarray(base, base + slice), chunk.subarray(base + slice, base + 2 * slice)],
          from: 0,
          length: imageBytes,
          read: (region, length, position) => readSpan(target, layout, region, length, position),
          check: async (bytes, position, differences) => {
            const clean = differences.first < 0;
            againstHashes(bytes, position, differences);
            if (clean && differences.first >= 0)
              differences.first = await pinpoint(job, layout, bytes, position, differences.first, hashes.grain);
          },
          advanced: (at) => meter.update(at),
          signal: job.signal,
        });
      } catch (error) {
        return { status: 'failed', failure: toFailure(error) };
      }
      if (compared.end === 'cancelled') return { status: 'cancelled' };
      if (compared.at < imageBytes) {
        const end = layout.deviceOffset(compared.at);
        return {
          status: 'failed',
          failure: {
            code: 'verify-read-error',
            message: `${target.path} ended at byte ${end} while being verified.`,
            offset: end,
          },
        };
      }
      meter.finish();
      const failure = grainMismatch(
        compared.differences,
        (count, first) =>
          `Verification failed on ${target.path}: ${count === 1 ? '1 block' : `${count} blocks`} of ${formatBytes(hashes.grain)} ${count === 1 ? 'differs' : 'differ'} from the image, the first at byte offset ${first}. The card may be counterfeit or failing; try another card.`,
      );
      return failure === null ? null : { status: 'failed', failure, differences: compared.differences };
    }),
  );
  return new Map(targets.map((t, i) => [t, outcomes[i] ?? null]));
}

/**
 * The device offset of the exact first differing byte inside a bad grain (given as a stream
 * offset), when the image can be re-read at that offset; otherwise the grain's own offset. Runs
 * once per target, only on failure, so its small allocation is off the hot path.
 */
async function pinpoint(
  job: VerifyWrittenArgs['job'],
  layout: StreamLayout,
  deviceBytes: Buffer,
  position: number,
  grainOffset: number,
  grain: number,
): Promise<number> {
  if (!job.sourceSeekable || layout.sparse) return layout.deviceOffset(grainOffset);
  const start = grainOffset - position;
  const device = deviceBytes.subarray(start, Math.min(start + grain, deviceBytes.length));
  const image = Buffer.allocUnsafe(device.length);
  const got = await readFully(job.source, image, 0, device.length, grainOffset).catch(() => 0);
  const at = firstDifference(image.subarray(0, got), device);
  return at < 0 ? grainOffset : grainOffset + at;
}

/**
 * Repair after a verification that found blocks (hash grains) differing from the image: only
 * those blocks are got from the image again, checked against the hashes taken when they were
 * first written, written again and read back, up to MAX_ROUNDS times each. A card that stored a
 * block wrong once (a weak cell, a glitch in the reader) ends up verified; one that keeps
 * corrupting the same block is failing, and the result says where.
 *
 * Grains are counted in stream bytes, as the hashes are; where the stream left ranges out (a
 * block map, free space) a grain's bytes lie in pieces on the device, and only those pieces, which
 * were written the first time, are asked for, written and read back. Customisation is written
 * after this (flash.ts step 6) and read back on its own, so a repaired grain it touches gets it on
 * top like every other.
 */
import { MAX_EXTENTS, MAX_REPAIR_BYTES } from '../common/contracts/helper-protocol.js';
import type { Extent } from '../common/domain/extents.js';
import { JobError, jobError, type Failure } from '../common/domain/failure.js';
import { MAX_REPAIR_OFFSETS, type Repair } from '../common/domain/result.js';
import type { Progress } from '../common/domain/progress.js';
import { readFully } from '../node/io.js';
import { alignedMemory } from './job-memory.js';
import { ProgressMeter } from './progress-meter.js';
import type { Differences } from './compare.js';
import type { GrainHashes } from './grain-hashes.js';
import type { RepairSource } from './repair-inbox.js';
import type { Piece, StreamLayout } from './stream-layout.js';
import { readSpan } from './verify-written.js';
import type { WriteTarget } from './write-target.js';

/** Rounds of rewriting before a block that keeps reading back wrong is called failing. */
export const MAX_ROUNDS = 3;

export interface RepairArgs {
  target: WriteTarget;
  /** What verification found, and the failure it would be without a repair. */
  differences: Differences;
  failure: Failure;
  /** Stream bytes written (the hashes are keyed by stream offset). */
  imageBytes: number;
  layout: StreamLayout;
  hashes: GrainHashes;
  /** An aligned region of the job memory, at least two grains long: the image's grain, then what the card gives back. */
  region: Buffer;
  /** An aligned block-sized region, for a partial last block. */
  scratch: Buffer;
  /** Where the image's bytes come from again (the image file, the source disk of a clone, or the unprivileged side's decoding); null when they cannot be had. */
  source: RepairSource | null;
  signal?: AbortSignal | undefined;
  /** Progress while the image is read or decoded again towards the blocks ('repairing'). */
  emit?: ((progress: Progress) => void) | undefined;
}

export type RepairOutcome = { repaired: Repair } | { failure: Failure } | { cancelled: true };

/** `failure` with a sentence added to its message. */
function adding(failure: Failure, sentence: string): { failure: Failure } {
  return { failure: { ...failure, message: `${failure.message} ${sentence}` } };
}

/** Bytes read per request when a repair reads its source itself. */
const SOURCE_READ = 256 * 1024;

/**
 * Reads a source again at device offsets, where the helper holds it itself: the image file on fd
 * 0 (`what`: "The image file"), or a clone's source disk ("The source drive"). The buffer is its
 * own page-aligned memory, since a disk is opened with direct I/O, which refuses Node's Buffers.
 */
export function fileRepairSource(fd: number, what: string): RepairSource {
  return {
    what,
    async read(ranges, take, signal) {
      // Off the data path, once per repair.
      const buffer = Buffer.from(alignedMemory(SOURCE_READ).buffer, 0, SOURCE_READ);
      for (const [offset, length] of ranges) {
        for (let at = 0; at < length; at += buffer.length) {
          if (signal?.aborted === true) return 'cancelled';
          const want = Math.min(buffer.length, length - at);
          const got = await readFully(fd, buffer, 0, want, offset + at);
          if (got < want)
            throw jobError(
              'source-truncated',
              `${what} ends at byte ${offset + at + got} now; it was longer when it was written.`,
              { offset: offset + at + got },
            );
          await take(buffer.subarray(0, want));
        }
      }
      return 'done';
    },
  };
}

/** One grain to rewrite: its stream offset and length, and where its bytes lie on the device. */
interface Grain {
  at: number;
  length: number;
  pieces: Piece[];
}

/** The device offset of byte `i` of a grain laid out as `pieces`. */
function deviceByte(pieces: readonly Piece[], i: number): number {
  const piece = pieces.find((p) => i >= p.bufferOffset && i < p.bufferOffset + p.length) ?? pieces[0];
  return piece === undefined ? 0 : piece.deviceOffset + Math.max(0, i - piece.bufferOffset);
}

/** Device ranges of `grains`' pieces, in order, adjacent ones joined. */
function rangesOf(grains: readonly Grain[]): Extent[] {
  const ranges: [number, number][] = [];
  for (const { pieces } of grains) {
    for (const { deviceOffset, length } of pieces) {
      const last = ranges[ranges.length - 1];
      if (last !== undefined && last[0] + last[1] === deviceOffset) last[1] += length;
      else ranges.push([deviceOffset, length]);
    }
  }
  return ranges;
}

/** `grains` in batches that each fit one request: at most MAX_EXTENTS ranges and MAX_REPAIR_BYTES bytes. */
function batches(grains: readonly Grain[]): Grain[][] {
  const out: Grain[][] = [];
  let batch: Grain[] = [];
  for (const grain of grains) {
    const next = [...batch, grain];
    if (
      batch.length > 0 &&
      (rangesOf(next).length > MAX_EXTENTS || next.reduce((sum, g) => sum + g.length, 0) > MAX_REPAIR_BYTES)
    ) {
      out.push(batch);
      batch = [grain];
    } else batch = next;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** The image's bytes of a grain did not match its hash: the source changed, or its other side lied. */
class SourceDiffers extends Error {
  constructor(readonly offset: number) {
    super(`the image differs at ${offset}`);
  }
}

class Cancelled extends Error {}

/** The card failed while a grain was rewritten: that is the target's failure, not the source's. */
class TargetTrouble extends Error {
  constructor(readonly error: unknown) {
    super('the card failed during a repair');
  }
}

/**
 * Writes one grain (its image bytes in `image`) until it reads back right into `back`, at most
 * MAX_ROUNDS times; resolves null once it does, or the device offset of the first byte still
 * wrong. Each round is synced before it is read back, so the card, not its cache, answers.
 */
async function rewriteGrain(args: RepairArgs, grain: Grain, image: Buffer, back: Buffer): Promise<number | null> {
  const { target, scratch, layout, signal } = args;
  let wrong = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (signal?.aborted === true) throw new Cancelled();
    for (const piece of grain.pieces)
      await target.write(image, piece.bufferOffset, piece.length, piece.deviceOffset, scratch);
    await target.sync();
    const got = await readSpan(target, layout, back, grain.length, grain.at);
    wrong = 0;
    while (wrong < got && image[wrong] === back[wrong]) wrong++;
    if (wrong === grain.length) return null;
  }
  return deviceByte(grain.pieces, wrong);
}

/**
 * Rewrites the grains verification found bad, each from the image's bytes got again from
 * `source` and checked against its hash, until they read back right or MAX_ROUNDS have passed.
 */
export async function repairGrains(args: RepairArgs): Promise<RepairOutcome> {
  const { differences, failure, layout, hashes, region, source, signal, imageBytes } = args;
  if (differences.count > differences.noted.length) return { failure };
  if (source === null)
    return adding(
      failure,
      'They could not be rewritten: the source cannot be read again here. Flash again, or use another card.',
    );
  const image = region.subarray(0, hashes.grain);
  const back = region.subarray(hashes.grain, 2 * hashes.grain);
  if (back.length < hashes.grain) throw new Error('a repair needs two grains of memory');
  const grains = differences.noted.map((at): Grain => {
    const length = Math.min(hashes.grain, imageBytes - at);
    return { at, length, pieces: layout.pieces(at, length) };
  });
  /** The device offset of the first byte still wrong, per grain that stayed bad. */
  const failing: number[] = [];
  try {
    for (const batch of batches(grains)) {
      let index = 0;
      let filled = 0;
      const take = async (bytes: Buffer): Promise<void> => {
        for (let at = 0; at < bytes.length;) {
          const grain = batch[index];
          if (grain === undefined)
            throw jobError('internal', 'The image source gave more bytes than the repair asked for.');
          const n = Math.min(grain.length - filled, bytes.length - at);
          bytes.copy(image, filled, at, at + n);
          filled += n;
          at += n;
          if (filled < grain.length) continue;
          let differs = false;
          hashes.compare(image.subarray(0, grain.length), grain.at, () => (differs = true));
          if (differs) throw new SourceDiffers(grain.pieces[0]?.deviceOffset ?? grain.at);
          const wrong = await rewriteGrain(args, grain, image, back).catch((error: unknown) => {
            throw error instanceof Cancelled ? error : new TargetTrouble(error);
          });
          if (wrong !== null) failing.push(wrong);
          index += 1;
          filled = 0;
        }
      };
      const ranges = rangesOf(batch);
      const [lastOffset, lastLength] = ranges[ranges.length - 1] ?? [0, 0];
      const meter = new ProgressMeter('repairing', args.target.path, lastOffset + lastLength, (p) => args.emit?.(p));
      const end = await source.read(ranges, take, signal, (decoded) =>
        meter.update(Math.min(decoded, lastOffset + lastLength)),
      );
      if (end === 'cancelled') return { cancelled: true };
      if (index < batch.length)
        throw jobError('internal', 'The image source ended before the blocks the repair asked for.');
    }
  } catch (error) {
    if (error instanceof Cancelled) return { cancelled: true };
    if (error instanceof TargetTrouble) throw error.error;
    if (error instanceof SourceDiffers) {
      return adding(
        failure,
        `${source.what} differs from what was written at byte offset ${error.offset} (it changed since, or its reader is faulty), so the blocks could not be rewritten from it. Flash again.`,
      );
    }
    if (error instanceof JobError) return adding(failure, `They could not be rewritten: ${error.failure.message}`);
    throw error;
  }
  const first = failing[0];
  if (first === undefined) {
    return {
      repaired: {
        blocks: grains.length,
        offsets: grains.slice(0, MAX_REPAIR_OFFSETS).map((g) => layout.deviceOffset(g.at)),
        blockBytes: hashes.grain,
      },
    };
  }
  return {
    failure: {
      code: 'verify-mismatch',
      message: `The card keeps corrupting the block at byte offset ${first}: it was written again ${MAX_ROUNDS} times and read back wrong each time${failing.length > 1 ? ` (and ${failing.length - 1} more ${failing.length === 2 ? 'block' : 'blocks'} with it)` : ''}. It is failing; use another card.`,
      offset: first,
      badBlocks: failing.length,
    },
  };
}

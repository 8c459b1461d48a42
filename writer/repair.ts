/**
 * Repair after a verification that found blocks (hash grains) differing from the image: only
 * those blocks are read from the image again, written again and read back, up to MAX_ROUNDS
 * times. A card that stored a block wrong once (a weak cell, a glitch in the reader) ends up
 * verified; one that keeps corrupting the same block is failing, and the result says where.
 */
import type { Failure } from '../common/domain/failure.js';
import { MAX_REPAIR_OFFSETS, type Repair } from '../common/domain/result.js';
import { readFully } from '../node/io.js';
import type { Differences } from './compare.js';
import type { GrainHashes } from './grain-hashes.js';
import type { StreamLayout } from './stream-layout.js';
import type { WriteTarget } from './write-target.js';

/** Rounds of rewriting before a block that keeps reading back wrong is called failing. */
export const MAX_ROUNDS = 3;

export interface RepairArgs {
  target: WriteTarget;
  /** What verification found, and the failure it would be without a repair. */
  differences: Differences;
  failure: Failure;
  imageBytes: number;
  layout: StreamLayout;
  hashes: GrainHashes;
  /** An aligned region of the job memory, at least a grain and a block long. */
  region: Buffer;
  /** An aligned block-sized region, for a partial last block. */
  scratch: Buffer;
  job: { source: number; sourceSeekable: boolean; signal?: AbortSignal | undefined };
}

export type RepairOutcome = { repaired: Repair } | { failure: Failure } | { cancelled: true };

/** `failure` with a sentence added to its message. */
function adding(failure: Failure, sentence: string): { failure: Failure } {
  return { failure: { ...failure, message: `${failure.message} ${sentence}` } };
}

/** The grains among `grains` that read back from the target other than the hashes say. */
async function stillBad(args: RepairArgs, grains: readonly number[]): Promise<number[]> {
  const { target, region, hashes, imageBytes } = args;
  const bad: number[] = [];
  for (const grain of grains) {
    const length = Math.min(hashes.grain, imageBytes - grain);
    const got = await target.read(region, 0, length, grain);
    if (got < length) bad.push(grain);
    else hashes.compare(region.subarray(0, length), grain, () => bad.push(grain));
  }
  return bad;
}

/**
 * Rewrites the grains verification found bad, from the image, until they read back right or
 * MAX_ROUNDS have passed. Only an image read straight from its file can be read again: a stream
 * (decoded, downloaded, or passed on by an elevation tool) would have to be decoded again from the
 * start, which this process cannot ask for, so that case keeps verification's failure and says why.
 */
export async function repairGrains(args: RepairArgs): Promise<RepairOutcome> {
  const { target, differences, failure, layout, hashes, region, scratch, job, imageBytes } = args;
  if (differences.count > differences.noted.length) return { failure };
  if (!job.sourceSeekable || layout.sparse) {
    return adding(failure, 'They could not be rewritten: the image reached the writer as a stream (decoded, downloaded, or passed on by the elevation tool), which cannot be read again here. Flash again, or use another card.');
  }
  const grains = differences.noted;
  let bad: readonly number[] = grains;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (job.signal?.aborted === true) return { cancelled: true };
    for (const grain of bad) {
      const length = Math.min(hashes.grain, imageBytes - grain);
      const got = await readFully(job.source, region, 0, length, grain);
      let changed = got < length;
      if (!changed) hashes.compare(region.subarray(0, length), grain, () => (changed = true));
      if (changed) return adding(failure, `The image file changed since it was written (at byte offset ${grain}), so the blocks could not be rewritten from it. Flash again.`);
      await target.write(region, 0, length, grain, scratch);
    }
    await target.sync();
    bad = await stillBad(args, bad);
    if (bad.length === 0) return { repaired: { blocks: grains.length, offsets: grains.slice(0, MAX_REPAIR_OFFSETS), blockBytes: hashes.grain } };
  }
  // Verification pinned the first bad block down to its byte, when it could: name that byte if it is still bad.
  const firstGrain = bad[0] ?? differences.first;
  const first = differences.first >= firstGrain && differences.first < firstGrain + hashes.grain ? differences.first : firstGrain;
  return {
    failure: {
      code: 'verify-mismatch',
      message: `The card keeps corrupting the block at byte offset ${first}: it was written again ${MAX_ROUNDS} times and read back wrong each time${bad.length > 1 ? ` (and ${bad.length - 1} more ${bad.length === 2 ? 'block' : 'blocks'} with it)` : ''}. It is failing; use another card.`,
      offset: first,
      badBlocks: bad.length,
    },
  };
}

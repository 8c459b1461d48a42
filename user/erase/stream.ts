import { Readable } from 'node:stream';
import { MiB } from '../../common/domain/units.js';
import type { ErasePlan } from './volume.js';

/** The stream is made in pieces of this size: memory stays flat whatever the FAT's size (64 MiB on a 2 TB card). */
const PIECE_BYTES = MiB;

/** The bytes of the plan's ranges, concatenated in order: what the helper's fd 0 carries for a block-mapped flash. */
export function* planBytesOf(plan: Pick<ErasePlan, 'extents' | 'patches'>): Generator<Buffer> {
  for (const [offset, length] of plan.extents) {
    for (let at = offset; at < offset + length; at += PIECE_BYTES) {
      const piece = Buffer.alloc(Math.min(PIECE_BYTES, offset + length - at));
      for (const patch of plan.patches) {
        const from = Math.max(at, patch.offset);
        const to = Math.min(at + piece.length, patch.offset + patch.bytes.length);
        if (from < to) piece.set(patch.bytes.subarray(from - patch.offset, to - patch.offset), from - at);
      }
      yield piece;
    }
  }
}

export function planStream(plan: Pick<ErasePlan, 'extents' | 'patches'>): Readable {
  return Readable.from(planBytesOf(plan), { objectMode: false });
}

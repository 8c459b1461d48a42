/**
 * What a flash of a prepared image leaves out before it starts (as `leaveOut` allows): the
 * publisher's block map, and the free space the probe found in an image read in place. The rest
 * (a stream's free space) the decoder finds as it goes (decode/image-sink.ts).
 */
import {
  extentBytes,
  intersectExtents,
  mergeExtents,
  subtractExtents,
  type Extent,
} from '../../../common/domain/extents.js';
import { tallySkipped, type Skipped } from '../../../common/domain/skipped.js';
import { mappedExtents } from './mapped-extents.js';
import type { PreparedImage } from '../probe/probe.js';

/**
 * What a job may leave out: what the block map leaves out and the free space found (a drive, by
 * default), only what the block map leaves out (a file, written as a copy of the image), or
 * nothing (--exact, "Write every byte").
 */
export type LeaveOut = 'all' | 'unmapped' | 'nothing';

export interface WrittenExtents {
  /** The ranges the stream carries (the job's and the decoder's map's extents); null: the whole image. */
  extents: [number, number][] | null;
  /** What is left out, and why. */
  skipped: Skipped[];
}

export function writtenExtents(prepared: PreparedImage, leaveOut: LeaveOut): WrittenExtents {
  if (leaveOut === 'nothing') return { extents: null, skipped: [] };
  const size = prepared.imageSize;
  const mapped = prepared.extents;
  const skipped: Skipped[] = [];
  const blockMap = prepared.info.blockMap;
  if (size !== null && mapped !== null && blockMap !== null)
    tallySkipped(skipped, { kind: 'block-map', from: blockMap.from }, size - extentBytes(mapped));
  const free = leaveOut === 'all' ? (prepared.freeSpace ?? []) : [];
  if (size === null || free.length === 0) return { extents: mapped, skipped };
  const base: Extent[] = mapped ?? [[0, size]];
  const kept = subtractExtents(base, mergeExtents(free.flatMap((f) => f.extents)));
  // Merged back to what a job message holds: a gap merged over is written, which is always right.
  const extents = mappedExtents(
    kept.map(([offset, length]) => ({ offset, length })),
    size,
  );
  const leftOut = subtractExtents(base, extents);
  for (const f of free) tallySkipped(skipped, f.reason, extentBytes(intersectExtents(f.extents, leftOut)));
  return { extents, skipped };
}

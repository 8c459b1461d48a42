/**
 * The rule (common/domain/skipped.ts) applied to an image: finds its partition table, reads each
 * listed partition's filesystem where Sluice knows it, and hands on the free space that may be
 * left unwritten, as soon as it is known. What it hands on is only ever free space of a
 * filesystem, inside its own partition, clear of every other partition, of the partition table
 * and of the image's first MiB (which the writer keeps aside and writes last), in whole 4 KiB
 * blocks, and in runs long enough to be worth a gap in the writing.
 * It runs as the user: in the probe for images read in place, in the decoder for streams.
 */
import { intersectExtents, mergeExtents, subtractExtents, type Extent } from '../../../common/domain/extents.js';
import type { SkipReason } from '../../../common/domain/skipped.js';
import { KiB, MiB } from '../../../common/domain/units.js';
import { EXTENT_ALIGN } from '../../../writer/stream-layout.js';
import { filesystemLabel, FILESYSTEM_SNIFF_BYTES } from '../formats/partition-table.js';
import { extFree, extSuperblock } from './ext.js';
import { fatBootSector, fatFree } from './fat.js';
import type { ReadImage } from './image-reader.js';
import { readPartitionLayout, type ListedPartition } from './partitions.js';

/**
 * Free runs shorter than this are written all the same: each gap splits a write request in two,
 * and a card pays for a request more than for a few KiB more in it.
 */
export const MIN_FREE_RUN = 128 * KiB;
/** The writer keeps the image's first MiB aside and writes it last (writer/flash.ts HEAD_BYTES): never left out. */
const KEPT_HEAD = 1 * MiB;

/** Free space of one partition's filesystem that may be left unwritten. */
export interface FreeSpace {
  reason: Extract<SkipReason, { kind: 'free-space' }>;
  /** Sorted, disjoint, 4 KiB aligned image byte ranges. */
  extents: Extent[];
}

/** [offset, length] rounded inwards to whole aligned blocks; runs shorter than MIN_FREE_RUN dropped. */
function usable(extents: readonly Extent[]): Extent[] {
  const out: Extent[] = [];
  for (const [offset, length] of extents) {
    const start = Math.ceil(offset / EXTENT_ALIGN) * EXTENT_ALIGN;
    const end = Math.floor((offset + length) / EXTENT_ALIGN) * EXTENT_ALIGN;
    if (end - start >= MIN_FREE_RUN) out.push([start, end - start]);
  }
  return out;
}

/** Everything but `partition` that lies in the image and may not be left out: other partitions, the tables, the head. */
function keptAround(partition: ListedPartition, all: readonly ListedPartition[], tables: readonly Extent[]): Extent[] {
  const others = all.filter((p) => p !== partition).map((p): Extent => [p.offset, p.size]);
  return mergeExtents([...others, ...tables, [0, KEPT_HEAD]]);
}

/**
 * Reads the image through `read` and calls `found` with each partition's free space as it learns
 * it (for a stream: before the stream reaches it). `imageSize` bounds every partition where it is
 * known. Never throws for what the image holds: what it cannot read is simply not free.
 */
export async function findFreeSpace(
  read: ReadImage,
  imageSize: number | null,
  found: (free: FreeSpace) => void,
): Promise<void> {
  const layout = await readPartitionLayout(read);
  if (layout === null) return;
  const partitions = [...layout.partitions].sort((a, b) => a.offset - b.offset);
  for (const partition of partitions) {
    if (partition.container) continue;
    const size = imageSize === null ? partition.size : Math.min(partition.size, imageSize - partition.offset);
    if (size <= 0) continue;
    const head = await read(partition.offset, FILESYSTEM_SNIFF_BYTES);
    if (head === null) continue;
    const kept = keptAround(partition, partitions, layout.tables);
    const within: Extent[] = [[partition.offset, size]];
    const ext = extSuperblock(head, size);
    const fat = ext === null ? fatBootSector(head, size) : null;
    const filesystem = ext?.filesystem ?? fat?.filesystem;
    if (filesystem === undefined) continue;
    const reason: FreeSpace['reason'] = {
      kind: 'free-space',
      partition: partition.number,
      label: filesystemLabel(head),
      filesystem,
    };
    const hand = (extents: Extent[]) => {
      const free = usable(subtractExtents(intersectExtents(mergeExtents(extents), within), kept));
      if (free.length > 0) found({ reason, extents: free });
    };
    if (ext !== null) await extFree(read, partition.offset, ext, hand);
    else if (fat !== null) await fatFree(read, partition.offset, fat, hand);
  }
}

/**
 * All the free space of an image read in place, one entry per partition with its ranges merged;
 * past `maxRanges` ranges in all, the shortest are written after all.
 */
export async function freeSpaceOf(read: ReadImage, imageSize: number, maxRanges: number): Promise<FreeSpace[]> {
  const found = new Map<number, FreeSpace>();
  await findFreeSpace(read, imageSize, (free) => {
    const seen = found.get(free.reason.partition);
    found.set(free.reason.partition, { reason: free.reason, extents: [...(seen?.extents ?? []), ...free.extents] });
  });
  const all = [...found.values()].map((f) => ({ reason: f.reason, extents: mergeExtents(f.extents) }));
  const lengths = all.flatMap((f) => f.extents.map(([, length]) => length)).sort((a, b) => b - a);
  if (lengths.length <= maxRanges) return all;
  const shortest = lengths[maxRanges - 1] ?? Number.POSITIVE_INFINITY;
  // Of the runs as long as the shortest kept, only as many as there is room for.
  let ties = maxRanges - lengths.filter((length) => length > shortest).length;
  return all.map((f) => ({
    reason: f.reason,
    extents: f.extents.filter(([, length]) => length > shortest || (length === shortest && ties-- > 0)),
  }));
}

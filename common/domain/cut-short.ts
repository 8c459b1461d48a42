/**
 * An image that ends before its own partition table says it does was cut short: an interrupted
 * download or copy. Written to a drive, the partitions that reach past its end hold whatever the
 * drive held there before, and the system on it fails in ways that point anywhere but here. The
 * CLI refuses it unless told to write it anyway (--allow-truncated); the app refuses it when it is
 * chosen, with these words.
 */
import type { Failure } from './failure.js';
import type { ImageInfo, PartitionEntry } from './image.js';
import { formatBytes } from './units.js';

/**
 * The partition that reaches furthest past the image's end; null when every one fits, or when the
 * size or the table is not known. GPT's protective MBR entry covers the whole disk by design and
 * is not a partition of the image.
 */
function partitionPastEnd(info: Pick<ImageInfo, 'size' | 'sizeExact' | 'partitionTable'>): PartitionEntry | null {
  const { size, partitionTable } = info;
  if (size === null || !info.sizeExact || partitionTable === null) return null;
  let furthest: PartitionEntry | null = null;
  for (const p of partitionTable.partitions) {
    if (p.type === 'GPT protective') continue;
    if (p.offset + p.size > size && (furthest === null || p.offset + p.size > furthest.offset + furthest.size))
      furthest = p;
  }
  return furthest;
}

/** Why `info`'s image must not be written as it is, as the CLI and the app both say it; null when nothing is wrong. */
export function cutShortFailure(
  info: Pick<ImageInfo, 'name' | 'size' | 'sizeExact' | 'partitionTable'>,
): Failure | null {
  const partition = partitionPastEnd(info);
  if (partition === null || info.size === null) return null;
  const end = partition.offset + partition.size;
  return {
    code: 'source-truncated',
    message: `${info.name} is cut short: it ends at ${formatBytes(info.size)} (${info.size} bytes), but its partition ${partition.number} reaches to ${formatBytes(end)} (${end} bytes). Written to a drive, that partition would be broken. Download or copy the image again.`,
    offset: info.size,
  };
}

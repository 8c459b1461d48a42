/**
 * What a flash leaves unwritten, and why: the one rule, stated once. A range of the drive may be
 * left as it is only when it is proven not to matter:
 * - it is free space of a filesystem Sluice has read (ext2/3/4 block bitmaps, a FAT), inside a
 *   partition the image's partition table lists, and nothing else lies there; or
 * - the publisher's block map (a .bmap) leaves it out.
 * Everything else is written and read back: partition tables, the gaps between partitions (where
 * bootloaders live), filesystem metadata and journals, partitions Sluice cannot read, and the zeros
 * a qcow2 or dmg leaves implicit. A stream (an .xz being decoded) counts a range as free only when
 * that was known before the stream reached it. `--exact` ("Write every byte") writes it all.
 */

import * as v from 'valibot';
import { ByteCount, Message } from './wire.js';

/** Filesystems whose free space Sluice can find. */
export const FILESYSTEM_NAMES = ['ext2', 'ext3', 'ext4', 'FAT12', 'FAT16', 'FAT32'] as const;
export type FilesystemName = (typeof FILESYSTEM_NAMES)[number];

/** Free space of the filesystem in a partition (its number as the OS counts it, its label if any). */
export const FreeSpaceReasonSchema = v.strictObject({
  kind: v.literal('free-space'),
  partition: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256)),
  label: v.nullable(v.pipe(v.string(), v.maxLength(64))),
  filesystem: v.picklist(FILESYSTEM_NAMES),
});

/** Why part of an image was not written: free space, or the publisher's block map (named by where it came from). */
export const SkipReasonSchema = v.variant('kind', [
  FreeSpaceReasonSchema,
  v.strictObject({ kind: v.literal('block-map'), from: Message }),
]);
export type SkipReason = v.InferOutput<typeof SkipReasonSchema>;

/** Bytes of the image left unwritten for one reason. */
export const SkippedSchema = v.strictObject({ reason: SkipReasonSchema, bytes: ByteCount });
export type Skipped = v.InferOutput<typeof SkippedSchema>;

/** Adds `bytes` to the tally for `reason` (tallies are few: one per partition, one for a map). */
export function tallySkipped(tallies: Skipped[], reason: SkipReason, bytes: number): void {
  if (bytes <= 0) return;
  const same = tallies.find((t) => sameReason(t.reason, reason));
  if (same !== undefined) same.bytes += bytes;
  else tallies.push({ reason, bytes });
}

function sameReason(a: SkipReason, b: SkipReason): boolean {
  if (a.kind === 'block-map') return b.kind === 'block-map' && a.from === b.from;
  return b.kind === 'free-space' && a.partition === b.partition;
}

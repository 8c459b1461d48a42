/**
 * The drive map reader's protocol (user/backup/drive-map/main.ts): the parent asks for the ranges a
 * backup of the used blocks reads; the reader asks for the drive's bytes it needs (its partition
 * table and filesystem maps), one range at a time, then answers with the used ranges or the
 * failure, and exits. The reader has just parsed a drive's filesystems, which anyone who had the
 * card may have shaped, so what it sends is checked here before the backup uses it.
 */
import * as v from 'valibot';
import { FailureSchema } from '../domain/failure.js';
import { ByteCount } from '../domain/wire.js';
import { MAX_EXTENTS } from './helper-protocol.js';

/**
 * Used ranges in one answer at most: 40 read messages of MAX_EXTENTS ranges and one more, fewer
 * than the helper holds (writer/read-requests.ts). The reader keeps out one free run fewer, the
 * shortest beyond are read after all (user/backup/drive-map/used-ranges.ts).
 */
export const MAX_USED_RANGES = 40 * MAX_EXTENTS + 1;

/** Parent → reader: map the drive's first `length` bytes. */
export const DriveMapRequest = v.strictObject({ type: v.literal('map'), length: ByteCount });
export type DriveMapRequest = v.InferOutput<typeof DriveMapRequest>;

/** Reader → parent, on the way: `length` bytes of the drive at `offset`, please. */
export const DriveMapQuestion = v.strictObject({ type: v.literal('read'), offset: ByteCount, length: ByteCount });
export type DriveMapQuestion = v.InferOutput<typeof DriveMapQuestion>;

/** Parent → reader: the bytes asked for, base64; fewer where the drive ends, null where none can be had. */
export const DriveMapBytes = v.strictObject({ type: v.literal('bytes'), base64: v.nullable(v.string()) });
export type DriveMapBytes = v.InferOutput<typeof DriveMapBytes>;

/** Reader → parent, last: the ranges to read, sorted and disjoint, or why there are none. */
export const DriveMapReply = v.variant('type', [
  v.strictObject({
    type: v.literal('used'),
    ranges: v.pipe(v.array(v.tuple([ByteCount, ByteCount])), v.maxLength(MAX_USED_RANGES)),
  }),
  v.strictObject({ type: v.literal('failed'), ...FailureSchema.entries }),
]);
export type DriveMapReply = v.InferOutput<typeof DriveMapReply>;

import * as v from 'valibot';
import { ByteCount, DevicePath } from './wire.js';

/**
 * What a job is doing. The writer reports `writing`, `syncing` and `verifying`; while it writes, the
 * side that feeds it renames `writing` to `downloading` or `decompressing` whenever the writer's own
 * measure (`limit`) says it waits for its source, and the source is a download or a decoder
 * (common/app/bottleneck.ts). The bytes counted are still those written. `repairing` follows a
 * read-back that found bad blocks: the image is read (or decoded, or downloaded) again up to the
 * last of them, counted in image bytes, and they are rewritten and read back (writer/repair.ts).
 * A backup reports `reading` while it reads its drive into the file, then `syncing` and
 * `verifying`, with `backup` set (BackupProgressSchema says what its bytes count).
 */
export const PHASES = [
  'downloading',
  'decompressing',
  'reading',
  'writing',
  'syncing',
  'verifying',
  'repairing',
] as const;
export type Phase = (typeof PHASES)[number];

/** Which side of the writer sets the speed, as measured over the last few seconds of writing. */
export const LimitSchema = v.strictObject({
  /** `source`: the writer waits for the image's bytes more than they wait for it; `drive`: the opposite. */
  by: v.picklist(['source', 'drive']),
  /** Share of the time the writer waited for the source's next bytes, its write already done. */
  sourceWait: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  /** Share of the time the source's next bytes were ready, waiting for the drive to finish a write. */
  driveWait: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
});
export type Limit = v.InferOutput<typeof LimitSchema>;

/**
 * What a backup's bytes are counted against. While it reads, bytesDone and bytesTotal count the bytes
 * read from the drive (its used blocks, and the tables and filesystem maps read to find them; every
 * byte with --all-blocks), not the image's length; while it verifies, the bytes read back from the
 * file (decoded, when compressed), which leaves out the holes of a sparse file.
 */
export const BackupProgressSchema = v.strictObject({
  /** The drive's size. */
  driveBytes: ByteCount,
  /** The image's length: the drive's size, or up to the last partition's end when trimmed. */
  imageBytes: ByteCount,
});
export type BackupProgress = v.InferOutput<typeof BackupProgressSchema>;

/** One progress report for one target. Emitted at most 4 times a second (writer/progress-meter.ts). */
export const ProgressSchema = v.strictObject({
  phase: v.picklist(PHASES),
  /** The target device (or a backup's file) this report is about. */
  target: DevicePath,
  /** Image bytes done in this phase. */
  bytesDone: ByteCount,
  /** Image bytes this phase will cover in all; null when the image size is not known in advance. */
  bytesTotal: v.nullable(ByteCount),
  /** Bytes per second, averaged over the last few seconds. */
  speed: v.pipe(v.number(), v.minValue(0)),
  /** Seconds left in this phase; null when the total is unknown or the speed not yet measurable. */
  eta: v.nullable(v.pipe(v.number(), v.minValue(0))),
  /** While writing: which side limits the speed; absent in other phases and before it is measured. */
  limit: v.optional(LimitSchema),
  /** A backup's figures, in every report of a backup. */
  backup: v.optional(BackupProgressSchema),
});
export type Progress = v.InferOutput<typeof ProgressSchema>;

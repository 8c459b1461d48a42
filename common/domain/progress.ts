import * as v from 'valibot';
import { ByteCount, DevicePath } from './wire.js';

/**
 * What a job is doing. The writer reports `writing`, `syncing` and `verifying`; while it writes, the
 * side that feeds it renames `writing` to `downloading` or `decompressing` whenever the writer's own
 * measure (`limit`) says it waits for its source, and the source is a download or a decoder
 * (common/app/bottleneck.ts). The bytes counted are still those written. `repairing` follows a
 * read-back that found bad blocks: the image is read (or decoded, or downloaded) again up to the
 * last of them, counted in image bytes, and they are rewritten and read back (writer/repair.ts).
 */
export const PHASES = ['downloading', 'decompressing', 'writing', 'syncing', 'verifying', 'repairing'] as const;
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
});
export type Progress = v.InferOutput<typeof ProgressSchema>;

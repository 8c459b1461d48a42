import * as v from 'valibot';
import { ByteCount, DevicePath } from './wire.js';

/**
 * What a job is doing. `decompressing` is reported by the decoder side while the writer has not
 * yet received bytes; the writer itself reports the other three.
 */
export const PHASES = ['decompressing', 'writing', 'syncing', 'verifying'] as const;
export type Phase = (typeof PHASES)[number];

/** One progress report for one target. Emitted at most about 10 times a second. */
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
});
export type Progress = v.InferOutput<typeof ProgressSchema>;

import * as v from 'valibot';
import { FailureSchema, REFUSAL_CODES, type Failure } from './failure.js';
import { ByteCount, DevicePath, Message } from './wire.js';

/** Warnings on one ok result: eject and partition re-read give at most one each. */
const MAX_WARNINGS = 4;

/**
 * How one target's job ended. Only `ok` may ever be shown as success. `bytes` counts image bytes
 * the job got through on this target: written (a flash) or compared (verify-only); for a failed
 * or cancelled flash, how far writing got before it stopped. The one definition: the helper's
 * results are checked against it on arrival, and the type is inferred from it.
 */
export const TargetResultSchema = v.variant('status', [
  v.strictObject({
    status: v.literal('ok'),
    target: DevicePath,
    bytes: ByteCount,
    /** False for a verify-only job, which reads the device and never writes it. */
    written: v.boolean(),
    /** Whether the device was read back and compared; false only when the user turned verification off. */
    verified: v.boolean(),
    /** Wall-clock seconds from opening the device to the end of verification. */
    seconds: v.pipe(v.number(), v.minValue(0)),
    /** The drive got its customisation (first-boot settings) after the image, read back and compared; absent without one. */
    customised: v.optional(v.boolean()),
    /** The drive was ejected (powered off) afterwards and can be pulled out; absent when ejecting was not asked for. */
    ejected: v.optional(v.boolean()),
    /**
     * What went wrong after the image was safely written and verified: ejecting, or making the
     * OS see the new partitions. Never a reason to call the flash failed.
     */
    warnings: v.optional(v.pipe(v.array(Message), v.maxLength(MAX_WARNINGS))),
  }),
  v.strictObject({ status: v.literal('cancelled'), target: DevicePath, bytes: ByteCount }),
  v.strictObject({ status: v.literal('failed'), target: DevicePath, bytes: ByteCount, ...FailureSchema.entries }),
]);
export type TargetResult = v.InferOutput<typeof TargetResultSchema>;

export type TargetStatus = TargetResult['status'];

/** The state a drive is left in once a flash that reached it failed: said at the end of the failure. */
export const DRIVE_INCOMPLETE = 'The drive is incomplete; flash it again before use.';

/**
 * `result` for a drive that bytes of the job reached (its partition table blanked, the image
 * partly written): a failure ends by saying the drive is incomplete, once. A refusal stands as
 * it is; nothing was written. This is the one place a flash's failures get the drive's state.
 */
export function reachedDrive(result: TargetResult): TargetResult {
  if (result.status !== 'failed' || REFUSAL_CODES.has(result.code) || saysDriveIncomplete(result)) return result;
  return { ...result, message: `${result.message} ${DRIVE_INCOMPLETE}` };
}

/** Whether `result` says that bytes reached its drive (see reachedDrive). */
export function saysDriveIncomplete(result: TargetResult): boolean {
  return result.status === 'failed' && result.message.endsWith(DRIVE_INCOMPLETE);
}

/** A job succeeded only if every target it was given ended `ok`. */
export function jobSucceeded(results: readonly TargetResult[]): boolean {
  return results.length > 0 && results.every((r) => r.status === 'ok');
}

/**
 * How the unprivileged side that produced the image stream (a decoder, a download) says it ended:
 * every byte sent, or the failure that stopped it (a corrupt archive, a checksum mismatch).
 */
export type SourceEnd =
  /** `bytes` is what the source side sent, or null when a tool wrote to the pipe uncounted. */
  { ok: true; bytes: number | null } | { ok: false; failure: Failure };

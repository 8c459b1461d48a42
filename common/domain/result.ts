import * as v from 'valibot';
import { FailureSchema, REFUSAL_CODES, type Failure } from './failure.js';
import { SkippedSchema } from './skipped.js';
import { ByteCount, DevicePath, Message } from './wire.js';
import { BACKUP_COMPRESSIONS } from './backup-compression.js';
import { errorText } from './error-details.js';

/** Warnings on one ok result: eject and partition re-read give at most one each. */
const MAX_WARNINGS = 4;
/** Reasons for what was left out: one per partition and one for a block map, far fewer than this. */
const MAX_SKIP_REASONS = 64;

/** A repair names at most this many of the blocks it rewrote. */
export const MAX_REPAIR_OFFSETS = 16;

/** The capacity check of a flash that passed: how many markers past the image came back, and what they cost. */
const CapacityCheckSchema = v.strictObject({
  markers: ByteCount,
  /** Seconds spent writing and reading the markers. */
  seconds: v.pipe(v.number(), v.minValue(0)),
});

/** What a backup read of its drive and what its file takes, for the end of the job. */
export const BackupFiguresSchema = v.strictObject({
  /** The drive's size. */
  driveBytes: ByteCount,
  /** Bytes read from the drive: the used ranges and the maps read to find them (all of it with every block). */
  readBytes: ByteCount,
  /** Of readBytes, those of the tables and filesystem maps read to find the used blocks (read again where used). */
  mapBytes: ByteCount,
  /** The file's size on disk (its allocated blocks: a sparse file's holes take none). */
  fileBytes: ByteCount,
  /** The file's length, holes included (its apparent size): the image's length unless compressed. */
  fileLength: ByteCount,
  /** The format the image was compressed into; absent for a raw (sparse) image. */
  compression: v.optional(v.picklist(BACKUP_COMPRESSIONS)),
  /** The file's length before --shrink cut it; absent when it was not shrunk. */
  shrunkFrom: v.optional(ByteCount),
});
export type BackupFigures = v.InferOutput<typeof BackupFiguresSchema>;

/** Blocks that read back wrong, were written again from the image, and then read back right. */
const RepairSchema = v.strictObject({
  /** How many verification blocks (hash grains) were rewritten. */
  blocks: ByteCount,
  /** Their byte offsets on the drive, the first MAX_REPAIR_OFFSETS of them. */
  offsets: v.pipe(v.array(ByteCount), v.maxLength(MAX_REPAIR_OFFSETS)),
  /** The size of one block, in bytes. */
  blockBytes: ByteCount,
});
export type Repair = v.InferOutput<typeof RepairSchema>;

/** The words for a repair, on the CLI's result line and the app's end screen: "repaired 1 block at offset 52428800". */
export function repairWords(repair: Repair): string {
  const more = repair.blocks > repair.offsets.length ? ` and ${repair.blocks - repair.offsets.length} more` : '';
  return `repaired ${repair.blocks === 1 ? '1 block' : `${repair.blocks} blocks`} at ${repair.offsets.length === 1 ? 'offset' : 'offsets'} ${repair.offsets.join(', ')}${more}`;
}

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
    /**
     * Image bytes left unwritten (a verify: not compared) under the rule of common/domain/skipped.ts:
     * free space, or what a block map leaves out. Absent when every byte was written.
     */
    skipped: v.optional(ByteCount),
    /**
     * Why, reason by reason (the free space of each partition, the block map): the unprivileged
     * side that found them adds this to the helper's result, which knows only the count.
     */
    skippedFor: v.optional(v.pipe(v.array(SkippedSchema), v.maxLength(MAX_SKIP_REASONS))),
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
    /** The capacity check passed: every marker past the image came back. Absent when it did not run. */
    capacityCheck: v.optional(CapacityCheckSchema),
    /** Verification found blocks that differed, and rewriting them fixed them. */
    repaired: v.optional(RepairSchema),
    /** A backup: what was read of the drive, and what the file takes. */
    backup: v.optional(BackupFiguresSchema),
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
  // A fake drive holds the whole image, verified: what to do about it is to stop using it, which its message says.
  if (
    result.status !== 'failed' ||
    REFUSAL_CODES.has(result.code) ||
    result.code === 'target-fake-capacity' ||
    saysDriveIncomplete(result)
  )
    return result;
  return { ...result, message: `${result.message} ${DRIVE_INCOMPLETE}` };
}

/** Whether `result` says that bytes reached its drive (see reachedDrive). */
export function saysDriveIncomplete(result: TargetResult): boolean {
  return result.status === 'failed' && result.message.endsWith(DRIVE_INCOMPLETE);
}

/**
 * The result for `target` when the helper could not be started: `process` names it as the user
 * knows it ("checking"), `untouched` says what that left as it was ("Nothing was written.").
 */
export function helperNotStarted(target: string, process: string, error: unknown, untouched: string): TargetResult {
  const message = `The ${process} process could not start: ${errorText(error)}. ${untouched}`;
  return { status: 'failed', target, bytes: 0, code: 'helper-died', message };
}

/**
 * The result for `target` when the helper ended without reporting one, which it always should (a
 * result lost on its way): `process` and `untouched` as for helperNotStarted.
 */
export function helperWithoutResult(target: string, process: string, untouched: string): TargetResult {
  const message = `The ${process} process ended without a result. ${untouched}`;
  return { status: 'failed', target, bytes: 0, code: 'helper-died', message };
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

/**
 * The privileged helper's protocol, typed once for both sides. Messages are JSON in length-prefixed
 * frames (see node/framing.ts) and every one is checked against these schemas on arrival:
 * the helper runs as root and trusts nothing it is sent, and the app trusts nothing root sends back
 * beyond what the schema allows.
 */
import * as v from 'valibot';
import { FAILURE_CODES } from '../domain/result.js';

/** No honest message comes near this; a bigger frame means a confused or hostile peer. */
export const MAX_FRAME_BYTES = 64 * 1024;
/** A job writes to at most this many drives at once. */
export const MAX_TARGETS = 16;
/**
 * A block map's ranges ride in the start message, so they must fit a frame: about 25 bytes each
 * as JSON. The source side merges the closest ranges of a longer map (writing the image's own
 * bytes in between) until it fits.
 */
export const MAX_EXTENTS = 2000;

const DevicePath = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const ByteCount = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));

/** Parent → helper: the one job this helper will run. */
export const StartMessage = v.strictObject({
  type: v.literal('start'),
  targets: v.pipe(v.array(DevicePath), v.minLength(1), v.maxLength(MAX_TARGETS)),
  /** Image bytes the helper will read from fd 0; null when the length is only known at the end. */
  imageSize: v.nullable(ByteCount),
  /** fd 0 is the image file itself, readable at any offset (lets a mismatch be pinned to a byte). */
  sourceSeekable: v.boolean(),
  verify: v.boolean(),
  /** Eject (power off) each drive after it was written and verified; absent means no. */
  eject: v.optional(v.boolean()),
  /**
   * fd 0 carries only these [offset, length] ranges of the image, concatenated: a block map. Only
   * they are written and verified; the rest of the device is left as it was. Needs `imageSize`.
   */
  extents: v.optional(v.pipe(v.array(v.tuple([ByteCount, ByteCount])), v.maxLength(MAX_EXTENTS))),
  /**
   * fd 0 is a decoder's pipe, whose end says nothing about success: the helper waits for a
   * source-end message before it writes the partition table, and fails the job if it says so.
   */
  awaitSourceEnd: v.optional(v.boolean()),
  /**
   * Clone: the image is this whole disk, which the helper opens read-only itself after its own
   * checks (it must be the --source the helper was started with); fd 0 is not read.
   */
  sourceDevice: v.optional(DevicePath),
});
export type StartMessage = v.InferOutput<typeof StartMessage>;

/**
 * Parent → helper, instead of start: back up a whole disk. The helper opens it read-only after
 * its own checks (it must be the --source the helper was started with) and writes its bytes, from
 * the first to the last, to its fd 0, where the unprivileged side writes them to the user's file.
 * The helper stops without complaint when that side stops reading (it has what it wanted).
 */
export const ReadMessage = v.strictObject({
  type: v.literal('read'),
  source: DevicePath,
  /** The size the unprivileged side found: another size means another drive (a card swapped during the password prompt). */
  size: v.optional(ByteCount),
});
export type ReadMessage = v.InferOutput<typeof ReadMessage>;

/**
 * Parent → helper, instead of start: compare a disk written earlier with the image on fd 0
 * (`sluice verify`). The disk is only read; it must be the --source the helper was started with.
 */
export const VerifyMessage = v.strictObject({
  type: v.literal('verify'),
  device: DevicePath,
  imageSize: v.nullable(ByteCount),
});
export type VerifyMessage = v.InferOutput<typeof VerifyMessage>;

/** The one job a helper runs: what it writes, reads out, or compares. */
export type JobMessage = StartMessage | ReadMessage | VerifyMessage;

/** The drives a job reports results for, and which it writes and reads (the helper's command line authorizes exactly these). */
export function jobDrives(job: JobMessage): { reported: string[]; writes: string[]; reads: string | null } {
  switch (job.type) {
    case 'start':
      return { reported: job.targets, writes: job.targets, reads: job.sourceDevice ?? null };
    case 'read':
      return { reported: [job.source], writes: [], reads: job.source };
    case 'verify':
      return { reported: [job.device], writes: [], reads: job.device };
  }
}

export const CancelMessage = v.strictObject({ type: v.literal('cancel') });

const FailureCodeSchema = v.picklist(FAILURE_CODES);
const Message = v.pipe(v.string(), v.maxLength(4096));

/** Parent → helper: how the image stream ended on the unprivileged side (see SourceEnd). */
export const SourceEndMessage = v.variant('ok', [
  v.strictObject({ type: v.literal('source-end'), ok: v.literal(true), bytes: v.nullable(ByteCount) }),
  v.strictObject({ type: v.literal('source-end'), ok: v.literal(false), code: FailureCodeSchema, message: Message, offset: v.optional(ByteCount) }),
]);
export type SourceEndMessage = v.InferOutput<typeof SourceEndMessage>;

export const ToHelper = v.variant('type', [StartMessage, ReadMessage, VerifyMessage, CancelMessage, SourceEndMessage]);
export type ToHelper = v.InferOutput<typeof ToHelper>;

const Phase = v.picklist(['decompressing', 'writing', 'syncing', 'verifying']);

export const ProgressMessage = v.strictObject({
  type: v.literal('progress'),
  phase: Phase,
  target: DevicePath,
  bytesDone: ByteCount,
  bytesTotal: v.nullable(ByteCount),
  speed: v.pipe(v.number(), v.minValue(0)),
  eta: v.nullable(v.pipe(v.number(), v.minValue(0))),
});

/** Warnings on one ok result: eject and partition re-read give at most one each. */
const MAX_WARNINGS = 4;

export const TargetResultSchema = v.variant('status', [
  v.strictObject({
    status: v.literal('ok'),
    target: DevicePath,
    bytes: ByteCount,
    written: v.boolean(),
    verified: v.boolean(),
    seconds: v.pipe(v.number(), v.minValue(0)),
    ejected: v.optional(v.boolean()),
    warnings: v.optional(v.pipe(v.array(Message), v.maxLength(MAX_WARNINGS))),
  }),
  v.strictObject({ status: v.literal('cancelled'), target: DevicePath, bytes: ByteCount }),
  v.strictObject({
    status: v.literal('failed'),
    target: DevicePath,
    bytes: ByteCount,
    code: FailureCodeSchema,
    message: Message,
    offset: v.optional(ByteCount),
    badBlocks: v.optional(ByteCount),
  }),
]);

export const ResultMessage = v.strictObject({
  type: v.literal('result'),
  results: v.pipe(v.array(TargetResultSchema), v.minLength(1), v.maxLength(MAX_TARGETS)),
});

/** The helper could not run a job at all (a bad request); nothing was written. */
export const FatalMessage = v.strictObject({ type: v.literal('fatal'), code: FailureCodeSchema, message: Message });

export const LogMessage = v.strictObject({ type: v.literal('log'), level: v.picklist(['info', 'warn']), message: Message });

/**
 * The helper's first message: it is running (elevation, if any, succeeded) and its channel works.
 * `pid` is the helper's own process id, which differs from the launched process under sudo or
 * osascript.
 */
export const ReadyMessage = v.strictObject({ type: v.literal('ready'), pid: v.pipe(v.number(), v.integer(), v.minValue(1)) });

export const FromHelper = v.variant('type', [ReadyMessage, ProgressMessage, ResultMessage, FatalMessage, LogMessage]);
export type FromHelper = v.InferOutput<typeof FromHelper>;

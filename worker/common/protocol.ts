/**
 * The privileged helper's protocol, typed once for both sides. Messages are JSON in length-prefixed
 * frames (see worker/helper/framing.ts) and every one is checked against these schemas on arrival:
 * the helper runs as root and trusts nothing it is sent, and the app trusts nothing root sends back
 * beyond what the schema allows.
 */
import * as v from 'valibot';
import { FAILURE_CODES } from './result.js';

/** No honest message comes near this; a bigger frame means a confused or hostile peer. */
export const MAX_FRAME_BYTES = 64 * 1024;
/** A job writes to at most this many drives at once. */
export const MAX_TARGETS = 16;

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
});
export type StartMessage = v.InferOutput<typeof StartMessage>;

export const CancelMessage = v.strictObject({ type: v.literal('cancel') });

export const ToHelper = v.variant('type', [StartMessage, CancelMessage]);
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

const FailureCodeSchema = v.picklist(FAILURE_CODES);

const Message = v.pipe(v.string(), v.maxLength(4096));
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

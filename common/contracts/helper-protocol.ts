/**
 * The privileged helper's protocol, typed once for both sides. Messages are JSON in length-prefixed
 * frames (see node/framing.ts) and every one is checked against these schemas on arrival:
 * the helper runs as root and trusts nothing it is sent, and the app trusts nothing root sends back
 * beyond what the schema allows.
 */
import * as v from 'valibot';
import { MAX_OVERLAY_BYTES } from '../domain/customisation.js';
import { FailureSchema } from '../domain/failure.js';
import { ProgressSchema } from '../domain/progress.js';
import { TargetResultSchema } from '../domain/result.js';
import { ByteCount, DevicePath, Message } from '../domain/wire.js';

/** No honest message comes near this; a bigger frame means a confused or hostile peer. */
export const MAX_FRAME_BYTES = 64 * 1024;
/** A job writes to at most this many drives at once. */
export const MAX_TARGETS = 32;
/**
 * A block map's ranges ride in the job message, so they must fit a frame: about 25 bytes each as
 * JSON. The source side merges the closest ranges of a longer map (writing the image's own bytes
 * in between) until it fits.
 */
export const MAX_EXTENTS = 2000;
/**
 * Ranges a stream may leave out as it goes (skip messages), over a whole job. Each splits a
 * mapped range in two at most, so a job's layout never holds more than MAX_LAYOUT_EXTENTS.
 */
export const MAX_SKIPPED_RANGES = 4096;
export const MAX_LAYOUT_EXTENTS = MAX_EXTENTS + MAX_SKIPPED_RANGES;

/** [offset, length] ranges of the image, as many as a frame holds. */
const Extents = v.pipe(v.array(v.tuple([ByteCount, ByteCount])), v.maxLength(MAX_EXTENTS));

const Targets = v.pipe(v.array(DevicePath), v.minLength(1), v.maxLength(MAX_TARGETS));

/**
 * The medium the user chose in a drive (Drive.medium, Linux's disk sequence number), or null where
 * the OS numbers none. The helper refuses a drive that holds another (a card swapped during the
 * password prompt), whether the job writes it or only reads it.
 */
export const MediumSchema = v.nullable(v.pipe(v.string(), v.regex(/^\d{1,20}$/)));

/** Per target, in order: its medium (MediumSchema). */
export const MediaSchema = v.pipe(v.array(MediumSchema), v.maxLength(MAX_TARGETS));
const Media = MediaSchema;

/** Bytes a drive gets after the image (customisation, writer/overlay.ts): sent in overlay messages. */
const OverlayBytes = v.pipe(ByteCount, v.maxValue(MAX_OVERLAY_BYTES));

/** One overlay message carries at most this many bytes, so that it fits a frame as base64. */
export const MAX_OVERLAY_PIECE = 32 * 1024;

/** Raw bytes in a frame: base64 of at most MAX_OVERLAY_PIECE bytes. */
const Base64Piece = v.pipe(
  v.string(),
  v.minLength(4),
  v.maxLength((MAX_OVERLAY_PIECE / 3) * 4 + 4),
  v.regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/),
);

/**
 * A repair asks for at most this many image bytes at once: 64 blocks (writer/compare.ts MAX_NOTED)
 * of the largest verification block (1 MiB, writer/grain-hashes.ts MAX_GRAIN). The unprivileged
 * side refuses a bigger request.
 */
export const MAX_REPAIR_BYTES = 64 * 1024 * 1024;
/**
 * Image bytes the unprivileged side may have sent for a repair that the helper has not yet taken
 * (repair-ack): what root holds of an answer at most, whatever the other side does.
 */
export const REPAIR_WINDOW_BYTES = 2 * 1024 * 1024;
/** A repair request's number: each answer names the request it answers. */
const RepairId = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000));

/** A flash: the image on fd 0 written to the targets, then read back. */
const FlashJob = v.strictObject({
  kind: v.literal('flash'),
  targets: Targets,
  media: v.optional(Media),
  /** Image bytes the helper will read from fd 0; null when the length is only known at the end. */
  imageSize: v.nullable(ByteCount),
  /** fd 0 is the image file itself, readable at any offset (lets a mismatch be pinned to a byte). */
  sourceSeekable: v.boolean(),
  verify: v.boolean(),
  /** Eject (power off) each drive after it was written and verified; absent means no. */
  eject: v.optional(v.boolean()),
  /** Capacity markers past the image, written before it and read back after it; absent means yes. */
  capacityCheck: v.optional(v.boolean()),
  /**
   * fd 0 carries only these [offset, length] ranges of the image, concatenated: a block map. Only
   * they are written and verified; the rest of the device is left as it was. Needs `imageSize`.
   */
  extents: v.optional(Extents),
  /**
   * fd 0 is a decoder's pipe, whose end says nothing about success: the helper waits for a
   * source-end message before it writes the partition table, and fails the job if it says so.
   */
  awaitSourceEnd: v.optional(v.boolean()),
  /**
   * fd 0 is a regular file the decoder is still writing the stream into (a batch's one decoded
   * copy): read in order, waiting at its end until source-end says the stream is whole, and read
   * again at any stream offset by a card that fell behind the others. Needs `awaitSourceEnd`.
   */
  sourceGrows: v.optional(v.boolean()),
  /**
   * Per target, in order: the bytes it gets after the image is written and verified (a card's
   * customisation: raw byte ranges the unprivileged side planned, never a filesystem root parses).
   * They arrive in overlay messages; each is written, synced, read back and compared.
   */
  overlayBytes: v.optional(v.pipe(v.array(OverlayBytes), v.maxLength(MAX_TARGETS))),
});

/**
 * A clone: the whole `source` disk written to the targets, then read back. The helper opens the
 * disk read-only itself, after its own checks, and takes its size from its own look; fd 0 is not read.
 */
const CloneJob = v.strictObject({
  kind: v.literal('clone'),
  source: DevicePath,
  sourceMedium: v.optional(MediumSchema),
  targets: Targets,
  media: v.optional(Media),
  verify: v.boolean(),
  eject: v.optional(v.boolean()),
});

/**
 * A backup: the whole `source` disk, opened read-only after the helper's own checks, sent from
 * its first byte to its last to fd 0, where the unprivileged side writes the user's file: root
 * never writes there. The helper stops without complaint when that side stops reading.
 */
const BackupJob = v.strictObject({
  kind: v.literal('backup'),
  source: DevicePath,
  medium: v.optional(MediumSchema),
  /** The size the unprivileged side found: another size means another drive (a card swapped during the password prompt). */
  size: v.optional(ByteCount),
  /**
   * Sends only the ranges read messages ask for, in the order asked, until one says it is the
   * last: the unprivileged side reads the partition table and the filesystems' maps through them,
   * then asks for the used blocks. Root parses nothing; it checks only that each range is on the drive.
   */
  requested: v.optional(v.literal(true)),
});

/**
 * A verify (`sluice verify`): the `target` disk, written earlier, compared with the image on fd 0;
 * only read. As in a flash, fd 0 may carry only `extents` of the image, and skip messages may
 * leave more out: what a flash leaves unwritten is not compared.
 */
const VerifyJob = v.strictObject({
  kind: v.literal('verify'),
  target: DevicePath,
  medium: v.optional(MediumSchema),
  imageSize: v.nullable(ByteCount),
  /** As a flash's: fd 0 is the image file itself, and its ranges left out are never read. */
  sourceSeekable: v.optional(v.boolean()),
  extents: v.optional(Extents),
  /** The customisation written after the image, compared in its place (overlay messages, target 0). */
  overlayBytes: v.optional(OverlayBytes),
});

/**
 * A check (`sluice check`): the `target` disk checked for fake capacity (writer/fake-capacity-check.ts).
 * It writes test markers, so it is authorized as a write, but it saves every block it touches
 * first and puts it back; fd 0 is not read.
 */
const CheckJob = v.strictObject({
  kind: v.literal('check'),
  target: DevicePath,
  medium: v.optional(MediumSchema),
});

/** The one job a helper runs, told apart by its kind (common/domain/job.ts). */
export const HelperJob = v.variant('kind', [FlashJob, CloneJob, BackupJob, VerifyJob, CheckJob]);
export type HelperJob = v.InferOutput<typeof HelperJob>;
export type HelperJobOf<K extends HelperJob['kind']> = Extract<HelperJob, { kind: K }>;

/**
 * The drives a job reports results for, writes, and reads. The helper's command line authorizes
 * exactly the drives it writes and reads, and results come back for the reported ones.
 */
export function jobDrives(job: HelperJob): { reported: string[]; writes: string[]; reads: string | null } {
  switch (job.kind) {
    case 'flash':
      return { reported: job.targets, writes: job.targets, reads: null };
    case 'clone':
      return { reported: job.targets, writes: job.targets, reads: job.source };
    case 'backup':
      return { reported: [job.source], writes: [], reads: job.source };
    case 'verify':
      return { reported: [job.target], writes: [], reads: job.target };
    case 'check':
      return { reported: [job.target], writes: [job.target], reads: null };
  }
}

/** Parent → helper, first: the one job this helper will run. */
export const JobMessage = v.strictObject({ type: v.literal('job'), job: HelperJob });

export const CancelMessage = v.strictObject({ type: v.literal('cancel') });

/**
 * Parent → helper, during a flash or a verify: from here on the stream leaves out these ranges of
 * the image (free space the decoder found, all of it ahead of what the stream has brought). The
 * decoder sends nothing more until the helper answers with skip-ack, so no byte after them can
 * arrive before the helper knows; a range the helper cannot place is a protocol error that stops
 * the job.
 */
export const SkipMessage = v.strictObject({ type: v.literal('skip'), extents: Extents });

/** Parent → helper: how the image stream ended on the unprivileged side (see SourceEnd). */
export const SourceEndMessage = v.variant('ok', [
  v.strictObject({ type: v.literal('source-end'), ok: v.literal(true), bytes: v.nullable(ByteCount) }),
  v.strictObject({ type: v.literal('source-end'), ok: v.literal(false), ...FailureSchema.entries }),
]);
export type SourceEndMessage = v.InferOutput<typeof SourceEndMessage>;

/** Parent → helper: bytes a target gets after the image, at `offset` (see FlashJob overlayBytes). */
export const OverlayMessage = v.strictObject({
  type: v.literal('overlay'),
  /** Index into the job's targets (0 for a verify). */
  target: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_TARGETS - 1)),
  offset: ByteCount,
  data: Base64Piece,
});
export type OverlayMessage = v.InferOutput<typeof OverlayMessage>;

/**
 * Parent → helper, answering a repair-request: the image's bytes at device `offset`, the next ones
 * of the ranges asked for, in order. The helper writes them only after they match the hashes it
 * took while writing them the first time.
 */
export const RepairDataMessage = v.strictObject({
  type: v.literal('repair-data'),
  id: RepairId,
  offset: ByteCount,
  data: Base64Piece,
});
/**
 * Parent → helper, while it reads the image again towards the ranges asked for: how far it got,
 * `bytes` of the image decoded and `source` bytes read (a slow download grows this long before a
 * compressed block decodes). The helper's wait is for silence, not for the whole decode.
 */
export const RepairProgressMessage = v.strictObject({
  type: v.literal('repair-progress'),
  id: RepairId,
  bytes: ByteCount,
  source: v.optional(ByteCount),
});
/** Parent → helper: the image could not be read again (its decoder failed, the download broke, it cannot be read here at all). */
export const RepairFailedMessage = v.strictObject({
  type: v.literal('repair-failed'),
  id: RepairId,
  ...FailureSchema.entries,
});
export type RepairAnswerMessage =
  | v.InferOutput<typeof RepairDataMessage>
  | v.InferOutput<typeof RepairProgressMessage>
  | v.InferOutput<typeof RepairFailedMessage>;

/**
 * Parent → helper, for a backup of requested ranges: send the drive's bytes of `ranges` next, in
 * this order, after those of earlier read messages; `last`: nothing more will be asked.
 */
export const ReadMessage = v.strictObject({ type: v.literal('read'), ranges: Extents, last: v.boolean() });
export type ReadMessage = v.InferOutput<typeof ReadMessage>;

export const ToHelper = v.variant('type', [
  JobMessage,
  CancelMessage,
  SourceEndMessage,
  SkipMessage,
  OverlayMessage,
  RepairDataMessage,
  RepairProgressMessage,
  RepairFailedMessage,
  ReadMessage,
]);
export type ToHelper = v.InferOutput<typeof ToHelper>;

export const ProgressMessage = v.strictObject({ type: v.literal('progress'), ...ProgressSchema.entries });

export const ResultMessage = v.strictObject({
  type: v.literal('result'),
  results: v.pipe(v.array(TargetResultSchema), v.minLength(1), v.maxLength(MAX_TARGETS)),
});

/** The helper could not run a job at all (a bad request); nothing was written. */
export const FatalMessage = v.strictObject({
  type: v.literal('fatal'),
  code: FailureSchema.entries.code,
  message: Message,
});

/** Helper → parent: the last skip message is in place; the stream may go on without those ranges. */
export const SkipAckMessage = v.strictObject({ type: v.literal('skip-ack') });

/**
 * Helper → parent, after a verification found blocks that differ, when the helper cannot read the
 * image again itself (it came as a stream): the image's bytes at these device ranges (sorted,
 * disjoint, at most MAX_REPAIR_BYTES, all of them written the first time), as repair-data.
 */
export const RepairRequestMessage = v.strictObject({
  type: v.literal('repair-request'),
  id: RepairId,
  ranges: Extents,
});
export type RepairRequestMessage = v.InferOutput<typeof RepairRequestMessage>;
/** Helper → parent: one repair-data message of request `id` has been taken; the window has room for it again. */
export const RepairAckMessage = v.strictObject({ type: v.literal('repair-ack'), id: RepairId });

export const LogMessage = v.strictObject({
  type: v.literal('log'),
  level: v.picklist(['info', 'warn']),
  message: Message,
});

/**
 * The helper's first message: it is running (elevation, if any, succeeded) and its channel works.
 * `pid` is the helper's own process id, which differs from the launched process under sudo or
 * osascript.
 */
export const ReadyMessage = v.strictObject({
  type: v.literal('ready'),
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
});

export const FromHelper = v.variant('type', [
  ReadyMessage,
  ProgressMessage,
  ResultMessage,
  FatalMessage,
  LogMessage,
  SkipAckMessage,
  RepairRequestMessage,
  RepairAckMessage,
]);
export type FromHelper = v.InferOutput<typeof FromHelper>;

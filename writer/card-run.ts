/**
 * One target's part of a flash job, from blanking its head to its verdict, at its own pace: it
 * waits for no other target's write, sync or read-back. Every target of a job runs this at once,
 * each with its own buffer and its own reader of the stream (stream-ring.ts).
 */
import type { Limit, Progress } from '../common/domain/progress.js';
import { DRIVE_INCOMPLETE, type TargetResult } from '../common/domain/result.js';
import { errorCode } from '../common/domain/error-details.js';
import { JobError, jobError, toFailure, type Failure } from '../common/domain/failure.js';
import { CapacityCheck } from './capacity-check.js';
import type { Differences } from './compare.js';
import type { MarkerFormat } from './capacity-markers.js';
import { refusedStop, targetWriteFailure } from './failures.js';
import type { GrainHashes } from './grain-hashes.js';
import { alignDown } from './job-memory.js';
import { LimitMeter } from './limit-meter.js';
import { customiseTargets, type Overlays } from './overlay.js';
import { ProgressMeter } from './progress-meter.js';
import { pump } from './pump.js';
import { fileRepairSource, repairGrains } from './repair.js';
import type { RepairSource } from './repair-inbox.js';
import { waitForSourceEnd, type SourceEndSignal } from './source-end.js';
import type { RingReader } from './stream-ring.js';
import type { StreamLayout } from './stream-layout.js';
import { verifyWritten, type VerifyOutcome } from './verify-written.js';
import type { WriteTarget } from './write-target.js';

/**
 * With O_DIRECT nothing waits in the page cache, but a device's own write cache may. A flush
 * every second keeps progress honest (what is counted is on the medium) and bounds what a
 * cancel or an unplug can lose, at one cheap request per second.
 */
const SYNC_INTERVAL_MS = 1000;

/** What a card run needs of the job (flash.ts FlashJob). */
export interface CardJob {
  source: number;
  sourceSeekable: boolean;
  imageSize: number | null;
  verify: boolean;
  sourceEnd?: SourceEndSignal | undefined;
  skips?: { refusal: unknown } | undefined;
  overlays?: Promise<Overlays> | undefined;
  repairs?: RepairSource | undefined;
  signal?: AbortSignal | undefined;
}

/** What every target of a job shares: the image's first MiB, read once, and the hashes of everything read. */
export interface JobShare {
  job: CardJob;
  layout: StreamLayout;
  hashes: GrainHashes;
  markers: MarkerFormat | null;
  /** The first MiB of the image, kept aside: blanked first on every target and written last. */
  head: Buffer;
  headLength: number;
  /** performance.now() when the job started: each result's seconds count from it. */
  started: number;
  emit(progress: Progress): void;
}

/** One target, with its own part of the job memory and its own reader of the stream. */
export interface Card {
  target: WriteTarget;
  /** Two halves of one request each, back to back: the pump's, then verification's and a repair's. */
  region: Buffer;
  /** An aligned block for a partial last block and the capacity markers. */
  scratch: Buffer;
  source: RingReader;
}

/** What a card run knows of its target as it goes. */
interface CardState {
  /** Stream bytes handed to the target so far. */
  bytes: number;
  /** A write has succeeded: a refusal after it is a failure part-way, not a read-only drive. */
  wrote: boolean;
  capacity: CapacityCheck | null;
}

/**
 * Runs one target's job to its result; never rejects. The steps, in the safety order:
 * 1. blankHead: the first MiB blanked, so the card never looks bootable half-written;
 * 2. writeBody: everything after it, through this target's own pump;
 * 3. sourceVerdict: the source side's word on the stream, before any verdict of our own;
 * 4. writeHead: the first MiB, now that the rest is on the device, and a sync;
 * 5. checkCard: the read-back, the capacity markers, and a repair of what differs;
 * 6. customiseCard: the card's customisation, once its image is on it.
 */
export async function runCard(share: JobShare, card: Card): Promise<TargetResult> {
  const t = card.target;
  const state: CardState = { bytes: share.headLength, wrote: false, capacity: null };
  let result: TargetResult;
  try {
    result = (await writeCard(share, card, state))
      ? await checkCard(share, card, state.bytes, state.capacity)
      : await stopped(share.job, t, state.bytes);
  } catch (error) {
    // A source failure (a JobError from the shared reader) ends this target as it ends every other.
    const failure = error instanceof JobError ? error.failure : toFailure(error);
    result = { status: 'failed', target: t.path, bytes: state.bytes, ...failure };
  } finally {
    card.source.release();
  }
  return customiseCard(share, card, result, state.bytes);
}

/**
 * Step 6: the card's customisation, once its image is written and verified. The image reaches its
 * whole size on the device even where ranges were left unwritten, and that bounds it.
 */
async function customiseCard(share: JobShare, card: Card, result: TargetResult, bytes: number): Promise<TargetResult> {
  if (share.job.overlays === undefined || result.status !== 'ok') return result;
  const t = card.target;
  const results = new Map([[t.path, result]]);
  await customiseTargets([t], results, share.job.overlays, card.region, share.layout.imageEnd(bytes), share.job.signal);
  return results.get(t.path) ?? result;
}

/** How a cancelled target ends: failed when the helper refused its instructions, else cancelled. */
async function stopped(job: CardJob, t: WriteTarget, bytes: number): Promise<TargetResult> {
  await t.sync().catch(() => undefined);
  const refused = job.skips?.refusal;
  const failure = refused !== undefined && refused !== null ? toFailure(refused) : refusedStop(job.signal);
  return failure !== null
    ? { status: 'failed', target: t.path, bytes, ...failure }
    : { status: 'cancelled', target: t.path, bytes };
}

/** The `limit` of a writing report, once measured (exactOptionalPropertyTypes keeps an undefined one out). */
function withLimit(limit: Limit | undefined): Pick<Progress, 'limit'> {
  return limit === undefined ? {} : { limit };
}

/** Runs `io` on the target; its failure is the target's, at `near` unless the error says where. */
async function onTarget(
  t: WriteTarget,
  state: CardState,
  layout: StreamLayout,
  near: number,
  io: () => Promise<void>,
): Promise<void> {
  try {
    await io();
  } catch (error) {
    throw targetWriteFailure(t.path, error, layout.deviceOffset(near), t.capacity, state.wrote);
  }
}

/** Writes `length` stream bytes from `buffer`, which start at stream offset `at`, where the layout puts them. */
async function writeStream(
  card: Card,
  state: CardState,
  layout: StreamLayout,
  buffer: Buffer,
  length: number,
  at: number,
): Promise<void> {
  for (const piece of layout.pieces(at, length)) {
    await card.target.write(buffer, piece.bufferOffset, piece.length, piece.deviceOffset, card.scratch);
    state.wrote = true;
  }
}

/** Writes the target's capacity markers past the image's `imageEnd` bytes, where nothing of the image goes. */
async function writeMarkers(share: JobShare, card: Card, state: CardState, imageEnd: number): Promise<void> {
  if (share.markers === null) return;
  const check = CapacityCheck.plan(card.target, imageEnd, share.markers);
  if (check === null) return;
  state.capacity = check;
  await onTarget(card.target, state, share.layout, 0, () => check.write(card.scratch));
}

/**
 * Steps 1 to 4: blanks the head, writes the rest of the stream, then the head, and syncs. Resolves
 * false when the job was cancelled; throws the target's or the source's failure.
 */
async function writeCard(share: JobShare, card: Card, state: CardState): Promise<boolean> {
  const request = card.region.length / 2;
  const halves = [card.region.subarray(0, request), card.region.subarray(request)] as const;
  await blankHead(share, card, state, halves[0]);
  const meter = await writeBody(share, card, state, halves);
  if (meter === null || !(await sourceVerdict(share, state.bytes))) return false;
  await writeHead(share, card, state, meter);
  return true;
}

/**
 * Step 1: the head is blanked now and written last; `zeros` is the pump's first half, still all
 * zeros here. Markers go on before the image, so that the image pushes any cache of the drive past
 * them.
 */
async function blankHead(share: JobShare, card: Card, state: CardState, zeros: Buffer): Promise<void> {
  const { job, layout, headLength } = share;
  const t = card.target;
  await onTarget(t, state, layout, 0, () =>
    writeStream(card, state, layout, zeros, alignDown(headLength, t.blockSize), 0),
  );
  if (job.imageSize !== null) await writeMarkers(share, card, state, job.imageSize);
}

/**
 * Step 2: everything after the head, through this target's own pump, with a sync every
 * SYNC_INTERVAL_MS. Resolves with the writing phase's meter (finished once the head is on), or
 * null when the job was cancelled.
 */
async function writeBody(
  share: JobShare,
  card: Card,
  state: CardState,
  halves: readonly [Buffer, Buffer],
): Promise<ProgressMeter | null> {
  const { job, layout, headLength } = share;
  const t = card.target;
  const limit = new LimitMeter();
  const meter = new ProgressMeter('writing', t.path, layout.streamBytes, (p) =>
    share.emit({ ...p, ...withLimit(limit.current()) }),
  );
  let lastSync = performance.now();
  const pumped = await pump({
    halves,
    from: headLength,
    // A head shorter than its region was the whole image.
    length: headLength === share.head.length ? null : 0,
    read: card.source.read,
    admit: () => {
      throwIfSourceFailed(job);
      return true;
    },
    write: async (bytes, at) => {
      await onTarget(t, state, layout, at, () => writeStream(card, state, layout, bytes, bytes.length, at));
      if (performance.now() - lastSync >= SYNC_INTERVAL_MS) {
        // What a failed flush reports: everything handed to the device up to here.
        state.bytes = at + bytes.length;
        await onTarget(t, state, layout, state.bytes, () => t.sync());
        lastSync = performance.now();
      }
      return true;
    },
    waited: (sourceMs, driveMs) => limit.waited(sourceMs, driveMs),
    advanced: (at) => {
      state.bytes = at;
      meter.total = layout.streamBytes;
      meter.update(at);
    },
    signal: job.signal,
  });
  card.source.release();
  return pumped.end === 'cancelled' ? null : meter;
}

/**
 * Step 4: the head, now that the rest is on the device, then a sync. A stream whose length showed
 * only at its end gets its markers first, past what it turned out to be.
 */
async function writeHead(share: JobShare, card: Card, state: CardState, meter: ProgressMeter): Promise<void> {
  const { job, layout, headLength } = share;
  const t = card.target;
  if (job.imageSize === null) await writeMarkers(share, card, state, layout.imageEnd(state.bytes));
  await onTarget(t, state, layout, 0, () => writeStream(card, state, layout, share.head, headLength, 0));
  meter.finish();
  share.emit({
    phase: 'syncing',
    target: t.path,
    bytesDone: state.bytes,
    bytesTotal: state.bytes,
    speed: 0,
    eta: null,
  });
  await onTarget(t, state, layout, state.bytes, () => t.sync());
}

/** The source side's failure, as soon as it is known: nothing more it sends can be trusted. */
function throwIfSourceFailed(job: CardJob): void {
  const end = job.sourceEnd?.current;
  if (end?.ok === false) throw new JobError(end.failure);
}

/**
 * Step 3: the source side's word on the stream comes before any verdict of our own: its reason (a corrupt
 * archive, a checksum that does not match) is the real one, and a stream that ended early must
 * never get its head written. Resolves false when cancelled first; throws the stream's failure.
 */
async function sourceVerdict(share: JobShare, imageBytes: number): Promise<boolean> {
  const { job, layout } = share;
  if (job.sourceEnd !== undefined) {
    const end = await waitForSourceEnd(job.sourceEnd, job.signal);
    if (end === null) return false;
    if (!end.ok) throw new JobError(end.failure);
    if (end.bytes !== null && end.bytes !== imageBytes) {
      throw jobError('source-read-error', `The image source sent ${end.bytes} bytes, but ${imageBytes} arrived.`, {
        offset: layout.deviceOffset(Math.min(end.bytes, imageBytes)),
      });
    }
  }
  const streamBytes = layout.streamBytes;
  if (streamBytes !== null && imageBytes < streamBytes) {
    const offset = layout.deviceOffset(imageBytes);
    throw jobError(
      'source-truncated',
      `The image ended after ${offset} of its ${job.imageSize ?? streamBytes} bytes: the file is truncated (an incomplete download?).`,
      { offset },
    );
  }
  // A stream of unknown length that brought nothing (an empty .gz or .bz2: sizes known in advance
  // are refused by the probe). The head was never blanked: 0 bytes were read for it.
  if (streamBytes === null && imageBytes === 0) {
    throw jobError(
      'source-truncated',
      'The image is empty: it decodes to 0 bytes, so there is nothing to write. Was the download or the image build interrupted?',
      { offset: 0 },
    );
  }
  return job.signal?.aborted !== true;
}

/** What a card's health adds to its success: the capacity check passed, blocks repaired. */
type Health = Pick<Extract<TargetResult, { status: 'ok' }>, 'capacityCheck' | 'repaired'>;

/** Step 5: verifies the written target, reads its capacity markers back, and repairs what differs. */
async function checkCard(
  share: JobShare,
  card: Card,
  imageBytes: number,
  capacity: CapacityCheck | null,
): Promise<TargetResult> {
  const { job, layout, hashes } = share;
  const t = card.target;
  const verified = job.verify
    ? await verifyWritten({ targets: [t], chunk: card.region, imageBytes, layout, hashes, job, emit: share.emit })
    : null;
  const outcome = verified?.get(t) ?? null;
  if (outcome?.status === 'cancelled') return { status: 'cancelled', target: t.path, bytes: imageBytes };
  const health = await cardHealth(share, card, imageBytes, capacity, outcome);
  if ('status' in health) return health;
  const skipped = layout.leftOut > 0 ? { skipped: layout.leftOut } : {};
  const seconds = (performance.now() - share.started) / 1000;
  return {
    status: 'ok',
    target: t.path,
    bytes: imageBytes,
    written: true,
    verified: job.verify,
    seconds,
    ...skipped,
    ...health,
  };
}

/**
 * The capacity markers' verdict, then a repair of what verification found differing: the card's
 * health, or the result that ends it (failed or cancelled).
 */
async function cardHealth(
  share: JobShare,
  card: Card,
  imageBytes: number,
  capacity: CapacityCheck | null,
  outcome: Exclude<VerifyOutcome, { status: 'cancelled' }>,
): Promise<Health | TargetResult> {
  const { job } = share;
  const t = card.target;
  const failed = (failure: Failure): TargetResult => ({
    status: 'failed',
    target: t.path,
    bytes: imageBytes,
    ...failure,
  });
  try {
    const verdict = await capacity?.judge(card.scratch);
    // A drive that is not the size it claims explains any mismatch: nothing is repaired on it.
    // Its message says to stop using it; what the image on it is worth depends on the verify.
    if (verdict !== undefined && 'failure' in verdict) {
      const state = !job.verify
        ? ' The image on it was not verified (verification was turned off).'
        : outcome !== null
          ? ` The image on it did not verify either. ${DRIVE_INCOMPLETE}`
          : '';
      return failed({ ...verdict.failure, message: `${verdict.failure.message}${state}` });
    }
    const health: Health = verdict !== undefined ? { capacityCheck: verdict.passed } : {};
    if (outcome === null) return health;
    if (outcome.differences === undefined) return failed(outcome.failure);
    const repair = await repairCard(share, card, imageBytes, outcome.failure, outcome.differences);
    if ('cancelled' in repair) return { status: 'cancelled', target: t.path, bytes: imageBytes };
    if ('failure' in repair) return failed(repair.failure);
    return { ...health, repaired: repair.repaired };
  } catch (error) {
    // An I/O error of the capacity check or the repair is the drive's; anything else is Sluice's own (internal), never a write error at offset 0.
    return failed(
      errorCode(error) === '' ? toFailure(error) : targetWriteFailure(t.path, error, 0, t.capacity, true).failure,
    );
  }
}

/** Writes again the grains that verification found differing, from the image file or the repair source. */
function repairCard(
  share: JobShare,
  card: Card,
  imageBytes: number,
  failure: Failure,
  differences: Differences,
): ReturnType<typeof repairGrains> {
  const { job, layout, hashes } = share;
  const source = job.sourceSeekable ? fileRepairSource(job.source, 'The image file') : (job.repairs ?? null);
  return repairGrains({
    target: card.target,
    differences,
    failure,
    imageBytes,
    layout,
    hashes,
    region: card.region,
    scratch: card.scratch,
    source,
    signal: job.signal,
    emit: share.emit,
  });
}

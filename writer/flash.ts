import { fstat } from 'node:fs';
import type { Limit, Progress } from '../common/domain/progress.js';
import { DRIVE_INCOMPLETE, reachedDrive, type TargetResult } from '../common/domain/result.js';
import { KiB, MiB } from '../common/domain/units.js';
import { settleTarget } from './after-write.js';
import { alignDown, alignUp } from './job-memory.js';
import { refusedStop, targetWriteFailure } from './failures.js';
import { errorCode } from '../common/domain/error-details.js';
import { JobError, jobError, toFailure, type Failure } from '../common/domain/failure.js';
import { chooseGrain, GrainHashes } from './grain-hashes.js';
import { ABANDONED, allocatePumpMemory, DEFAULT_REQUEST, pump, unlessAborted } from './pump.js';
import { currentPlatform } from './platform/index.js';
import type { DevicePlatform } from './platform/types.js';
import { ProgressMeter } from './progress-meter.js';
import { LimitMeter } from './limit-meter.js';
import { waitForSourceEnd, type SourceEndSignal } from './source-end.js';
import type { Extent } from '../common/domain/extents.js';
import type { SkipInbox } from './skip-inbox.js';
import { readStream } from './read-stream.js';
import { streamLayoutOf, type StreamLayout } from './stream-layout.js';
import { TargetDevice } from './target-device.js';
import { verifyWritten, type VerifyOutcome } from './verify-written.js';
import { customiseTargets, type Overlays } from './overlay.js';
import type { WriteTarget } from './write-target.js';
import { CapacityCheck } from './capacity-check.js';
import { MarkerFormat } from './capacity-markers.js';
import { fileRepairSource, repairGrains } from './repair.js';
import type { RepairSource } from './repair-inbox.js';

/**
 * The partition tables live in the first megabyte. It is written last, after everything else, and
 * blanked first, so a failed or cancelled job never leaves a disk that looks bootable.
 */
export const HEAD_BYTES = 1 * MiB;

/** Devices that announce an optimal I/O size get requests of this many times it (DEFAULT_REQUEST at least). */
const OPTIMAL_IO_FACTOR = 16;
const MAX_CHUNK = 16 * MiB;

/**
 * With O_DIRECT nothing waits in the page cache, but a device's own write cache may. A flush
 * every second keeps progress honest (what is counted is on the medium) and bounds what a
 * cancel or an unplug can lose, at one cheap request per second.
 */
const SYNC_INTERVAL_MS = 1000;

/** What a target's ok result adds about the drive's health: the capacity check's cost, a repair. */
type Health = Pick<Extract<TargetResult, { status: 'ok' }>, 'capacityCheck' | 'repaired'>;
/** How one target's job ends, before its time is known. */
type TargetEnd = { status: 'ok'; health: Health } | Exclude<TargetResult, { status: 'ok' }>;

/** One flash job: one image, read once, written to one or more targets. */
export interface FlashJob {
  /** Descriptor the image bytes are read from, front to back: the image file itself or a decoder's pipe. */
  source: number;
  /** Image size in bytes when known in advance; null for a stream whose length shows only at its end. */
  imageSize: number | null;
  /**
   * The source is a regular file that can be re-read at any offset. Lets a verification mismatch
   * be pinned to its exact byte rather than to its hash grain.
   */
  sourceSeekable: boolean;
  /** Target devices, as the user named them. Each is inspected and checked by the engine itself. */
  targets: readonly string[];
  /** Per target, the medium the user chose in it (Drive.medium), where the OS numbers media. */
  media?: readonly (string | null)[] | undefined;
  /** Read every target back and compare (default in every front end). */
  verify: boolean;
  /**
   * Write capacity markers past the image before it, and read them back after it, to catch a
   * drive that is not the size it claims (capacity-check.ts). On unless false.
   */
  capacityCheck?: boolean | undefined;
  /** Eject each drive after a good write (the front ends default to it); off, the OS just re-reads its partitions. */
  eject?: boolean | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  /** The OS seam; tests of other OSes' rules pass their own. */
  platform?: DevicePlatform | undefined;
  /** Override of the request size in bytes (a multiple of 1 MiB), for benchmarks. */
  chunkSize?: number | undefined;
  /**
   * The stream carries only these ranges of the image, concatenated (a block map; see
   * stream-layout.ts); everything else on the device is left as it was. Needs `imageSize`.
   */
  extents?: readonly Extent[] | undefined;
  /**
   * How the unprivileged source side says the stream ended, for a decoder's pipe: the end of a
   * pipe alone cannot tell a finished image from a decoder that failed or a checksum that did not
   * match. Absent for an image file read directly.
   */
  sourceEnd?: SourceEndSignal | undefined;
  /** Where the decoder's skip messages arrive: free space it leaves out of the stream as it goes. */
  skips?: SkipInbox | undefined;
  /**
   * Per target path, the customisation it gets once its image is written and verified (raw byte
   * ranges, see overlay.ts); it settles when the bytes have arrived.
   */
  overlays?: Promise<Overlays> | undefined;
  /**
   * Where a repair gets the image's bytes again when `source` is not a file it can read again: the
   * unprivileged side, which decodes the image again (repair-inbox.ts), or a clone's source disk.
   */
  repairs?: RepairSource | undefined;
}

/**
 * The device the image lives on: the st_dev of an image file, the disk itself for a clone's
 * source (st_rdev), or null for a decoder's pipe. A target that holds it is refused.
 */
function sourceDeviceOf(fd: number): Promise<number | null> {
  return new Promise((resolve) => fstat(fd, (error, st) => resolve(error !== null ? null : st.isFile() ? st.dev : st.isBlockDevice() ? st.rdev : null)));
}

function chooseChunkSize(targets: readonly WriteTarget[], override: number | undefined): number {
  if (override !== undefined) return alignUp(override, MiB);
  const optimal = Math.max(0, ...targets.map((t) => t.optimalIoSize));
  return Math.min(MAX_CHUNK, Math.max(DEFAULT_REQUEST, alignUp(optimal * OPTIMAL_IO_FACTOR, MiB)));
}

/** Bytes reserved per target for read-modify-write of a partial last block. */
function scratchBytes(targets: readonly WriteTarget[]): number {
  return alignUp(Math.max(...targets.map((t) => t.blockSize)), 4 * KiB);
}

/**
 * Writes the image to every target and verifies it. Resolves with one result per target, in the
 * order given; never rejects. A target that fails is dropped with its own result while the
 * others carry on.
 */
export async function flash(job: FlashJob): Promise<TargetResult[]> {
  let layout: StreamLayout;
  try {
    // A medium for each target or none at all: a shorter list would leave targets unchecked.
    if (job.media !== undefined && job.media.length !== job.targets.length) throw jobError('protocol-error', `The job names media for ${job.media.length} of its ${job.targets.length} drives.`);
    layout = streamLayoutOf(job);
  } catch (error) {
    job.skips?.close();
    return job.targets.map((path) => ({ status: 'failed', target: path, bytes: 0, ...toFailure(error) }));
  }
  const platform = job.platform ?? (await currentPlatform());
  const results = new Map<string, TargetResult>();
  const active: TargetDevice[] = [];
  const sourceDevice = await sourceDeviceOf(job.source);
  for (const [i, path] of job.targets.entries()) {
    try {
      active.push(await TargetDevice.open(path, job.imageSize, sourceDevice, platform, job.media?.[i] ?? null));
    } catch (error) {
      results.set(path, { status: 'failed', target: path, bytes: 0, ...toFailure(error) });
    }
  }
  if (active.length === 0) job.skips?.close();
  else {
    try {
      for (const [path, result] of await writeTargets(job, layout, active)) results.set(path, result);
    } finally {
      await Promise.allSettled(active.map((t) => t.close()));
    }
    await Promise.all(
      active.map(async (t) => {
        const result = results.get(t.path);
        if (result !== undefined) results.set(t.path, await settleTarget(t.facts, t.reached ? reachedDrive(result) : result, job.eject ?? false, platform));
      }),
    );
  }
  return job.targets.map((path) => results.get(path) ?? { status: 'failed', target: path, bytes: 0, ...toFailure(new Error('no result')) });
}

/** The `limit` of a writing report, once measured (exactOptionalPropertyTypes keeps an undefined one out). */
function withLimit(limit: Limit | undefined): Pick<Progress, 'limit'> {
  return limit === undefined ? {} : { limit };
}

/** What writeTargets needs of a job: everything but how its targets are found and opened. */
export type WriteJob = Omit<FlashJob, 'targets' | 'eject' | 'platform' | 'extents'>;

/**
 * The writing loop for targets that are already open (devices after their checks, or files):
 * writes the stream to all of them at once, head last, and verifies each. Resolves with one
 * result per target path; never rejects.
 */
export async function writeTargets(job: WriteJob, layout: StreamLayout, opened: readonly WriteTarget[]): Promise<Map<string, TargetResult>> {
  const results = new Map<string, TargetResult>();
  await runJob(job, layout, opened, results);
  return results;
}

async function runJob(job: WriteJob, layout: StreamLayout, opened: readonly WriteTarget[], results: Map<string, TargetResult>): Promise<void> {
  const started = performance.now();
  // A file has no capacity: a stream of unknown length into one gets the largest grain.
  const maxBytes = layout.streamBytes ?? Math.max(...opened.map((t) => t.capacity ?? Number.MAX_SAFE_INTEGER));
  const grain = chooseGrain(maxBytes);
  // Verification gives each target its own two slices of the chunk region, at least a grain each.
  const request = Math.max(chooseChunkSize(opened, job.chunkSize), grain * opened.length);
  const chunkSize = 2 * request;
  const scratchSize = scratchBytes(opened);

  // The job's one buffer: [ chunk: the pump's two halves of one request each | head (first MiB) |
  // one scratch block per target ]. Allocated once; nothing else on the data path allocates.
  const memory = allocatePumpMemory(request, HEAD_BYTES + scratchSize * opened.length);
  const hashes = new GrainHashes(grain, layout.streamBytes, memory.hash);
  const chunk = memory.bytes.subarray(0, chunkSize);
  const head = memory.extra.subarray(0, HEAD_BYTES);
  const scratchOf = new Map(opened.map((t, i) => [t, memory.extra.subarray(HEAD_BYTES + i * scratchSize, HEAD_BYTES + (i + 1) * scratchSize)]));
  // Capacity markers are built and read back in each target's scratch block: they are written
  // before the image and read after it, never while a partial last block needs that block.
  const markers = job.capacityCheck === false ? null : new MarkerFormat(memory.hash);
  const capacityChecks = new Map<WriteTarget, CapacityCheck>();

  let active = opened;
  /** Targets a write has succeeded on: a later refusal to write is then a failure part-way, not a refusal. */
  const wrote = new Set<WriteTarget>();
  let imageBytes = 0;
  /** Stream bytes read so far: ranges left out from now on must lie after them. */
  let received = 0;
  const limit = new LimitMeter();
  const meters = new Map(active.map((t) => [t, new ProgressMeter('writing', t.path, layout.streamBytes, (p) => emit({ ...p, ...withLimit(limit.current()) }))]));
  function emit(progress: Progress): void {
    job.onProgress?.(progress);
  }

  /** Runs `io` on every active target at once; a target whose I/O fails is dropped with its result. */
  const onEachTarget = async (io: (t: WriteTarget) => Promise<void>, near: number): Promise<void> => {
    const outcomes = await Promise.allSettled(active.map(io));
    const survivors: WriteTarget[] = [];
    outcomes.forEach((outcome, i) => {
      const target = active[i];
      if (target === undefined) return;
      if (outcome.status === 'fulfilled') survivors.push(target);
      else results.set(target.path, { status: 'failed', target: target.path, bytes: imageBytes, ...targetWriteFailure(target.path, outcome.reason, layout.deviceOffset(near), target.capacity, wrote.has(target)).failure });
    });
    active = survivors;
  };
  const endAll = (make: (t: WriteTarget) => TargetResult): void => {
    for (const t of active) results.set(t.path, make(t));
    active = [];
  };
  const cancelAll = async (): Promise<void> => {
    await Promise.allSettled(active.map((t) => t.sync()));
    const refused = job.skips?.refusal;
    const failure = refused !== undefined && refused !== null ? toFailure(refused) : refusedStop(job.signal);
    if (failure !== null) {
      endAll((t) => ({ status: 'failed', target: t.path, bytes: imageBytes, ...failure }));
    } else {
      endAll((t) => ({ status: 'cancelled', target: t.path, bytes: imageBytes }));
    }
  };
  /** Writes `length` stream bytes from `buffer`, which start at stream offset `at`, where the layout puts them. */
  const writeStream = async (t: WriteTarget, buffer: Buffer, length: number, at: number): Promise<void> => {
    const scratch = scratchOf.get(t) ?? chunk;
    for (const piece of layout.pieces(at, length)) {
      await t.write(buffer, piece.bufferOffset, piece.length, piece.deviceOffset, scratch);
      wrote.add(t);
    }
  };
  /** Writes each target's capacity markers past the image's `imageEnd` bytes, where nothing of the image goes. */
  const writeMarkers = async (imageEnd: number): Promise<void> => {
    if (markers === null) return;
    await onEachTarget(async (t) => {
      const check = CapacityCheck.plan(t, imageEnd, markers);
      if (check === null) return;
      capacityChecks.set(t, check);
      await check.write(scratchOf.get(t) ?? chunk);
    }, 0);
  };
  /** The source side's failure, as soon as it is known: nothing more it sends can be trusted. */
  const throwIfSourceFailed = (): void => {
    const end = job.sourceEnd?.current;
    if (end?.ok === false) throw new JobError(end.failure);
  };
  /**
   * Reads the image's next bytes, which start at stream offset `at`, into `into`. An image file
   * with ranges left out is read where they are, the rest of it never.
   */
  const readSource = async (into: Buffer, length: number, at: number): Promise<number> => {
    const got = await readStream(job.source, job.sourceSeekable, layout, into, length, at);
    received = Math.max(received, at + got);
    return got;
  };
  job.skips?.open((extents) => {
    layout.omit(extents, received);
    for (const meter of meters.values()) meter.total = layout.streamBytes;
  });

  try {
    // 1. The first MiB is read and kept aside; on the device it is blanked now and written last.
    const headRead = await unlessAborted(readSource(head, HEAD_BYTES, 0), job.signal);
    if (headRead === ABANDONED) return await cancelAll();
    const headLength = headRead;
    hashes.record(head.subarray(0, headLength), 0);
    imageBytes = headLength;
    // The chunk region is still all zeros here.
    await onEachTarget((t) => writeStream(t, chunk, alignDown(headLength, t.blockSize), 0), 0);
    // Markers go on before the image, so that the image pushes any cache of the drive past them.
    if (job.imageSize !== null) await writeMarkers(job.imageSize);

    // 2. Everything after it, through the pump: while one half of the chunk region is written
    //    (and hashed), the next bytes arrive in the other.
    let lastSync = performance.now();
    const pumped = await pump({
      halves: memory.halves,
      from: headLength,
      // A head shorter than its region was the whole image.
      length: headLength === HEAD_BYTES ? null : 0,
      read: readSource,
      admit: (bytes, at) => {
        throwIfSourceFailed();
        const streamBytes = layout.streamBytes;
        if (streamBytes !== null && at + bytes.length > streamBytes) {
          throw jobError('source-corrupt', `The image has more data than the ${streamBytes} bytes it announced; it may be corrupt.`, { offset: streamBytes });
        }
        return active.length > 0;
      },
      write: async (bytes, at) => {
        await onEachTarget((t) => writeStream(t, bytes, bytes.length, at), at);
        if (performance.now() - lastSync >= SYNC_INTERVAL_MS) {
          // What a failed flush reports: everything handed to the device up to here.
          imageBytes = at + bytes.length;
          await onEachTarget((t) => t.sync(), imageBytes);
          lastSync = performance.now();
        }
        return active.length > 0;
      },
      // Hashing runs on this thread while the thread pool writes the same bytes: both only read them.
      alongside: (bytes, at) => hashes.record(bytes, at),
      waited: (sourceMs, driveMs) => limit.waited(sourceMs, driveMs),
      advanced: (at) => {
        imageBytes = at;
        for (const t of active) meters.get(t)?.update(at);
      },
      signal: job.signal,
    });
    job.skips?.close();
    if (pumped.end === 'cancelled') return await cancelAll();
    if (active.length === 0) return;
    const streamBytes = layout.streamBytes;
    // 3. The source side's word on the stream comes before any verdict of our own: its reason
    //    (a corrupt archive, a checksum that does not match) is the real one, and a stream that
    //    ended early must never get its head written.
    if (job.sourceEnd !== undefined) {
      const end = await waitForSourceEnd(job.sourceEnd, job.signal);
      if (end === null) return await cancelAll();
      if (!end.ok) throw new JobError(end.failure);
      if (end.bytes !== null && end.bytes !== imageBytes) {
        throw jobError('source-read-error', `The image source sent ${end.bytes} bytes, but ${imageBytes} arrived.`, { offset: layout.deviceOffset(Math.min(end.bytes, imageBytes)) });
      }
    }
    if (streamBytes !== null && imageBytes < streamBytes) {
      const offset = layout.deviceOffset(imageBytes);
      throw jobError('source-truncated', `The image ended after ${offset} of its ${job.imageSize ?? streamBytes} bytes: the file is truncated (an incomplete download?).`, { offset });
    }
    // A stream of unknown length that brought nothing (an empty .gz or .bz2: sizes known in advance
    // are refused by the probe). The head was never blanked: 0 bytes were read for it.
    if (streamBytes === null && imageBytes === 0) {
      throw jobError('source-truncated', 'The image is empty: it decodes to 0 bytes, so there is nothing to write. Was the download or the image build interrupted?', { offset: 0 });
    }
    if (job.signal?.aborted) return await cancelAll();
    // A stream whose length showed only at its end gets its markers now, past what it turned out to be.
    if (job.imageSize === null) await writeMarkers(layout.imageEnd(imageBytes));

    // 4. The head, now that the rest is on the device.
    await onEachTarget((t) => writeStream(t, head, headLength, 0), 0);
    for (const t of active) meters.get(t)?.finish();

    for (const t of active) emit({ phase: 'syncing', target: t.path, bytesDone: imageBytes, bytesTotal: imageBytes, speed: 0, eta: null });
    await onEachTarget((t) => t.sync(), imageBytes);

    const skipped = layout.leftOut > 0 ? { skipped: layout.leftOut } : {};
    const verified = job.verify ? await verifyWritten({ targets: active, chunk, imageBytes, layout, hashes, job, emit }) : new Map<WriteTarget, VerifyOutcome>();
    // 5. Each target's capacity markers, then a repair of what verification found differing.
    const regionSize = alignDown(Math.floor(chunk.length / active.length), hashes.grain);
    const ends = await Promise.all(
      active.map(async (t, i): Promise<TargetEnd> => {
        const scratch = scratchOf.get(t) ?? chunk;
        const failed = (failure: Failure): TargetEnd => ({ status: 'failed', target: t.path, bytes: imageBytes, ...failure });
        const outcome = verified.get(t) ?? null;
        if (outcome?.status === 'cancelled') return { status: 'cancelled', target: t.path, bytes: imageBytes };
        try {
          const verdict = await capacityChecks.get(t)?.judge(scratch);
          // A drive that is not the size it claims explains any mismatch: nothing is repaired on it.
          // Its message says to stop using it; what the image on it is worth depends on the verify.
          if (verdict !== undefined && 'failure' in verdict) {
            const state = !job.verify ? ' The image on it was not verified (verification was turned off).' : outcome !== null ? ` The image on it did not verify either. ${DRIVE_INCOMPLETE}` : '';
            return failed({ ...verdict.failure, message: `${verdict.failure.message}${state}` });
          }
          const health: Health = verdict === undefined ? {} : { capacityCheck: verdict.passed };
          if (outcome === null) return { status: 'ok', health };
          if (outcome.differences === undefined) return failed(outcome.failure);
          const region = chunk.subarray(i * regionSize, (i + 1) * regionSize);
          const source = job.sourceSeekable ? fileRepairSource(job.source, 'The image file') : (job.repairs ?? null);
          const repair = await repairGrains({ target: t, differences: outcome.differences, failure: outcome.failure, imageBytes, layout, hashes, region, scratch, source, signal: job.signal, emit });
          if ('cancelled' in repair) return { status: 'cancelled', target: t.path, bytes: imageBytes };
          return 'failure' in repair ? failed(repair.failure) : { status: 'ok', health: { ...health, repaired: repair.repaired } };
        } catch (error) {
          // An I/O error of the capacity check or the repair is the drive's; anything else is Sluice's own (internal), never a write error at offset 0.
          return failed(errorCode(error) === '' ? toFailure(error) : targetWriteFailure(t.path, error, 0, t.capacity, true).failure);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    active.forEach((t, i) => {
      const end = ends[i];
      if (end === undefined) return;
      results.set(t.path, end.status === 'ok' ? { status: 'ok', target: t.path, bytes: imageBytes, written: true, verified: job.verify, seconds, ...skipped, ...end.health } : end);
    });
    // 6. Each drive's customisation, once its image is on it: written, then read back whether or not the image was.
    // The image reaches its whole size on the device even where a block map or free space left ranges unwritten
    // (the free clusters customisation allocates are among them): that, not the stream, bounds it.
    if (job.overlays !== undefined) await customiseTargets(opened, results, job.overlays, chunk, layout.imageEnd(imageBytes), job.signal);
  } catch (error) {
    // A source failure ends the job for every target still being written.
    const failure = error instanceof JobError ? error.failure : toFailure(error);
    endAll((t) => ({ status: 'failed', target: t.path, bytes: imageBytes, ...failure }));
  } finally {
    job.skips?.close();
  }
}

import { fstat } from 'node:fs';
import type { Progress } from '../common/progress.js';
import type { TargetResult } from '../common/result.js';
import { KiB, MiB } from '../common/units.js';
import { settleTarget } from './after-write.js';
import { alignDown, alignUp, allocateJobMemory } from './aligned-buffer.js';
import { fail, FlashError, sourceReadFailure, targetWriteFailure, toFailure } from './errors.js';
import { chooseGrain, GrainHashes } from './grain-hashes.js';
import { readFully } from './io.js';
import { currentPlatform } from './platform/index.js';
import type { DevicePlatform } from './platform/types.js';
import { ProgressMeter } from './progress-meter.js';
import { TargetDevice } from './target-device.js';
import { verifyWritten } from './verify-written.js';

/**
 * The partition tables live in the first megabyte. It is written last, after everything else, and
 * blanked first, so a failed or cancelled job never leaves a disk that looks bootable.
 */
export const HEAD_BYTES = 1 * MiB;

/**
 * Bytes per read and write request. Measured on a loop device on /dev/shm (1 GiB, O_DIRECT):
 * 1 MiB requests 0.93 s, 2 MiB 0.63 s, 4 MiB 0.47-0.67 s, 8 MiB 0.49-0.63 s, 16 MiB 0.53-0.60 s.
 * 4 MiB is where the curve flattens; devices that announce a larger optimal I/O size get
 * OPTIMAL_IO_FACTOR times that, up to MAX_CHUNK.
 */
export const DEFAULT_CHUNK = 4 * MiB;
const OPTIMAL_IO_FACTOR = 16;
const MAX_CHUNK = 16 * MiB;

/**
 * With O_DIRECT nothing waits in the page cache, but a device's own write cache may. A flush
 * every second keeps progress honest (what is counted is on the medium) and bounds what a
 * cancel or an unplug can lose, at one cheap request per second.
 */
const SYNC_INTERVAL_MS = 1000;

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
  /** Read every target back and compare (default in every front end). */
  verify: boolean;
  /** Eject each drive after a good write (the front ends default to it); off, the OS just re-reads its partitions. */
  eject?: boolean | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  /** The OS seam; tests of other OSes' rules pass their own. */
  platform?: DevicePlatform | undefined;
  /** Override of the request size in bytes (a multiple of 1 MiB), for benchmarks. */
  chunkSize?: number | undefined;
}

/** The st_dev of the file behind `fd`, or null when it is not a regular file (a decoder's pipe). */
function fileDevice(fd: number): Promise<number | null> {
  return new Promise((resolve) => fstat(fd, (error, st) => resolve(error === null && st.isFile() ? st.dev : null)));
}

function chooseChunkSize(targets: readonly TargetDevice[], override: number | undefined): number {
  if (override !== undefined) return alignUp(override, MiB);
  const optimal = Math.max(0, ...targets.map((t) => t.facts.optimalIoSize));
  return Math.min(MAX_CHUNK, Math.max(DEFAULT_CHUNK, alignUp(optimal * OPTIMAL_IO_FACTOR, MiB)));
}

/** Bytes reserved per target for read-modify-write of a partial last block. */
function scratchBytes(targets: readonly TargetDevice[]): number {
  return alignUp(Math.max(...targets.map((t) => t.blockSize)), 4 * KiB);
}

/**
 * Writes the image to every target and verifies it. Resolves with one result per target, in the
 * order given; never rejects. A target that fails is dropped with its own result while the
 * others carry on.
 */
export async function flash(job: FlashJob): Promise<TargetResult[]> {
  const platform = job.platform ?? currentPlatform();
  const results = new Map<string, TargetResult>();
  const active: TargetDevice[] = [];
  const sourceDevice = await fileDevice(job.source);
  for (const path of job.targets) {
    try {
      active.push(await TargetDevice.open(path, job.imageSize, sourceDevice, platform));
    } catch (error) {
      results.set(path, { status: 'failed', target: path, bytes: 0, ...toFailure(error) });
    }
  }
  if (active.length > 0) {
    try {
      await runJob(job, active, results);
    } finally {
      await Promise.allSettled(active.map((t) => t.close()));
    }
    await Promise.all(
      active.map(async (t) => {
        const result = results.get(t.path);
        if (result !== undefined) results.set(t.path, await settleTarget(t.facts, result, job.eject ?? false, platform));
      }),
    );
  }
  return job.targets.map((path) => results.get(path) ?? { status: 'failed', target: path, bytes: 0, ...toFailure(new Error('no result')) });
}

async function runJob(job: FlashJob, opened: TargetDevice[], results: Map<string, TargetResult>): Promise<void> {
  const started = performance.now();
  const maxBytes = job.imageSize ?? Math.max(...opened.map((t) => t.facts.size));
  const grain = chooseGrain(maxBytes);
  // Verification gives each target its own slice of the chunk region, at least one grain each.
  const chunkSize = Math.max(chooseChunkSize(opened, job.chunkSize), grain * opened.length);
  const scratchSize = scratchBytes(opened);

  // The job's one buffer: [ chunk | head (first MiB) | one scratch block per target ].
  const jobMemory = allocateJobMemory(chunkSize + HEAD_BYTES + scratchSize * opened.length);
  const memory = jobMemory.bytes;
  const hashes = new GrainHashes(grain, job.imageSize, jobMemory.hash);
  const chunk = memory.subarray(0, chunkSize);
  const head = memory.subarray(chunkSize, chunkSize + HEAD_BYTES);
  const scratchOf = new Map(opened.map((t, i) => [t, memory.subarray(chunkSize + HEAD_BYTES + i * scratchSize, chunkSize + HEAD_BYTES + (i + 1) * scratchSize)]));

  let active = opened;
  let imageBytes = 0;
  const meters = new Map(active.map((t) => [t, new ProgressMeter('writing', t.path, job.imageSize, emit)]));
  function emit(progress: Progress): void {
    job.onProgress?.(progress);
  }

  /** Runs `io` on every active target at once; a target whose I/O fails is dropped with its result. */
  const onEachTarget = async (io: (t: TargetDevice) => Promise<void>, near: number): Promise<void> => {
    const outcomes = await Promise.allSettled(active.map(io));
    const survivors: TargetDevice[] = [];
    outcomes.forEach((outcome, i) => {
      const target = active[i];
      if (target === undefined) return;
      if (outcome.status === 'fulfilled') survivors.push(target);
      else results.set(target.path, { status: 'failed', target: target.path, bytes: imageBytes, ...targetWriteFailure(target.path, outcome.reason, near).failure });
    });
    active = survivors;
  };
  const endAll = (make: (t: TargetDevice) => TargetResult): void => {
    for (const t of active) results.set(t.path, make(t));
    active = [];
  };
  const readSource = async (into: Buffer, length: number): Promise<number> => {
    try {
      return await readFully(job.source, into, 0, length, null);
    } catch (error) {
      throw sourceReadFailure(imageBytes, error);
    }
  };

  try {
    // 1. The first MiB is read and kept aside; on the device it is blanked now and written last.
    const headLength = await readSource(head, HEAD_BYTES);
    hashes.record(head.subarray(0, headLength), 0);
    imageBytes = headLength;
    await onEachTarget((t) => t.write(chunk, 0, alignDown(headLength, t.blockSize), 0, scratchOf.get(t) ?? chunk), 0);

    // 2. Everything after it, one chunk at a time through the same buffer.
    let lastSync = performance.now();
    let more = headLength === HEAD_BYTES;
    while (more && active.length > 0) {
      if (job.signal?.aborted) {
        await Promise.allSettled(active.map((t) => t.sync()));
        endAll((t) => ({ status: 'cancelled', target: t.path, bytes: imageBytes }));
        return;
      }
      const n = await readSource(chunk, chunkSize);
      if (n === 0) break;
      if (job.imageSize !== null && imageBytes + n > job.imageSize) {
        throw fail('source-corrupt', `The image has more data than the ${job.imageSize} bytes it announced; it may be corrupt.`, { offset: job.imageSize });
      }
      const position = imageBytes;
      // Hashing runs on this thread while the thread pool writes the same bytes: both only read them.
      const writes = onEachTarget((t) => t.write(chunk, 0, n, position, scratchOf.get(t) ?? chunk), position);
      hashes.record(chunk.subarray(0, n), position);
      await writes;
      imageBytes += n;
      for (const t of active) meters.get(t)?.update(imageBytes);
      more = n === chunkSize;
      if (performance.now() - lastSync >= SYNC_INTERVAL_MS) {
        await onEachTarget((t) => t.sync(), imageBytes);
        lastSync = performance.now();
      }
    }
    if (job.imageSize !== null && imageBytes < job.imageSize) {
      throw fail('source-truncated', `The image ended after ${imageBytes} of its ${job.imageSize} bytes: the file is truncated (an incomplete download?).`, { offset: imageBytes });
    }

    // 3. The head, now that the rest is on the device.
    await onEachTarget((t) => t.write(head, 0, headLength, 0, scratchOf.get(t) ?? chunk), 0);
    for (const t of active) meters.get(t)?.finish();

    for (const t of active) emit({ phase: 'syncing', target: t.path, bytesDone: imageBytes, bytesTotal: imageBytes, speed: 0, eta: null });
    await onEachTarget((t) => t.sync(), imageBytes);

    if (!job.verify) {
      const seconds = (performance.now() - started) / 1000;
      endAll((t) => ({ status: 'ok', target: t.path, bytes: imageBytes, written: true, verified: false, seconds }));
      return;
    }
    const verified = await verifyWritten({ targets: active, chunk, imageBytes, hashes, job, emit });
    const seconds = (performance.now() - started) / 1000;
    for (const [t, outcome] of verified) {
      results.set(t.path, outcome === null ? { status: 'ok', target: t.path, bytes: imageBytes, written: true, verified: true, seconds } : outcome.status === 'cancelled' ? { status: 'cancelled', target: t.path, bytes: imageBytes } : { status: 'failed', target: t.path, bytes: imageBytes, ...outcome.failure });
    }
  } catch (error) {
    // A source failure ends the job for every target still being written.
    const failure = error instanceof FlashError ? error.failure : toFailure(error);
    endAll((t) => ({ status: 'failed', target: t.path, bytes: imageBytes, ...failure }));
  }
}

import { fstat } from 'node:fs';
import { reachedDrive, type TargetResult } from '../common/domain/result.js';
import { KiB, MiB } from '../common/domain/units.js';
import { settleTarget } from './after-write.js';
import { allocateJobMemory, alignUp } from './job-memory.js';
import { refusedStop } from './failures.js';
import { JobError, jobError, toFailure } from '../common/domain/failure.js';
import { chooseGrain, GrainHashes } from './grain-hashes.js';
import { ABANDONED, DEFAULT_REQUEST, unlessAborted } from './pump.js';
import { currentPlatform } from './platform/index.js';
import type { DevicePlatform } from './platform/types.js';
import type { Progress } from '../common/domain/progress.js';
import type { SourceEndSignal } from './source-end.js';
import type { Extent } from '../common/domain/extents.js';
import type { SkipInbox } from './skip-inbox.js';
import { readStream } from './read-stream.js';
import { readGrowing, rereadGrown } from './growing-source.js';
import { streamLayoutOf, type StreamLayout } from './stream-layout.js';
import { TargetDevice } from './target-device.js';
import type { Overlays } from './overlay.js';
import type { WriteTarget } from './write-target.js';
import { MarkerFormat } from './capacity-markers.js';
import type { RepairSource } from './repair-inbox.js';
import { runCard, type JobShare } from './card-run.js';
import { StreamRing, type StreamRead } from './stream-ring.js';

/**
 * The partition tables live in the first megabyte. It is written last, after everything else, and
 * blanked first, so a failed or cancelled job never leaves a disk that looks bootable.
 */
export const HEAD_BYTES = 1 * MiB;

/** Devices that announce an optimal I/O size get requests of this many times it (DEFAULT_REQUEST at least). */
const OPTIMAL_IO_FACTOR = 16;
const MAX_CHUNK = 16 * MiB;

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
  /**
   * The source is a regular file the unprivileged side is still writing the stream into (a batch's
   * one decoded copy, see growing-source.ts): it is read in order, its end is `sourceEnd`'s, and a
   * target that fell behind reads it again at its stream offsets. Needs `sourceEnd`.
   */
  sourceGrows?: boolean | undefined;
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
  return new Promise((resolve) =>
    fstat(fd, (error, st) =>
      resolve(error !== null ? null : st.isFile() ? st.dev : st.isBlockDevice() ? st.rdev : null),
    ),
  );
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
    if (job.media !== undefined && job.media.length !== job.targets.length)
      throw jobError(
        'protocol-error',
        `The job names media for ${job.media.length} of its ${job.targets.length} drives.`,
      );
    layout = streamLayoutOf(job);
  } catch (error) {
    job.skips?.close();
    return job.targets.map((path) => ({ status: 'failed', target: path, bytes: 0, ...toFailure(error) }));
  }
  const platform = job.platform ?? (await currentPlatform());
  const { active, results } = await openTargets(job, platform);
  if (active.length === 0) job.skips?.close();
  else {
    try {
      for (const [path, result] of await writeTargets(job, layout, active)) results.set(path, result);
    } finally {
      await Promise.allSettled(active.map((t) => t.close()));
    }
    await settleTargets(job, platform, active, results);
  }
  return job.targets.map(
    (path) => results.get(path) ?? { status: 'failed', target: path, bytes: 0, ...toFailure(new Error('no result')) },
  );
}

/** Opens and checks every target the job names; one that is refused has its result already. */
async function openTargets(
  job: FlashJob,
  platform: DevicePlatform,
): Promise<{ active: TargetDevice[]; results: Map<string, TargetResult> }> {
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
  return { active, results };
}

/** Each closed drive handed back to the OS: ejected after a good write, or its partitions re-read (after-write.ts). */
async function settleTargets(
  job: FlashJob,
  platform: DevicePlatform,
  active: readonly TargetDevice[],
  results: Map<string, TargetResult>,
): Promise<void> {
  await Promise.all(
    active.map(async (t) => {
      const result = results.get(t.path);
      if (result !== undefined)
        results.set(
          t.path,
          await settleTarget(t.facts, t.reached ? reachedDrive(result) : result, job.eject ?? false, platform),
        );
    }),
  );
}

/** What writeTargets needs of a job: everything but how its targets are found and opened. */
export type WriteJob = Omit<FlashJob, 'targets' | 'eject' | 'platform' | 'extents'>;

/**
 * The ring holds a slot for every two targets (two at least), up to RING_BYTES. With equal cards
 * it only has to absorb their jitter: measured with 4 to 32 cards at 8 MB/s from an .xz, no card
 * waited on another (16 cards took 1.08x one card's time). A card slower than that leaves the
 * ring for the image file, or, from a pipe, holds the others back by at most the ring. Each slot
 * counts against the memory promise of 16 MB + 6 MB per card, beside each target's own 4 MiB.
 */
const RING_BYTES = 16 * MiB;

function ringBytes(request: number, targets: number): number {
  return request * Math.max(2, Math.min(Math.ceil(targets / 2), Math.floor(RING_BYTES / request)));
}

/**
 * The writing loop for targets that are already open (devices after their checks, or files):
 * writes the stream to all of them at once, each at its own pace, head last, and verifies each.
 * Resolves with one result per target path; never rejects.
 */
export async function writeTargets(
  job: WriteJob,
  layout: StreamLayout,
  opened: readonly WriteTarget[],
): Promise<Map<string, TargetResult>> {
  const started = performance.now();
  const buffer = jobBuffer(job, layout, opened);
  const { memory, request, ring, head } = buffer;
  const hashes = new GrainHashes(buffer.grain, layout.streamBytes, memory.hash);
  const source = jobSource(job, layout, hashes);
  const results = new Map<string, TargetResult>();
  try {
    // The first MiB is read once, before the targets part ways.
    const headRead = await unlessAborted(source.read(head, HEAD_BYTES, 0), job.signal);
    const share: JobShare = {
      job,
      layout,
      hashes,
      markers: job.capacityCheck === false ? null : new MarkerFormat(memory.hash),
      head,
      headLength: headRead === ABANDONED ? 0 : headRead,
      started,
      emit: (progress) => job.onProgress?.(progress),
    };
    const shared =
      ring > 0 ? new StreamRing(memory.bytes.subarray(0, ring), request, HEAD_BYTES, source.read, source.reread) : null;
    const ends = await Promise.all(
      opened.map((target, i) => {
        const card = {
          target,
          ...buffer.card(i),
          source: shared?.reader() ?? { read: source.read, release: () => undefined },
        };
        return headRead === ABANDONED ? cancelledCard(job, target) : runCard(share, card);
      }),
    );
    opened.forEach((t, i) =>
      results.set(
        t.path,
        ends[i] ?? { status: 'failed', target: t.path, bytes: 0, ...toFailure(new Error('no result')) },
      ),
    );
  } catch (error) {
    // The head's read failed: the source's failure is every target's, before any was written.
    const failure = error instanceof JobError ? error.failure : toFailure(error);
    for (const t of opened) results.set(t.path, { status: 'failed', target: t.path, bytes: 0, ...failure });
  } finally {
    job.skips?.close();
  }
  return results;
}

/**
 * The job's one buffer: [ ring, when targets share the stream | head (first MiB) | per target:
 * its pump's two halves of one request each, and a scratch block ]. Allocated once; nothing
 * else on the data path allocates.
 */
function jobBuffer(job: WriteJob, layout: StreamLayout, opened: readonly WriteTarget[]) {
  // A file has no capacity: a stream of unknown length into one gets the largest grain.
  const grain = chooseGrain(
    layout.streamBytes ?? Math.max(...opened.map((t) => t.capacity ?? Number.MAX_SAFE_INTEGER)),
  );
  const request = Math.max(chooseChunkSize(opened, job.chunkSize), grain);
  const perCard = 2 * request + scratchBytes(opened);
  const ring = opened.length > 1 ? ringBytes(request, opened.length) : 0;
  const memory = allocateJobMemory(ring + HEAD_BYTES + perCard * opened.length);
  return {
    grain,
    request,
    ring,
    memory,
    head: memory.bytes.subarray(ring, ring + HEAD_BYTES),
    /** Target `i`'s pump region (two halves of one request) and its scratch block. */
    card: (i: number) => {
      const base = ring + HEAD_BYTES + i * perCard;
      return {
        region: memory.bytes.subarray(base, base + 2 * request),
        scratch: memory.bytes.subarray(base + 2 * request, base + perCard),
      };
    },
  };
}

/** A target of a job cancelled before its first byte was read. */
function cancelledCard(job: WriteJob, target: WriteTarget): Promise<TargetResult> {
  const refused = job.skips?.refusal;
  const failure = refused !== undefined && refused !== null ? toFailure(refused) : refusedStop(job.signal);
  return Promise.resolve(
    failure !== null
      ? { status: 'failed', target: target.path, bytes: 0, ...failure }
      : { status: 'cancelled', target: target.path, bytes: 0 },
  );
}

/**
 * The job's one reader of its source. Every byte is read here once, checked and hashed (the
 * hashes every target is verified against), whether one target reads it or a ring feeds many.
 * `reread` reads an image file, or a batch's decoded copy, again where a target that fell behind
 * needs it; null for a pipe.
 */
function jobSource(
  job: WriteJob,
  layout: StreamLayout,
  hashes: GrainHashes,
): { read: StreamRead; reread: StreamRead | null } {
  /** Stream bytes read so far: ranges left out from now on must lie after them. */
  let received = 0;
  job.skips?.open((extents) => layout.omit(extents, received));
  const growing = job.sourceGrows === true && job.sourceEnd !== undefined ? job.sourceEnd : null;
  return {
    read: async (into, length, at) => {
      const got =
        growing === null
          ? await readStream(job.source, job.sourceSeekable, layout, into, length, at)
          : await readGrowing(job.source, growing, into, length, at, job.signal);
      received = Math.max(received, at + got);
      const end = job.sourceEnd?.current;
      if (end?.ok === false) throw new JobError(end.failure);
      const streamBytes = layout.streamBytes;
      if (streamBytes !== null && at + got > streamBytes) {
        throw jobError(
          'source-corrupt',
          `The image has more data than the ${streamBytes} bytes it announced; it may be corrupt.`,
          { offset: streamBytes },
        );
      }
      hashes.record(into.subarray(0, got), at);
      // The last byte is read: a skip after it is refused.
      if (got < length) job.skips?.close();
      return got;
    },
    reread:
      growing !== null
        ? (into, length, at) => rereadGrown(job.source, into, length, at)
        : job.sourceSeekable
          ? (into, length, at) => readStream(job.source, true, layout, into, length, at, true)
          : null,
  };
}

/**
 * `sluice check`: finds a drive's real capacity without losing its data. Every block it writes is
 * read and kept first, and written back afterwards (then read again, to prove it); a cancel stops
 * at the next step and restores; a drive that goes away is reported with exactly the blocks that
 * could not be restored.
 *
 * 1. Markers (capacity-markers.ts) placed as a flash's check places them but fewer (the first and
 *    last block and each power of two), over the whole drive past its first MiB (the partition
 *    table is never touched), written highest first, synced, and read back through a descriptor
 *    opened afresh, so that nothing cached on this side can answer. A block that reads back as it
 *    was saved (the drive dropped the marker) needs no restoring.
 * 2. For dropped writes or errors, bisection between the last marker that came back and the first
 *    that did not, down to MARKER_ALIGN, one marker at a time, each saved and restored the same way.
 *    A wrap-around needs no bisection: the distance between two offsets that came back as one
 *    marker is its period.
 */
import { fakeCapacityMessage } from '../common/domain/fake-capacity.js';
import { errorCode } from '../common/domain/error-details.js';
import { jobError, toFailure, type Failure } from '../common/domain/failure.js';
import type { TargetResult } from '../common/domain/result.js';
import { MiB } from '../common/domain/units.js';
import { closeFd, readFully } from '../node/io.js';
import { judgeMarkers, MARKER_ALIGN, MarkerFormat, markerPositions, type MarkerReading } from './capacity-markers.js';
import { allocateJobMemory, alignDown, alignUp, type JobMemory } from './job-memory.js';
import { openInspected } from './open-device.js';
import { currentPlatform } from './platform/index.js';
import type { DevicePlatform } from './platform/types.js';
import { TargetDevice } from './target-device.js';
import { targetReadFailure } from './failures.js';

/** The first MiB, where partition tables live, is never written, even for a moment. */
const PROTECTED_BYTES = MiB;
/**
 * The first round's geometric markers: none. A flash has no bisection after its markers, so it
 * spreads 200; the check bisects, and its first round only has to bracket the real capacity, which
 * the markers at each power of two already do (a ratio of 2 at most). Each marker costs up to two
 * small writes (the marker, then the saved block), and small writes are what a card is slow at. On
 * the 4 GiB limbo fake (256 MiB real) the check wrote 86 blocks with 16 geometric markers and 52
 * with none, for one more bisection round and the same answer; with 200 the whole `sluice check`
 * took 1.93 s at 2 ms a write, with 16 0.84 s.
 */
const CHECK_GEOMETRIC_MARKERS = 0;

export interface CheckJob {
  target: string;
  /** The medium the user chose in the drive (Drive.medium): a drive that holds another is not checked. */
  medium?: string | null | undefined;
  signal?: AbortSignal | undefined;
  platform?: DevicePlatform | undefined;
}

/** The drive went away: nothing more can be written to it, restoring included. */
class DriveGone extends Error {}

function isGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENODEV' || code === 'ENXIO' || code === 'ENOENT' || code === 'ENOMEDIUM';
}

/** One round: saves the blocks at `positions`, writes markers there, reads them back, restores. */
class Round {
  /** Positions whose original bytes are kept in `saved` (the rest could not be read: they are bad already). */
  readonly kept: number[] = [];
  readonly unreadable = new Set<number>();
  /** Positions a marker was written to (the write succeeded) and not yet proven restored. */
  readonly dirty = new Set<number>();

  constructor(
    private readonly check: DriveCheck,
    readonly positions: readonly number[],
  ) {}

  /** The i-th saved block. */
  private saved(i: number): Buffer {
    return this.check.slot(i);
  }

  async run(): Promise<MarkerReading[]> {
    const { device, format } = this.check;
    const size = device.blockSize;
    for (const position of this.positions) {
      try {
        const got = await device.read(this.saved(this.kept.length), 0, size, position);
        if (got < size) throw Object.assign(new Error('short read'), { code: 'EIO' });
        this.kept.push(position);
      } catch (error) {
        if (isGone(error)) throw new DriveGone();
        this.unreadable.add(position);
      }
    }
    const failedWrites = new Set<number>();
    const block = this.check.markerBlock();
    for (const position of [...this.kept].reverse()) {
      if (this.check.cancelled()) return [];
      format.fill(block, position);
      try {
        await device.write(block, 0, size, position, block);
        this.dirty.add(position);
      } catch (error) {
        if (isGone(error)) throw new DriveGone();
        failedWrites.add(position);
      }
    }
    await this.check.sync();
    const readings = await this.check.readFresh(this.kept, failedWrites, (i, position, block) => {
      // The drive dropped the marker and still holds what was saved (a limbo fake past its real
      // size): read back past any cache, the block is as it was, so there is nothing to put back.
      // On such a card this saves about half the check's writes, the slow part of a card.
      if (block.equals(this.saved(i).subarray(0, block.length))) this.dirty.delete(position);
    });
    for (const position of this.unreadable) readings.push({ position, state: 'error' });
    return readings;
  }

  /** Writes every kept block back, syncs, and reads each again to prove it; the offsets that failed stay dirty. */
  async restore(): Promise<void> {
    const { device } = this.check;
    const size = device.blockSize;
    const scratch = this.check.markerBlock();
    for (const [i, position] of this.kept.entries()) {
      if (!this.dirty.has(position)) continue;
      await device.write(this.saved(i), 0, size, position, scratch);
    }
    await this.check.sync();
    for (const [i, position] of this.kept.entries()) {
      if (!this.dirty.has(position)) continue;
      const got = await device.read(scratch, 0, size, position);
      if (got === size && scratch.subarray(0, size).equals(this.saved(i).subarray(0, size)))
        this.dirty.delete(position);
    }
  }
}

class DriveCheck {
  readonly format: MarkerFormat;
  private readonly stride: number;

  constructor(
    readonly device: TargetDevice,
    private readonly memory: JobMemory,
    private readonly platform: DevicePlatform,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.format = new MarkerFormat(memory.hash);
    this.stride = alignUp(device.blockSize, MARKER_ALIGN);
  }

  /** Room for this many saved blocks, besides the marker block. */
  static slots(positions: number): number {
    return positions + 1;
  }

  slot(i: number): Buffer {
    return this.memory.bytes.subarray((i + 1) * this.stride, (i + 2) * this.stride);
  }

  markerBlock(): Buffer {
    return this.memory.bytes.subarray(0, this.device.blockSize);
  }

  cancelled(): boolean {
    return this.signal?.aborted === true;
  }

  async sync(): Promise<void> {
    try {
      await this.device.sync();
    } catch (error) {
      if (isGone(error)) throw new DriveGone();
    }
  }

  /**
   * Reads the markers at `positions` through a descriptor opened for this read alone, with direct
   * I/O: what comes back is what the drive gives, not anything kept on this side. `onRead` sees
   * each block read whole (at the i-th of `positions`) before it is classified.
   */
  async readFresh(
    positions: readonly number[],
    failedWrites: ReadonlySet<number>,
    onRead: (i: number, position: number, block: Buffer) => void,
  ): Promise<MarkerReading[]> {
    const { facts, blockSize: size } = this.device;
    const fd = await openInspected(
      facts,
      this.platform.readFlags,
      (error) => targetReadFailure(facts.path, error, 0).failure,
    ).catch((error: unknown) => {
      throw isGone(error) ? new DriveGone() : error;
    });
    const block = this.markerBlock();
    const readings: MarkerReading[] = [];
    try {
      for (const [i, position] of positions.entries()) {
        if (failedWrites.has(position)) {
          readings.push({ position, state: 'error' });
          continue;
        }
        try {
          const got = await readFully(fd, block, 0, size, position);
          if (got < size) {
            readings.push({ position, state: 'error' });
            continue;
          }
          onRead(i, position, block);
          readings.push({ position, ...this.format.classify(block, position) });
        } catch (error) {
          if (isGone(error)) throw new DriveGone();
          readings.push({ position, state: 'error' });
        }
      }
    } finally {
      await closeFd(fd);
    }
    return readings;
  }
}

/** What a check found, before it is worded. */
interface Finding {
  markers: number;
  fake: ReturnType<typeof judgeMarkers>;
}

/** Runs `positions` as one round, restoring whatever happens; adds what could not be restored to `unrestored`. */
async function round(
  check: DriveCheck,
  positions: readonly number[],
  unrestored: Set<number>,
): Promise<MarkerReading[] | null> {
  const r = new Round(check, positions);
  try {
    return check.cancelled() ? null : await r.run();
  } finally {
    try {
      await r.restore();
    } catch {
      // The drive went away while being restored: what is still dirty is reported below.
    }
    for (const position of r.dirty) unrestored.add(position);
  }
}

async function findCapacity(check: DriveCheck, unrestored: Set<number>): Promise<Finding | null> {
  const { device } = check;
  const capacity = device.capacity;
  const size = device.blockSize;
  const positions = markerPositions(PROTECTED_BYTES, capacity, size, CHECK_GEOMETRIC_MARKERS);
  const readings = await round(check, positions, unrestored);
  if (readings === null || check.cancelled()) return null;
  const fake = judgeMarkers(readings, PROTECTED_BYTES, capacity, size);
  let markers = positions.length;
  if (fake === null || fake.kind === 'wrap-around') return { markers, fake };
  // Bisection: `good` came back, `bad` did not; the real capacity ends between them.
  const sorted = [...readings].sort((a, b) => a.position - b.position);
  const firstBad = sorted.find((r) => r.state !== 'ok')?.position ?? capacity;
  let good = sorted.filter((r) => r.state === 'ok' && r.position < firstBad).at(-1)?.position ?? null;
  let bad = firstBad;
  while (good !== null && bad - good > MARKER_ALIGN) {
    const mid = alignDown(good + (bad - good) / 2, MARKER_ALIGN);
    const [reading] = (await round(check, [mid], unrestored)) ?? [];
    if (reading === undefined || check.cancelled()) return null;
    markers += 1;
    if (reading.state === 'ok') good = mid;
    else bad = mid;
  }
  return { markers, fake: { ...fake, realBytes: bad } };
}

/** Blocks named one by one in a message (about 800 characters); a round writes at most about 250. */
const LISTED = 64;

/** The sentence for blocks that could not be put back. */
function unrestoredWords(path: string, unrestored: ReadonlySet<number>): string {
  const offsets = [...unrestored].sort((a, b) => a - b);
  const list =
    offsets.length <= LISTED
      ? offsets.join(', ')
      : `${offsets.slice(0, LISTED).join(', ')} and ${offsets.length - LISTED} more`;
  return `${offsets.length === 1 ? '1 block' : `${offsets.length} blocks`} of ${path} could not be restored (at byte ${offsets.length === 1 ? 'offset' : 'offsets'} ${list}): they hold Sluice's test markers instead of their data.`;
}

/**
 * Checks `job.target` for its real capacity and puts back every block it wrote. Resolves with the
 * target's result; never rejects: ok (it holds what it claims; `capacityCheck` says how many
 * markers and how long), failed with target-fake-capacity (the kind and the real capacity), or
 * cancelled; a block that could not be restored turns any of these into a failure that lists it.
 */
export async function checkFakeCapacity(job: CheckJob): Promise<TargetResult> {
  const started = performance.now();
  const target = job.target;
  const platform = job.platform ?? (await currentPlatform());
  let device: TargetDevice;
  try {
    device = await TargetDevice.open(target, null, null, platform, job.medium ?? null);
  } catch (error) {
    return { status: 'failed', target, bytes: 0, ...toFailure(error) };
  }
  const unrestored = new Set<number>();
  let finding: Finding | null = null;
  let failure: Failure | null = null;
  try {
    const most = markerPositions(PROTECTED_BYTES, device.capacity, device.blockSize, CHECK_GEOMETRIC_MARKERS).length;
    const memory = allocateJobMemory(
      DriveCheck.slots(most) * alignUp(device.blockSize, MARKER_ALIGN) + alignUp(device.blockSize, MARKER_ALIGN),
    );
    finding = await findCapacity(new DriveCheck(device, memory, platform, job.signal), unrestored);
  } catch (error) {
    failure =
      error instanceof DriveGone
        ? jobError('target-unplugged', `${target} went away while it was checked.`).failure
        : toFailure(error);
  } finally {
    await device.close().catch(() => undefined);
  }
  const seconds = (performance.now() - started) / 1000;
  if (unrestored.size > 0) {
    const why = failure?.message ?? (finding === null ? 'The check was cancelled.' : '');
    return {
      status: 'failed',
      target,
      bytes: 0,
      code: failure?.code ?? 'write-error',
      message: `${why} ${unrestoredWords(target, unrestored)}`.trim(),
      offset: Math.min(...unrestored),
    };
  }
  if (failure !== null)
    return {
      status: 'failed',
      target,
      bytes: 0,
      ...failure,
      message: `${failure.message} Every block it wrote was restored.`,
    };
  if (finding === null) return { status: 'cancelled', target, bytes: 0 };
  if (finding.fake !== null) {
    return {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-fake-capacity',
      message: fakeCapacityMessage(target, finding.fake),
      offset: finding.fake.realBytes,
      fakeCapacity: finding.fake,
    };
  }
  return {
    status: 'ok',
    target,
    bytes: device.capacity,
    written: false,
    verified: true,
    seconds,
    capacityCheck: { markers: finding.markers, seconds },
  };
}

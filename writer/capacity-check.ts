/**
 * The capacity check of every flash: markers (capacity-markers.ts) go onto the part of each drive
 * the image does not cover before the image is written, and are read back with direct I/O after
 * it, once the image has pushed any cache of the drive far past their size. Markers lie past the
 * image's end, where nothing of the image lives: an OS that grows its root partition later treats
 * them as free space.
 */
import { fakeCapacityMessage } from '../common/domain/fake-capacity.js';
import { jobError, type Failure } from '../common/domain/failure.js';
import { errorCode } from '../common/domain/error-details.js';
import { judgeMarkers, markerPositions, type MarkerFormat, type MarkerReading } from './capacity-markers.js';
import { targetReadFailure } from './failures.js';
import type { WriteTarget } from './write-target.js';

/** A drive that went away is not a fake: its I/O fails because it is gone. */
const GONE = new Set(['ENODEV', 'ENXIO', 'ENOENT', 'ENOMEDIUM']);

/** How the check of one target ended: passed (with its cost), or the fake it found. */
export type CapacityVerdict = { passed: { markers: number; seconds: number } } | { failure: Failure };

/** The markers of one target, from writing them to judging what came back. */
export class CapacityCheck {
  private readonly failedWrites = new Set<number>();
  private seconds = 0;

  private constructor(
    private readonly target: WriteTarget,
    private readonly capacity: number,
    private readonly from: number,
    private readonly positions: readonly number[],
    private readonly format: MarkerFormat,
  ) {}

  /** The check for `target` past the image's `imageEnd` bytes; null for a file, or a drive the image fills. */
  static plan(target: WriteTarget, imageEnd: number, format: MarkerFormat): CapacityCheck | null {
    if (target.capacity === null) return null;
    const positions = markerPositions(imageEnd, target.capacity, target.blockSize);
    return positions.length === 0 ? null : new CapacityCheck(target, target.capacity, imageEnd, positions, format);
  }

  /**
   * Writes every marker through `block` (an aligned block of the job memory), highest offset
   * first: where a drive maps two offsets onto one block, the lower offset's marker is the one
   * that stays, and the higher one reads back as it (see judgeMarkers). A write that fails with an
   * I/O error is noted, not thrown: it is what the check is looking for.
   */
  async write(block: Buffer): Promise<void> {
    const started = performance.now();
    const size = this.target.blockSize;
    for (const position of [...this.positions].reverse()) {
      this.format.fill(block.subarray(0, size), position);
      try {
        await this.target.write(block, 0, size, position, block);
      } catch (error) {
        if (GONE.has(errorCode(error))) throw error;
        this.failedWrites.add(position);
      }
    }
    this.seconds += (performance.now() - started) / 1000;
  }

  /** Reads every marker back and judges them; throws only when the drive went away. */
  async judge(block: Buffer): Promise<CapacityVerdict> {
    const started = performance.now();
    const size = this.target.blockSize;
    const view = block.subarray(0, size);
    const readings: MarkerReading[] = [];
    for (const position of this.positions) {
      if (this.failedWrites.has(position)) {
        readings.push({ position, state: 'error' });
        continue;
      }
      try {
        const got = await this.target.read(block, 0, size, position);
        readings.push(
          got < size ? { position, state: 'error' } : { position, ...this.format.classify(view, position) },
        );
      } catch (error) {
        if (GONE.has(errorCode(error))) throw targetReadFailure(this.target.path, error, position);
        readings.push({ position, state: 'error' });
      }
    }
    this.seconds += (performance.now() - started) / 1000;
    const fake = judgeMarkers(readings, this.from, this.capacity, size);
    if (fake === null) return { passed: { markers: this.positions.length, seconds: this.seconds } };
    const firstBad = readings.find((r) => r.state !== 'ok')?.position ?? this.from;
    return {
      failure: jobError('target-fake-capacity', fakeCapacityMessage(this.target.path, fake), {
        offset: firstBad,
        fakeCapacity: fake,
      }).failure,
    };
  }
}

import type { Failure } from '../common/domain/failure.js';
import { KiB, MiB } from '../common/domain/units.js';
import { alignDown, alignUp } from './job-memory.js';
import { JobError, jobError } from '../common/domain/failure.js';
import { closeFd, readFully, syncData, writeFully } from '../node/io.js';
import { openInspectedDisk } from './open-device.js';
import type { DeviceFacts, DevicePlatform, VolumeHold } from './platform/types.js';
import { refuseTarget } from './target-check.js';
import { openSameMedium, WRITES } from './medium-check.js';
import type { WriteTarget } from './write-target.js';
import { errorText } from '../common/domain/error-details.js';

/** The largest logical block size the engine's regions are laid out for (they are MiB multiples). */
export const MAX_LOGICAL_BLOCK = 1 * MiB;

/**
 * When a large write fails, it is retried in pieces this size to find where the device stopped
 * taking data: "failed at 16777216" tells a user more than "failed somewhere in these 4 MiB".
 */
const LOCATE_PIECE = 64 * KiB;

function openFailure(facts: DeviceFacts, error: unknown): Failure {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const path = facts.path;
  switch (code) {
    case 'EBUSY':
      return {
        code: 'target-busy',
        message: `${path} is in use by another program (mounted, or open in a disk tool). Close it and try again.`,
      };
    case 'EACCES':
    case 'EPERM':
      return {
        code: 'permission-denied',
        message: `No permission to write ${path}. Writing a disk needs administrator rights.`,
      };
    case 'EROFS':
      return {
        code: 'target-read-only',
        message: `${path} is read-only. If it is an SD card, slide its lock switch up and reinsert it.`,
      };
    case 'EINVAL':
      return {
        code: 'target-no-direct-io',
        message: `${path} does not support direct I/O, so Sluice could not verify it honestly; refusing to write it.`,
      };
    case 'ENOENT':
    case 'ENXIO':
    case 'ENODEV':
      return { code: 'target-not-found', message: `${path} disappeared before it could be opened: was it unplugged?` };
    default:
      return { code: 'internal', message: `Opening ${path} failed: ${errorText(error)}` };
  }
}

/**
 * One target disk, opened for direct exclusive I/O after the engine's own checks passed. All
 * offsets are device byte offsets; the buffers handed in must be aligned (see job-memory.ts).
 */
export class TargetDevice implements WriteTarget {
  /** A write was started: from here on, the drive no longer holds what it did (see reachedDrive). */
  reached = false;

  private constructor(
    /** As inspected before unmounting: its mountpoints are the ones that were unmounted. */
    readonly facts: DeviceFacts,
    private readonly fd: number,
    private readonly hold: VolumeHold,
  ) {}

  get path(): string {
    return this.facts.path;
  }

  get blockSize(): number {
    return this.facts.logicalBlockSize;
  }

  get capacity(): number {
    return this.facts.size;
  }

  get optimalIoSize(): number {
    return this.facts.optimalIoSize;
  }

  /**
   * Inspects `path` afresh, refuses it if the rules say so, unmounts its filesystems, and opens it.
   * `sourceDevice` is the st_dev of the image file (null for a pipe), so an image stored on the
   * target is refused. See openInspectedDisk for how it is opened. `medium`, when given, is the
   * medium the user chose (Drive.medium): a drive that holds another is refused.
   */
  static async open(
    path: string,
    imageSize: number | null,
    sourceDevice: number | null,
    platform: DevicePlatform,
    medium: string | null = null,
  ): Promise<TargetDevice> {
    const facts = await platform.inspect(path);
    const refusal = refuseTarget(facts, imageSize, sourceDevice);
    if (refusal !== null) throw new JobError(refusal);
    if (facts.logicalBlockSize > MAX_LOGICAL_BLOCK || MAX_LOGICAL_BLOCK % facts.logicalBlockSize !== 0) {
      throw jobError(
        'target-no-direct-io',
        `${path} reports a logical block size of ${facts.logicalBlockSize} bytes, which Sluice cannot align to.`,
      );
    }
    const { fd, hold } = await openSameMedium(facts, platform, medium, WRITES, () =>
      openInspectedDisk(facts, platform, platform.writeFlags, (error) => openFailure(facts, error)),
    );
    return new TargetDevice(facts, fd, hold);
  }

  /**
   * Writes `length` bytes from `buffer` at `position`. When the image ends inside a block, the
   * block is read from the device first and only the image's bytes are replaced, so the device's
   * bytes past the image stay exactly as they were. `scratch` is an aligned block-sized region.
   */
  async write(buffer: Buffer, offset: number, length: number, position: number, scratch: Buffer): Promise<void> {
    this.reached = true;
    const whole = alignDown(length, this.blockSize);
    if (whole > 0) {
      try {
        await writeFully(this.fd, buffer, offset, whole, position);
      } catch (error) {
        throw await this.locateWriteFailure(buffer, offset, whole, position, error);
      }
    }
    const tail = length - whole;
    if (tail === 0) return;
    const block = this.blockSize;
    const got = await readFully(this.fd, scratch, 0, block, position + whole);
    if (got !== block) throw Object.assign(new Error('short read of the last block'), { code: 'EIO' });
    buffer.copy(scratch, 0, offset + whole, offset + length);
    await writeFully(this.fd, scratch, 0, block, position + whole);
  }

  /**
   * Rewrites a failed region piece by piece, in order, and returns the error of the first piece
   * that fails, which carries its exact offset. The pieces before it are the same bytes again, so
   * rewriting them is harmless. If every piece succeeds the original error stands.
   */
  private async locateWriteFailure(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    original: unknown,
  ): Promise<unknown> {
    const piece = Math.max(LOCATE_PIECE, this.blockSize);
    if (length <= piece) return original;
    for (let done = 0; done < length; done += piece) {
      try {
        await writeFully(this.fd, buffer, offset + done, Math.min(piece, length - done), position + done);
      } catch (error) {
        return error;
      }
    }
    return original;
  }

  /** Reads back `length` image bytes at `position` into `buffer` (which must have room for the padded block). */
  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    const padded = alignUp(length, this.blockSize);
    const got = await readFully(this.fd, buffer, offset, padded, position);
    return Math.min(got, length);
  }

  sync(): Promise<void> {
    return syncData(this.fd);
  }

  /** Closes the device, then lets go of its volumes (Windows keeps them locked until now). */
  async close(): Promise<void> {
    try {
      await closeFd(this.fd);
    } finally {
      await this.hold.release();
    }
  }
}

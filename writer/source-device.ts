import type { Writable } from 'node:stream';
import type { TargetResult } from '../common/domain/result.js';
import type { Failure } from '../common/domain/failure.js';
import { allocatePumpMemory, pump } from './pump.js';
import { JobError, jobError, toFailure } from '../common/domain/failure.js';
import { closeFd, PositionedError, readFully, writeFully } from '../node/io.js';
import { openInspectedDisk } from './open-device.js';
import { openSameMedium, READS } from './medium-check.js';
import type { DeviceFacts, DevicePlatform, VolumeHold } from './platform/types.js';
import { errorCode, errorText } from '../common/domain/error-details.js';

/**
 * Whether the engine may read the whole disk described by `facts` for a backup or a clone: the
 * same kind of checks it makes on a target, from its own fresh look at the system. Returns the
 * reason for refusing, or null.
 */
export function refuseSource(facts: DeviceFacts): Failure | null {
  const { path } = facts;
  if (!facts.exists) return { code: 'target-not-found', message: `${path} does not exist: was the drive unplugged?` };
  if (!facts.isBlockDevice)
    return {
      code: 'target-not-block-device',
      message: `${path} is not a disk. Sluice backs up and clones whole disks only; to copy a file, copy the file.`,
    };
  if (facts.isPartition)
    return {
      code: 'target-is-partition',
      message: `${path} is a partition, not a whole disk. Choose the disk it belongs to (for example /dev/sdb, not /dev/sdb1).`,
    };
  if (facts.isSystem) {
    return {
      code: 'target-system',
      message: `${path} holds the running system (${facts.mountpoints.join(', ')}). Sluice does not copy it: its filesystems change while they are read, so the copy would not be consistent.`,
    };
  }
  return null;
}

/**
 * A whole disk opened for reading after the engine's own checks: unmounted (a disk whose
 * filesystems are in use cannot be copied consistently) and held exclusively where the OS can.
 */
export class SourceDevice {
  private constructor(
    readonly facts: DeviceFacts,
    readonly fd: number,
    private readonly hold: VolumeHold,
    private readonly platform: DevicePlatform,
  ) {}

  get path(): string {
    return this.facts.path;
  }

  /**
   * Inspects `path` afresh, refuses it if the rules say so, unmounts it and opens it read-only.
   * `medium`, when given, is the medium the user chose (Drive.medium): a drive that holds another
   * is refused, since a copy of another card is not the copy asked for.
   */
  static async open(path: string, platform: DevicePlatform, medium: string | null = null): Promise<SourceDevice> {
    const facts = await platform.inspect(path);
    const refusal = refuseSource(facts);
    if (refusal !== null) throw new JobError(refusal);
    const open = () =>
      openInspectedDisk(facts, platform, platform.sourceFlags, (error): Failure => {
        const code = errorCode(error);
        if (code === 'EBUSY')
          return {
            code: 'target-busy',
            message: `${path} is in use by another program (mounted, or open in a disk tool). Close it and try again.`,
          };
        if (code === 'EACCES' || code === 'EPERM')
          return {
            code: 'permission-denied',
            message: `No permission to read ${path}. Reading a whole disk needs administrator rights.`,
          };
        if (code === 'ENOENT' || code === 'ENXIO' || code === 'ENODEV')
          return {
            code: 'target-not-found',
            message: `${path} disappeared before it could be opened: was it unplugged?`,
          };
        return { code: 'internal', message: `Opening ${path} failed: ${errorText(error)}` };
      });
    const { fd, hold } = await openSameMedium(facts, platform, medium, READS, open);
    return new SourceDevice(facts, fd, hold, platform);
  }

  /**
   * What a failed or short read at `position` means. The system is asked again: a drive that is
   * gone, or is suddenly another size, was unplugged (or swapped), whatever errno the read gave.
   */
  async readFailure(error: unknown, position: number): Promise<JobError> {
    const now = await this.platform.inspect(this.path).catch(() => null);
    const gone = now === null || !now.exists || now.rdev !== this.facts.rdev || now.size !== this.facts.size;
    return sourceDeviceFailure(
      this.path,
      gone ? Object.assign(new Error('gone'), { code: 'ENODEV' }) : error,
      position,
    );
  }

  async close(): Promise<void> {
    try {
      await closeFd(this.fd);
    } finally {
      await this.hold.release();
    }
  }
}

/** A read of the source that failed: the drive went away, or it is failing. */
function sourceDeviceFailure(path: string, error: unknown, near: number): JobError {
  const offset = error instanceof PositionedError ? error.position : near;
  const code = errorCode(error);
  if (code === 'ENODEV' || code === 'ENXIO' || code === 'ENOENT' || code === 'ENOMEDIUM') {
    return jobError(
      'source-read-error',
      `${path} stopped answering at byte offset ${offset}: was it unplugged? The copy is incomplete.`,
      { offset },
    );
  }
  return jobError(
    'source-read-error',
    `Reading ${path} failed at byte offset ${offset}: ${errorText(error)}. The drive may be failing; the copy is incomplete.`,
    { offset },
  );
}

/** The reader on the other end went away: the unprivileged side has what it wanted, or stopped. */
function readerGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'EPIPE' || code === 'ECONNRESET' || code === 'ERR_STREAM_DESTROYED';
}

/** Reads exactly `length` bytes of `source` at `position`; throws the drive's failure. */
export async function readDrive(source: SourceDevice, into: Buffer, length: number, position: number): Promise<number> {
  let got: number;
  try {
    got = await readFully(source.fd, into, 0, length, position);
  } catch (error) {
    throw await source.readFailure(error, position);
  }
  if (got < length)
    throw await source.readFailure(
      Object.assign(new Error('the drive ended early'), { code: 'ENODEV' }),
      position + got,
    );
  return got;
}

/** Sends `bytes` on to the unprivileged side: false when it no longer reads. */
export async function passOn(out: number | Writable, bytes: Buffer, drive: string): Promise<boolean> {
  try {
    await writeOut(out, bytes);
    return true;
  } catch (error) {
    if (readerGone(error)) return false;
    throw jobError('internal', `Passing ${drive}'s bytes on failed: ${errorText(error)}`);
  }
}

/**
 * Writes all of `bytes` to a descriptor or a stream (a named pipe). A stream's callback comes once
 * the bytes are handed to the system, so the pump's buffer is free again when this resolves.
 */
function writeOut(out: number | Writable, bytes: Buffer): Promise<void> {
  if (typeof out === 'number') return writeFully(out, bytes, 0, bytes.length, null);
  return new Promise((resolve, reject) => out.write(bytes, (error) => (error ? reject(error) : resolve())));
}

/**
 * Backup, the privileged half: copies every byte of `source`, front to back, through the pump to
 * `out` (a pipe to the unprivileged side, which writes the user's file). Resolves with the
 * source's result ('ok' once all of it was sent; 'cancelled' when the reader stopped or `signal`
 * fired); never rejects. A stream `out` is ended once everything is sent.
 */
export async function sendDevice(
  source: SourceDevice,
  out: number | Writable,
  signal: AbortSignal,
): Promise<TargetResult> {
  const started = performance.now();
  const target = source.path;
  let sent = 0;
  try {
    const pumped = await pump({
      halves: allocatePumpMemory().halves,
      from: 0,
      length: source.facts.size,
      read: (into, length, position) => readDrive(source, into, length, position),
      write: (bytes) => passOn(out, bytes, target),
      advanced: (at) => (sent = at),
      signal,
    });
    if (pumped.end !== 'done') return { status: 'cancelled', target, bytes: pumped.at };
  } catch (error) {
    return { status: 'failed', target, bytes: sent, ...toFailure(error) };
  } finally {
    if (typeof out !== 'number') out.end();
  }
  return {
    status: 'ok',
    target,
    bytes: sent,
    written: false,
    verified: false,
    seconds: (performance.now() - started) / 1000,
  };
}

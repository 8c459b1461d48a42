import { close, constants, fdatasync, fstat, open, read, write, type Stats } from 'node:fs';
import { errorText } from '../common/domain/error-details.js';

/**
 * Thin promise wrappers over read(2)/write(2) that take the job's own buffer and never allocate
 * one. The calls run on libuv's thread pool, which is what lets several targets be written at once
 * and lets the event loop hash one region while the kernel writes it.
 */
export function readAt(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

export function writeAt(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
): Promise<number> {
  return new Promise((resolve, reject) => {
    write(fd, buffer, offset, length, position, (error, written) => (error ? reject(error) : resolve(written)));
  });
}

/**
 * Reads until `length` bytes are in or the source ends; pipes hand over 64 KiB at a time, files
 * may stop short too. Returns the bytes read, less than `length` only at end of input.
 * `position` null reads sequentially from the descriptor's own offset (pipes, sockets).
 */
export async function readFully(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
): Promise<number> {
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      n = await readAt(fd, buffer, offset + done, length - done, position === null ? null : position + done);
    } catch (error) {
      throw positioned(error, (position ?? 0) + done);
    }
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** An I/O error with the exact position it happened at, so messages can name the offset. */
export class PositionedError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly code: string,
    readonly position: number,
  ) {
    super(errorText(cause));
  }
}

function positioned(error: unknown, position: number): PositionedError {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return new PositionedError(error, code, position);
}

/**
 * Writes all of `length`, resuming after short writes. Errors carry the device offset that failed.
 * `position` null writes at the descriptor's own offset (pipes).
 */
export async function writeFully(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
): Promise<void> {
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      n = await writeAt(fd, buffer, offset + done, length - done, position === null ? null : position + done);
    } catch (error) {
      throw positioned(error, (position ?? 0) + done);
    }
    // A block device that accepts nothing more has reached its end.
    if (n === 0)
      throw positioned(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }), (position ?? 0) + done);
    done += n;
  }
}

/** fdatasync(2): data reaches the device, not just its queue. */
export function syncData(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => close(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * Opens a file for reading without waiting for anything: a FIFO with no writer would hold the open
 * (and the thread doing it) forever. For a regular file the flag changes nothing. Windows has no
 * O_NONBLOCK, and no FIFOs a plain open waits on.
 */
export const READ_WITHOUT_WAITING = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a file that is not a regular one is, for a sentence ("… is a FIFO, not a regular file"). */
export function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

export function openFd(path: string, flags: number, mode = 0o666): Promise<number> {
  return new Promise((resolve, reject) =>
    open(path, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

export function fstatFd(fd: number): Promise<Stats> {
  return new Promise((resolve, reject) => fstat(fd, (error, st) => (error ? reject(error) : resolve(st))));
}

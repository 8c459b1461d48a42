/**
 * The one read/write loop. Flash, clone, both halves of a backup and every verification move their
 * bytes through it: one buffer in two halves, one half filled by the next read while the other is
 * written (and hashed, or compared). That overlap is what lets a decoder on the other end of a
 * 64 KiB pipe keep working while the device writes, and a device be read back while the last
 * buffer is compared.
 */

import { MiB } from '../common/domain/units.js';
import { mayNeverReturn } from '../node/process-exit.js';
import { allocateJobMemory, type JobMemory } from './job-memory.js';

/**
 * Bytes per read and write request; the pump's buffer holds two. Measured here, 1 GiB write +
 * verify to a loop device on /dev/shm, whole process, alternating runs: one 4 MiB buffer without
 * overlap 1.20-1.27 s, 64 MB RSS; two halves of 4 MiB 0.97-1.17 s, 68 MB; two of 2 MiB as fast or
 * faster than 4 MiB under load, 64 MB; two of 1 MiB 1.55-2.5 s (more syscalls). A flash to devices
 * that announce an optimal I/O size asks for more (flash.ts).
 */
export const DEFAULT_REQUEST = 2 * MiB;

/**
 * The job's one buffer, for a pump of `request`-byte requests: its two halves, and `extraBytes`
 * more after them for the job's own use (a flash's head and scratch blocks, a comparison's other
 * side), all aligned as the halves are.
 */
export function allocatePumpMemory(
  request: number = DEFAULT_REQUEST,
  extraBytes = 0,
): JobMemory & { halves: readonly [Buffer, Buffer]; extra: Buffer } {
  const memory = allocateJobMemory(2 * request + extraBytes);
  const { bytes } = memory;
  return {
    ...memory,
    halves: [bytes.subarray(0, request), bytes.subarray(request, 2 * request)],
    extra: bytes.subarray(2 * request),
  };
}

/** One run of the pump; `at` is the offset of a buffer's first byte in what is being pumped. */
export interface PumpOp {
  /**
   * The two halves of the job's aligned buffer, the same size: that size is the request size of
   * every read. Allocated once by the caller (job-memory.ts), so nothing on the data path allocates.
   */
  halves: readonly [Buffer, Buffer];
  /** Offset of the first byte pumped (a flash starts after the head it keeps aside). */
  from: number;
  /** Bytes to pump from `from`; null: until the source ends (a pipe whose length only its end tells). */
  length: number | null;
  /**
   * Bytes already read into halves[0] before the pump starts (a backup reads its first buffer to
   * find its length). They count as the first read's: fewer than a request (0 too) is a source
   * that ended there. More than the first read would ask for is refused.
   */
  primed?: number | undefined;
  /** Reads up to `length` bytes at `at` into `into`; fewer only where the source ends. Throws the job's failure. */
  read(into: Buffer, length: number, at: number): Promise<number>;
  /**
   * Checked before a buffer is written and the next read is started, so that nothing more is read
   * from a source already known to be bad: throws the job's failure, or returns false when nobody
   * takes more (every target failed).
   */
  admit?: ((bytes: Buffer, at: number) => boolean) | undefined;
  /**
   * Writes (or compares) `bytes`, which belong at `at`, while the next read is under way. Resolves
   * false when nobody takes more (every target failed, the reader went away): the pump stops.
   */
  write(bytes: Buffer, at: number): Promise<boolean>;
  /** Runs on this thread while the write and the next read are in flight (hashing: all only read the bytes). */
  alongside?: ((bytes: Buffer, at: number) => void) | undefined;
  /**
   * After each turn that read ahead: how long the write outlasted the next read (`driveMs`: the
   * source's bytes waited for the drive) or the read the write (`sourceMs`: the drive waited for
   * the source). One of the two is 0. What tells which side limits the speed (limit-meter.ts).
   */
  waited?: ((sourceMs: number, driveMs: number) => void) | undefined;
  /** After each buffer, with the offset reached: progress, which costs no system call. */
  advanced?: ((at: number) => void) | undefined;
  /**
   * Checked before each buffer: the pump stops there, and says so. It also ends the wait for a
   * read (see unlessAborted), never for a write.
   */
  signal?: AbortSignal | undefined;
}

export interface PumpEnd {
  /** `done`: the source ended or `length` was reached; `stopped`: write said nobody takes more. */
  end: 'done' | 'cancelled' | 'stopped';
  /** The offset reached: `from` plus every byte written (not the buffer write refused). */
  at: number;
}

/** What unlessAborted gives for a read it stopped waiting for. */
export const ABANDONED = Symbol('abandoned');

/**
 * `reading`, or ABANDONED as soon as `signal` aborts. A read of a source that stalls (a decoder
 * that stopped without exiting, a FIFO nobody writes) never returns, and a cancel, or the app's
 * death, must not wait for it: the helper would keep the drive open, exclusively, for as long. The
 * read is left on its thread (registered with mayNeverReturn, so the process can still end), and
 * the buffer it reads into is not the caller's to use again. Only reads are ever abandoned: a
 * write that is in flight is always waited for.
 */
export function unlessAborted<T>(reading: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABANDONED> {
  if (signal === undefined) return reading;
  return new Promise((resolve, reject) => {
    const abandon = () => {
      mayNeverReturn(reading);
      resolve(ABANDONED);
    };
    if (signal.aborted) return abandon();
    signal.addEventListener('abort', abandon, { once: true });
    reading.then(
      (value) => {
        signal.removeEventListener('abort', abandon);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abandon);
        reject(error);
      },
    );
  });
}

/** A settled promise, so both sides of a turn finish before either one's error is thrown. */
type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}
const NOTHING_MORE: Promise<Settled<number>> = Promise.resolve({ ok: true, value: 0 });

/**
 * Pumps until the source ends, `length` is reached, `write` says stop, or `signal` aborts. Throws
 * the first failure of a turn, the write's before the read's, once both have settled: no I/O is
 * left in flight on the buffer when the caller takes over. The one exception is a cancel: it waits
 * for the write in flight, but not for a read (see unlessAborted).
 */
export async function pump(op: PumpOp): Promise<PumpEnd> {
  const request = op.halves[0].length;
  const end = op.length === null ? Number.POSITIVE_INFINITY : op.from + op.length;
  const want = (at: number): number => Math.min(request, end - at);
  let at = op.from;
  if (op.primed !== undefined && !(op.primed >= 0 && op.primed <= Math.max(0, want(at))))
    throw new RangeError(`${op.primed} bytes primed, where the first read asks for ${Math.max(0, want(at))}`);
  const first = op.primed ?? (at < end ? await unlessAborted(op.read(op.halves[0], want(at), at), op.signal) : 0);
  if (first === ABANDONED) return { end: 'cancelled', at };
  let filled = first;
  for (let turn: 0 | 1 = 0; filled > 0; turn = turn === 0 ? 1 : 0) {
    if (op.signal?.aborted === true) return { end: 'cancelled', at };
    const bytes = op.halves[turn].subarray(0, filled);
    if (op.admit?.(bytes, at) === false) return { end: 'stopped', at };
    const next = at + filled;
    // A short buffer is the source's last: only a full one can have more behind it.
    const reading =
      filled === want(at) && next < end
        ? settle(op.read(op.halves[turn === 0 ? 1 : 0], want(next), next))
        : NOTHING_MORE;
    // When each side finished, for `waited`: stamped by their own callbacks, not by the order awaited.
    let readAt = 0;
    const timedRead =
      op.waited === undefined || reading === NOTHING_MORE
        ? reading
        : reading.then((r) => ((readAt = performance.now()), r));
    const writing = settle(op.write(bytes, at));
    op.alongside?.(bytes, at);
    const wrote = await writing;
    const wroteAt = performance.now();
    const read = await unlessAborted(timedRead, op.signal);
    if (readAt > 0) op.waited?.(Math.max(0, readAt - wroteAt), Math.max(0, wroteAt - readAt));
    if (!wrote.ok) throw wrote.error;
    // Nobody takes more: whatever became of the read no longer matters.
    if (!wrote.value) return { end: 'stopped', at };
    if (read !== ABANDONED && !read.ok) throw read.error;
    at = next;
    op.advanced?.(at);
    // Cancelled while the next read waited (on a source that stalls): the write above is done.
    if (read === ABANDONED) return { end: 'cancelled', at };
    filled = read.value;
  }
  return { end: 'done', at };
}

/**
 * Backup of requested ranges, the privileged half: the drive's bytes of each range the
 * unprivileged side asks for (read messages, read-requests.ts), in the order asked, through the
 * pump to `out`. Root parses nothing: the other side reads the partition table and the
 * filesystems' maps from ranges it asked for, then asks for the used blocks only.
 */
import type { Writable } from 'node:stream';
import type { TargetResult } from '../common/domain/result.js';
import { jobError, toFailure } from '../common/domain/failure.js';
import { allocatePumpMemory, pump } from './pump.js';
import type { ReadRequests } from './read-requests.js';
import { passOn, readDrive, type SourceDevice } from './source-device.js';

/**
 * Reads are made in whole pages at page offsets, which direct I/O asks for (the drive is opened
 * with O_DIRECT); only the bytes asked for go out.
 */
const READ_ALIGN = 4096;

/** Sends the drive's bytes of every range asked for; resolves with the drive's result, never rejects. */
export async function sendRanges(
  source: SourceDevice,
  out: number | Writable,
  requests: ReadRequests,
  signal: AbortSignal,
): Promise<TargetResult> {
  const started = performance.now();
  const target = source.path;
  const size = source.facts.size;
  const { halves } = allocatePumpMemory();
  let sent = 0;
  try {
    for (let batch = await requests.next(signal); batch !== null; batch = await requests.next(signal)) {
      for (const [offset, length] of batch) {
        if (length === 0 || offset + length > size)
          throw jobError(
            'protocol-error',
            `The app asked for ${length} bytes at ${offset} of ${target}, which holds ${size}.`,
          );
        const from = Math.floor(offset / READ_ALIGN) * READ_ALIGN;
        const to = Math.min(size, Math.ceil((offset + length) / READ_ALIGN) * READ_ALIGN);
        const pumped = await pump({
          halves,
          from,
          length: to - from,
          read: (into, want, at) => readDrive(source, into, want, at),
          write: (bytes, at) => {
            const start = Math.max(at, offset);
            const end = Math.min(at + bytes.length, offset + length);
            return end > start ? passOn(out, bytes.subarray(start - at, end - at), target) : Promise.resolve(true);
          },
          signal,
        });
        if (pumped.end !== 'done') return { status: 'cancelled', target, bytes: sent };
        sent += length;
      }
    }
    if (signal.aborted) return { status: 'cancelled', target, bytes: sent };
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

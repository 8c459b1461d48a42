/**
 * Reading a compressed image's decoded bytes at given offsets without decoding all of it: a
 * decoder run (decoder-launch.ts) read front to back, whose bytes before each offset asked for are
 * skipped and whose run is stopped as soon as the caller is done. Offsets asked for in increasing
 * order cost one pass over the image's start; an offset behind the last one starts a new run.
 * One run can serve one read at a time, so the reader queues them itself: callers may ask for any
 * number at once (FAT's readFile asks for a file's clusters together), and get the same bytes as
 * from the raw image. Queued reads are served by offset, the nearest ahead of the run first, so a
 * batch asked for at once costs at most one new run.
 * Used for the partition table of a compressed image and for the boot partition that customisation
 * reads (user/customise/): both lie in an image's first few MiB.
 */
import type { DecodePlan } from '../../../common/contracts/decoder-protocol.js';
import { jobError } from '../../../common/domain/failure.js';
import { ByteSource } from '../../../node/byte-source.js';
import { startDecoder, type RunningDecoder } from '../processes/decoder-launch.js';
import type { ReadAt } from '../../../node/read-at.js';

/** Bytes skipped per read while seeking forward. */
const SKIP_CHUNK = 1024 * 1024;

/**
 * A read behind the current position starts the decoder again from the image's first byte. Readers
 * here ask in increasing order but for a few exceptions (a FAT32 root directory that grew past the
 * files after it); more runs than this are refused rather than decoding the image over and over.
 */
const MAX_RUNS = 8;

/** A read waiting for the decoder run. */
interface QueuedRead {
  offset: number;
  length: number;
  resolve: (bytes: Buffer) => void;
  reject: (error: unknown) => void;
}

/** The queued read to serve next: the lowest offset at or after `position`, else the lowest (which starts a new run). */
function nextRead(queue: QueuedRead[], position: number): QueuedRead {
  let best = 0;
  for (let i = 1; i < queue.length; i++) {
    const [a, b] = [queue[i] as QueuedRead, queue[best] as QueuedRead];
    const ahead = (r: QueuedRead) => r.offset >= position;
    if ((ahead(a) && !ahead(b)) || (ahead(a) === ahead(b) && a.offset < b.offset)) best = i;
  }
  return queue.splice(best, 1)[0] as QueuedRead;
}

/** Reads of a decoded image at any offset, for as long as the caller holds it; close() stops the decoder. */
export interface DecodedReader {
  readAt: ReadAt;
  close(): Promise<void>;
  /** Source bytes (the file's or the download's) read by every decoder run so far. */
  sourceBytes(): number;
}

/**
 * A reader of `plan`'s decoded image. Reads return fewer bytes than asked only where the image
 * ends; a decoder that fails says so as a JobError.
 */
export function decodedReader(plan: DecodePlan): DecodedReader {
  const decodePlan: DecodePlan = {
    ...plan,
    map: null,
    sha256: null,
    sha256From: null,
    sendImage: true,
    freeSpace: false,
  };
  let decoder: RunningDecoder | null = null;
  let bytes: ByteSource | null = null;
  let position = 0;
  let runs = 0;
  /** Source bytes read by the decoder runs that ended. */
  let earlier = 0;
  const stop = async () => {
    const running = decoder;
    earlier += running?.sourceBytes() ?? 0;
    decoder = null;
    bytes = null;
    await running?.stop();
  };
  const start = async (): Promise<ByteSource> => {
    await stop();
    if (++runs > MAX_RUNS)
      throw jobError(
        'source-read-error',
        `Reading ${plan.location.kind === 'file' ? plan.location.path : plan.location.url} out of order needed more than ${MAX_RUNS} passes over its start; it is not laid out as an OS image usually is.`,
      );
    decoder = await startDecoder(decodePlan, 'descriptor');
    const source = decoder.source;
    if (source === null) throw jobError('internal', 'The decoder gave no image bytes to read.');
    position = 0;
    bytes = new ByteSource(source);
    return bytes;
  };
  /** Reads `length` bytes into `into`, or fewer at the end; turns a decoder's failure into its own words. */
  const take = async (from: ByteSource, into: Buffer, length: number): Promise<number> => {
    const got = await from.read(into, length);
    position += got;
    if (got < length && decoder !== null) {
      const end = await Promise.race([
        decoder.ended,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000)),
      ]);
      if (end?.status === 'failed')
        throw jobError(
          end.failure.code,
          end.failure.message,
          end.failure.offset === undefined ? {} : { offset: end.failure.offset },
        );
    }
    return got;
  };
  /** One read, alone on the run. */
  const readOne = async (offset: number, length: number): Promise<Buffer> => {
    const from = bytes !== null && offset >= position ? bytes : await start();
    const skip = Buffer.allocUnsafe(Math.min(SKIP_CHUNK, Math.max(1, offset - position)));
    while (position < offset) {
      const got = await take(from, skip, Math.min(skip.length, offset - position));
      if (got === 0) return Buffer.alloc(0);
    }
    const out = Buffer.alloc(length);
    const got = await take(from, out, length);
    return out.subarray(0, got);
  };
  const queue: QueuedRead[] = [];
  let serving = false;
  const serve = async () => {
    while (queue.length > 0) {
      const read = nextRead(queue, position);
      try {
        read.resolve(await readOne(read.offset, read.length));
      } catch (error) {
        read.reject(error);
      }
    }
    serving = false;
  };
  return {
    readAt: (offset, length) =>
      new Promise<Buffer>((resolve, reject) => {
        queue.push({ offset, length, resolve, reject });
        // Served from the next microtask on: reads asked for together are all queued by then.
        if (!serving) {
          serving = true;
          queueMicrotask(() => void serve());
        }
      }),
    close: stop,
    sourceBytes: () => earlier + (decoder?.sourceBytes() ?? 0),
  };
}

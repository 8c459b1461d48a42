import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadPart } from './load-part.js';
import { extentBytes, type Extent } from '../../../common/domain/extents.js';
import { MiB } from '../../../common/domain/units.js';
import type { DownloadTee, SourceLocation } from '../../../common/contracts/decoder-protocol.js';

/** Read size for local sources: large enough that per-chunk costs vanish next to decoding. */
export const SOURCE_CHUNK = 1 * MiB;

/** The source's bytes as they are read, counted and optionally hashed on the way. */
export interface SourceInput {
  stream: Readable;
  /** Total size when known: the file's, or the download's Content-Length. */
  size: number | null;
  bytesRead(): number;
  /**
   * Source bytes read and not yet taken by the decoder. Near 0 while the decoder waits for a slow
   * download; a buffer's worth or more while the decoder is the slower of the two.
   */
  queued(): number;
  /**
   * Pipes the source into a decoder running apart (a system tool's stdin). The bytes waiting in
   * that stdin's buffer count as queued: when the tool is the slower side, they wait there, and
   * the stream's own buffers can be empty at the moment a progress report looks.
   */
  feed(consumer: Writable): Promise<void>;
  /** Hex SHA-256 of every byte read, once the stream has ended; null when not hashing. */
  digest(): string | null;
  /** The bytes passed their checks: a download saved into the cache becomes the cached image. */
  commit(): Promise<void>;
  /** The bytes are wrong: a download's partial file in the cache is deleted. */
  discard(): Promise<void>;
}

export interface InputOptions {
  /** Hash what passes (SHA-256), for a checksum that can only be taken on the way (downloads). */
  hash: boolean;
  /**
   * For files: read only these ranges, one after the other (a raw image under a block map: the
   * rest is never read). The reader of the stream must know them (ImageSink's layout).
   */
  ranges?: readonly Extent[] | null | undefined;
  /** For files: read only bytes [start, end) (a zip entry's data). */
  start?: number | undefined;
  end?: number | undefined;
  fileSize?: number | undefined;
  /** For downloads: save into the image cache as it is read, resuming from what it holds. */
  tee?: DownloadTee | null | undefined;
  /** For downloads: what to tell the person flashing (a dropped connection that is resumed). */
  notice?: ((message: string) => void) | undefined;
}

/** The bytes of `ranges` of the file at `path`, in order; it stops where the file ends. */
async function* readRanges(path: string, ranges: readonly Extent[]): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  try {
    for (const [offset, length] of ranges) {
      for (let at = 0; at < length;) {
        const want = Math.min(SOURCE_CHUNK, length - at);
        const { bytesRead, buffer } = await file.read(Buffer.allocUnsafe(want), 0, want, offset + at);
        // A file shorter than it was: what follows is missing, and the sink says the image is truncated.
        if (bytesRead === 0) return;
        yield buffer.subarray(0, bytesRead);
        at += bytesRead;
      }
    }
  } finally {
    await file.close();
  }
}

/** Opens the source for reading front to back. */
export async function openInput(location: SourceLocation, options: InputOptions): Promise<SourceInput> {
  let raw: Readable;
  let size: number | null;
  let settle = { commit: () => Promise.resolve(), discard: () => Promise.resolve() };
  if (location.kind === 'file') {
    const start = options.start ?? 0;
    const ranges = options.ranges ?? null;
    raw =
      ranges !== null
        ? Readable.from(readRanges(location.path, ranges))
        : createReadStream(location.path, {
            highWaterMark: SOURCE_CHUNK,
            start,
            ...(options.end !== undefined ? { end: options.end - 1 } : {}),
          });
    size =
      ranges !== null
        ? extentBytes(ranges)
        : options.end !== undefined
          ? options.end - start
          : options.fileSize !== undefined
            ? options.fileSize - start
            : null;
  } else {
    // Loaded for a download only: importing it alone (node:http, https, tls) took about 40 ms more
    // than a bare Node start, which every decoder paid before.
    const { MAX_RETRIES, openDownload } = await loadPart('download code', () => import('../http/download.js'));
    const download = await openDownload(location.url, options.tee ?? null, {
      retrying: (offset, attempt, pauseMs, why) =>
        options.notice?.(
          `The download broke off at byte ${offset} (${why.replace(/\.$/, '')}); asking again for the rest in ${pauseMs >= 1000 ? `${pauseMs / 1000} s` : `${pauseMs} ms`} (try ${attempt} of ${MAX_RETRIES}).`,
        ),
    });
    if (download.resumedFrom > 0)
      options.notice?.(
        `Resuming the download at byte ${download.resumedFrom}: the bytes before it come from the cache, saved by an earlier try.`,
      );
    raw = download.stream;
    size = download.size;
    settle = download;
  }
  const hash: Hash | null = options.hash ? createHash('sha256') : null;
  let read = 0;
  let digest: string | null = null;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      read += chunk.length;
      hash?.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      digest = hash?.digest('hex') ?? null;
      callback();
    },
  });
  raw.on('error', (error) => counted.destroy(error));
  raw.pipe(counted);
  let consumer: Writable | null = null;
  const queued = () =>
    raw.readableLength + counted.writableLength + counted.readableLength + (consumer?.writableLength ?? 0);
  const feed = (into: Writable) => {
    consumer = into;
    return pipeline(counted, into);
  };
  return {
    stream: counted,
    size,
    bytesRead: () => read,
    queued,
    feed,
    digest: () => digest,
    commit: () => settle.commit(),
    discard: () => settle.discard(),
  };
}

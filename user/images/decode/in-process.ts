/**
 * Decoders that run inside the decoder process, on node:zlib (gzip, deflate, zstd): node:zlib's
 * gunzip with 1 MiB output chunks is faster than `gzip -dc` and pigz, so gzip never needs a
 * system tool. zstd is the fallback for systems without the zstd tool, which is faster.
 */
import { PassThrough, Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { constants, createGunzip, createInflateRaw, createZstdDecompress, crc32, type ZstdDecompress } from 'node:zlib';
import { ReaderGone, type ImageSink } from './image-sink.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorCode, errorText } from '../../../common/domain/error-details.js';
import { ZstdFrameSplitter, type FramePiece } from './zstd-frames.js';
import { ZLIB_CHUNK } from '../../../node/zlib-chunk.js';

/**
 * How far a decoder got: the bytes it produced, counted as it produces them. The sink's position
 * lags behind: decoded bytes wait in the decoder's output buffer and in the sink's (4 MiB) on their
 * way, so a truncated .gz was said to end at 40851998, 41900414, ... (a different offset each run)
 * where zlib had decoded 42980078 bytes. Every byte a decoder produces before it finds its input
 * bad is good image, so this count is where the image's good part ends.
 */
export class DecodedBytes {
  count = 0;

  /** Counts what `stream` pushes from now on. */
  watch<T extends Readable>(stream: T): T {
    const push = stream.push.bind(stream);
    stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
      if (chunk !== null && chunk !== undefined) this.count += (chunk as Uint8Array).length;
      return push(chunk, encoding);
    };
    return stream;
  }
}

/** A zlib or zstd error as a JobError naming the format, what is wrong and where (`decoded`: image bytes decoded before it). */
function decodeFailure(format: string, error: unknown, decoded: number, compressedAt: number | null): Error {
  if (error instanceof JobError || error instanceof ReaderGone) return error;
  const code = errorCode(error);
  const where = `at image byte ${decoded}${compressedAt !== null ? ` (compressed byte ${compressedAt})` : ''}`;
  if (code === 'Z_BUF_ERROR' || /unexpected end/i.test(errorText(error))) {
    return jobError(
      'source-truncated',
      `The ${format} data ends too early, ${where}: it is truncated (an incomplete download?).`,
      { offset: decoded },
    );
  }
  if (code.startsWith('Z_') || code.startsWith('ZSTD_') || code === 'ERR_ZLIB_INITIALIZATION_FAILED') {
    return jobError('source-corrupt', `The ${format} data is corrupt ${where}: ${errorText(error)}.`, {
      offset: decoded,
    });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** gzip, including images made of several members (pigz, concatenated parts). */
export async function gunzip(input: Readable, sink: ImageSink): Promise<void> {
  const decoded = new DecodedBytes();
  const decoder = decoded.watch(createGunzip({ chunkSize: ZLIB_CHUNK }));
  await pipeline(input, decoder, sink).catch((error: unknown) => {
    throw decodeFailure('gzip', error, decoded.count, decoder.bytesWritten);
  });
}

/**
 * A zip entry's raw deflate data, or stored bytes, checked against the entry's CRC-32 (raw deflate
 * has no check of its own). Measured: zlib's crc32 runs at several GB/s, a small cost next to inflating.
 */
export async function unzipEntry(
  input: Readable,
  sink: ImageSink,
  method: number,
  expectedCrc: number,
  name: string,
): Promise<void> {
  let crc = 0;
  const decoded = new DecodedBytes();
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      crc = crc32(chunk, crc);
      callback(null, chunk);
    },
    flush(callback) {
      if (crc >>> 0 !== expectedCrc >>> 0) {
        return callback(
          jobError(
            'source-corrupt',
            `The zip entry ${name} is corrupt: its CRC-32 is ${(crc >>> 0).toString(16).padStart(8, '0')}, the archive records ${(expectedCrc >>> 0).toString(16).padStart(8, '0')}.`,
            { offset: decoded.count },
          ),
        );
      }
      callback();
    },
  });
  const decoder = decoded.watch(
    method === 0
      ? new PassThrough({ highWaterMark: ZLIB_CHUNK })
      : createInflateRaw({ chunkSize: ZLIB_CHUNK, finishFlush: constants.Z_SYNC_FLUSH }),
  );
  await pipeline(input, decoder, checked, sink).catch((error: unknown) => {
    throw decodeFailure(
      'zip (deflate)',
      error,
      decoded.count,
      method === 0 ? null : (decoder as Transform & { bytesWritten: number }).bytesWritten,
    );
  });
}

/** zstd, one fresh decoder per frame (see ZstdFrameSplitter for why). */
export async function unzstd(input: Readable, sink: ImageSink): Promise<void> {
  let decoder: ZstdDecompress | null = null;
  let decoding: Promise<void> | null = null;
  let compressed = 0;
  const decoded = new DecodedBytes();
  const finishFrame = async (): Promise<void> => {
    if (decoder === null || decoding === null) return;
    decoder.end();
    await decoding;
  };
  const frames = new Writable({
    objectMode: true,
    write(piece: FramePiece, _encoding, callback) {
      if (!Buffer.isBuffer(piece)) {
        finishFrame().then(() => {
          decoder = decoded.watch(createZstdDecompress({ chunkSize: ZLIB_CHUNK }));
          decoding = pipeline(decoder, sink, { end: false });
          decoding.catch((error: unknown) => frames.destroy(error as Error));
          callback();
        }, callback);
        return;
      }
      compressed += piece.length;
      if (decoder === null)
        return callback(jobError('source-corrupt', 'The zstd data is corrupt: bytes before the first frame.'));
      if (decoder.write(piece)) callback();
      else decoder.once('drain', () => callback());
    },
    final(callback) {
      finishFrame().then(() => callback(), callback);
    },
  });
  try {
    await pipeline(input, new ZstdFrameSplitter(), frames);
    sink.end();
    await finished(sink);
  } catch (error) {
    throw decodeFailure('zstd', error, decoded.count, compressed);
  }
}

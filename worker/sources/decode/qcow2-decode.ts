import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { finished } from 'node:stream/promises';
import { constants, inflateRaw, zstdDecompress } from 'node:zlib';
import { MiB } from '../../common/units.js';
import { readFully } from '../../engine/io.js';
import { clusterKind, compressedExtent, dataOffset, readQcow2, type Qcow2Image } from '../qcow2.js';
import type { ImageSink } from './image-sink.js';
import { SourceError, errorText } from './source-error.js';
import { frameLength } from './zstd-frames.js';

/** Data clusters that follow each other in the file are read together, up to this much at once. */
const READ_RUN = 1 * MiB;
/** Zeros for unallocated clusters: one buffer, only ever read. */
const ZEROS = Buffer.alloc(1 * MiB);

/** One piece of the guest disk, in order: bytes to produce, or a stretch of zeros. */
type Piece = { zeros: number } | { bytes: Promise<Buffer> };

function inflateCluster(data: Buffer, clusterSize: number, compression: Qcow2Image['compression']): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    // qemu writes raw deflate (zlib) or a zstd frame, padded to a sector. zlib stops at the end of
    // its stream; node:zlib's zstd would take the padding for a second frame, so it gets the frame only.
    if (compression === 'zlib') inflateRaw(data, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: clusterSize }, done);
    else zstdDecompress(data.subarray(0, frameLength(data) ?? data.length), { maxOutputLength: clusterSize }, done);
  });
}

/**
 * Produces the qcow2 image's guest disk into the sink, which keeps only the mapped extents (so
 * unallocated clusters cost nothing but a skipped count). Compressed clusters are inflated on
 * the thread pool, several at once (like go-qcow2reader's parallel convert), and written in order;
 * runs of data clusters that are contiguous in the file are read in one request.
 */
export async function decodeQcow2(path: string, sink: ImageSink): Promise<void> {
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    const readAt = async (position: number, length: number): Promise<Buffer> => {
      const buffer = Buffer.allocUnsafe(length);
      const got = await readFully(file.fd, buffer, 0, length, position);
      if (got < length) throw new SourceError('source-truncated', `The qcow2 image ends at byte ${size}, but its tables point to byte ${position + length}: it is truncated.`);
      return buffer;
    };
    const image = await readQcow2(readAt, size, path);
    const inFlight = 2 * availableParallelism();
    const clusterBits = Math.log2(image.clusterSize);
    const window: Piece[] = [];

    const flush = async (keep: number): Promise<void> => {
      while (window.length > keep) {
        const piece = window.shift();
        if (piece === undefined) break;
        if ('zeros' in piece) {
          for (let left = piece.zeros; left > 0; left -= ZEROS.length) await write(sink, ZEROS.subarray(0, Math.min(left, ZEROS.length)));
        } else {
          await write(sink, await piece.bytes);
        }
      }
    };

    const clusters = image.entries.length;
    for (let c = 0; c < clusters; ) {
      const entry = image.entries[c] ?? 0n;
      const kind = clusterKind(entry, image.version);
      const guest = c * image.clusterSize;
      const length = Math.min(image.clusterSize, image.virtualSize - guest);
      if (kind === 'unallocated' || kind === 'zero') {
        const last = window[window.length - 1];
        if (last !== undefined && 'zeros' in last) last.zeros += length;
        else window.push({ zeros: length });
        c += 1;
      } else if (kind === 'compressed') {
        const { offset, length: stored } = compressedExtent(entry, clusterBits);
        const bytes = readAt(offset, Math.min(stored, size - offset))
          .then((data) => inflateCluster(data, image.clusterSize, image.compression))
          .then(
            (plain) => {
              if (plain.length < length) throw new Error(`it holds ${plain.length} bytes, not ${length}`);
              return plain.subarray(0, length);
            },
            (error: unknown) => {
              throw error instanceof SourceError ? error : new SourceError('source-corrupt', `The qcow2 image is corrupt: the compressed cluster at guest byte ${guest} (file byte ${offset}) does not decompress: ${errorText(error)}.`, guest);
            },
          );
        bytes.catch(() => undefined);
        window.push({ bytes });
        c += 1;
      } else {
        // A run of data clusters stored one after the other in the file.
        const start = dataOffset(entry);
        let run = 1;
        let runLength = length;
        while (c + run < clusters && runLength < READ_RUN) {
          const next = image.entries[c + run] ?? 0n;
          if (clusterKind(next, image.version) !== 'data' || dataOffset(next) !== start + run * image.clusterSize) break;
          runLength += Math.min(image.clusterSize, image.virtualSize - (c + run) * image.clusterSize);
          run += 1;
        }
        const bytes = readAt(start, runLength);
        bytes.catch(() => undefined);
        window.push({ bytes });
        c += run;
      }
      if (window.length >= inFlight) await flush(inFlight / 2);
    }
    await flush(0);
  } finally {
    await file.close();
  }
  sink.end();
  await finished(sink);
}

/** Writes to the sink, waiting when it is full. */
function write(sink: ImageSink, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    sink.once('error', onError);
    sink.write(chunk, (error) => {
      sink.off('error', onError);
      if (error) reject(error);
      else resolve();
    });
  });
}

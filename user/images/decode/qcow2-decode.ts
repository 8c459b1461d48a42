import { open } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { constants, inflateRaw, zstdDecompress } from 'node:zlib';
import { MiB } from '../../../common/domain/units.js';
import { readFully } from '../../../node/io.js';
import { clusterKind, compressedExtent, dataOffset, l2Entry, readQcow2, type Qcow2Image } from '../formats/qcow2.js';
import type { ImageSink } from './image-sink.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';
import { frameLength } from './zstd-frames.js';

/** Clusters that lie close together in the file are read in one request of up to this much. */
const READ_SPAN = 2 * MiB;
/**
 * Decoded bytes allowed in flight (read, being inflated, or waiting their turn) before the
 * oldest is written: enough to keep the thread pool's four threads inflating while the sink
 * writes in order (64 clusters of 64 KiB).
 */
const WINDOW_BYTES = 4 * MiB;
/** Zeros for unallocated and zero clusters, which the drive must hold too: one buffer, only ever read. */
const ZEROS = Buffer.alloc(1 * MiB);

/** One piece of the guest disk, in order: bytes to produce, or a stretch of zeros. */
type Piece = { zeros: number } | { bytes: Promise<Buffer>; length: number };

function inflateCluster(data: Buffer, clusterSize: number, compression: Qcow2Image['compression']): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    // qemu writes raw deflate (zlib) or a zstd frame, padded to a sector. zlib stops at the end of
    // its stream; node:zlib's zstd would take the padding for a second frame, so it gets the frame only.
    if (compression === 'zlib')
      inflateRaw(data, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: clusterSize }, done);
    else zstdDecompress(data.subarray(0, frameLength(data) ?? data.length), { maxOutputLength: clusterSize }, done);
  });
}

/**
 * Writes to the sink without waiting for each chunk (so chunks that are ready go out together in
 * one writev), waiting only when the sink is full; rejects once the sink has failed.
 */
function write(sink: ImageSink, chunk: Buffer): Promise<void> {
  if (sink.errored !== null) return Promise.reject(sink.errored);
  if (sink.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      sink.off('drain', onDrain);
      reject(error);
    };
    const onDrain = () => {
      sink.off('error', onError);
      resolve();
    };
    sink.once('error', onError).once('drain', onDrain);
  });
}

/** Compressed clusters from `c` on, stored near each other in the file: read in one request of at most READ_SPAN. */
function compressedRun(image: Qcow2Image, c: number, entry: ReturnType<typeof l2Entry>) {
  const first = compressedExtent(entry, image.clusterBits);
  const group: { c: number; offset: number; length: number }[] = [{ c, ...first }];
  let end = first.offset + first.length;
  for (let next = c + 1; next < image.clusters; next++) {
    const e = l2Entry(image, next);
    if (clusterKind(e, image.version) !== 'compressed') break;
    const extent = compressedExtent(e, image.clusterBits);
    if (extent.offset < first.offset || extent.offset + extent.length - first.offset > READ_SPAN) break;
    group.push({ c: next, ...extent });
    end = Math.max(end, extent.offset + extent.length);
  }
  return { first, group, end };
}

/** A compressed cluster's `length` guest bytes, inflated on the thread pool; a cluster that does not inflate is named by its offsets. */
function inflated(
  image: Qcow2Image,
  data: Promise<Buffer>,
  guest: number,
  offset: number,
  length: number,
): Promise<Buffer> {
  return data
    .then((compressed) => inflateCluster(compressed, image.clusterSize, image.compression))
    .then(
      (plain) => {
        if (plain.length < length) throw new Error(`it holds ${plain.length} bytes, not ${length}`);
        return plain.subarray(0, length);
      },
      (error: unknown) => {
        throw error instanceof JobError
          ? error
          : jobError(
              'source-corrupt',
              `The qcow2 image is corrupt: the compressed cluster at guest byte ${guest} (file byte ${offset}) does not decompress: ${errorText(error)}.`,
              { offset: guest },
            );
      },
    );
}

/**
 * Produces the qcow2 image's guest disk into the sink, every byte of it: unallocated and zero
 * clusters as zeros, which are what the guest reads there. Clusters that lie together in the file
 * are read in one request; compressed ones are inflated on the thread pool, many at once (as
 * go-qcow2reader's parallel convert does), and everything is written in guest order.
 */
export async function decodeQcow2(path: string, sink: ImageSink): Promise<void> {
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    const readAt = async (position: number, length: number): Promise<Buffer> => {
      const buffer = Buffer.allocUnsafe(length);
      const got = await readFully(file.fd, buffer, 0, length, position);
      if (got < length)
        throw jobError(
          'source-truncated',
          `The qcow2 image ends at byte ${size}, but its tables point to byte ${position + length}: it is truncated.`,
        );
      return buffer;
    };
    const image = await readQcow2(readAt, size, path);
    const clusters = image.clusters;
    const perTable = image.clusterSize / 8;
    const guestEnd = (c: number) => Math.min(image.virtualSize, c * image.clusterSize);
    const lengthOf = (c: number) => guestEnd(c + 1) - guestEnd(c);
    const window: Piece[] = [];
    let windowBytes = 0;

    const push = (piece: Piece): void => {
      const last = window[window.length - 1];
      if ('zeros' in piece && last !== undefined && 'zeros' in last) last.zeros += piece.zeros;
      else window.push(piece);
      if (!('zeros' in piece)) windowBytes += piece.length;
    };
    const writeOldest = async (): Promise<void> => {
      const piece = window.shift();
      if (piece === undefined) return;
      if ('zeros' in piece) {
        for (let left = piece.zeros; left > 0; left -= ZEROS.length)
          await write(sink, ZEROS.subarray(0, Math.min(left, ZEROS.length)));
        return;
      }
      await write(sink, await piece.bytes);
      windowBytes -= piece.length;
    };
    // Checked after every piece, never after a whole run: a run's clusters are inflated only as
    // the window lets them, so memory stays at WINDOW_BYTES whatever the run holds.
    const keepWindow = async (): Promise<void> => {
      while (windowBytes > WINDOW_BYTES) await writeOldest();
    };

    for (let c = 0; c < clusters;) {
      if (image.l2Tables[Math.floor(c / perTable)] === null) {
        // An L1 entry without an L2 table: all its clusters are unallocated, one stretch of zeros.
        const next = Math.min(clusters, (Math.floor(c / perTable) + 1) * perTable);
        push({ zeros: guestEnd(next) - guestEnd(c) });
        c = next;
        continue;
      }
      const entry = l2Entry(image, c);
      const kind = clusterKind(entry, image.version);
      if (kind === 'unallocated' || kind === 'zero') {
        push({ zeros: lengthOf(c) });
        c += 1;
      } else if (kind === 'compressed') {
        // A run of compressed clusters stored near each other: one read, then each inflated.
        const { first, group, end } = compressedRun(image, c, entry);
        const span = readAt(first.offset, Math.min(end, size) - first.offset);
        span.catch(() => undefined);
        for (const member of group) {
          const guest = member.c * image.clusterSize;
          const length = lengthOf(member.c);
          const bytes = inflated(
            image,
            span.then((data) =>
              data.subarray(member.offset - first.offset, member.offset - first.offset + member.length),
            ),
            guest,
            member.offset,
            length,
          );
          bytes.catch(() => undefined);
          push({ bytes, length });
          await keepWindow();
        }
        c += group.length;
      } else {
        // A run of data clusters stored one after the other in the file.
        const start = dataOffset(entry);
        let run = 1;
        let runLength = lengthOf(c);
        while (c + run < clusters && runLength < READ_SPAN) {
          const next = l2Entry(image, c + run);
          if (clusterKind(next, image.version) !== 'data' || dataOffset(next) !== start + run * image.clusterSize)
            break;
          runLength += lengthOf(c + run);
          run += 1;
        }
        const bytes = readAt(start, runLength);
        bytes.catch(() => undefined);
        push({ bytes, length: runLength });
        c += run;
      }
      await keepWindow();
    }
    while (window.length > 0) await writeOldest();
  } finally {
    await file.close();
  }
  sink.end();
  await finished(sink);
}

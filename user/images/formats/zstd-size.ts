import {
  blockSpan,
  frameHeaderBytes,
  parseFrameHeader,
  SKIPPABLE_MAGIC,
  SKIPPABLE_MASK,
  ZSTD_MAGIC,
} from '../decode/zstd-frames.js';

/** Reads `length` bytes at `position`, synchronously; fewer only at the end. */
export type ReadAtSync = (position: number, length: number) => Buffer;
/** Walking a file of tiny frames block by block costs one read per block; past this many, give up. */
const MAX_READS = 200_000;

/**
 * The decoded size of a zstd file: the sum of its frames' content sizes, when every frame records
 * one (zstd does when it knows its input's size: files, not pipes). Walks frame and block headers
 * only, skipping the data. Null when a frame does not say, or the walk fails (the decoder will
 * then name the problem).
 *
 * The reads are synchronous: one 3-byte read per 128 KiB block, 8193 for a 1 GiB image, where a
 * trip through the thread pool each would cost more than the read itself.
 */
export function readZstdSize(readAt: ReadAtSync, fileSize: number): number | null {
  let at = 0;
  let total = 0;
  let reads = 0;
  while (at < fileSize) {
    if (++reads > MAX_READS) return null;
    const start = readAt(at, 18);
    if (start.length < 8) return null;
    const magic = start.readUInt32LE(0);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      at += 8 + start.readUInt32LE(4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) return null;
    const header = parseFrameHeader(start, 0);
    if (header === null || header.contentSize === null) return null;
    total += header.contentSize;
    at += frameHeaderBytes(start[4] ?? 0);
    for (let last = false; !last;) {
      if (++reads > MAX_READS) return null;
      const header = readAt(at, 3);
      if (header.length < 3) return null;
      const block = blockSpan(header.readUIntLE(0, 3));
      last = block.last;
      at += block.bytes;
    }
    if (header.hasChecksum) at += 4;
  }
  return at === fileSize ? total : null;
}

import { frameHeaderBytes, parseFrameHeader } from './decode/zstd-frames.js';
import type { ReadAt } from './xz-index.js';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
/** Walking a file of tiny frames block by block costs one read per block; past this many, give up. */
const MAX_READS = 200_000;

/**
 * The decoded size of a zstd file: the sum of its frames' content sizes, when every frame records
 * one (zstd does when it knows its input's size: files, not pipes). Walks frame and block headers
 * only, skipping the data. Null when a frame does not say, or the walk fails (the decoder will
 * then name the problem).
 */
export async function readZstdSize(readAt: ReadAt, fileSize: number): Promise<number | null> {
  let at = 0;
  let total = 0;
  let reads = 0;
  while (at < fileSize) {
    if (++reads > MAX_READS) return null;
    const start = await readAt(at, 18);
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
    for (let last = false; !last; ) {
      if (++reads > MAX_READS) return null;
      const block = await readAt(at, 3);
      if (block.length < 3) return null;
      const value = block.readUIntLE(0, 3);
      last = (value & 1) !== 0;
      const type = (value >> 1) & 3;
      at += 3 + (type === 1 ? 1 : value >>> 3);
    }
    if (header.hasChecksum) at += 4;
  }
  return at === fileSize ? total : null;
}

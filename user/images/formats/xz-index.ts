import { crc32 } from 'node:zlib';
import { jobError, type JobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';

import type { ReadAt } from '../../../node/read-at.js';

const STREAM_HEADER_BYTES = 12;
const FOOTER_MAGIC = [0x59, 0x5a]; // "YZ"
const HEADER_MAGIC = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);
/** The smallest block: an 8-byte header and one byte of data, padded to four. */
const MIN_BLOCK_BYTES = 12;
/** An index bigger than this is not an image's (each block takes a few bytes). */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;
/**
 * Stream padding is scanned backwards this much at a time: four bytes at a time, a hostile file's
 * megabytes of zeros after a stream header would take minutes, and thousands of range requests
 * over HTTP.
 */
const PADDING_CHUNK = 64 * 1024;
/**
 * Reads one index may take: four per stream (padding, footer, index, header), so 64 streams, or
 * 16 MiB of padding. xz and pixz write one stream; concatenated files hold a few.
 */
const MAX_READS = 256;

export interface XzBlock {
  /** Offset of the block (its header) in the file. */
  offset: number;
  /** Block header + compressed data + check, without padding. */
  unpaddedSize: number;
  uncompressedSize: number;
}

export interface XzIndex {
  streams: number;
  blocks: XzBlock[];
  uncompressedSize: number;
}

function readVarint(bytes: Buffer, at: number): [number, number] {
  let value = 0;
  let multiplier = 1;
  for (let i = 0; i < 9; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) throw new Error('index ends inside a number');
    value += (byte & 0x7f) * multiplier;
    multiplier *= 128;
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  throw new Error('a number in the index is too long');
}

/** A problem with the index, which is at the end of the file: most often a cut-off download. */
function badIndex(why: string): JobError {
  return jobError(
    'source-truncated',
    `The xz file's index (at its end) is unreadable: ${why}. The file is probably truncated (an incomplete download?).`,
  );
}

/**
 * Where the stream padding before `end` begins: zero bytes, in fours, between and after streams
 * (trailing zeros that are not a multiple of four are left for the footer check to refuse).
 */
async function skipPadding(readAt: ReadAt, end: number): Promise<number> {
  let zeros = 0;
  while (zeros < end) {
    const length = Math.min(PADDING_CHUNK, end - zeros);
    const chunk = await readAt(end - zeros - length, length);
    let last = chunk.length - 1;
    while (last >= 0 && chunk[last] === 0) last--;
    zeros += chunk.length - 1 - last;
    if (last >= 0 || chunk.length < length) break;
  }
  return end - (zeros - (zeros % 4));
}

/**
 * Reads every stream's index from the end of an .xz file, backwards: each stream ends with a
 * footer that gives its index size. The index records each block's sizes, so the image's exact
 * size is known before decoding, and every block's place in the file (CRC-checked).
 */
export async function readXzIndex(readSource: ReadAt, fileSize: number): Promise<XzIndex> {
  let reads = 0;
  const readAt: ReadAt = (position, length) => {
    reads += 1;
    if (reads > MAX_READS) {
      throw jobError(
        'source-corrupt',
        `The xz file's index could not be found within ${MAX_READS} reads of its end: it holds more streams, or more padding between them, than an xz file has.`,
      );
    }
    return readSource(position, length);
  };
  const streams: XzBlock[][] = [];
  let end = fileSize;
  while (end > 0) {
    end = await skipPadding(readAt, end);
    if (end < 2 * STREAM_HEADER_BYTES) throw badIndex('the file is too short');
    const footer = await readAt(end - 12, 12);
    if (footer[10] !== FOOTER_MAGIC[0] || footer[11] !== FOOTER_MAGIC[1]) throw badIndex('no stream footer');
    if (crc32(footer.subarray(4, 10)) >>> 0 !== footer.readUInt32LE(0)) throw badIndex('the stream footer is damaged');
    const indexBytes = (footer.readUInt32LE(4) + 1) * 4;
    const indexStart = end - 12 - indexBytes;
    if (indexBytes > MAX_INDEX_BYTES || indexStart < STREAM_HEADER_BYTES)
      throw badIndex('the index size is impossible');
    const index = await readAt(indexStart, indexBytes);
    if (crc32(index.subarray(0, indexBytes - 4)) >>> 0 !== index.readUInt32LE(indexBytes - 4))
      throw badIndex('the index is damaged (CRC mismatch)');
    if (index[0] !== 0) throw badIndex('no index indicator');
    let at = 1;
    let count: number;
    const blocks: { unpaddedSize: number; uncompressedSize: number }[] = [];
    try {
      [count, at] = readVarint(index, at);
      // Each record becomes an object: no more of them than the blocks the file can hold.
      if (count > (indexStart - STREAM_HEADER_BYTES) / MIN_BLOCK_BYTES)
        throw new Error(`it lists ${count} blocks, more than the ${indexStart} bytes before it can hold`);
      for (let i = 0; i < count; i++) {
        let unpaddedSize: number;
        let uncompressedSize: number;
        [unpaddedSize, at] = readVarint(index, at);
        [uncompressedSize, at] = readVarint(index, at);
        blocks.push({ unpaddedSize, uncompressedSize });
      }
    } catch (error) {
      throw badIndex(errorText(error));
    }
    const blocksBytes = blocks.reduce((sum, b) => sum + Math.ceil(b.unpaddedSize / 4) * 4, 0);
    const streamStart = indexStart - blocksBytes - STREAM_HEADER_BYTES;
    if (streamStart < 0) throw badIndex('its blocks would start before the file does');
    const header = await readAt(streamStart, STREAM_HEADER_BYTES);
    if (!header.subarray(0, 6).equals(HEADER_MAGIC))
      throw badIndex(`no stream starts where the index says (byte ${streamStart})`);
    let offset = streamStart + STREAM_HEADER_BYTES;
    streams.unshift(
      blocks.map((b) => {
        const block = { offset, ...b };
        offset += Math.ceil(b.unpaddedSize / 4) * 4;
        return block;
      }),
    );
    end = streamStart;
  }
  const all = streams.flat();
  return {
    streams: streams.length,
    blocks: all,
    uncompressedSize: all.reduce((sum, b) => sum + b.uncompressedSize, 0),
  };
}

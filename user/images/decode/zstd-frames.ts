import { Transform, type TransformCallback } from 'node:stream';
import { jobError } from '../../../common/domain/failure.js';

export const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames carry user data (seek tables, metadata): magic 0x184D2A50-5F, then a 4-byte size. */
export const SKIPPABLE_MASK = 0xfffffff0;
export const SKIPPABLE_MAGIC = 0x184d2a50;
const BLOCK_HEADER_BYTES = 3;
const CHECKSUM_BYTES = 4;

/** A zstd frame's header fields that say how long its header is and what it records. */
export interface FrameHeader {
  /** Bytes of magic + frame header. */
  headerBytes: number;
  /** Decoded size of the frame, when the encoder recorded it. */
  contentSize: number | null;
  hasChecksum: boolean;
}

/** Bytes of magic + frame header, from the frame header descriptor (the byte after the magic). */
export function frameHeaderBytes(descriptor: number): number {
  const singleSegment = (descriptor & 0x20) !== 0;
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][descriptor >> 6] ?? 0;
  const dictBytes = [0, 1, 2, 4][descriptor & 3] ?? 0;
  return 5 + (singleSegment ? 0 : 1) + dictBytes + fcsBytes;
}

/** Parses the frame header at `at` (starting with the magic), or returns null when more bytes are needed. */
export function parseFrameHeader(bytes: Buffer, at: number): FrameHeader | null {
  if (bytes.length < at + 5) return null;
  const descriptor = bytes[at + 4] ?? 0;
  const headerBytes = frameHeaderBytes(descriptor);
  if (bytes.length < at + headerBytes) return null;
  const fcsBytes = [(descriptor & 0x20) !== 0 ? 1 : 0, 2, 4, 8][descriptor >> 6] ?? 0;
  const fcsAt = at + headerBytes - fcsBytes;
  let contentSize: number | null = null;
  if (fcsBytes === 1) contentSize = bytes[fcsAt] ?? 0;
  else if (fcsBytes === 2) contentSize = bytes.readUInt16LE(fcsAt) + 256;
  else if (fcsBytes === 4) contentSize = bytes.readUInt32LE(fcsAt);
  else if (fcsBytes === 8) contentSize = Number(bytes.readBigUInt64LE(fcsAt));
  return { headerBytes, contentSize, hasChecksum: (descriptor & 0x04) !== 0 };
}

/** A block's length on disk, its 3-byte header included, and whether it ends its frame. */
export function blockSpan(header: number): { bytes: number; last: boolean } {
  const type = (header >> 1) & 3;
  // An RLE block stores its one repeated byte; the size field is how often it repeats.
  return { bytes: BLOCK_HEADER_BYTES + (type === 1 ? 1 : header >>> 3), last: (header & 1) !== 0 };
}

/** The length of the zstd frame at the start of `bytes` (which may be followed by padding), or null if it does not fit. */
export function frameLength(bytes: Buffer): number | null {
  const header = parseFrameHeader(bytes, 0);
  if (header === null || bytes.readUInt32LE(0) !== ZSTD_MAGIC) return null;
  let at = header.headerBytes;
  for (let last = false; !last;) {
    if (at + BLOCK_HEADER_BYTES > bytes.length) return null;
    const block = blockSpan(bytes.readUIntLE(at, 3));
    at += block.bytes;
    last = block.last;
  }
  at += header.hasChecksum ? CHECKSUM_BYTES : 0;
  return at <= bytes.length ? at : null;
}

/** Events of the frame splitter: a new frame starts, or bytes of the current frame. */
export type FramePiece = { frame: 'start' } | Buffer;

/**
 * Splits a zstd stream into its frames without decoding: it reads only the frame and block
 * headers and skips over block contents. node:zlib's zstd decoder stops with "Unknown frame
 * descriptor" at the start of a second frame (Node 24.21, measured), and images made with
 * `zstd -T`, `pzstd` or by concatenation have many; each frame gets a fresh decoder instead.
 * Skippable frames are dropped. A stream that ends inside a frame is reported as truncated.
 */
export class ZstdFrameSplitter extends Transform {
  /** Bytes of a header not yet complete. */
  private pending = Buffer.alloc(0);
  private state: 'magic' | 'skip-size' | 'frame-header' | 'block-header' | 'content' | 'skip' = 'magic';
  /** Bytes left in the current block (plus checksum), or skippable frame. */
  private left = 0;
  private lastBlock = false;
  private hasChecksum = false;
  private consumed = 0;

  constructor() {
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.split(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (this.state !== 'magic' || this.pending.length > 0) {
      return callback(
        jobError(
          'source-truncated',
          `The zstd data ends inside a frame, after ${this.consumed} bytes: it is truncated (an incomplete download?).`,
        ),
      );
    }
    callback();
  }

  private split(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.state === 'content' || this.state === 'skip') {
        const n = Math.min(this.left, chunk.length - at);
        if (this.state === 'content') this.push(chunk.subarray(at, at + n));
        at += n;
        this.consumed += n;
        this.left -= n;
        if (this.left === 0) this.state = this.state === 'skip' || this.lastBlock ? 'magic' : 'block-header';
        continue;
      }
      // Header bytes: gather until the header is complete, then act on it.
      const take = Math.min(this.headerNeed(), chunk.length - at);
      this.pending = Buffer.concat([this.pending, chunk.subarray(at, at + take)]);
      at += take;
      this.consumed += take;
      if (this.headerNeed() === 0) this.headerDone();
    }
  }

  /** How many more bytes the header being read needs. */
  private headerNeed(): number {
    const have = this.pending.length;
    switch (this.state) {
      case 'magic':
      case 'skip-size':
        return 4 - have;
      case 'frame-header':
        return have < 5 ? 5 - have : frameHeaderBytes(this.pending[4] ?? 0) - have;
      default:
        return BLOCK_HEADER_BYTES - have;
    }
  }

  private headerDone(): void {
    const bytes = this.pending;
    switch (this.state) {
      case 'magic': {
        const magic = bytes.readUInt32LE(0);
        if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
          this.pending = Buffer.alloc(0);
          this.state = 'skip-size';
        } else if (magic === ZSTD_MAGIC) {
          this.state = 'frame-header';
        } else {
          throw jobError(
            'source-corrupt',
            `The zstd data is corrupt: no frame starts at byte ${this.consumed - 4} of the file.`,
          );
        }
        return;
      }
      case 'skip-size':
        this.pending = Buffer.alloc(0);
        this.left = bytes.readUInt32LE(0);
        this.state = this.left > 0 ? 'skip' : 'magic';
        return;
      case 'frame-header': {
        const header = parseFrameHeader(bytes, 0);
        if (header === null) return; // the descriptor just arrived; the rest of the header follows
        this.hasChecksum = header.hasChecksum;
        this.push({ frame: 'start' });
        this.push(bytes);
        this.pending = Buffer.alloc(0);
        this.state = 'block-header';
        return;
      }
      default:
        break;
    }
    const header = bytes.readUIntLE(0, 3);
    this.push(bytes);
    this.pending = Buffer.alloc(0);
    if (((header >> 1) & 3) === 3)
      throw jobError(
        'source-corrupt',
        `The zstd data is corrupt: a reserved block type at byte ${this.consumed - 3} of the file.`,
      );
    const block = blockSpan(header);
    this.lastBlock = block.last;
    this.left = block.bytes - BLOCK_HEADER_BYTES + (this.lastBlock && this.hasChecksum ? CHECKSUM_BYTES : 0);
    this.state = this.left > 0 ? 'content' : this.lastBlock ? 'magic' : 'block-header';
  }
}

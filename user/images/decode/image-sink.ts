import { createHash, type Hash } from 'node:crypto';
import { writev } from 'node:fs';
import { Writable } from 'node:stream';
import type { DecodeMap, MappedRange } from '../../../common/contracts/decoder-protocol.js';
import { jobError } from '../../../common/domain/failure.js';
import { errorCode } from '../../../common/domain/error-details.js';

/**
 * Decoders hand over a fresh Buffer per output chunk (1 MiB from node:zlib). V8 counts their
 * memory as external and collects it only once about 64 MB have piled up, so a gunzip decoder
 * peaked at 125-136 MB RSS. A scavenge after every 16 MiB sent keeps it near 90 MB, and cost
 * nothing measurable (1 GiB gzip into a pipe: 2.20 s against 2.41 s without).
 */
const GC_EVERY_BYTES = 16 * 1024 * 1024;
const collectGarbage = (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc;

/** The helper went away (it failed, or was cancelled): not a fault of the source. */
export class ReaderGone extends Error {
  constructor() {
    super('the writing process stopped reading the image');
    this.name = 'ReaderGone';
  }
}

function writevAll(fd: number, buffers: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    writev(fd, buffers, (error, written) => {
      if (error) return reject(errorCode(error) === 'EPIPE' || errorCode(error) === 'ECONNRESET' ? new ReaderGone() : error);
      const total = buffers.reduce((sum, b) => sum + b.length, 0);
      if (written === total) return resolve();
      // A signal can cut a pipe write short; send the rest.
      let skip = written;
      const rest: Buffer[] = [];
      for (const b of buffers) {
        if (skip >= b.length) skip -= b.length;
        else {
          rest.push(b.subarray(skip));
          skip = 0;
        }
      }
      writevAll(fd, rest).then(resolve, reject);
    });
  });
}

/** Checks a block map's ranges against their digests as the decoded image passes by. */
class RangeChecker {
  private index = 0;
  private hash: Hash | null = null;

  constructor(private readonly map: DecodeMap) {}

  /** Feeds decoded image bytes [position, position + chunk.length). */
  feed(chunk: Buffer, position: number): void {
    const end = position + chunk.length;
    for (;;) {
      const range = this.map.ranges[this.index];
      if (range === undefined || range.offset >= end) return;
      const rangeEnd = range.offset + range.length;
      if (range.digest !== null) {
        const from = Math.max(position, range.offset);
        const to = Math.min(end, rangeEnd);
        if (to > from) {
          this.hash ??= createHash(this.map.digestAlgorithm);
          this.hash.update(chunk.subarray(from - position, to - position));
        }
      }
      if (rangeEnd > end) return;
      this.finish(range);
      this.index += 1;
    }
  }

  private finish(range: MappedRange): void {
    const hash = this.hash;
    this.hash = null;
    if (range.digest === null || hash === null) return;
    if (hash.digest('hex') !== range.digest.toLowerCase()) {
      throw jobError('source-checksum-mismatch', `The block map ${this.map.name} does not match the image: bytes ${range.offset}-${range.offset + range.length - 1} have a different ${this.map.digestAlgorithm.toUpperCase()} than the map gives. Is it the map of another image?`, { offset: range.offset });
    }
  }

  /** The image ended at `size`: every range must have been inside it. */
  end(size: number): void {
    const range = this.map.ranges[this.index];
    if (range !== undefined) {
      throw jobError('source-checksum-mismatch', `The block map ${this.map.name} does not match the image: it maps bytes up to ${range.offset + range.length}, but the image ends at ${size}.`, { offset: size });
    }
  }
}

/**
 * Where decoded image bytes go: the descriptor the helper reads. Counts what it sends, keeps to the
 * announced size, and with a block map sends only the mapped extents while checking the map's
 * digests. Every decoder writes through one of these, so these checks exist once.
 */
export class ImageSink extends Writable {
  /** Decoded image bytes seen (before the map's filtering). */
  position = 0;
  /** Bytes sent to the helper. */
  sent = 0;
  private extentIndex = 0;
  private sinceCollection = 0;
  private readonly ranges: RangeChecker | null;
  /** SHA-256 of every decoded byte (before the map's filtering), when the image's own checksum is to be checked. */
  private readonly hash: Hash | null;
  private imageDigest: string | null = null;

  constructor(
    private readonly fd: number,
    private readonly imageSize: number | null,
    private readonly map: DecodeMap | null,
    private readonly format: string,
    hashImage = false,
  ) {
    super({ highWaterMark: 4 * 1024 * 1024 });
    this.ranges = map === null ? null : new RangeChecker(map);
    this.hash = hashImage ? createHash('sha256') : null;
  }

  /** Whether every decoded byte must pass through here to be hashed. */
  get hashing(): boolean {
    return this.hash !== null;
  }

  /** The decoded image's SHA-256 once it has ended; null when not hashing. */
  digest(): string | null {
    return this.imageDigest;
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    let out: Buffer[];
    try {
      out = [];
      for (const { chunk } of chunks) {
        this.admit(chunk);
        for (const piece of this.mapped(chunk, this.position)) out.push(piece);
        this.ranges?.feed(chunk, this.position);
        this.hash?.update(chunk);
        this.position += chunk.length;
      }
    } catch (error) {
      return callback(error as Error);
    }
    const bytes = out.reduce((sum, b) => sum + b.length, 0);
    if (bytes === 0) return callback();
    writevAll(this.fd, out).then(() => {
      this.sent += bytes;
      this.sinceCollection += bytes;
      if (this.sinceCollection >= GC_EVERY_BYTES && collectGarbage !== undefined) {
        this.sinceCollection = 0;
        collectGarbage({ type: 'minor' });
      }
      callback();
    }, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._writev([{ chunk }], callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      if (this.imageSize !== null && this.position < this.imageSize) {
        throw jobError('source-truncated', `The ${this.format} image ended after ${this.position} of its ${this.imageSize} bytes: it is truncated.`, { offset: this.position });
      }
      this.ranges?.end(this.position);
      this.imageDigest = this.hash?.digest('hex') ?? null;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private admit(chunk: Buffer): void {
    if (this.imageSize !== null && this.position + chunk.length > this.imageSize) {
      throw jobError('source-corrupt', `The ${this.format} image holds more than the ${this.imageSize} bytes its header announces; it is corrupt.`, { offset: this.imageSize });
    }
  }

  /** The parts of `chunk` (image bytes from `position`) inside the map's extents; all of it without a map. */
  private mapped(chunk: Buffer, position: number): Buffer[] {
    if (this.map === null) return [chunk];
    const pieces: Buffer[] = [];
    const end = position + chunk.length;
    const extents = this.map.extents;
    for (;;) {
      const extent = extents[this.extentIndex];
      if (extent === undefined) return pieces;
      const [offset, length] = extent;
      if (offset >= end) return pieces;
      const from = Math.max(position, offset);
      const to = Math.min(end, offset + length);
      if (to > from) pieces.push(chunk.subarray(from - position, to - position));
      if (offset + length > end) return pieces;
      this.extentIndex += 1;
    }
  }
}

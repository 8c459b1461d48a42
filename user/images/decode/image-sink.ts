import { createHash, type Hash } from 'node:crypto';
import { writev } from 'node:fs';
import { Writable } from 'node:stream';
import { MAX_EXTENTS, MAX_SKIPPED_RANGES } from '../../../common/contracts/helper-protocol.js';
import type { DecodeMap, MappedRange } from '../../../common/contracts/decoder-protocol.js';
import { intersectExtents, subtractExtents, type Extent } from '../../../common/domain/extents.js';
import { jobError } from '../../../common/domain/failure.js';
import { errorCode } from '../../../common/domain/error-details.js';
import type { SkipReason } from '../../../common/domain/skipped.js';
import { EXTENT_ALIGN } from '../../../writer/stream-layout.js';
import type { FreeSpace } from '../free-space/find-free-space.js';
import type { StreamFreeSpace } from '../free-space/stream-free-space.js';

/**
 * Decoders hand over a fresh Buffer per output chunk (1 MiB from node:zlib). V8 counts their
 * memory as external and collects it only once about 64 MB have piled up. A scavenge after every
 * 16 MiB sent keeps a gunzip decoder's resident memory tens of MB lower, at no cost in speed.
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
      if (error)
        return reject(errorCode(error) === 'EPIPE' || errorCode(error) === 'ECONNRESET' ? new ReaderGone() : error);
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
      throw jobError(
        'source-checksum-mismatch',
        `The block map ${this.map.name} does not match the image: bytes ${range.offset}-${range.offset + range.length - 1} have a different ${this.map.digestAlgorithm.toUpperCase()} than the map gives. Is it the map of another image?`,
        { offset: range.offset },
      );
    }
  }

  /** The image ended at `size`: every range must have been inside it. */
  end(size: number): void {
    const range = this.map.ranges[this.index];
    if (range !== undefined) {
      throw jobError(
        'source-checksum-mismatch',
        `The block map ${this.map.name} does not match the image: it maps bytes up to ${range.offset + range.length}, but the image ends at ${size}.`,
        { offset: size },
      );
    }
  }
}

/** How the sink leaves out free space it finds as the image passes (see find-free-space.ts). */
export interface SkipFreeSpace {
  found: StreamFreeSpace;
  /**
   * Tells the helper that the stream leaves `extents` out from the next byte on; resolves once it
   * has them in place. Nothing more is sent before.
   */
  announce(extents: [number, number][], reason: SkipReason): Promise<void>;
}

/**
 * Where decoded image bytes go: the descriptor the helper reads. Counts what it sends, keeps to the
 * announced size, with a block map sends only the mapped extents while checking the map's digests,
 * and leaves out the free space found as the image passes. Every decoder writes through one of
 * these, so these checks exist once.
 */
export class ImageSink extends Writable {
  /** Decoded image bytes seen (before the map's filtering). */
  position = 0;
  /** Bytes sent to the helper. */
  sent = 0;
  /** What is sent: the map's extents less what was left out since; null while that is everything. */
  private keep: Extent[] | null;
  private keepIndex = 0;
  /** Free ranges left out so far: at most MAX_SKIPPED_RANGES in a job. */
  private skippedRanges = 0;
  private sinceCollection = 0;
  private readonly ranges: RangeChecker | null;
  /** SHA-256 of every decoded byte (before the map's filtering), when the image's own checksum is to be checked. */
  private readonly hash: Hash | null;
  private imageDigest: string | null = null;
  /** The range of `layout` the next input byte belongs to. */
  private layoutIndex = 0;

  constructor(
    private readonly fd: number,
    private readonly imageSize: number | null,
    map: DecodeMap | null,
    private readonly format: string,
    private readonly skipping: SkipFreeSpace | null = null,
    hashImage = false,
    /**
     * The input carries only these ranges of the image, one after the other (a raw file read in
     * place: the ranges the map sends or checks); null when it carries every byte. The image
     * between and after them is passed over, so nothing that needs every byte may use one (an
     * image hash, free space found on the way).
     */
    readonly layout: readonly Extent[] | null = null,
  ) {
    super({ highWaterMark: 4 * 1024 * 1024 });
    this.ranges = map === null ? null : new RangeChecker(map);
    this.keep = map?.extents ?? null;
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
    this.take(chunks).then(() => callback(), callback);
  }

  private async take(chunks: { chunk: Buffer }[]): Promise<void> {
    const out: Buffer[] = [];
    for (const { chunk: input } of chunks)
      for (const chunk of this.placed(input)) {
        this.admit(chunk);
        // Before any of the chunk leaves: the helper must know what it leaves out first.
        if (this.skipping !== null && !this.skipping.found.done)
          await this.leaveOut(await this.skipping.found.feed(chunk, this.position), this.skipping);
        for (const piece of this.mapped(chunk, this.position)) out.push(piece);
        this.ranges?.feed(chunk, this.position);
        this.hash?.update(chunk);
        this.position += chunk.length;
      }
    const bytes = out.reduce((sum, b) => sum + b.length, 0);
    if (bytes === 0) return;
    await writevAll(this.fd, out);
    this.sent += bytes;
    this.sinceCollection += bytes;
    if (this.sinceCollection >= GC_EVERY_BYTES && collectGarbage !== undefined) {
      this.sinceCollection = 0;
      collectGarbage({ type: 'minor' });
    }
  }

  /**
   * Leaves out of the stream the part of `found` that lies ahead (from the first whole block of
   * the chunk about to be sent) and is still being sent, once the helper has it in place.
   */
  private async leaveOut(found: readonly FreeSpace[], skipping: SkipFreeSpace): Promise<void> {
    const sentUpTo = Math.ceil(this.position / EXTENT_ALIGN) * EXTENT_ALIGN;
    for (const free of found) {
      const ahead = subtractExtents(free.extents, [[0, sentUpTo]]);
      const extents = (this.keep === null ? ahead : intersectExtents(ahead, this.keep)).slice(
        0,
        MAX_SKIPPED_RANGES - this.skippedRanges,
      );
      if (extents.length === 0) continue;
      for (let i = 0; i < extents.length; i += MAX_EXTENTS) {
        await skipping.announce(
          extents.slice(i, i + MAX_EXTENTS).map(([offset, length]) => [offset, length]),
          free.reason,
        );
      }
      this.skippedRanges += extents.length;
      this.keep = subtractExtents(this.keep ?? [[0, this.imageSize ?? Number.POSITIVE_INFINITY]], extents);
      this.keepIndex = 0;
    }
  }

  /**
   * `input` in pieces that each continue the image at `position`: with a layout, `position` first
   * moves over the bytes the input left out to where the piece's range starts.
   */
  private *placed(input: Buffer): Generator<Buffer> {
    const layout = this.layout;
    if (layout === null) {
      yield input;
      return;
    }
    for (let at = 0; at < input.length;) {
      const range = layout[this.layoutIndex];
      if (range === undefined)
        throw jobError('source-corrupt', `The ${this.format} image gave more bytes than the ranges read from it.`, {
          offset: this.position,
        });
      const [offset, length] = range;
      if (this.position < offset) this.position = offset;
      const piece = Math.min(input.length - at, offset + length - this.position);
      // The caller takes the piece and moves `position` past it before asking for the next.
      yield input.subarray(at, at + piece);
      at += piece;
      if (this.position >= offset + length) this.layoutIndex += 1;
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._writev([{ chunk }], callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.skipping?.found.end();
    // Every range was read: the rest of the image is what nothing needed.
    if (this.layout !== null && this.layoutIndex >= this.layout.length && this.imageSize !== null)
      this.position = Math.max(this.position, this.imageSize);
    try {
      if (this.imageSize !== null && this.position < this.imageSize) {
        throw jobError(
          'source-truncated',
          `The ${this.format} image ended after ${this.position} of its ${this.imageSize} bytes: it is truncated.`,
          { offset: this.position },
        );
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
      throw jobError(
        'source-corrupt',
        `The ${this.format} image holds more than the ${this.imageSize} bytes its header announces; it is corrupt.`,
        { offset: this.imageSize },
      );
    }
  }

  /** The parts of `chunk` (image bytes from `position`) that are sent: all of it while nothing is left out. */
  private mapped(chunk: Buffer, position: number): Buffer[] {
    if (this.keep === null) return [chunk];
    const pieces: Buffer[] = [];
    const end = position + chunk.length;
    for (;;) {
      const extent = this.keep[this.keepIndex];
      if (extent === undefined) return pieces;
      const [offset, length] = extent;
      if (offset >= end) return pieces;
      const from = Math.max(position, offset);
      const to = Math.min(end, offset + length);
      if (to > from) pieces.push(chunk.subarray(from - position, to - position));
      if (offset + length > end) return pieces;
      this.keepIndex += 1;
    }
  }
}

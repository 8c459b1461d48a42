import { KiB } from '../common/domain/units.js';
import { jobError } from '../common/domain/failure.js';

/**
 * Mapped ranges (bmap, allocated qcow2 clusters) start and end on this boundary, except the one
 * that ends the image, so every piece of the stream lands at an offset direct I/O accepts, from a
 * buffer offset it accepts. The source side rounds its ranges outwards to it.
 */
export const EXTENT_ALIGN = 4 * KiB;

/** A range of the image: `length` bytes at byte `offset`. */
export type Extent = readonly [offset: number, length: number];

/** Where `length` bytes of the stream, starting `bufferOffset` into its buffer, go on the device. */
export interface Piece {
  bufferOffset: number;
  deviceOffset: number;
  length: number;
}

/**
 * How the bytes on fd 0 (the stream) map onto the device. Normally the stream is the whole image,
 * byte for byte. With a block map it carries only the mapped ranges, concatenated in order, and
 * everything between them on the device is left exactly as it was: neither written nor verified.
 */
export class StreamLayout {
  private constructor(
    /** Sorted, disjoint, non-empty; null for the whole image. */
    private readonly extents: readonly Extent[] | null,
    /** Stream offset at which each extent starts. */
    private readonly starts: readonly number[],
    /** Bytes the stream carries in all; null when only its end will tell. */
    readonly streamBytes: number | null,
  ) {}

  static whole(imageSize: number | null): StreamLayout {
    return new StreamLayout(null, [], imageSize);
  }

  /**
   * The layout for a stream of `extents` of an image of `imageSize` bytes. Refuses a map that is
   * unsorted, overlapping, outside the image or misaligned: the helper writes nothing it cannot
   * place exactly.
   */
  static mapped(extents: readonly Extent[], imageSize: number): StreamLayout {
    const starts: number[] = [];
    let streamBytes = 0;
    let end = 0;
    for (const [offset, length] of extents) {
      const aligned = offset % EXTENT_ALIGN === 0 && (length % EXTENT_ALIGN === 0 || offset + length === imageSize);
      if (length <= 0 || offset < end || offset + length > imageSize || !aligned) {
        throw jobError('protocol-error', `The block map is invalid at range ${offset}+${length}: ranges must be sorted, disjoint, inside the ${imageSize}-byte image and ${EXTENT_ALIGN}-byte aligned.`);
      }
      starts.push(streamBytes);
      streamBytes += length;
      end = offset + length;
    }
    return new StreamLayout(extents, starts, streamBytes);
  }

  /** True when the stream is a block map's ranges rather than the whole image. */
  get sparse(): boolean {
    return this.extents !== null;
  }

  /** The device pieces of stream bytes [streamOffset, streamOffset + length), in order. */
  pieces(streamOffset: number, length: number): Piece[] {
    if (this.extents === null) return length > 0 ? [{ bufferOffset: 0, deviceOffset: streamOffset, length }] : [];
    const pieces: Piece[] = [];
    const end = streamOffset + length;
    for (let i = this.extentAt(streamOffset); i < this.extents.length; i++) {
      const start = this.starts[i] ?? 0;
      if (start >= end) break;
      const [offset, extentLength] = this.extents[i] ?? [0, 0];
      const from = Math.max(streamOffset, start);
      const to = Math.min(end, start + extentLength);
      if (to > from) pieces.push({ bufferOffset: from - streamOffset, deviceOffset: offset + (from - start), length: to - from });
    }
    return pieces;
  }

  /** The device offset of stream byte `streamOffset` (for messages that name a place on the device). */
  deviceOffset(streamOffset: number): number {
    if (this.extents === null) return streamOffset;
    const i = this.extentAt(streamOffset);
    const [offset, length] = this.extents[i] ?? [0, 0];
    return offset + Math.min(streamOffset - (this.starts[i] ?? 0), length);
  }

  /** The index of the extent holding stream byte `streamOffset` (the last one past the end). */
  private extentAt(streamOffset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= streamOffset) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(0, lo);
  }
}

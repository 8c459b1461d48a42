import { MAX_LAYOUT_EXTENTS } from '../common/contracts/helper-protocol.js';
import { extentBytes, intersectExtents, subtractExtents, type Extent } from '../common/domain/extents.js';
import { KiB } from '../common/domain/units.js';
import { jobError } from '../common/domain/failure.js';

/**
 * Mapped ranges (a bmap's) and left-out ones (free space) start and end on this boundary, except
 * where the image ends, so every piece of the stream lands at an offset direct I/O accepts, from a
 * buffer offset it accepts. The source side rounds mapped ranges outwards and free ones inwards.
 */
export const EXTENT_ALIGN = 4 * KiB;

/** Where `length` bytes of the stream, starting `bufferOffset` into its buffer, go on the device. */
export interface Piece {
  bufferOffset: number;
  deviceOffset: number;
  length: number;
}

function isAligned([offset, length]: Extent, imageSize: number | null): boolean {
  return offset % EXTENT_ALIGN === 0 && (length % EXTENT_ALIGN === 0 || offset + length === imageSize);
}

/**
 * How the bytes on fd 0 (the stream) map onto the device. Normally the stream is the whole image,
 * byte for byte. With a block map it carries only the mapped ranges, concatenated in order, and
 * everything between them on the device is left exactly as it was: neither written nor verified.
 * The unprivileged side may leave more out as the stream goes (omit): ranges it has found to be
 * free space, always ahead of what the stream has brought so far.
 */
export class StreamLayout {
  /** Sorted, disjoint, non-empty; null for the whole image. The last may be endless when the image size is not known. */
  private extents: Extent[] | null;
  /** Stream offset at which each extent starts. */
  private starts: number[] = [];
  private bytes: number | null = null;
  /** Image bytes omit() left out, for an image whose size only its end tells. */
  private omitted = 0;

  private constructor(
    extents: Extent[] | null,
    private readonly imageSize: number | null,
  ) {
    this.extents = extents;
    this.index();
  }

  static whole(imageSize: number | null): StreamLayout {
    return new StreamLayout(null, imageSize);
  }

  /**
   * The layout for a stream of `extents` of an image of `imageSize` bytes. Refuses a map that is
   * unsorted, overlapping, outside the image or misaligned: the helper writes nothing it cannot
   * place exactly.
   */
  static mapped(extents: readonly Extent[], imageSize: number): StreamLayout {
    let end = 0;
    for (const extent of extents) {
      const [offset, length] = extent;
      if (length <= 0 || offset < end || offset + length > imageSize || !isAligned(extent, imageSize)) {
        throw jobError(
          'protocol-error',
          `The block map is invalid at range ${offset}+${length}: ranges must be sorted, disjoint, inside the ${imageSize}-byte image and ${EXTENT_ALIGN}-byte aligned.`,
        );
      }
      end = offset + length;
    }
    return new StreamLayout([...extents], imageSize);
  }

  /** Bytes the stream carries in all; null when only its end will tell. */
  get streamBytes(): number | null {
    return this.bytes;
  }

  /** Image bytes the stream leaves out: on the device they are neither written nor verified. */
  get leftOut(): number {
    return this.imageSize !== null && this.bytes !== null ? this.imageSize - this.bytes : this.omitted;
  }

  /**
   * Leaves `ranges` of the image out of the rest of the stream. They must be sorted, disjoint,
   * aligned, inside the image, and wholly ahead of the `received` stream bytes already read: the
   * stream's bytes before them keep their places. Throws a protocol error otherwise, or when the
   * layout would grow past MAX_LAYOUT_EXTENTS.
   */
  omit(ranges: readonly Extent[], received: number): void {
    const from = this.deviceOffset(received);
    let end = from;
    for (const range of ranges) {
      const [offset, length] = range;
      if (
        length <= 0 ||
        offset < end ||
        (this.imageSize !== null && offset + length > this.imageSize) ||
        !isAligned(range, this.imageSize)
      ) {
        throw jobError(
          'protocol-error',
          `The image source left out bytes ${offset}+${length}, which are not sorted, aligned, inside the image, or ahead of the ${received} bytes already received.`,
        );
      }
      end = offset + length;
    }
    const current = this.extents ?? [[0, this.imageSize ?? Number.POSITIVE_INFINITY]];
    const kept = subtractExtents(current, ranges);
    if (kept.length > MAX_LAYOUT_EXTENTS)
      throw jobError(
        'protocol-error',
        `The image source left out more ranges than the ${MAX_LAYOUT_EXTENTS} a job may have.`,
      );
    this.omitted += extentBytes(intersectExtents(current, ranges));
    this.extents = kept;
    this.index();
  }

  private index(): void {
    this.starts = [];
    if (this.extents === null) {
      this.bytes = this.imageSize;
      return;
    }
    let streamBytes = 0;
    for (const [, length] of this.extents) {
      this.starts.push(streamBytes);
      streamBytes += length;
    }
    this.bytes = Number.isFinite(streamBytes) ? streamBytes : null;
  }

  /**
   * Where the image ends on the device once the stream has brought `streamBytes`: its size when
   * known, else the device offset the stream's end maps to (a range left out at the very end is
   * passed over, as the last extent of such a layout is endless). Capacity markers and customisation
   * are placed by this, never by the stream's count: a stream that left free space out is shorter
   * than the image it lays down.
   */
  imageEnd(streamBytes: number): number {
    return this.imageSize ?? this.deviceOffset(streamBytes);
  }

  /** The parts of `ranges` (sorted, disjoint) the stream does not carry: on the device, neither written nor compared with it. */
  notCarried(ranges: readonly Extent[]): Extent[] {
    return this.extents === null ? [] : subtractExtents(ranges, this.extents);
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
      if (to > from)
        pieces.push({ bufferOffset: from - streamOffset, deviceOffset: offset + (from - start), length: to - from });
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

/** The stream layout a job asks for: the whole image, or only its block map's ranges. */
export function streamLayoutOf(job: {
  extents?: readonly Extent[] | undefined;
  imageSize: number | null;
}): StreamLayout {
  if (job.extents === undefined) return StreamLayout.whole(job.imageSize);
  if (job.imageSize === null)
    throw jobError('protocol-error', 'A block map came without the size of the image it maps.');
  return StreamLayout.mapped(job.extents, job.imageSize);
}

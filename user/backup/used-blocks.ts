/**
 * A backup of the used blocks, the parent's side: the drive's bytes asked of the helper a range at a
 * time (read messages), for the drive map reader (drive-map/used-ranges.ts) and then for the used
 * ranges it found, and the drive's bytes front to back with zeros for what was left out.
 */
import { extentBytes, type Extent } from '../../common/domain/extents.js';
import { jobError } from '../../common/domain/failure.js';
import type { ByteSource } from '../../node/byte-source.js';
import { MAX_EXTENTS } from '../../common/contracts/helper-protocol.js';
import { MAX_READ_BYTES, type ReadImage } from '../images/free-space/image-reader.js';

/** Asks the helper for the drive's bytes of `ranges` next; `last`: nothing more will be asked. */
export type AskRanges = (ranges: [number, number][], last: boolean) => void;

/** The drive's bytes at any range, each asked of the helper and read from its stream in turn. */
export function askedReader(ask: AskRanges, source: ByteSource, driveSize: number, drive: string): ReadImage {
  return async (offset, length) => {
    const wanted = Math.min(length, MAX_READ_BYTES, driveSize - offset);
    if (wanted <= 0) return null;
    ask([[offset, wanted]], false);
    const bytes = Buffer.alloc(wanted);
    const got = await source.read(bytes, wanted);
    if (got < wanted)
      throw jobError(
        'source-read-error',
        `${drive}'s bytes stopped at byte offset ${offset + got} while its partition table and filesystems were read: was it unplugged?`,
        { offset: offset + got },
      );
    return bytes;
  };
}

/** Sends `ranges` to the helper as read messages of at most MAX_EXTENTS each, the last marked. */
export function askAll(ask: AskRanges, ranges: readonly Extent[]): void {
  if (ranges.length === 0) return ask([], true);
  for (let i = 0; i < ranges.length; i += MAX_EXTENTS) {
    const part = ranges.slice(i, i + MAX_EXTENTS).map(([offset, length]): [number, number] => [offset, length]);
    ask(part, i + MAX_EXTENTS >= ranges.length);
  }
}

/**
 * The drive's bytes front to back as a backup writes them: the used ranges from the helper's
 * stream, zeros for the free space between them. Reads must move forward, as the pump's do.
 */
export class UsedBytes {
  private next = 0;
  readonly usedBytes: number;
  /** Bytes of the used ranges read from the stream so far. */
  fetched = 0;

  constructor(
    private readonly used: readonly Extent[],
    private readonly source: ByteSource,
  ) {
    this.usedBytes = extentBytes(used);
  }

  /** Fills `into` with the drive's `length` bytes at `at`; the count read from the stream is what came. */
  async read(into: Buffer, length: number, at: number): Promise<number> {
    into.fill(0, 0, length);
    const end = at + length;
    while (this.next < this.used.length && (this.used[this.next]?.[0] ?? 0) + (this.used[this.next]?.[1] ?? 0) <= at)
      this.next++;
    for (let i = this.next; i < this.used.length; i++) {
      const [offset, size] = this.used[i] ?? [0, 0];
      if (offset >= end) break;
      const from = Math.max(offset, at);
      const to = Math.min(offset + size, end);
      const got = await this.source.read(into.subarray(from - at, to - at), to - from);
      this.fetched += got;
      if (got < to - from) return from - at + got;
    }
    return length;
  }

  /** The pieces of [at, at + length) that are used, relative to `at` (any order of calls). */
  usedWithin(at: number, length: number): Extent[] {
    let lo = 0;
    let hi = this.used.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const [offset, size] = this.used[mid] ?? [0, 0];
      if (offset + size <= at) lo = mid + 1;
      else hi = mid;
    }
    const out: Extent[] = [];
    for (let i = lo; i < this.used.length; i++) {
      const [offset, size] = this.used[i] ?? [0, 0];
      if (offset >= at + length) break;
      const from = Math.max(offset, at);
      const to = Math.min(offset + size, at + length);
      if (to > from) out.push([from - at, to - from]);
    }
    return out;
  }
}

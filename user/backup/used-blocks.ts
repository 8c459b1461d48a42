/**
 * What a backup of the used blocks reads. The drive's partition table and the filesystems' maps
 * are read through the helper, a range at a time (read messages), by the same readers that find
 * an image's free space when flashing (images/free-space/): what they prove free is left out and
 * is zero in the file; everything else (the tables, gaps between partitions, what lies past the
 * last one, unknown partitions, filesystems they do not trust) is read whole.
 */
import { extentBytes, mergeExtents, subtractExtents, type Extent } from '../../common/domain/extents.js';
import { jobError } from '../../common/domain/failure.js';
import type { ByteSource } from '../../node/byte-source.js';
import { MAX_EXTENTS } from '../../common/contracts/helper-protocol.js';
import { freeSpaceOf } from '../images/free-space/find-free-space.js';
import { MAX_READ_BYTES, type ReadImage } from '../images/free-space/image-reader.js';

/**
 * Free runs kept out at most: the shortest beyond are read after all. It bounds the read messages
 * (MAX_EXTENTS ranges each) to fewer than the helper holds (writer/read-requests.ts).
 */
const MAX_FREE_RUNS = 40 * MAX_EXTENTS;

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

/**
 * The ranges of the drive's first `length` bytes a backup reads: all but the free space its
 * filesystems prove. What lies past the last partition is not proven free (a system may keep
 * something there, and nothing says otherwise), so it is read unless the backup was trimmed to
 * the partitions, which makes `length` end there.
 */
export async function usedRanges(read: ReadImage, length: number): Promise<Extent[]> {
  const free = await freeSpaceOf(read, length, MAX_FREE_RUNS);
  return subtractExtents([[0, length]], mergeExtents(free.flatMap((f) => f.extents)));
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

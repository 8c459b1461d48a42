/**
 * What a backup does with each grain (grain-hashes.ts) of its image. A grain holding used bytes
 * is hashed as it arrives and compared when read back. A grain of free space alone is zeros the
 * backup made itself: it is not hashed, and reading back it must be zeros, unless the file's
 * filesystem says it is a hole, which reads as zeros by definition and is not read at all. On a
 * 4 GiB drive holding a 1 GiB system that is 3.4 GiB neither hashed nor read back.
 */
import { extentBytes, type Extent } from '../../common/domain/extents.js';
import type { Differences } from '../../writer/compare.js';
import type { GrainHashes } from '../../writer/grain-hashes.js';

/** A grain of free space: zeros, checked as zeros when read back. */
const FREE = 0;
/** A grain holding used bytes: hashed as it arrives, compared with its hash when read back. */
const USED = 1;
/** A grain of free space that the file's filesystem reports as a hole: not read back. */
const HOLE = 2;

export class BackupGrains {
  private readonly kinds: Uint8Array;
  private readonly zeros: Buffer;

  /** `used`: the image's used ranges (sorted); the rest of its `length` bytes is free space. */
  constructor(
    readonly grain: number,
    used: readonly Extent[],
    private readonly length: number,
  ) {
    this.kinds = new Uint8Array(Math.ceil(length / grain));
    for (const [offset, size] of used) {
      if (size <= 0) continue;
      this.kinds.fill(USED, Math.floor(offset / grain), Math.ceil((offset + size) / grain));
    }
    this.zeros = Buffer.alloc(grain);
  }

  /**
   * Marks as holes the free grains that `dataRanges` (the file's filesystem) reports no data in;
   * a null answer (it cannot say) leaves them to be read.
   */
  async findHoles(dataRanges: (from: number, to: number) => Promise<Extent[] | null>): Promise<void> {
    for (const [from, size] of this.runs((kind) => kind === FREE, 0, this.length, 0)) {
      const data = await dataRanges(from, from + size);
      if (data === null) return;
      const first = from / this.grain;
      const end = Math.ceil((from + size) / this.grain);
      const holes = new Uint8Array(end - first).fill(1);
      for (const [offset, length] of data)
        holes.fill(0, Math.floor(offset / this.grain) - first, Math.ceil((offset + length) / this.grain) - first);
      for (let i = 0; i < holes.length; i++) if (holes[i] === 1) this.kinds[first + i] = HOLE;
    }
  }

  /** The runs of grains of [at, at + length) that hold used bytes, relative to `at`: what is hashed. */
  usedRuns(at: number, length: number): Extent[] {
    return this.runs((kind) => kind === USED, at, length, at);
  }

  /** The runs of grains of [at, at + length) that are read back (all but holes), relative to `at`. */
  readRuns(at: number, length: number): Extent[] {
    return this.runs((kind) => kind !== HOLE, at, length, at);
  }

  /** Bytes of the image that are read back: all but the holes. */
  readBytes(): number {
    return extentBytes(this.readRuns(0, this.length));
  }

  /** Checks the grains of `bytes` (read back at `at`, grain-aligned): used ones by hash, free ones as zeros, holes not. */
  check(bytes: Buffer, at: number, hashes: GrainHashes, differences: Differences): void {
    // A grain's kind is known only on grain boundaries: anything else would pass unchecked.
    if (at % this.grain !== 0) throw new Error(`a backup's read-back at ${at} is not on a ${this.grain}-byte grain`);
    for (let start = 0; start < bytes.length; start += this.grain) {
      const index = (at + start) / this.grain;
      const view = bytes.subarray(start, Math.min(start + this.grain, bytes.length));
      const kind = this.kinds[index];
      if (kind === USED) hashes.compare(view, at + start, (offset) => differences.note(offset));
      else if (kind === FREE && !view.equals(this.zeros.subarray(0, view.length))) differences.note(at + start);
      // Past the image's grains: bytes the backup never wrote.
      else if (kind === undefined) differences.note(at + start);
    }
  }

  /** The runs of grains that `match` within [at, at + length) (grain-aligned `at`), clipped to it, less `base`. */
  private runs(match: (kind: number | undefined) => boolean, at: number, length: number, base: number): Extent[] {
    const out: Extent[] = [];
    const end = Math.min(at + length, this.length);
    let start = -1;
    for (let offset = at; offset < end; offset += this.grain) {
      const matches = match(this.kinds[offset / this.grain]);
      if (matches && start < 0) start = offset;
      if (!matches && start >= 0) {
        out.push([start - base, offset - start]);
        start = -1;
      }
    }
    if (start >= 0) out.push([start - base, end - start]);
    return out;
  }
}

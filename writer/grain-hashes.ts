import { KiB, MiB } from '../common/domain/units.js';

/**
 * Verification compares the device against hashes taken while writing, one per "grain" of the
 * image. A smaller grain names a bad spot more precisely; a larger one keeps the table small for
 * huge images; 256 KiB keeps per-call overhead negligible, and the table for a 64 GiB image is
 * then 2 MiB.
 */
export const MIN_GRAIN = 256 * KiB;
/** A grain never spans two reads: the head region (1 MiB) and the chunk are multiples of it. */
export const MAX_GRAIN = 1 * MiB;
/** Above this many grains the grain grows instead of the table. */
const TARGET_GRAINS = 1 << 18;

/** The grain for an image of at most `maxBytes`: a power of two from MIN_GRAIN to MAX_GRAIN. */
export function chooseGrain(maxBytes: number): number {
  let grain = MIN_GRAIN;
  while (grain < MAX_GRAIN && maxBytes / grain > TARGET_GRAINS) grain *= 2;
  return grain;
}

/** Per-grain hashes of the image, indexed by grain number (image offset / grain). */
export class GrainHashes {
  readonly grain: number;
  private table: BigUint64Array;
  /** XXH64, non-cryptographic: it guards against bad media and counterfeit cards, not attackers. */
  private readonly hash: (view: Buffer) => bigint;

  constructor(grain: number, expectedBytes: number | null, hash: (view: Buffer) => bigint) {
    this.grain = grain;
    this.hash = hash;
    this.table = new BigUint64Array(Math.max(16, Math.ceil((expectedBytes ?? 0) / grain)));
  }

  /** Hashes `bytes`, the image's bytes starting at `imageOffset` (a multiple of the grain). */
  record(bytes: Buffer, imageOffset: number): void {
    forEachGrain(bytes, imageOffset, this.grain, (index, view) => {
      if (index >= this.table.length) this.grow(index + 1);
      this.table[index] = this.hash(view);
    });
  }

  /** The grains of `bytes` (read back from the device at `imageOffset`) that differ from the record. */
  compare(bytes: Buffer, imageOffset: number, onMismatch: (grainOffset: number, grainLength: number) => void): void {
    forEachGrain(bytes, imageOffset, this.grain, (index, view) => {
      if (this.table[index] !== this.hash(view)) onMismatch(index * this.grain, view.length);
    });
  }

  private grow(minLength: number): void {
    const bigger = new BigUint64Array(Math.max(minLength, this.table.length * 2));
    bigger.set(this.table);
    this.table = bigger;
  }
}

function forEachGrain(
  bytes: Buffer,
  imageOffset: number,
  grain: number,
  visit: (index: number, view: Buffer) => void,
): void {
  if (imageOffset % grain !== 0) throw new Error(`hash region at ${imageOffset} is not grain-aligned`);
  for (let start = 0; start < bytes.length; start += grain) {
    visit((imageOffset + start) / grain, bytes.subarray(start, Math.min(start + grain, bytes.length)));
  }
}

/**
 * Capacity markers: one logical block each, unique to its offset and to the job, written to a
 * drive where nothing else goes and read back later. A marker that comes back as zeros, as
 * something else, as another offset's marker, or as an I/O error shows a drive that is not the
 * size it claims. The flash's capacity check (capacity-check.ts) and `sluice check`
 * (fake-capacity-check.ts) both use them. Nothing here reads image bytes: markers are the helper's own.
 *
 * A marker: magic (16 bytes) | its byte offset (u64 LE) | the job's random nonce (16 bytes) |
 * XXH64 of the whole block with this field zero (u64 LE) | a filler derived from offset and nonce.
 * The nonce tells this job's markers from an earlier job's still on the drive; the checksum, a
 * marker the drive kept only part of.
 */
import type { FakeCapacity } from '../common/domain/fake-capacity.js';
import { KiB, MiB } from '../common/domain/units.js';
import { alignDown, alignUp } from './job-memory.js';

const MAGIC = Buffer.from('SLUICE-CAPACITY1', 'latin1');
const OFFSET_AT = 16;
const NONCE_AT = 24;
const NONCE_BYTES = 16;
const CHECKSUM_AT = 40;
const FILL_AT = 48;

/** Markers start on this boundary (and on the block size, where that is larger). */
export const MARKER_ALIGN = 4 * KiB;

/**
 * How many markers are spread geometrically over the free part of the drive. Between the last
 * marker that came back and the first that did not, the real capacity is known to a ratio: 200
 * markers give at most 1.072 from 1 MiB to 1 TiB, 1.05 over the spans of most flashes; that is
 * what the estimate's precision is. Each costs one block written and one read.
 */
const GEOMETRIC_MARKERS = 200;
const MIN_RATIO = 1.05;

/** What a block read back at a marker's offset holds. */
export type MarkerState =
  | { state: 'ok' }
  | { state: 'zeros' }
  /** Neither zeros nor one of this job's markers: a drive that kept something else there. */
  | { state: 'garbage' }
  /** The write or the read failed with an I/O error. */
  | { state: 'error' }
  /** This job's marker for another offset: the drive maps both offsets onto one block. */
  | { state: 'alias'; of: number };

export type MarkerReading = MarkerState & { position: number };

/**
 * A nonce for one job's markers. It has to differ from every earlier job's (markers left on a
 * drive), not to be secret: a drive does not guess. V8 seeds Math.random from the system's entropy
 * for each process, and four draws of it give 128 bits. node:crypto's randomBytes would do the
 * same, but loading node:crypto cost the helper 0.6 MB of private memory and 1.1 MB of RSS
 * (measured here, Node 24, a 128 MiB flash: Private_Dirty 21.2 -> 20.6 MB, RSS 66.9 -> 65.8 MB).
 */
function jobNonce(): Buffer {
  const nonce = Buffer.alloc(NONCE_BYTES);
  for (let at = 0; at < NONCE_BYTES; at += 4) nonce.writeUInt32LE(Math.floor(Math.random() * 0x1_0000_0000), at);
  return nonce;
}

/** The markers of one job: its nonce, and the hash to checksum them with. */
export class MarkerFormat {
  readonly nonce: Buffer;

  /** `hash` is the job memory's XXH64 (job-memory.ts): markers are built and read in that memory. */
  constructor(private readonly hash: (view: Buffer) => bigint) {
    this.nonce = jobNonce();
  }

  /** Fills `block` (a view of the job memory, one logical block long) with the marker for `position`. */
  fill(block: Buffer, position: number): void {
    MAGIC.copy(block, 0);
    block.writeBigUInt64LE(BigInt(position), OFFSET_AT);
    this.nonce.copy(block, NONCE_AT);
    block.writeBigUInt64LE(0n, CHECKSUM_AT);
    const seed = Math.floor(position / 512) & 0xff;
    for (let i = FILL_AT; i < block.length; i++)
      block[i] = (this.nonce[i % NONCE_BYTES] ?? 0) ^ ((i * 131 + seed) & 0xff);
    block.writeBigUInt64LE(this.hash(block), CHECKSUM_AT);
  }

  /** What `block`, read back at `position`, holds. `block` is changed (its checksum field is zeroed). */
  classify(block: Buffer, position: number): MarkerState {
    if (block.every((byte) => byte === 0)) return { state: 'zeros' };
    if (
      !block.subarray(0, MAGIC.length).equals(MAGIC) ||
      !block.subarray(NONCE_AT, NONCE_AT + NONCE_BYTES).equals(this.nonce)
    )
      return { state: 'garbage' };
    const checksum = block.readBigUInt64LE(CHECKSUM_AT);
    block.writeBigUInt64LE(0n, CHECKSUM_AT);
    if (this.hash(block) !== checksum) return { state: 'garbage' };
    const of = Number(block.readBigUInt64LE(OFFSET_AT));
    return of === position ? { state: 'ok' } : { state: 'alias', of };
  }
}

/**
 * Where the markers go on a drive of `capacity` bytes whose first `from` bytes are taken (by the
 * image), ascending; none when no block is free. Three sets:
 * - the first free block and the drive's last block;
 * - a geometric series from the first free block (or 1 MiB) to the end, so that the real capacity
 *   is found to a ratio wherever it lies;
 * - the first free block plus each power of two: a drive that wraps around at 2^n (as the fakes
 *   built on a smaller flash chip do) maps that marker onto the first one, which names the period.
 */
export function markerPositions(
  from: number,
  capacity: number,
  blockSize: number,
  geometric = GEOMETRIC_MARKERS,
): number[] {
  const align = Math.max(MARKER_ALIGN, blockSize);
  const first = alignUp(from, align);
  const last = alignDown(capacity - blockSize, blockSize);
  if (first > last) return [];
  const positions = new Set([first, last]);
  const base = Math.max(first, MiB);
  const ratio = Math.max(MIN_RATIO, (last / base) ** (1 / geometric));
  for (let p = base; p < last; p *= ratio) positions.add(alignDown(p, align));
  for (let power = MiB; first + power < last; power *= 2) positions.add(first + power);
  return [...positions].filter((p) => p >= first).sort((a, b) => a - b);
}

/**
 * What the readings say about a drive of `capacity` bytes whose first `from` bytes hold the image:
 * null when every marker came back, otherwise the kind of fake and its likely real capacity.
 * - Another offset's marker: the drive wraps around; the smallest distance between two offsets
 *   that came back as one is its period.
 * - An I/O error at the first marker that did not come back: errors past the last one that did.
 * - Zeros or something else: writes past the last good marker were dropped (limbo).
 */
export function judgeMarkers(
  readings: readonly MarkerReading[],
  from: number,
  capacity: number,
  blockSize: number,
): FakeCapacity | null {
  const sorted = [...readings].sort((a, b) => a.position - b.position);
  const firstBad = sorted.find((r) => r.state !== 'ok');
  if (firstBad === undefined) return null;
  const lastGood = sorted.filter((r) => r.state === 'ok' && r.position < firstBad.position).at(-1);
  const kept = lastGood === undefined ? from : lastGood.position + blockSize;
  const periods = sorted.flatMap((r) => (r.state === 'alias' ? [Math.abs(r.position - r.of)] : []));
  if (periods.length > 0) return { kind: 'wrap-around', realBytes: Math.min(...periods), claimedBytes: capacity };
  return { kind: firstBad.state === 'error' ? 'errors' : 'limbo', realBytes: kept, claimedBytes: capacity };
}

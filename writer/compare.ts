/**
 * The one comparison core of the three verifications: a written device against the hashes taken
 * while writing (verify-written.ts), a device or file against the image (verify-image.ts), and a
 * backup file against the drive's hashes (user/backup/backup-file.ts). Each reads through the pump,
 * so the next buffer is read while this one is checked, and counts what differs here; only its
 * words are its own.
 */
import type { Failure } from '../common/domain/failure.js';
import type { GrainHashes } from './grain-hashes.js';
import { pump, type PumpEnd, type PumpOp } from './pump.js';

/**
 * How many differing units are remembered by offset. More than this many bad blocks is a card
 * to replace, not to repair (repair.ts), and the list stays small whatever the card does.
 */
export const MAX_NOTED = 64;

/** What differs between what was read back and what it should be. */
export class Differences {
  /** Units that differ: grains where hashes are compared, bytes where bytes are. */
  count = 0;
  /** Offset of the first (lowest) that differs, or -1; a check may narrow it down to a byte (verify-written.ts). */
  first = -1;
  /** The offsets of the first MAX_NOTED units that differ, as noted. */
  readonly noted: number[] = [];

  note(offset: number): void {
    this.count += 1;
    // Checks go front to back, except a verify's customisation bytes in ranges the stream left out (verify-image.ts).
    if (this.first < 0 || offset < this.first) this.first = offset;
    if (this.noted.length < MAX_NOTED) this.noted.push(offset);
  }
}

export interface Comparison extends PumpEnd {
  differences: Differences;
}

export interface CompareOp extends Omit<PumpOp, 'write' | 'alongside'> {
  /** Checks the bytes read back at `at`, noting what differs; throws the job's failure when it cannot. */
  check(bytes: Buffer, at: number, differences: Differences): Promise<void> | void;
}

/** Reads what `op` reads, front to back, and checks every buffer while the next one is read. */
export async function compareRead(op: CompareOp): Promise<Comparison> {
  const differences = new Differences();
  const { check, ...reading } = op;
  const pumped = await pump({
    ...reading,
    write: async (bytes, at) => {
      await check(bytes, at, differences);
      return true;
    },
  });
  return { ...pumped, differences };
}

/**
 * The verify-mismatch failure for grains that differ, worded by `say` (each verification names
 * its own thing: a card, a backup file); null when none does.
 */
export function grainMismatch(differences: Differences, say: (count: number, first: number) => string): Failure | null {
  const { count, first } = differences;
  return count === 0 ? null : { code: 'verify-mismatch', message: say(count, first), offset: first, badBlocks: count };
}

/** A check against the hashes taken as the bytes went out: each grain that differs is noted at its offset. */
export function grainCheck(hashes: GrainHashes): CompareOp['check'] {
  return (bytes, at, differences) => hashes.compare(bytes, at, (grainOffset) => differences.note(grainOffset));
}

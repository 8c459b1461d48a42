/**
 * Where a backup's bytes come from and how far it goes: the whole drive front to back as the
 * helper sends it, or (when the helper sends requested ranges) only its used blocks, with zeros
 * for the free space its filesystems prove (used-blocks.ts, read in the drive map reader's process).
 */
import type { Extent } from '../../common/domain/extents.js';
import { JobError } from '../../common/domain/failure.js';
import type { Failure } from '../../common/domain/failure.js';
import type { ByteSource } from '../../node/byte-source.js';
import { MAX_READ_BYTES } from '../images/free-space/image-reader.js';
import { usedRangesInChild } from './drive-map-launch.js';
import { askAll, askedReader, UsedBytes, type AskRanges } from './used-blocks.js';

export interface BackupPlan {
  /** Bytes of the drive the image holds, from its start. */
  length: number;
  /** The ranges the helper sends (the rest is zero in the image); sorted. */
  used: Extent[];
  /** Reads the image's `length` bytes at `at` into `into`, front to back; fewer where the helper's bytes stopped. */
  read(into: Buffer, length: number, at: number): Promise<number>;
  /** Bytes of halves[0] already read at offset 0 (the whole drive's first buffer); undefined: none. */
  primed: number | undefined;
  /** Bytes read from the drive to find the used ranges (its tables and filesystem maps); 0 for the whole drive. */
  mapBytes: number;
  /** Bytes the backup reads from the drive in all: mapBytes and the used ranges. */
  toRead: number;
  /** Bytes read from the drive so far, mapBytes included: toRead once every used range came. */
  readSoFar(): number;
  /** The used pieces of the bytes at `at`, relative to them: what a sparse file needs written. */
  usedWithin(at: number, length: number): Extent[];
}

export interface PlanInput {
  source: ByteSource;
  drive: string;
  driveSize: number;
  /** Null: the helper sends the whole drive; else how to ask it for ranges. */
  ask: AskRanges | null;
  /** Where the image ends, given the drive's first bytes (trimmed to the partitions, or the whole drive). */
  end(head: Buffer): number;
  sourceFailure: () => Promise<Failure | null>;
  signal?: AbortSignal | undefined;
}

/** The plan, or 'cancelled' when the helper stopped because it was asked to. Throws the job's failure. */
export async function planBackup(input: PlanInput, first: Buffer): Promise<BackupPlan | 'cancelled'> {
  const { source, drive } = input;
  const failed = async (at: number): Promise<'cancelled'> => {
    if (input.signal?.aborted === true) return 'cancelled';
    throw new JobError(
      (await input.sourceFailure()) ?? {
        code: 'source-read-error',
        message: `${drive}'s bytes stopped at byte offset ${at}: was it unplugged?`,
        offset: at,
      },
    );
  };
  if (input.ask === null) {
    const wanted = Math.min(first.length, input.driveSize);
    const got = await source.read(first, wanted);
    if (got < wanted) return failed(got);
    const length = input.end(first.subarray(0, got));
    const whole: Extent[] = [[0, length]];
    let readSoFar = Math.min(got, length);
    return {
      length,
      used: whole,
      primed: readSoFar,
      mapBytes: 0,
      toRead: length,
      readSoFar: () => readSoFar,
      read: async (into, want) => {
        const read = await source.read(into, want);
        readSoFar += read;
        return read;
      },
      usedWithin: (_at, want) => [[0, want]],
    };
  }
  let used: Extent[];
  let length: number;
  let mapBytes = 0;
  try {
    const asked = askedReader(input.ask, source, input.driveSize, drive);
    const read: typeof asked = async (offset, want) => {
      const bytes = await asked(offset, want);
      mapBytes += bytes?.length ?? 0;
      return bytes;
    };
    // As much of the start as a whole-drive backup looks at: a GPT's entries too, on 4Kn drives.
    const head = await read(0, MAX_READ_BYTES);
    if (head === null) return failed(0);
    length = input.end(head);
    used = await usedRangesInChild(read, length, drive);
  } catch (error) {
    if (error instanceof JobError && error.failure.code === 'source-read-error')
      return failed(error.failure.offset ?? 0);
    throw error;
  }
  askAll(input.ask, used);
  const bytes = new UsedBytes(used, source);
  return {
    length,
    used,
    primed: undefined,
    mapBytes,
    toRead: mapBytes + bytes.usedBytes,
    readSoFar: () => mapBytes + bytes.fetched,
    read: (into, want, at) => bytes.read(into, want, at),
    usedWithin: (at, want) => bytes.usedWithin(at, want),
  };
}

/**
 * Backup, the unprivileged half: the drive's bytes arrive from the helper through a pipe and are
 * written to the user's file here (or by a compressor started here), so root never writes into
 * the user's files. Every byte is hashed on the way; the file is then read back (decoded back,
 * when compressed) and compared.
 */
import type { Failure, TargetResult } from '../../common/domain/result.js';
import { allocateJobMemory } from '../../writer/job-memory.js';
import { fail, FlashError, sourceReadFailure, toFailure } from '../../writer/failures.js';
import { FileTarget, fileWriteFailure } from '../files/file-target.js';
import { DEFAULT_CHUNK, type FlashJob } from '../../writer/flash.js';
import { chooseGrain, GrainHashes } from '../../writer/grain-hashes.js';
import { closeFd, readFully, writeFully } from '../../node/io.js';
import { ProgressMeter } from '../../writer/progress-meter.js';
import type { VerifyOutcome } from '../../writer/verify-written.js';
import { readPartitionTable } from '../images/partition-table.js';
import type { BackupCompression } from '../../common/domain/backup-compression.js';
import { startCompressor, startDecompressor, type RunningTool } from './compressor.js';
import { errorText } from '../../common/domain/error-details.js';

export interface BackupJob {
  /** The pipe the helper sends the drive's bytes into, front to back. */
  source: number;
  /** The drive, as the user named it (for messages). */
  drive: string;
  /** Bytes the drive holds: what the helper sends when nothing goes wrong. */
  driveSize: number;
  /** The file to write (see file-target.ts for what may be named). */
  target: string;
  /** Compress with this format's system tool; null writes the raw image. */
  compress: BackupCompression | null;
  /** Stop after the end of the last partition in the drive's partition table. */
  trimToPartitions: boolean;
  verify: boolean;
  /**
   * Why the helper's bytes stopped before the end: its own failure (the drive was unplugged, a
   * read error). Asked only when they did.
   */
  sourceFailure: () => Promise<Failure | null>;
  signal?: AbortSignal | undefined;
  onProgress?: FlashJob['onProgress'];
}

/**
 * Where a backup trimmed to the partitions ends: the end of the partition that ends last, read
 * from the drive's first bytes. A drive without a partition table cannot be trimmed.
 */
export function partitionsEnd(head: Uint8Array, driveSize: number, drive: string): number {
  const table = readPartitionTable(head);
  if (table.partitions.length === 0) {
    throw fail('unsupported-format', `${drive} has ${table.type === 'none' ? 'no partition table' : 'no partitions'}, so there is nothing to stop after; back up the whole drive instead (without trimming to the partitions).`);
  }
  return Math.min(driveSize, Math.max(...table.partitions.map((p) => p.offset + p.size)));
}

/** Writes the helper's stream of the drive into a file and verifies it; resolves with the file's result, never rejects. */
export async function backupToFile(job: BackupJob): Promise<TargetResult> {
  const started = performance.now();
  const { target } = job;
  const memory = allocateJobMemory(2 * DEFAULT_CHUNK);
  const halves: readonly [Buffer, Buffer] = [memory.bytes.subarray(0, DEFAULT_CHUNK), memory.bytes.subarray(DEFAULT_CHUNK)];
  const hashes = new GrainHashes(chooseGrain(job.driveSize), job.driveSize, memory.hash);
  const read = async (into: Buffer, length: number, at: number): Promise<number> => {
    try {
      return await readFully(job.source, into, 0, length, null);
    } catch (error) {
      throw sourceReadFailure(at, error);
    }
  };

  let file: FileTarget | null = null;
  let compressor: RunningTool | null = null;
  let position = 0;
  try {
    const wanted = Math.min(DEFAULT_CHUNK, job.driveSize);
    const first = await read(halves[0], wanted, 0);
    // Cancelled before the first bytes came: the helper stopped because it was asked to.
    if (first < wanted && job.signal?.aborted === true) return { status: 'cancelled', target, bytes: 0 };
    // Nothing or too little came: the helper refused the drive or lost it; its reason is the one to give.
    if (first < wanted) throw new FlashError((await job.sourceFailure()) ?? { code: 'source-read-error', message: `${job.drive}'s bytes stopped at byte offset ${first}: was it unplugged?`, offset: first });
    const length = job.trimToPartitions ? partitionsEnd(halves[0].subarray(0, first), job.driveSize, job.drive) : job.driveSize;
    file = await FileTarget.create(target, job.compress === null ? length : null, false);
    const output = file;
    compressor = job.compress === null ? null : await startCompressor(job.compress, output.descriptor);
    const sink = compressor;
    const meter = new ProgressMeter('writing', target, length, (p) => job.onProgress?.(p));

    // The two halves in turn: one is written (and hashed) while the next bytes arrive in the other.
    let filled = Math.min(first, length);
    for (let turn: 0 | 1 = 0; filled > 0; turn = turn === 0 ? 1 : 0) {
      if (job.signal?.aborted) return await cancelled(file, compressor, target, position);
      const n = filled;
      const at = position;
      const current = halves[turn];
      const writing = (sink === null ? output.write(current, 0, n, at) : writeFully(sink.fd, current, 0, n, null)).then(
        () => null,
        (error: unknown) => fileWriteFailure(target, error),
      );
      const next = at + n < length ? read(halves[turn === 0 ? 1 : 0], Math.min(DEFAULT_CHUNK, length - at - n), at + n).catch((error: unknown) => error as FlashError) : Promise.resolve(0);
      hashes.record(current.subarray(0, n), at);
      const written = await writing;
      const got = await next;
      // A compressor that stopped taking input has said why on its way out (a full disk, usually).
      if (written !== null && sink !== null) await compressorFailure(sink, job.target);
      if (written !== null) throw written;
      if (typeof got !== 'number') throw got;
      position += n;
      meter.update(position);
      filled = got;
    }
    // A cancel stops the helper too, so the stream ends early: that is the cancel, not a failure.
    if (job.signal?.aborted) return await cancelled(file, compressor, target, position);
    if (position < length) {
      const why = await job.sourceFailure();
      throw new FlashError(why ?? { code: 'source-read-error', message: `${job.drive}'s bytes stopped at byte offset ${position} of ${length}: was it unplugged?`, offset: position });
    }
    meter.finish();
    if (compressor !== null) await compressorFailure(compressor, target);
    job.onProgress?.({ phase: 'syncing', target, bytesDone: length, bytesTotal: length, speed: 0, eta: null });
    await file.sync();

    if (job.verify) {
      const outcome = await verifyBackup(job, file, halves, hashes, length);
      if (outcome !== null) {
        if (outcome.status === 'cancelled') return await cancelled(file, null, target, position);
        throw new FlashError(outcome.failure);
      }
    }
    await file.close();
    await file.commit();
    return { status: 'ok', target, bytes: length, written: true, verified: job.verify, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    await compressor?.stop();
    await file?.discard();
    const failure = toFailure(error);
    const removed = file === null ? '' : ' The incomplete backup file was deleted.';
    return { status: 'failed', target, bytes: position, ...failure, message: `${failure.message}${removed}` };
  }
}

/** Ends the compressor's input and waits for it; throws with its own words when it failed. */
async function compressorFailure(compressor: RunningTool, target: string): Promise<void> {
  try {
    await compressor.finish();
  } catch (error) {
    const text = errorText(error);
    throw fail(/No space left/i.test(text) ? 'target-full' : 'write-error', `Compressing the backup into ${target} failed: ${text}`);
  }
}

async function cancelled(file: FileTarget, compressor: RunningTool | null, target: string, bytes: number): Promise<TargetResult> {
  await compressor?.stop();
  await file.discard();
  return { status: 'cancelled', target, bytes };
}

/**
 * Reads the file back past the page cache (decoded by the format's tool when compressed) and
 * compares it grain by grain with the hashes taken as the drive's bytes arrived.
 */
async function verifyBackup(job: BackupJob, file: FileTarget, halves: readonly [Buffer, Buffer], hashes: GrainHashes, length: number): Promise<VerifyOutcome> {
  const { target } = job;
  let decoder: RunningTool | null = null;
  if (job.compress !== null) {
    const input = await file.uncachedReader();
    try {
      decoder = await startDecompressor(job.compress, input);
    } finally {
      await closeFd(input);
    }
  }
  const decoded = decoder;
  const readBack = (into: Buffer, want: number, at: number): Promise<number> => (decoded === null ? file.read(into, 0, want, at) : readFully(decoded.fd, into, 0, want, null));
  const meter = new ProgressMeter('verifying', target, length, (p) => job.onProgress?.(p));
  let badGrains = 0;
  let firstBad = -1;
  try {
    for (let at = 0, turn: 0 | 1 = 0; at < length; at += DEFAULT_CHUNK, turn = turn === 0 ? 1 : 0) {
      if (job.signal?.aborted) return { status: 'cancelled' };
      const want = Math.min(DEFAULT_CHUNK, length - at);
      const got = await readBack(halves[turn], want, at);
      if (got < want) return { status: 'failed', failure: { code: 'verify-mismatch', message: `${target} holds only ${at + got} of the ${length} bytes read from ${job.drive}.`, offset: at + got } };
      hashes.compare(halves[turn].subarray(0, want), at, (grainOffset) => {
        badGrains += 1;
        if (firstBad < 0) firstBad = grainOffset;
      });
      meter.update(at + want);
    }
    // A compressed file that decodes to more than was written is not this backup either.
    if (decoded !== null && (await readFully(decoded.fd, halves[0], 0, 1, null)) > 0) {
      return { status: 'failed', failure: { code: 'verify-mismatch', message: `${target} decodes to more than the ${length} bytes read from ${job.drive}.`, offset: length } };
    }
    await decoded?.finish();
  } catch (error) {
    return { status: 'failed', failure: { code: 'verify-read-error', message: `Reading ${target} back failed: ${errorText(error)}`} };
  } finally {
    await decoded?.stop();
  }
  meter.finish();
  if (badGrains === 0) return null;
  return {
    status: 'failed',
    failure: {
      code: 'verify-mismatch',
      message: `${target} differs from what was read from ${job.drive}: ${badGrains} block${badGrains === 1 ? '' : 's'} of ${hashes.grain} bytes, the first at byte offset ${firstBad}. The disk holding the file may be failing.`,
      offset: firstBad,
      badBlocks: badGrains,
    },
  };
}

/**
 * Backup, the unprivileged half: the drive's bytes arrive from the helper (through a pipe, a FIFO or
 * a named pipe) and are written to the user's file here, compressed here when asked, so root never writes into
 * the user's files. Every byte is hashed on the way; the file is then read back (decoded back,
 * when compressed) and compared.
 */
import type { Progress } from '../../common/domain/progress.js';
import type { TargetResult } from '../../common/domain/result.js';
import type { Failure } from '../../common/domain/failure.js';
import { sourceReadFailure } from '../../writer/failures.js';
import { JobError, jobError, toFailure } from '../../common/domain/failure.js';
import { discarded, FileTarget, fileWriteFailure, removePartial, withLeftover } from '../files/file-target.js';
import { chooseGrain, GrainHashes } from '../../writer/grain-hashes.js';
import type { ByteSource } from '../../node/byte-source.js';
import { ProgressMeter } from '../../writer/progress-meter.js';
import { allocatePumpMemory, pump, type PumpEnd } from '../../writer/pump.js';
import { compareRead, grainMismatch, type Comparison } from '../../writer/compare.js';
import type { VerifyOutcome } from '../../writer/verify-written.js';
import { readPartitionTable } from '../images/formats/partition-table.js';
import type { BackupCompression } from '../../common/domain/backup-compression.js';
import { startCompressor, startDecompressor, type Compressor, type Decompressor } from './compressor.js';
import { errorText } from '../../common/domain/error-details.js';
import { rename, stat, statfs, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { extentBytes } from '../../common/domain/extents.js';
import { formatBytes } from '../../common/domain/units.js';
import { planBackup, type BackupPlan } from './backup-plan.js';
import { bmapText } from './bmap-writer.js';
import type { AskRanges } from './used-blocks.js';
import { BackupGrains } from './backup-grains.js';

export interface BackupJob {
  /** The drive's bytes as the helper sends them, front to back. */
  source: ByteSource;
  /** The drive, as the user named it (for messages). */
  drive: string;
  /** Bytes the drive holds: what the helper sends when nothing goes wrong. */
  driveSize: number;
  /** The file to write (see file-target.ts for what may be named). */
  target: string;
  /** Compress in this format (compressor.ts); null writes the raw image. */
  compress: BackupCompression | null;
  /** Stop after the end of the last partition in the drive's partition table. */
  trimToPartitions: boolean;
  /**
   * How to ask the helper for ranges of the drive (a backup of the used blocks, backup-plan.ts);
   * null when it sends the whole drive front to back.
   */
  ask: AskRanges | null;
  verify: boolean;
  /**
   * Why the helper's bytes stopped before the end: its own failure (the drive was unplugged, a
   * read error). Asked only when they did.
   */
  sourceFailure: () => Promise<Failure | null>;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
}

/**
 * Where a backup trimmed to the partitions ends: the end of the partition that ends last, read
 * from the drive's first bytes. A drive without a partition table cannot be trimmed.
 */
export function partitionsEnd(head: Uint8Array, driveSize: number, drive: string): number {
  const table = readPartitionTable(head);
  if (table.partitions.length === 0) {
    throw jobError(
      'unsupported-format',
      `${drive} has ${table.type === 'none' ? 'no partition table' : 'no partitions'}, so there is nothing to stop after; back up the whole drive instead (without trimming to the partitions).`,
    );
  }
  return Math.min(driveSize, Math.max(...table.partitions.map((p) => p.offset + p.size)));
}

/** Writes the helper's stream of the drive into a file and verifies it; resolves with the file's result, never rejects. */
export async function backupToFile(job: BackupJob): Promise<TargetResult> {
  const started = performance.now();
  const { target } = job;
  const memory = allocatePumpMemory();
  const { halves } = memory;
  const hashes = new GrainHashes(chooseGrain(job.driveSize), job.driveSize, memory.hash);
  let file: FileTarget | null = null;
  let compressor: Compressor | null = null;
  let meter: ProgressMeter | null = null;
  // Bytes read from the drive so far: what a stopped backup's result says, as its last progress line does.
  let readSoFar = (): number => 0;
  try {
    const plan = await planBackup(
      { ...job, end: (head) => (job.trimToPartitions ? partitionsEnd(head, job.driveSize, job.drive) : job.driveSize) },
      halves[0],
    );
    if (plan === 'cancelled') return { status: 'cancelled', target, bytes: 0 };
    readSoFar = () => plan.readSoFar();
    const { length } = plan;
    const grains = new BackupGrains(hashes.grain, plan.used, length);
    if (job.compress === null) await checkRoom(target, extentBytes(plan.used));
    // Raw: a sparse file, whose free space is never written (holes read back as zeros).
    file = await FileTarget.create(target, job.compress === null ? length : null, job.compress === null);
    const output = file;
    compressor = job.compress === null ? null : await startCompressor(job.compress, output.descriptor);
    const sink = compressor;
    const about = { driveBytes: job.driveSize, imageBytes: length };
    const report = (p: Progress): void => job.onProgress?.({ ...p, backup: about });
    // The maps were read before: they count as read, not in the speed of reading the used ranges.
    const reading = new ProgressMeter('reading', target, plan.toRead, report).startAt(plan.mapBytes);
    meter = reading;
    let position = 0;
    const pumped = await copyDrive(job, plan, { output, sink }, { halves, hashes, grains }, (at) => {
      position = at;
      reading.update(plan.readSoFar());
    });
    // A cancel stops the helper too, so the stream may end early first: that is the cancel, not a failure.
    if (pumped.end === 'cancelled' || job.signal?.aborted === true) {
      // The bytes read from the drive, as the last progress line says them (the meter is throttled).
      reading.finish(plan.readSoFar());
      return await cancelled(file, compressor, target, plan.readSoFar());
    }
    if (position < length) throw await stoppedEarly(job, position, length);
    reading.finish(plan.readSoFar());
    meter = null;
    if (compressor !== null) await compressorFailure(compressor, target);
    report({ phase: 'syncing', target, bytesDone: plan.toRead, bytesTotal: plan.toRead, speed: 0, eta: null });
    await file.sync();
    const kept = await keepFile(job, file, { halves, hashes, grains, report }, plan);
    if (kept === 'cancelled') return await cancelled(file, null, target, plan.readSoFar());
    return await savedResult(job, plan, started);
  } catch (error) {
    // Stopped while reading: the last progress line says the bytes read, as the result does (the meter is throttled).
    meter?.finish(readSoFar());
    await compressor?.stop();
    // What became of the file: deleted, or the sentence that says it is still there.
    const removed = file === null ? null : ((await file.discard()) ?? 'The incomplete backup file was deleted.');
    const failure = toFailure(error);
    const message = removed === null ? failure.message : `${failure.message} ${removed}`;
    return { status: 'failed', target, bytes: readSoFar(), ...failure, message };
  }
}

/**
 * Copies the drive's bytes into the file through the pump: one half is written (and hashed) while
 * the next bytes arrive in the other. Raw, only the used ranges are written into the sparse file;
 * compressed, every byte goes through the compressor.
 */
function copyDrive(
  job: BackupJob,
  plan: BackupPlan,
  { output, sink }: { output: FileTarget; sink: Compressor | null },
  { halves, hashes, grains }: Pick<BackupChecks, 'halves' | 'hashes' | 'grains'>,
  advanced: (at: number) => void,
): Promise<PumpEnd> {
  const { target } = job;
  return pump({
    halves,
    from: 0,
    length: plan.length,
    primed: plan.primed,
    read: async (into, want, at) => {
      try {
        return await plan.read(into, want, at);
      } catch (error) {
        throw sourceReadFailure(at, error);
      }
    },
    write: async (bytes, at) => {
      try {
        if (sink !== null) await sink.write(bytes);
        else
          for (const [from, size] of plan.usedWithin(at, bytes.length))
            await output.write(bytes, from, size, at + from);
      } catch (error) {
        // A compressor that stopped taking input has said why on its way out (a full disk, usually).
        if (sink !== null) await compressorFailure(sink, target);
        throw fileWriteFailure(target, error);
      }
      return true;
    },
    alongside: (bytes, at) => {
      for (const [from, size] of grains.usedRuns(at, bytes.length))
        hashes.record(bytes.subarray(from, from + size), at + from);
    },
    advanced,
    signal: job.signal,
  });
}

/** Why the drive's bytes stopped at `position`, before the image's `length`: the helper's own reason, or a pulled drive. */
async function stoppedEarly(job: BackupJob, position: number, length: number): Promise<JobError> {
  const why = await job.sourceFailure();
  return new JobError(
    why ?? {
      code: 'source-read-error',
      message: `${job.drive}'s bytes stopped at byte offset ${position} of ${length}: was it unplugged?`,
      offset: position,
    },
  );
}

interface BackupChecks {
  halves: readonly [Buffer, Buffer];
  hashes: GrainHashes;
  grains: BackupGrains;
  report: (p: Progress) => void;
}

/**
 * Reads the synced file back when asked, then gives it its name and writes its block map beside it;
 * 'cancelled' when the read-back was. Throws the read-back's failure.
 */
async function keepFile(
  job: BackupJob,
  file: FileTarget,
  checks: BackupChecks,
  plan: Pick<BackupPlan, 'length' | 'used'>,
): Promise<'cancelled' | null> {
  if (job.verify) {
    const outcome = await verifyBackup(job, file, checks, plan.length);
    if (outcome?.status === 'cancelled') return 'cancelled';
    if (outcome !== null) throw new JobError(outcome.failure);
  }
  await file.close();
  await file.commit();
  await writeBlockMap(job.target, bmapText(plan.length, plan.used));
  return null;
}

/**
 * Writes the backup's block map beside it, under its name only once whole: a cut-short map beside
 * a backup would leave ranges of it unwritten when it is flashed.
 */
async function writeBlockMap(target: string, text: string): Promise<void> {
  const path = `${target}.bmap`;
  const partial = FileTarget.partialPath(path);
  try {
    // A leftover of an earlier run is replaced; the map itself is created afresh, never through a link.
    await unlink(partial).catch(() => undefined);
    await writeFile(partial, text, { flag: 'wx' });
    await rename(partial, path);
  } catch (error) {
    const failure = jobError('write-error', `The block map ${path} could not be written: ${errorText(error)}.`);
    throw withLeftover(failure, await removePartial(partial));
  }
}

/** The result of a backup saved under its name: what was read of the drive, and what the file takes. */
async function savedResult(job: BackupJob, plan: BackupPlan, started: number): Promise<TargetResult> {
  return {
    status: 'ok',
    target: job.target,
    bytes: plan.length,
    written: true,
    verified: job.verify,
    seconds: (performance.now() - started) / 1000,
    backup: {
      driveBytes: job.driveSize,
      readBytes: plan.readSoFar(),
      mapBytes: plan.mapBytes,
      ...(await fileSizes(job.target)),
      ...(job.compress === null ? {} : { compression: job.compress }),
    },
  };
}

/** The space `file` takes on disk (its allocated blocks: a sparse file's holes take none), and its length. */
export async function fileSizes(file: string): Promise<{ fileBytes: number; fileLength: number }> {
  const { blocks, size } = await stat(file);
  // Windows reports no blocks: the length is the best it says.
  return { fileBytes: blocks > 0 || size === 0 ? blocks * 512 : size, fileLength: size };
}

/**
 * Refuses a raw backup whose used bytes cannot fit where it goes, before anything is read: the
 * file is sparse, so reserving its length (as a whole image is) would ask for its free space too.
 */
async function checkRoom(target: string, bytes: number): Promise<void> {
  const room = await statfs(dirname(resolve(target))).catch(() => null);
  if (room === null || room.bavail * room.bsize >= bytes) return;
  throw jobError(
    'target-full',
    `There is not enough free space for ${target}: it needs ${formatBytes(bytes)} (${bytes} bytes). Free some space or choose another place.`,
    { offset: 0 },
  );
}

/** Ends the compressor's input and waits for it; throws with its own words when it failed. */
async function compressorFailure(compressor: Compressor, target: string): Promise<void> {
  try {
    await compressor.finish();
  } catch (error) {
    const text = errorText(error);
    // ENOSPC from node:zlib's file stream, "No space left on device" from xz.
    if (/ENOSPC|No space left/i.test(text))
      throw jobError(
        'target-full',
        `The disk holding ${target} is full: the compressed backup did not fit. Free some space or choose another place.`,
      );
    throw jobError('write-error', `Compressing the backup into ${target} failed: ${text}.`);
  }
}

async function cancelled(
  file: FileTarget,
  compressor: Compressor | null,
  target: string,
  bytes: number,
): Promise<TargetResult> {
  await compressor?.stop();
  return discarded({ status: 'cancelled', target, bytes }, await file.discard());
}

function longFile(job: BackupJob, holds: number, length: number): VerifyOutcome {
  return {
    status: 'failed',
    failure: {
      code: 'verify-mismatch',
      message: `${job.target} holds ${holds} bytes, more than the ${length} bytes read from ${job.drive}: something else wrote to it.`,
      offset: length,
    },
  };
}

function shortFile(job: BackupJob, holds: number, length: number): VerifyOutcome {
  return {
    status: 'failed',
    failure: {
      code: 'verify-mismatch',
      message: `${job.target} holds only ${holds} of the ${length} bytes read from ${job.drive}.`,
      offset: holds,
    },
  };
}

/**
 * The read-back of the grains of [at, at + want) that are not holes, into `into`; fewer bytes where
 * the file ends. `counted` is told each read's bytes: what the read-back's progress counts.
 */
async function readGrains(
  file: FileTarget,
  grains: BackupGrains,
  { into, want, at }: { into: Buffer; want: number; at: number },
  counted: (bytes: number) => void,
): Promise<number> {
  for (const [from, size] of grains.readRuns(at, want)) {
    const got = await file.read(into, from, size, at + from);
    counted(got);
    if (got < size) return from + got;
  }
  return want;
}

/**
 * Reads the file back past the page cache (decoded by compressor.ts when compressed) and
 * compares it grain by grain with the hashes taken as the drive's bytes arrived; free space must
 * be zeros, and is not read where the file's filesystem says it is a hole (backup-grains.ts).
 */
async function verifyBackup(
  job: BackupJob,
  file: FileTarget,
  { halves, hashes, grains, report }: BackupChecks,
  length: number,
): Promise<VerifyOutcome> {
  const { target } = job;
  if (job.compress === null) {
    // Holes past a file's end would pass for free space, and bytes past the image's would be flashed
    // unchecked: the file must be exactly as long as the image.
    const now = await file.length();
    if (now < length) return shortFile(job, now, length);
    if (now > length) return longFile(job, now, length);
    await grains.findHoles((from, to) => file.dataRanges(from, to));
  }
  const decoded: Decompressor | null =
    job.compress === null ? null : await startDecompressor(job.compress, await file.uncachedReader());
  // Counted as read back: the file's bytes outside its holes, or every decoded byte.
  let readBack = 0;
  const counted = (bytes: number): void => {
    readBack += bytes;
  };
  const meter = new ProgressMeter('verifying', target, decoded === null ? grains.readBytes() : length, report);
  let compared: Comparison;
  try {
    compared = await compareRead({
      halves,
      from: 0,
      length,
      // Past the page cache (FileTarget.read), or from the decoder reading the file back.
      read: async (into, want, at) => {
        if (decoded === null) return readGrains(file, grains, { into, want, at }, counted);
        const got = await decoded.read(into, want);
        counted(got);
        return got;
      },
      check: (bytes, at, differences) => grains.check(bytes, at, hashes, differences),
      advanced: () => meter.update(readBack),
      signal: job.signal,
    });
    if (compared.end === 'cancelled') return { status: 'cancelled' };
    if (compared.at < length) return shortFile(job, compared.at, length);
    // A compressed file that decodes to more than was written is not this backup either.
    if (decoded !== null && (await decoded.read(halves[0], 1)) > 0) {
      return {
        status: 'failed',
        failure: {
          code: 'verify-mismatch',
          message: `${target} decodes to more than the ${length} bytes read from ${job.drive}.`,
          offset: length,
        },
      };
    }
    await decoded?.finish();
  } catch (error) {
    return {
      status: 'failed',
      failure: { code: 'verify-read-error', message: `Reading ${target} back failed: ${errorText(error)}` },
    };
  } finally {
    await decoded?.stop();
  }
  meter.finish(readBack);
  const failure = grainMismatch(
    compared.differences,
    (count, first) =>
      `${target} differs from what was read from ${job.drive}: ${count} block${count === 1 ? '' : 's'} of ${hashes.grain} bytes, the first at byte offset ${first}. The disk holding the file may be failing.`,
  );
  return failure === null ? null : { status: 'failed', failure };
}

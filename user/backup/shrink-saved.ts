/**
 * A saved raw backup, shrunk when asked (shrink.ts): its block map is made again from the shrunk
 * file's own filesystems, read by the drive map reader as for a drive, and the result says what
 * became of it. A backup that cannot be shrunk is kept whole, and the result says why.
 */
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { errorText } from '../../common/domain/error-details.js';
import type { TargetResult } from '../../common/domain/result.js';
import { JobError } from '../../common/domain/failure.js';
import { randomAccess } from '../images/free-space/image-reader.js';
import { bmapText } from './bmap-writer.js';
import { usedRangesInChild } from './drive-map-launch.js';
import { shrinkInChild } from './shrink-launch.js';
import { fileSizes } from './backup-file.js';

type OkResult = Extract<TargetResult, { status: 'ok' }>;

/** Shrinks the backup `result` saved in `file`; the result with the file's new length, or a warning why not. */
export async function shrinkSaved(file: string, result: OkResult): Promise<TargetResult> {
  // The map that came with the read calls ranges free that resize2fs may fill: it is set aside
  // before the file changes, put back only when the file did not change.
  const map = `${file}.bmap`;
  const setAside = `${map}.before-shrink`;
  await rename(map, setAside);
  let shrunk;
  try {
    shrunk = await shrinkInChild(file, result.bytes);
    if (shrunk !== null) await writeMap(file, shrunk.after);
  } catch (error) {
    // The shrinker refuses with a JobError that is not `internal` only before it changes the file.
    if (error instanceof JobError && error.failure.code !== 'internal') {
      await rename(setAside, map);
      return { ...result, warnings: [...(result.warnings ?? []), `Not shrunk: ${error.failure.message}`] };
    }
    await rm(setAside, { force: true });
    return {
      status: 'failed',
      target: result.target,
      bytes: result.bytes,
      code: 'internal',
      message: `${file} was read and verified, but shrinking it stopped part-way (${errorText(error)}). The file may be damaged and has no block map: back the drive up again without --shrink.`,
    };
  }
  if (shrunk === null) {
    await rename(setAside, map);
    return {
      ...result,
      warnings: [
        ...(result.warnings ?? []),
        `${file} was not shrunk: its last filesystem is already about as small as what it holds.`,
      ],
    };
  }
  await rm(setAside, { force: true });
  if (shrunk.fault !== null)
    return {
      status: 'failed',
      target: result.target,
      bytes: shrunk.after,
      code: 'verify-mismatch',
      message: `${file} was read and verified, then shrunk, but reading the shrunk file back failed: ${shrunk.fault}. Back the drive up again without --shrink.`,
    };
  const figures = result.backup ?? { driveBytes: shrunk.before, readBytes: shrunk.before, mapBytes: 0 };
  return {
    ...result,
    bytes: shrunk.after,
    backup: { ...figures, ...(await fileSizes(file)), shrunkFrom: shrunk.before },
  };
}

/** The shrunk file's block map, made from its own filesystems, named only once it is whole. */
async function writeMap(file: string, length: number): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const read = randomAccess(async (position, count) => {
      const bytes = Buffer.alloc(Math.max(0, Math.min(count, length - position)));
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, position);
      return bytes.subarray(0, bytesRead);
    });
    const used = await usedRangesInChild(read, length, file);
    await writeFile(`${file}.bmap.part`, bmapText(length, used));
    await rename(`${file}.bmap.part`, `${file}.bmap`);
  } finally {
    await handle.close();
  }
}

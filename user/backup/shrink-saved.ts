/**
 * A saved raw backup, shrunk when asked (shrink.ts): its block map is made again from the shrunk
 * file's own filesystems, read by the drive map reader as for a drive, and the result says what
 * became of it. A backup that cannot be shrunk is kept whole, and the result says why.
 */
import { open, writeFile } from 'node:fs/promises';
import type { TargetResult } from '../../common/domain/result.js';
import { JobError } from '../../common/domain/failure.js';
import { randomAccess } from '../images/free-space/image-reader.js';
import { bmapText } from './bmap-writer.js';
import { usedRangesInChild } from './drive-map-launch.js';
import { shrinkBackup } from './shrink.js';
import { sizeOnDisk } from './backup-file.js';

type OkResult = Extract<TargetResult, { status: 'ok' }>;

/** Shrinks the backup `result` saved in `file`; the result with the file's new length, or a warning why not. */
export async function shrinkSaved(file: string, result: OkResult): Promise<TargetResult> {
  let shrunk;
  try {
    shrunk = await shrinkBackup(file, result.bytes);
  } catch (error) {
    if (!(error instanceof JobError) || error.failure.code === 'internal') throw error;
    return { ...result, warnings: [...(result.warnings ?? []), `Not shrunk: ${error.failure.message}`] };
  }
  if (shrunk === null)
    return {
      ...result,
      warnings: [
        ...(result.warnings ?? []),
        `${file} was not shrunk: its last filesystem is already about as small as what it holds.`,
      ],
    };
  const handle = await open(file, 'r');
  try {
    const read = randomAccess(async (position, length) => {
      const bytes = Buffer.alloc(Math.max(0, Math.min(length, shrunk.after - position)));
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, position);
      return bytes.subarray(0, bytesRead);
    });
    const used = await usedRangesInChild(read, shrunk.after, file);
    await writeFile(`${file}.bmap`, bmapText(shrunk.after, used));
  } finally {
    await handle.close();
  }
  const figures = result.backup ?? { driveBytes: shrunk.before, readBytes: shrunk.before, fileBytes: 0 };
  return {
    ...result,
    bytes: shrunk.after,
    backup: { ...figures, fileBytes: await sizeOnDisk(file), shrunkFrom: shrunk.before },
  };
}

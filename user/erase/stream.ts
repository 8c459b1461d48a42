import { constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { closeFd, openFd, writeFully } from '../../node/io.js';
import type { ErasePlan } from './volume.js';

/** The bytes are made in pieces of this size: memory stays flat whatever the FAT's size (64 MiB on a 2 TB card). */
const PIECE_BYTES = MiB;

/** The bytes of the plan's ranges, concatenated in order: what the helper's fd 0 carries for a block-mapped flash. */
export function* planBytesOf(plan: Pick<ErasePlan, 'extents' | 'patches'>): Generator<Buffer> {
  for (const [offset, length] of plan.extents) {
    for (let at = offset; at < offset + length; at += PIECE_BYTES) {
      const piece = Buffer.alloc(Math.min(PIECE_BYTES, offset + length - at));
      for (const patch of plan.patches) {
        const from = Math.max(at, patch.offset);
        const to = Math.min(at + piece.length, patch.offset + patch.bytes.length);
        if (from < to) piece.set(patch.bytes.subarray(from - patch.offset, to - patch.offset), from - at);
      }
      yield piece;
    }
  }
}

/** The plan's bytes, open for reading from their start (the helper's fd 0), and what closes and removes them. */
export interface PlanFile {
  fd: number;
  dispose(): Promise<void>;
}

/**
 * The plan's bytes in a temporary file of a fresh private directory. A file rather than a pipe fed
 * from here: the helper reads it at its own pace, and nothing in this process can block on it. It
 * is unlinked at once where the system allows that for an open file; Windows does not, so there
 * dispose() removes it after the job.
 */
export async function planFile(plan: Pick<ErasePlan, 'extents' | 'patches'>): Promise<PlanFile> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-erase-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, 'tables');
  let fd: number;
  try {
    const out = await openFd(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
    try {
      for (const piece of planBytesOf(plan)) await writeFully(out, piece, 0, piece.length, null);
    } finally {
      await closeFd(out);
    }
    fd = await openFd(path, constants.O_RDONLY);
  } catch (error) {
    await remove();
    throw error;
  }
  if (process.platform !== 'win32') await remove();
  return {
    fd,
    dispose: async () => {
      await closeFd(fd);
      await remove();
    },
  };
}

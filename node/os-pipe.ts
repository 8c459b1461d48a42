import { constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeFd, openFd } from './io.js';
import { runTool } from './run-tool.js';

/** The two ends of an anonymous pipe, as plain descriptors. */
export interface OsPipe {
  /** Blocking read end: becomes the helper's fd 0. */
  readFd: number;
  /** Blocking write end: becomes the decoder's fd 3. */
  writeFd: number;
}

/**
 * A kernel pipe whose ends are plain descriptors, so the decoder writes straight into the helper
 * with no copy through this process. Node has no pipe(2), and the pipes child_process makes are
 * sockets that start reading into this process as soon as they exist, which would steal image
 * bytes. So: a FIFO in a fresh 0700 directory, opened read-write first (which never blocks, on
 * Linux and macOS) so that the read-only and write-only opens find their other side at once,
 * then unlinked. Not on Windows, which has no FIFOs; the decoder's output is copied there.
 */
export async function createOsPipe(): Promise<OsPipe> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pipe-'));
  const fifo = join(dir, 'image');
  let both: number | null = null;
  let readFd: number | null = null;
  try {
    await runTool('mkfifo', ['-m', '600', '--', fifo]);
    both = await openFd(fifo, constants.O_RDWR);
    readFd = await openFd(fifo, constants.O_RDONLY);
    const writeFd = await openFd(fifo, constants.O_WRONLY);
    return { readFd, writeFd };
  } catch (error) {
    if (readFd !== null) await closeFd(readFd);
    throw error;
  } finally {
    if (both !== null) await closeFd(both);
    await rm(dir, { recursive: true, force: true });
  }
}

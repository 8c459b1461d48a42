/**
 * Whether `--shrink` can run here, asked before a backup reads anything. Apart from shrink.ts, which
 * only the shrinker's process loads: the app's main process and the CLI parse no filesystem.
 */
import { findTool } from '../../node/run-tool.js';

/**
 * Why `--shrink` cannot be done here, before anything is read: it needs a raw file and Linux's
 * tools. Null when it can.
 */
export async function shrinkRefusal(compressed: boolean): Promise<string | null> {
  if (compressed)
    return '--shrink works on an uncompressed backup: back up without --compress, then compress the shrunk file.';
  if (process.platform !== 'linux') return '--shrink is Linux-only: it needs e2fsprogs (resize2fs, e2fsck) and sfdisk.';
  for (const tool of ['resize2fs', 'e2fsck', 'dumpe2fs', 'sfdisk', 'fallocate'])
    if ((await findTool(tool)) === null)
      return `--shrink needs ${tool}, which is not installed (e2fsprogs, util-linux).`;
  return null;
}

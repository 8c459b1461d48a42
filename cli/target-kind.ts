import { lstat, stat } from 'node:fs/promises';

/**
 * Windows names disks in the device namespace (\\.\PhysicalDrive2), where lstat finds nothing:
 * such a name is a disk, never a new file. (\\?\ starts a long file path, not a device.)
 */
export function isWindowsDevicePath(path: string, platform: NodeJS.Platform): boolean {
  return platform === 'win32' && path.startsWith('\\\\.\\');
}

/**
 * Whether a target names a disk (the privileged helper's route, with all its checks) or a file.
 * Anything that is or leads to a block device is a disk, so a device is never written through the
 * file route by accident; a missing path is a new file (file-target.ts refuses one under /dev).
 */
export async function isFileTarget(path: string): Promise<boolean> {
  if (isWindowsDevicePath(path, process.platform)) return false;
  const st = await lstat(path).catch(() => null);
  if (st === null) return true;
  if (st.isBlockDevice()) return false;
  if (st.isSymbolicLink()) return !((await stat(path).catch(() => null))?.isBlockDevice() ?? false);
  return true;
}

import type { Failure } from '../common/domain/failure.js';
import { JobError, jobError } from '../common/domain/failure.js';
import type { Stats } from 'node:fs';
import { closeFd, fstatFd, openFd } from '../node/io.js';
import type { DeviceFacts, DevicePlatform, VolumeHold } from './platform/types.js';

/**
 * Whether `st` is the kind of node the engine opens a disk through: a block device on Linux, the
 * raw character device (/dev/rdiskN) on macOS. The kind matters as much as the number: Linux
 * numbers block and character devices apart, so character 1:1 (/dev/mem) shares the number of
 * block 1:1 (a RAM disk).
 */
function isDiskNode(st: Stats): boolean {
  return process.platform === 'darwin' ? st.isCharacterDevice() : st.isBlockDevice();
}

/**
 * Opens the device that `facts` (the engine's own fresh look) describes, with `flags`, and checks
 * that the descriptor is that device: a block device with the device number that was inspected.
 * A path swapped in between (a symlink race) is caught rather than used: measured before this
 * check existed, a link flipped between a loop device and a root-only file made the verify job
 * compare that file in 12 of 60 runs. Every open of a device by the engine goes through here.
 * `openFailure` says what a failed open means for this use of the device.
 */
export async function openInspected(
  facts: DeviceFacts,
  flags: number,
  openFailure: (error: unknown) => Failure,
): Promise<number> {
  let fd: number;
  try {
    fd = await openFd(facts.rawPath, flags);
  } catch (error) {
    throw new JobError(openFailure(error));
  }
  // Windows reports no device numbers (rdev 0); there the path is the disk number itself.
  if (facts.rdev !== 0) {
    const st = await fstatFd(fd).catch(() => null);
    if (st === null || !isDiskNode(st) || st.rdev !== facts.rdev) {
      await closeFd(fd);
      throw jobError('target-not-found', `${facts.path} changed between checking and opening it; refusing to use it.`);
    }
  }
  return fd;
}

/** A drive's descriptor and what the OS holds for it while it is open. */
export interface OpenDrive {
  fd: number;
  hold: VolumeHold;
}

/**
 * Unmounts the disk that `facts` describes and opens it with `flags` (see openInspected). The
 * hold is released again when the open fails.
 */
export async function openInspectedDisk(
  facts: DeviceFacts,
  platform: DevicePlatform,
  flags: number,
  openFailure: (error: unknown) => Failure,
): Promise<OpenDrive> {
  // Every platform is asked, mounted or not: Windows volumes without a drive letter are mounted too.
  const hold = await platform.unmount(facts);
  try {
    return { fd: await openInspected(facts, flags, openFailure), hold };
  } catch (error) {
    await hold.release();
    throw error;
  }
}

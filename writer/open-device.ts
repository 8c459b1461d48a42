import { fstat } from 'node:fs';
import type { Failure } from '../common/domain/failure.js';
import { JobError, jobError } from '../common/domain/failure.js';
import { closeFd, openFd } from '../node/io.js';
import type { DeviceFacts, DevicePlatform, VolumeHold } from './platform/types.js';

function fstatRdev(fd: number): Promise<number> {
  return new Promise((resolve, reject) => fstat(fd, (error, st) => (error ? reject(error) : resolve(st.rdev))));
}

/**
 * Unmounts the disk that `facts` (the engine's own fresh look) describes and opens it with
 * `flags`. The device number of the opened descriptor must match what was inspected, so a path
 * swapped in between (a symlink race) is caught rather than used. `openFailure` says what a failed
 * open means for this use of the disk.
 */
export async function openInspectedDisk(facts: DeviceFacts, platform: DevicePlatform, flags: number, openFailure: (error: unknown) => Failure): Promise<{ fd: number; hold: VolumeHold }> {
  // Every platform is asked, mounted or not: Windows volumes without a drive letter are mounted too.
  const hold = await platform.unmount(facts);
  let fd: number;
  try {
    fd = await openFd(facts.rawPath, flags);
  } catch (error) {
    await hold.release();
    throw new JobError(openFailure(error));
  }
  if (facts.rdev !== 0 && (await fstatRdev(fd)) !== facts.rdev) {
    await closeFd(fd);
    await hold.release();
    throw jobError('target-not-found', `${facts.path} changed between checking and opening it; refusing to use it.`);
  }
  return { fd, hold };
}

import { lstat } from 'node:fs';
import type { Failure } from '../common/domain/failure.js';
import type { DevicePlatform } from './platform/types.js';

function exists(path: string): Promise<boolean> {
  return new Promise((resolve) => lstat(path, (error) => resolve(error === null)));
}

/**
 * Whether the helper may be started for `path`: only under the OS's own name for a drive
 * (DevicePlatform.canonicalName: on Linux /dev/NAME, no link on the way to it), which only root
 * can point elsewhere. A symbolic link could be turned to another disk, or to a root-only file,
 * after the authorization prompt named it; the unprivileged side resolves every name before it
 * asks, so a name refused here comes from a front end that skipped that. Returns the reason for
 * refusing, or null. Whole disks only is the job's own check (a partition is named as such).
 */
export async function refuseDriveName(path: string, platform: DevicePlatform): Promise<Failure | null> {
  const canonical = await platform.canonicalName(path);
  if (canonical === path) return null;
  if (canonical !== null) {
    return {
      code: 'target-not-block-device',
      message: `${path} is another name for ${canonical}. Name the drive itself (${canonical}), so that the drive you authorized is the one that is opened.`,
    };
  }
  if (!(await exists(path)))
    return { code: 'target-not-found', message: `${path} does not exist: was the drive unplugged?` };
  return {
    code: 'target-not-block-device',
    message: `${path} is not a disk the system has a name of its own for (such as /dev/sdb). Name the drive itself.`,
  };
}

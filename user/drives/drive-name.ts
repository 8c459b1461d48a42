import { currentPlatform } from '../../writer/platform/index.js';

/**
 * `path` under the OS's own name for the drive it leads to (DevicePlatform.canonicalName): a
 * symbolic link such as /dev/disk/by-id/usb-... becomes /dev/sdb. Every drive is named this way
 * before it is judged or an authorization prompt names it, so both see the real disk; the helper
 * refuses any other name. A path that leads to no drive (a file, nothing) is returned unchanged.
 */
export async function driveName(path: string): Promise<string> {
  return (await (await currentPlatform()).canonicalName(path)) ?? path;
}

import type { DevicePlatform } from './types.js';

/**
 * The device platform for the OS we run on. Each OS's module is loaded only there: the macOS and
 * Windows ones pull in child_process, which costs the Linux helper 3 MB of RSS for nothing.
 */
export async function currentPlatform(): Promise<DevicePlatform> {
  switch (process.platform) {
    case 'linux':
      return (await import('./linux.js')).linuxPlatform;
    case 'darwin':
      return (await import('./darwin.js')).darwinPlatform;
    case 'win32':
      return (await import('./win32.js')).win32Platform;
    default:
      throw new Error(`Sluice cannot write disks on ${process.platform}.`);
  }
}

import { darwinPlatform } from './darwin.js';
import { linuxPlatform } from './linux.js';
import type { DevicePlatform } from './types.js';
import { win32Platform } from './win32.js';

const PLATFORMS: Partial<Record<NodeJS.Platform, DevicePlatform>> = {
  linux: linuxPlatform,
  darwin: darwinPlatform,
  win32: win32Platform,
};

/** The device platform for the OS we run on. */
export function currentPlatform(): DevicePlatform {
  const platform = PLATFORMS[process.platform];
  if (platform === undefined) throw new Error(`Sluice cannot write disks on ${process.platform}.`);
  return platform;
}

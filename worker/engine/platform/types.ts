/** What the engine needs to know about a target before it opens it for writing. */
export interface DeviceFacts {
  /** The path as the user named it. */
  path: string;
  /** The node the engine opens for I/O (macOS: /dev/rdiskN for /dev/diskN). */
  rawPath: string;
  exists: boolean;
  /** The device number (Linux, macOS) the path resolved to; checked again on the opened descriptor. */
  rdev: number;
  /** A whole-disk block device (Windows: a \\.\PhysicalDriveN). */
  isBlockDevice: boolean;
  /** A partition of a disk rather than the disk itself. */
  isPartition: boolean;
  /** Capacity in bytes. */
  size: number;
  /** The smallest unit the device can address; every direct I/O is a multiple of it. */
  logicalBlockSize: number;
  /** The device's preferred request size in bytes; 0 when it does not say. */
  optimalIoSize: number;
  /** The device or its write-protect switch forbids writing. */
  readOnly: boolean;
  /** Where this disk, its partitions or anything stacked on them (LVM, dm-crypt) is mounted. */
  mountpoints: string[];
  /** Mounted as /, /boot, /usr, /home, /var, or used as swap: this is the running system's disk. */
  isSystem: boolean;
}

/** The per-OS seam: how to find, describe and open a raw disk. */
export interface DevicePlatform {
  readonly name: 'linux' | 'darwin' | 'win32';
  /** The node to open for raw I/O. */
  rawPath(path: string): string;
  /**
   * open(2) flags for writing a whole device, bypassing the page cache, exclusively. Read-write,
   * because the job keeps this one descriptor (and its exclusive claim) through verification, and
   * reads back the device's last sector when the image ends inside it.
   */
  readonly writeFlags: number;
  /** open(2) flags for reading a device back, bypassing the page cache. */
  readonly readFlags: number;
  /** Looks at the system afresh; never trusts a description handed in from outside. */
  inspect(path: string): Promise<DeviceFacts>;
}

/** Mountpoints that mean "the running system lives here". */
export const SYSTEM_MOUNTPOINTS: ReadonlySet<string> = new Set([
  '/',
  '/boot',
  '/boot/efi',
  '/usr',
  '/home',
  '/var',
  '/etc',
  '/opt',
  '/System/Volumes/Data',
  '[SWAP]',
]);

export function holdsSystem(mountpoints: readonly string[]): boolean {
  return mountpoints.some((m) => SYSTEM_MOUNTPOINTS.has(m));
}

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
  /**
   * Device numbers (dev_t, as stat() reports st_dev) of the disk, its partitions and anything
   * stacked on them: a file whose st_dev is listed lives on this disk. Empty where the OS has no
   * such numbers (Windows).
   */
  devices: number[];
}

/** Held by the job from unmounting until it is done with the disk (Windows keeps its volumes locked meanwhile). */
export interface VolumeHold {
  release(): Promise<void>;
}

/** For platforms where an unmounted volume stays unmounted by itself. */
export const NOTHING_HELD: VolumeHold = { release: () => Promise.resolve() };

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
  /**
   * open(2) flags for reading a whole disk that is backed up or cloned: bypassing the page cache
   * and, where the OS has it, exclusively, so nothing mounts it while it is read.
   */
  readonly sourceFlags: number;
  /**
   * The OS's own name for the disk or partition `path` leads to, or null when it leads to none
   * (missing, a file, a device /dev has no node of its own for). Linux: /dev/NAME under the
   * kernel's name for the device number, so a symbolic link (/dev/disk/by-id/..., or one anybody
   * made) becomes the node it points to; macOS: /dev/diskN or /dev/rdiskN as named; Windows:
   * \\.\PhysicalDriveN. The unprivileged side names every drive this way before it asks for
   * root, so the prompt shows the real disk; the helper takes no other name.
   */
  canonicalName(path: string): Promise<string | null>;
  /** Looks at the system afresh; never trusts a description handed in from outside. */
  inspect(path: string): Promise<DeviceFacts>;
  /**
   * Unmounts every filesystem on the disk so it can be opened exclusively. When one cannot be
   * unmounted it throws a JobError 'target-busy' naming the mountpoint and, where the OS can tell,
   * the program holding it; where it can tell beforehand, it unmounts nothing in that case.
   */
  unmount(facts: DeviceFacts): Promise<VolumeHold>;
  /** Makes the OS see the partition table now on the disk; throws with the tool's words when it cannot. */
  rereadPartitions(facts: DeviceFacts): Promise<void>;
  /**
   * Ejects the drive (powers it off where the OS can) so it can be pulled out. Resolves false when
   * there is nothing to eject (a loop device, a built-in card slot); throws when ejecting failed.
   */
  eject(facts: DeviceFacts): Promise<boolean>;
  /**
   * Which medium the disk holds now (common/domain/drive.ts Drive.medium): Linux's disk sequence
   * number of the device `facts` inspected; null where the OS has none.
   */
  medium(facts: DeviceFacts): Promise<string | null>;
}

/**
 * A drive as Sluice shows it: the one shape the scanner emits, the CLI lists and the renderer
 * displays. Built in user/drives from the OS's listing; plain data, so it crosses IPC as is.
 */
import type { PartitionTableType } from './image.js';

/** How the drive is attached. `sd` covers SD/MMC slots and readers that say so; `virtual` loop devices, RAM disks, disk images. */
export type DriveBus = 'usb' | 'sd' | 'sata' | 'scsi' | 'pcie' | 'virtual' | 'other';

/**
 * Whether the drive belongs to the computer itself:
 * - `running`: it holds the running system (/, /boot, swap, C:\). Never writable, whatever the user confirms.
 * - `internal`: a fixed internal disk the OS counts as a system disk. Hidden unless "show all
 *   drives" is on, and then writable only after the user types its name.
 * - null: neither (a card, a stick, a removable disk).
 */
export type SystemRole = 'running' | 'internal' | null;

export interface Drive {
  /** The path the user, the CLI and the helper name it by: /dev/sdb, /dev/disk4, \\.\PhysicalDrive2. */
  device: string;
  /** The node raw I/O goes through: /dev/rdisk4 on macOS (many times faster), the device itself elsewhere. */
  raw: string;
  /** Vendor and model, with partition labels where the OS gives them ("SanDisk Ultra (boot, rootfs)"); may be empty. */
  description: string;
  /** Capacity in bytes; null when there is no medium (an empty card reader). */
  size: number | null;
  /** Bytes per logical block: every write is a multiple of it. */
  logicalBlockSize: number;
  /** Bytes per physical block (often 4096 on large disks); equal to the logical size when the OS does not say. */
  physicalBlockSize: number;
  bus: DriveBus;
  /** Removable medium or hot-pluggable device. */
  removable: boolean;
  /** The device or its lock switch forbids writing. */
  readOnly: boolean;
  /** A loop device, RAM disk or mounted disk image rather than hardware. Hidden unless "show virtual drives" is on. */
  virtual: boolean;
  system: SystemRole;
  /** Where its filesystems are mounted (/media/me/boot, /Volumes/bootfs, E:\); Sluice unmounts them before writing. */
  mountpoints: string[];
  /** The table on the drive now; null when it has none, or the listing could not tell. */
  partitionTable: Exclude<PartitionTableType, 'none'> | null;
  /**
   * Which medium is in the drive: Linux's disk sequence number, new for every card inserted and
   * every loop device attached. A card swapped for another of the same size, in the same reader
   * under the same name, has another; the helper refuses a drive whose medium is not the one the
   * user chose. Null where the OS has none (macOS, Windows) or before the listing read it.
   */
  medium: string | null;
}

/**
 * Mountpoints that mean "the running system lives here". A disk holding any of them (through a
 * partition, LVM or dm-crypt) is never written.
 */
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

/**
 * What Sluice knows about an image before it writes it: one shape for `sluice info`, the CLI's
 * JSON lines, the app's main process and the page. Built by user/images/probe/probe.ts (a file or a
 * download) or from a drive's listing (a clone); plain data, so it crosses IPC as is.
 */
import type { CustomisationMethod } from './customisation.js';
import type { ImageFormat } from './image-format.js';

/** How a disk image partitions its bytes; 'none' is a filesystem or data with no table. */
export type PartitionTableType = 'gpt' | 'mbr' | 'none';

/** One partition of an image, as its table describes it. */
export interface PartitionEntry {
  /** 1-based, as the OS numbers it (sdb1, mmcblk0p1). */
  number: number;
  /** Byte offset and size in the image. */
  offset: number;
  size: number;
  /** What kind of partition: "FAT32 (LBA)", "Linux filesystem", "EFI System", or the raw type code. */
  type: string;
  /** The GPT partition name, or the filesystem's label when it could be read; null when neither. */
  label: string | null;
}

export interface PartitionTable {
  type: PartitionTableType;
  partitions: PartitionEntry[];
}

/**
 * What an optical-disc image does once written to a stick as it is:
 * - hybrid: it has a partition table beside its ISO 9660 tree, and boots from a stick as written;
 * - non-hybrid: it boots from a DVD (El Torito) or holds /EFI/BOOT/BOOT*.EFI, but has no partition
 *   table: written as it is, a stick boots nothing; installer mode makes a stick that boots;
 * - windows: a Windows installer (UDF with sources/install.wim or .esd, bootmgr, efi/boot/bootx64.efi),
 *   which boots only from a stick made in installer mode;
 * - not-bootable: no boot record, no EFI loader and no partition table.
 */
export type DiscKind = 'hybrid' | 'non-hybrid' | 'windows' | 'not-bootable';

/** /EFI/BOOT/BOOT*.EFI reported at most: one per architecture, a handful; a hostile folder may list thousands. */
export const MAX_EFI_LOADERS = 16;

export interface DiscImage {
  kind: DiscKind;
  /** The tree the kind was read from: UDF where the image has one (Windows ISOs), else ISO 9660. */
  filesystem: 'iso9660' | 'udf';
  /** An El Torito boot record: the disc boots from a DVD drive. */
  elTorito: boolean;
  /** /EFI/BOOT/BOOT*.EFI, as found. */
  efiLoaders: string[];
  /** Why the tree could not be read, when it could not; the kind is then the descriptors' alone. */
  problem: string | null;
}

/** The SHA-256 an image must have, and where that was said (--sha256, IMAGE.sha256, SHA256SUMS). */
export interface ExpectedChecksum {
  sha256: string;
  from: string;
}

export interface ImageInfo {
  /** The path, URL or device, as given. */
  source: string;
  /** The file name, for display. */
  name: string;
  /**
   * A local file, an http(s) address the image is downloaded from while it is written, or a
   * whole drive that is copied (a clone; `source` is its device).
   */
  origin: 'file' | 'url' | 'drive';
  /** Detected from the content, never from the extension. */
  format: ImageFormat;
  /** Bytes of the file or download as stored (compressed size); null when a server does not say. */
  sourceSize: number | null;
  /** Bytes the image has once decoded, when known before decoding. */
  size: number | null;
  /**
   * The format records the size exactly; false means `size` is a lower bound (gzip's ISIZE is the
   * size modulo 4 GiB: the image holds that plus some multiple of 4 GiB).
   */
  sizeExact: boolean;
  /** From the image's first sectors (decoded for a compressed image); null when not asked for, or they could not be read. */
  partitionTable: PartitionTable | null;
  /** An ISO 9660 or UDF image, classified (user/iso/classify.ts); null for any other image, or one not looked at. */
  disc: DiscImage | null;
  /** zip: the entry that is written, and why it was chosen when there were several. */
  entry: { name: string; choice: string | null } | null;
  /**
   * The block map that applies, from a bmap file or the image's own allocation (qcow2): only its
   * mapped bytes are written and verified, the rest of the drive is left as it is.
   */
  blockMap: { from: string; mappedBytes: number; ranges: number } | null;
  /** The SHA-256 the image must have: checked while it is written. */
  checksum: ExpectedChecksum | null;
  /**
   * How the image takes first-boot settings (user/customise/detect.ts), read from its boot
   * partition and root filesystem; null when it has no method Sluice knows, or was not looked at.
   */
  customisation: CustomisationMethod | null;
  /** Why that method, or what was looked for and not found; null when the image was not looked at. */
  customisationNote: string | null;
}

/** Whether an image is named by an http(s) address (downloaded while it is written) rather than a path. */
export function isUrl(image: string): boolean {
  return /^https?:\/\//i.test(image);
}

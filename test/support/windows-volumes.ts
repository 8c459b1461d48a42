/**
 * Volumes as Get-SluiceVolumes (writer/platform/win32-volumes.ts) reports them. The extents are
 * VOLUME_DISK_EXTENTS buffers CONSTRUCTED from Microsoft's documented layout, not recorded: no
 * public recording of this buffer was found. The layout: winioctl.h VOLUME_DISK_EXTENTS (a DWORD
 * count, then DISK_EXTENT entries) and DISK_EXTENT (DWORD DiskNumber, LARGE_INTEGER
 * StartingOffset, LARGE_INTEGER ExtentLength, so 8-aligned: 24 bytes), and the byte count the
 * driver returns, sizeof(VOLUME_DISK_EXTENTS) + (NumberOfDiskExtents - 1) * sizeof(DISK_EXTENT)
 * (learn.microsoft.com: ns-winioctl-volume_disk_extents, ns-winioctl-disk_extent,
 * ni-ntddvol-ioctl_volume_get_volume_disk_extents).
 */
import type { ReportedVolume } from '../../writer/platform/win32-volumes.js';

/** One extent of a 32 GB superfloppy on disk 2: the filesystem from byte 0, no partition table (32 bytes, written out). */
const SUPERFLOPPY_EXTENTS = Buffer.from(
  [
    '01000000 00000000', // NumberOfDiskExtents = 1, padding
    '02000000 00000000', // DiskNumber = 2, padding
    '00000000 00000000', // StartingOffset = 0
    '0000486e 07000000', // ExtentLength = 0x76e480000 = 31914983424
  ]
    .join('')
    .replace(/\s/g, ''),
  'hex',
);

/** A VOLUME_DISK_EXTENTS buffer for `extents`, in the same layout. */
export function extentsBuffer(
  extents: readonly { disk: number; start: number; length: number }[],
  claimed = extents.length,
): Buffer {
  const bytes = Buffer.alloc(8 + 24 * extents.length);
  bytes.writeUInt32LE(claimed, 0);
  extents.forEach((extent, i) => {
    bytes.writeUInt32LE(extent.disk, 8 + 24 * i);
    bytes.writeBigInt64LE(BigInt(extent.start), 16 + 24 * i);
    bytes.writeBigInt64LE(BigInt(extent.length), 24 + 24 * i);
  });
  return bytes;
}

/** A stick with no partition table: its volume has a drive letter, and Get-Partition lists nothing. */
export const superfloppyVolume: ReportedVolume = {
  Volume: '\\\\?\\Volume{6b1f0a2e-0000-0000-0000-000000000000}\\',
  Extents: SUPERFLOPPY_EXTENTS.toString('base64'),
  Paths: ['E:\\'],
};

/** The system's C: on disk 0, after a 100 MiB EFI partition and a 16 MiB reserved one. */
export const systemVolume: ReportedVolume = {
  Volume: '\\\\?\\Volume{0c4a4b4e-0000-0000-0000-100000000000}\\',
  Extents: extentsBuffer([{ disk: 0, start: 122683392, length: 254_000_000_000 }]).toString('base64'),
  Paths: 'C:\\',
};

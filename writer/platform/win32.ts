import { constants } from 'node:fs';
import { physicalDriveNumber, runPowerShell } from './win32-disk.js';
import { ejectWin32, rereadPartitionsWin32, unmountWin32 } from './win32-lifecycle.js';
import type { DeviceFacts, DevicePlatform } from './types.js';
import { GET_VOLUMES, P_INVOKE_VOLUMES, reportedVolumes, volumesOnDisk, type ReportedVolume } from './win32-volumes.js';

export { physicalDriveNumber } from './win32-disk.js';

/**
 * libuv's Windows-only open flags (uv/win.h). Node passes open flags to libuv unchanged, but does
 * not export these two names on Windows. UV_FS_O_DIRECT becomes FILE_FLAG_NO_BUFFERING and
 * UV_FS_O_EXLOCK a share mode of 0 (nobody else may open the disk).
 */
export const UV_FS_O_DIRECT = 0x02000000;
export const UV_FS_O_EXLOCK = 0x10000000;

/** What the PowerShell query prints, one JSON object. */
export interface WindowsDiskQuery {
  Size: number;
  LogicalSectorSize: number;
  IsReadOnly: boolean;
  IsSystem: boolean;
  IsBoot: boolean;
  /** Every volume of the system, with its extents (win32-volumes.ts); those on this disk are its mounts. */
  Volumes: ReportedVolume[] | ReportedVolume | null;
}

/**
 * The disk's facts, and every volume of the system: the mountpoints are those of the volumes
 * with an extent on this disk (a superfloppy's volume too, which Get-Partition does not list).
 */
export function windowsDiskQueryScript(disk: number): string {
  return `$ErrorActionPreference = 'Stop'
${P_INVOKE_VOLUMES}
${GET_VOLUMES}
$d = Get-Disk -Number ${disk}
[pscustomobject]@{ Size = $d.Size; LogicalSectorSize = $d.LogicalSectorSize; IsReadOnly = $d.IsReadOnly; IsSystem = $d.IsSystem; IsBoot = $d.IsBoot; Volumes = @(Get-SluiceVolumes) } | ConvertTo-Json -Compress -Depth 4
`;
}

export function win32Facts(path: string, disk: number, query: WindowsDiskQuery | null): DeviceFacts {
  const mountpoints =
    query === null ? [] : volumesOnDisk(reportedVolumes(query.Volumes), disk).flatMap((volume) => volume.paths);
  return {
    path,
    rawPath: path,
    exists: query !== null,
    rdev: 0,
    isBlockDevice: query !== null,
    isPartition: false,
    size: query?.Size ?? 0,
    logicalBlockSize: query?.LogicalSectorSize ?? 512,
    optimalIoSize: 0,
    readOnly: query?.IsReadOnly ?? false,
    mountpoints,
    isSystem: (query?.IsSystem ?? false) || (query?.IsBoot ?? false),
    // Windows has no device numbers to match a file against; the app's and CLI's verdicts catch an image stored on the target.
    devices: [],
  };
}

async function inspectWin32(path: string): Promise<DeviceFacts> {
  const disk = physicalDriveNumber(path);
  if (disk === null) return { ...win32Facts(path, -1, null), exists: true };
  const json = await runPowerShell(windowsDiskQueryScript(disk)).catch(() => '');
  return win32Facts(path, disk, json.trim() === '' ? null : (JSON.parse(json) as WindowsDiskQuery));
}

/** \\.\PhysicalDriveN spelled as Windows spells it (any case, leading zeros: the same disk number). */
export function win32CanonicalName(path: string): string | null {
  const disk = physicalDriveNumber(path);
  return disk === null ? null : `\\\\.\\PhysicalDrive${disk}`;
}

export const win32Platform: DevicePlatform = {
  name: 'win32',
  rawPath: (path) => path,
  writeFlags: constants.O_RDWR | UV_FS_O_DIRECT | UV_FS_O_EXLOCK,
  readFlags: constants.O_RDONLY | UV_FS_O_DIRECT,
  sourceFlags: constants.O_RDONLY | UV_FS_O_DIRECT,
  canonicalName: (path) => Promise.resolve(win32CanonicalName(path)),
  inspect: inspectWin32,
  unmount: unmountWin32,
  rereadPartitions: rereadPartitionsWin32,
  eject: ejectWin32,
  // Neither macOS nor Windows numbers media; their listing gives none to compare with.
  medium: () => Promise.resolve(null),
};

import { constants } from 'node:fs';
import { parsePlist, type PlistValue } from './plist.js';
import { runTool } from './run.js';
import { holdsSystem, type DeviceFacts, type DevicePlatform } from './types.js';

type Dict = { [key: string]: PlistValue };

function asDict(value: PlistValue | undefined): Dict {
  return typeof value === 'object' && !Array.isArray(value) ? value : {};
}

function asList(value: PlistValue | undefined): PlistValue[] {
  return Array.isArray(value) ? value : [];
}

/** macOS <sys/fcntl.h>: open with an exclusive flock; Node passes open flags through unchanged. */
export const O_EXLOCK = 0x20;

/** /dev/diskN goes through the buffer cache; /dev/rdiskN is the raw node, many times faster and uncached. */
export function darwinRawPath(path: string): string {
  return path.replace(/^\/dev\/disk(\d+)$/, '/dev/rdisk$1');
}

/** The whole disk a BSD name belongs to: disk4s2 → disk4. */
function wholeDiskOf(identifier: string): string {
  return identifier.replace(/^(disk\d+).*$/, '$1');
}

/** Every mountpoint on a disk, from `diskutil list -plist diskN`. */
export function darwinMountpoints(list: Dict): string[] {
  const points: string[] = [];
  for (const disk of asList(list['AllDisksAndPartitions'])) {
    const d = asDict(disk);
    for (const part of [d, ...asList(d['Partitions']).map(asDict), ...asList(d['APFSVolumes']).map(asDict)]) {
      const point = part['MountPoint'];
      if (typeof point === 'string' && point !== '') points.push(point);
    }
  }
  return points;
}

/**
 * Facts from `diskutil info -plist DEV`, `diskutil list -plist DEV` and `diskutil info -plist /`
 * (the root volume, to learn which physical disks carry the running system through APFS).
 */
export function darwinFacts(path: string, info: Dict, list: Dict, rootInfo: Dict): DeviceFacts {
  const identifier = String(info['DeviceIdentifier'] ?? '');
  const systemDisks = new Set<string>();
  for (const store of asList(rootInfo['APFSPhysicalStores'])) {
    systemDisks.add(wholeDiskOf(String(asDict(store)['APFSPhysicalStore'] ?? '')));
  }
  systemDisks.add(String(rootInfo['ParentWholeDisk'] ?? ''));
  const mountpoints = darwinMountpoints(list);
  return {
    path,
    rawPath: darwinRawPath(path),
    exists: identifier !== '',
    rdev: 0,
    isBlockDevice: identifier !== '',
    isPartition: info['WholeDisk'] !== true,
    size: Number(info['TotalSize'] ?? info['Size'] ?? 0),
    logicalBlockSize: Number(info['DeviceBlockSize'] ?? 512),
    optimalIoSize: 0,
    readOnly: info['WritableMedia'] === false || info['ReadOnlyMedia'] === true,
    mountpoints,
    isSystem: systemDisks.has(identifier) || holdsSystem(mountpoints),
  };
}

async function inspectDarwin(path: string): Promise<DeviceFacts> {
  const plist = async (args: string[]) => asDict(parsePlist(await runTool('diskutil', args)));
  const info = await plist(['info', '-plist', path]).catch(() => ({}) as Dict);
  if (info['DeviceIdentifier'] === undefined) return darwinFacts(path, {}, {}, {});
  const [list, rootInfo] = await Promise.all([plist(['list', '-plist', path]), plist(['info', '-plist', '/'])]);
  return darwinFacts(path, info, list, rootInfo);
}

export const darwinPlatform: DevicePlatform = {
  name: 'darwin',
  rawPath: darwinRawPath,
  // The raw node bypasses the unified buffer cache by itself (it requires block-aligned I/O),
  // so macOS needs no F_NOCACHE here; O_EXLOCK makes the open exclusive.
  writeFlags: constants.O_RDWR | O_EXLOCK,
  readFlags: constants.O_RDONLY,
  inspect: inspectDarwin,
};

import { constants } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { holdsSystem } from '../../common/domain/drive.js';
import { ejectDarwin, rereadPartitionsDarwin, unmountDarwin } from './darwin-lifecycle.js';
import { parsePlist, type PlistValue } from './plist.js';
import { runTool } from '../../node/run-tool.js';
import type { DeviceFacts, DevicePlatform } from './types.js';

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

/** How macOS names disks: /dev/diskN, or the raw /dev/rdiskN; a partition has sM after it. */
const DARWIN_DISK = /^\/dev\/r?disk\d+(s\d+)*$/;

/** `realPath` (a path with every link resolved) when it has the form of a disk's own name, else null. */
export function darwinDiskName(realPath: string): string | null {
  return DARWIN_DISK.test(realPath) ? realPath : null;
}

/** /dev/diskN or /dev/rdiskN as named (each is the disk's own name), once links are resolved. */
async function canonicalDarwin(path: string): Promise<string | null> {
  const real = await realpath(path).catch(() => null);
  const st = real === null ? null : await stat(real).catch(() => null);
  if (real === null || st === null || !(st.isBlockDevice() || st.isCharacterDevice())) return null;
  return darwinDiskName(real);
}

/** The whole disk a BSD name belongs to: disk4s2 → disk4. */
function wholeDiskOf(identifier: string): string {
  return identifier.replace(/^(disk\d+).*$/, '$1');
}

/** The disk, its partitions and APFS volumes, from `diskutil list -plist diskN`. */
function darwinEntries(list: Dict): Dict[] {
  return asList(list['AllDisksAndPartitions']).flatMap((disk) => {
    const d = asDict(disk);
    return [d, ...asList(d['Partitions']).map(asDict), ...asList(d['APFSVolumes']).map(asDict)];
  });
}

/** Every mountpoint on a disk, from `diskutil list -plist diskN`. */
export function darwinMountpoints(list: Dict): string[] {
  return darwinEntries(list)
    .map((entry) => entry['MountPoint'])
    .filter((point): point is string => typeof point === 'string' && point !== '');
}

/** The BSD names of the disk and everything on it ("disk4", "disk4s1"), from `diskutil list -plist diskN`. */
export function darwinIdentifiers(list: Dict): string[] {
  return darwinEntries(list)
    .map((entry) => entry['DeviceIdentifier'])
    .filter((id): id is string => typeof id === 'string' && /^disk\d+(s\d+)*$/.test(id));
}

/** The device numbers of those BSD names: a file whose st_dev is one of them is stored on this disk. */
async function deviceNumbers(identifiers: readonly string[]): Promise<number[]> {
  const stats = await Promise.all(identifiers.map((id) => stat(`/dev/${id}`).catch(() => null)));
  return stats.filter((st) => st !== null).map((st) => st.rdev);
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
    devices: [],
  };
}

async function inspectDarwin(path: string): Promise<DeviceFacts> {
  const plist = async (args: string[]) => asDict(parsePlist(await runTool('diskutil', args)));
  const info = await plist(['info', '-plist', path]).catch(() => ({}) as Dict);
  if (info['DeviceIdentifier'] === undefined) return darwinFacts(path, {}, {}, {});
  const [list, rootInfo] = await Promise.all([plist(['list', '-plist', path]), plist(['info', '-plist', '/'])]);
  const facts = darwinFacts(path, info, list, rootInfo);
  // The raw node's device number, which the opened descriptor is checked against (open-device.ts).
  const raw = await stat(facts.rawPath).catch(() => null);
  return { ...facts, rdev: raw?.rdev ?? 0, devices: await deviceNumbers(darwinIdentifiers(list)) };
}

export const darwinPlatform: DevicePlatform = {
  name: 'darwin',
  rawPath: darwinRawPath,
  // The raw node bypasses the unified buffer cache by itself (it requires block-aligned I/O),
  // so macOS needs no F_NOCACHE here; O_EXLOCK makes the open exclusive.
  writeFlags: constants.O_RDWR | O_EXLOCK,
  readFlags: constants.O_RDONLY,
  sourceFlags: constants.O_RDONLY,
  canonicalName: canonicalDarwin,
  inspect: inspectDarwin,
  unmount: unmountDarwin,
  rereadPartitions: rereadPartitionsDarwin,
  eject: ejectDarwin,
  // Neither macOS nor Windows numbers media; their listing gives none to compare with.
  medium: () => Promise.resolve(null),
};

import { constants } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { holdsSystem } from '../../common/domain/drive.js';
import { ejectLinux, rereadPartitionsLinux, unmountLinux } from './linux-lifecycle.js';
import {
  devnoFromText,
  devnoText,
  linuxDeviceNode,
  partitionDirs,
  readMounts,
  readSysfs,
  readSysfsNumber,
  sysfsDir,
} from './linux-sysfs.js';
import type { DeviceFacts, DevicePlatform } from './types.js';

export { parseMountinfo, splitDevno } from './linux-sysfs.js';

/** The kernel reports device sizes in 512-byte sectors regardless of the device's own block size. */
const SYSFS_SECTOR = 512;

/** Device numbers of a disk, its partitions, and everything stacked on top of them (dm, md, LVM). */
async function deviceTree(sysBlockDir: string): Promise<string[]> {
  const devnos: string[] = [];
  const seen = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    const devno = await readSysfs(join(dir, 'dev'));
    if (devno === null || seen.has(devno)) return;
    seen.add(devno);
    devnos.push(devno);
    for (const partition of await partitionDirs(dir)) await visit(partition);
    for (const holder of await readdir(join(dir, 'holders')).catch(() => [] as string[])) {
      await visit(join('/sys/class/block', holder));
    }
  };
  await visit(sysBlockDir);
  return devnos;
}

/** Swap devices, by device number, from /proc/swaps. */
async function swapDevnos(): Promise<Set<string>> {
  const devnos = new Set<string>();
  const text = (await readSysfs('/proc/swaps')) ?? '';
  for (const line of text.split('\n').slice(1)) {
    const [file, type] = line.split(/\s+/);
    if (file === undefined || type !== 'partition') continue;
    const s = await stat(file).catch(() => null);
    if (s?.isBlockDevice()) devnos.add(devnoText(s.rdev));
  }
  return devnos;
}

async function canonicalLinux(path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  if (st === null || !st.isBlockDevice()) return null;
  return linuxDeviceNode(st.rdev).catch(() => null);
}

async function inspectLinux(path: string): Promise<DeviceFacts> {
  const facts: DeviceFacts = {
    path,
    rawPath: path,
    exists: false,
    rdev: 0,
    isBlockDevice: false,
    isPartition: false,
    size: 0,
    logicalBlockSize: SYSFS_SECTOR,
    optimalIoSize: 0,
    readOnly: false,
    mountpoints: [],
    isSystem: false,
    devices: [],
  };
  const st = await stat(path).catch(() => null);
  if (st === null) return facts;
  facts.exists = true;
  if (!st.isBlockDevice()) return facts;
  facts.isBlockDevice = true;
  facts.rdev = st.rdev;

  const sysDir = sysfsDir(st.rdev);
  facts.isPartition = (await readSysfs(join(sysDir, 'partition'))) !== null;
  // A partition's queue limits live on its parent disk.
  const queueDir = facts.isPartition ? join(sysDir, '..', 'queue') : join(sysDir, 'queue');
  facts.size = (await readSysfsNumber(join(sysDir, 'size'))) * SYSFS_SECTOR;
  facts.logicalBlockSize = (await readSysfsNumber(join(queueDir, 'logical_block_size'))) || SYSFS_SECTOR;
  facts.optimalIoSize = await readSysfsNumber(join(queueDir, 'optimal_io_size'));
  facts.readOnly = (await readSysfs(join(sysDir, 'ro'))) === '1';

  const tree = new Set(await deviceTree(sysDir));
  facts.devices = [...tree].map(devnoFromText);
  const mounts = await readMounts();
  facts.mountpoints = mounts.filter((m) => tree.has(m.devno)).map((m) => m.mountpoint);
  const swaps = await swapDevnos();
  if ([...tree].some((d) => swaps.has(d))) facts.mountpoints.push('[SWAP]');
  facts.isSystem = holdsSystem(facts.mountpoints);
  return facts;
}

export const linuxPlatform: DevicePlatform = {
  name: 'linux',
  rawPath: (path) => path,
  // O_EXCL on a block device (without O_CREAT) is Linux's exclusive open: it fails with EBUSY
  // while anything has the disk or one of its partitions mounted or claimed.
  writeFlags: constants.O_RDWR | constants.O_DIRECT | constants.O_EXCL,
  readFlags: constants.O_RDONLY | constants.O_DIRECT,
  sourceFlags: constants.O_RDONLY | constants.O_DIRECT | constants.O_EXCL,
  canonicalName: canonicalLinux,
  inspect: inspectLinux,
  unmount: unmountLinux,
  rereadPartitions: rereadPartitionsLinux,
  eject: ejectLinux,
  medium: (facts) => readSysfs(`${sysfsDir(facts.rdev)}/diskseq`),
};

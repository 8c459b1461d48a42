import { constants } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { holdsSystem, type DeviceFacts, type DevicePlatform } from './types.js';

/** The kernel reports device sizes in 512-byte sectors regardless of the device's own block size. */
const SYSFS_SECTOR = 512;

async function readSysfs(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}

async function readSysfsNumber(path: string): Promise<number> {
  const text = await readSysfs(path);
  return text === null ? 0 : Number(text);
}

/** A mounted device number ("8:1") and where it is mounted, from /proc/self/mountinfo. */
interface Mount {
  devno: string;
  mountpoint: string;
}

/** Mountinfo escapes spaces and friends as \040-style octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const devno = fields[2];
    const mountpoint = fields[4];
    if (devno !== undefined && mountpoint !== undefined) mounts.push({ devno, mountpoint: unescapeMountField(mountpoint) });
  }
  return mounts;
}

/** Device numbers of a disk, its partitions, and everything stacked on top of them (dm, md, LVM). */
async function deviceTree(sysBlockDir: string): Promise<string[]> {
  const devnos: string[] = [];
  const seen = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    const devno = await readSysfs(join(dir, 'dev'));
    if (devno === null || seen.has(devno)) return;
    seen.add(devno);
    devnos.push(devno);
    const name = basename(dir);
    const entries = await readdir(dir).catch(() => [] as string[]);
    for (const entry of entries) {
      // Partitions appear as subdirectories named after the disk ("sda1", "loop0p1", "mmcblk0p2").
      if (entry.startsWith(name) && entry !== name) await visit(join(dir, entry));
    }
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
    if (s?.isBlockDevice()) {
      const { major, minor } = splitDevno(s.rdev);
      devnos.add(`${major}:${minor}`);
    }
  }
  return devnos;
}

/** Splits a Linux dev_t as glibc's gnu_dev_major/minor do. */
export function splitDevno(rdev: number): { major: number; minor: number } {
  const dev = BigInt(rdev);
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
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
  };
  const st = await stat(path).catch(() => null);
  if (st === null) return facts;
  facts.exists = true;
  if (!st.isBlockDevice()) return facts;
  facts.isBlockDevice = true;
  facts.rdev = st.rdev;

  const { major, minor } = splitDevno(st.rdev);
  const sysDir = `/sys/dev/block/${major}:${minor}`;
  facts.isPartition = (await readSysfs(join(sysDir, 'partition'))) !== null;
  // A partition's queue limits live on its parent disk.
  const queueDir = facts.isPartition ? join(sysDir, '..', 'queue') : join(sysDir, 'queue');
  facts.size = (await readSysfsNumber(join(sysDir, 'size'))) * SYSFS_SECTOR;
  facts.logicalBlockSize = (await readSysfsNumber(join(queueDir, 'logical_block_size'))) || SYSFS_SECTOR;
  facts.optimalIoSize = await readSysfsNumber(join(queueDir, 'optimal_io_size'));
  facts.readOnly = (await readSysfs(join(sysDir, 'ro'))) === '1';

  const tree = new Set(await deviceTree(sysDir));
  const mounts = parseMountinfo((await readSysfs('/proc/self/mountinfo')) ?? '');
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
  inspect: inspectLinux,
};

/**
 * Reading the Linux kernel's own records: sysfs attributes, /proc/self/mountinfo, and device
 * numbers in the "major:minor" form both use.
 */
import { readFile, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';

export async function readSysfs(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}

export async function readSysfsNumber(path: string): Promise<number> {
  const text = await readSysfs(path);
  return text === null ? 0 : Number(text);
}

/** A mounted device number ("8:1") and where it is mounted, from /proc/self/mountinfo. */
export interface Mount {
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
    if (devno !== undefined && mountpoint !== undefined)
      mounts.push({ devno, mountpoint: unescapeMountField(mountpoint) });
  }
  return mounts;
}

/** Every mount this process can see. */
export async function readMounts(): Promise<Mount[]> {
  return parseMountinfo((await readSysfs('/proc/self/mountinfo')) ?? '');
}

/** Splits a Linux dev_t as glibc's gnu_dev_major/minor do. */
export function splitDevno(rdev: number): { major: number; minor: number } {
  const dev = BigInt(rdev);
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/** A dev_t as the kernel writes it in sysfs and mountinfo: "8:17". */
export function devnoText(rdev: number): string {
  const { major, minor } = splitDevno(rdev);
  return `${major}:${minor}`;
}

/** "8:17" back to a dev_t, as glibc's gnu_dev_makedev builds it. */
export function devnoFromText(text: string): number {
  const [major, minor] = text.split(':').map((part) => BigInt(part));
  if (major === undefined || minor === undefined) throw new Error(`not a device number: ${text}`);
  const dev = (minor & 0xffn) | ((major & 0xfffn) << 8n) | ((minor & ~0xffn) << 12n) | ((major & ~0xfffn) << 32n);
  return Number(dev);
}

/** The sysfs directory of a block device number. */
export function sysfsDir(rdev: number): string {
  return `/sys/dev/block/${devnoText(rdev)}`;
}

/** The sysfs directories of the kernel's partitions of the disk at `sysDir` (a /sys/dev/block/MAJ:MIN link or its target). */
export async function partitionDirs(sysDir: string): Promise<string[]> {
  // /sys/dev/block/8:0 links to .../block/sda; partitions are subdirectories named after the real
  // name ("sda1", "loop0p1", "mmcblk0p2").
  const real = await realpath(sysDir).catch(() => sysDir);
  const name = basename(real);
  const entries = await readdir(real).catch(() => [] as string[]);
  return entries.filter((entry) => entry.startsWith(name) && entry !== name).map((entry) => join(real, entry));
}

/**
 * The /dev node of block device `rdev` under the kernel's own name for it: /sys/dev/block/MAJ:MIN
 * links to .../block/NAME (a "!" in NAME stands for a "/": cciss!c0d0 is /dev/cciss/c0d0), and
 * /dev/NAME must be that very device. Tools that take a name (partx, udisksctl) are given this,
 * never a path a user named, which a swapped symbolic link could turn into another disk. Throws
 * when the device is gone or /dev has no node of that name for it.
 */
export async function linuxDeviceNode(rdev: number): Promise<string> {
  const name = basename(await readlink(sysfsDir(rdev))).replaceAll('!', '/');
  const node = `/dev/${name}`;
  const st = await stat(node).catch(() => null);
  if (st === null || !st.isBlockDevice() || st.rdev !== rdev)
    throw new Error(`the device ${devnoText(rdev)} has no node of its own in /dev (${node} is not it)`);
  return node;
}

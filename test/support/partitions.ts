import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget } from './cli.js';
import { attachLoop, mountDevice, waitForPath, writeRandomFile, type LoopDevice } from './loop-device.js';

/**
 * mkfs.ext4 without lazy initialisation: otherwise the kernel zeroes inode tables in the background
 * after mounting, and a mounted, idle filesystem would still change its device's bytes.
 */
export function mkfsExt4(device: string, label: string): void {
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', label, '-E', 'lazy_itable_init=0,lazy_journal_init=0', device]);
}

/**
 * An image file of `size` bytes as OS images come: an MBR with one Linux partition from 1 MiB to
 * the end, holding an ext4 filesystem labelled `label`.
 */
export function partitionedImage(dir: string, size: number, label: string): string {
  const image = join(dir, `${label}.img`);
  const fs = join(dir, `${label}.fs`);
  execFileSync('truncate', ['-s', String(size), image]);
  execFileSync('sfdisk', ['--quiet', image], { input: 'label: dos\nstart=2048, type=83\n' });
  execFileSync('truncate', ['-s', String(size - MiB), fs]);
  mkfsExt4(fs, label);
  execFileSync('dd', [`if=${fs}`, `of=${image}`, 'bs=1M', 'seek=1', 'conv=notrunc', 'status=none']);
  return image;
}

export interface MountedCard {
  loop: LoopDevice;
  /** Where the card's boot partition (p1) and root partition (p2) are mounted. */
  boot: string;
  root: string;
}

/**
 * A loop device laid out like a Raspberry Pi card in use: random bytes, an MBR with a small boot
 * partition and a root partition, both mounted. The boot filesystem is ext2 rather than FAT
 * because this machine's kernel has no vfat.
 */
export async function mountedCard(dir: string, size: number): Promise<MountedCard> {
  const backing = join(dir, 'card.img');
  writeRandomFile(backing, size);
  execFileSync('sfdisk', ['--quiet', backing], {
    input: 'label: dos\nstart=2048, size=16384, type=83\nstart=18432, type=83\n',
  });
  const loop = attachLoop(backing, { partitions: true });
  const [p1, p2] = [`${loop.path}p1`, `${loop.path}p2`];
  await waitForPath(p1);
  await waitForPath(p2);
  assertTestTarget(p1);
  assertTestTarget(p2);
  execFileSync('mkfs.ext2', ['-q', '-F', '-L', 'OLDBOOT', p1]);
  mkfsExt4(p2, 'OLDROOT');
  return { loop, boot: mountDevice(p1), root: mountDevice(p2) };
}

/** The mountpoints currently mounted from `device` (findmnt reads the kernel's table). */
export function mountpointsOf(device: string): string[] {
  try {
    return execFileSync('findmnt', ['--noheadings', '--output', 'TARGET', '--source', device], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  } catch {
    return []; // findmnt exits 1 when nothing is mounted from it
  }
}

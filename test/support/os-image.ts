import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { writeRandomFile } from './loop-device.js';

/** Where the test image's partitions are, in bytes. */
export const BOOT_OFFSET = 1 * MiB;
export const BOOT_SIZE = 8 * MiB;
export const ROOT_OFFSET = BOOT_OFFSET + BOOT_SIZE;

/**
 * A small disk image laid out like an OS image: a GPT with a FAT boot partition ("BOOT",
 * holding files copied in with mtools, as this kernel has no vfat to mount) and an ext4 root
 * partition ("rootfs", filled with mkfs.ext4 -d from a directory of text and random files), with
 * unused space that compresses to nothing and is left as holes in the file, as image builders
 * leave it (so bmaptool can map it). `size` must leave room for both partitions.
 */
export function osImage(dir: string, size: number, name = 'os.img'): string {
  const image = join(dir, name);
  execFileSync('truncate', ['-s', String(size), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: gpt\nstart=${BOOT_OFFSET / 512}, size=${BOOT_SIZE / 512}, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=boot\nstart=${ROOT_OFFSET / 512}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root\n`,
  });

  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(BOOT_SIZE), boot]);
  execFileSync('mkfs.vfat', ['-n', 'BOOT', boot], { stdio: 'ignore' });
  const kernel = join(dir, `${name}.kernel`);
  writeRandomFile(kernel, 2 * MiB);
  writeFileSync(join(dir, `${name}.config`), 'dtparam=audio=on\n'.repeat(200));
  execFileSync('mcopy', ['-i', boot, kernel, '::/kernel.img']);
  execFileSync('mcopy', ['-i', boot, join(dir, `${name}.config`), '::/config.txt']);

  const tree = join(dir, `${name}.tree`);
  mkdirSync(join(tree, 'etc'), { recursive: true });
  mkdirSync(join(tree, 'usr', 'lib'), { recursive: true });
  writeFileSync(join(tree, 'etc', 'hostname'), 'sluice-test\n');
  writeFileSync(join(tree, 'etc', 'motd'), 'The programs included with this system are free software.\n'.repeat(500));
  writeRandomFile(join(tree, 'usr', 'lib', 'libblob.so'), 3 * MiB);
  const root = join(dir, `${name}.root`);
  execFileSync('truncate', ['-s', String(size - ROOT_OFFSET - MiB), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-E', 'lazy_itable_init=0,lazy_journal_init=0', '-d', tree, root]);

  // 4 KiB blocks: conv=sparse leaves a hole only where a whole block is zeros.
  execFileSync('dd', [`if=${boot}`, `of=${image}`, 'bs=4K', `seek=${BOOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  execFileSync('dd', [`if=${root}`, `of=${image}`, 'bs=4K', `seek=${ROOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  return image;
}

/** Runs a shell pipeline (the reference tools that make fixtures: xz, zstd, zip…) in `dir`. */
export function sh(dir: string, script: string): void {
  execFileSync('sh', ['-c', script], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { writeRandomFile } from './loop-device.js';

/** Where the test image's boot partition starts, in bytes. */
export const BOOT_OFFSET = 1 * MiB;

/** How the OS-like image is laid out and made. */
export interface OsImageOptions {
  /** Its partition table: GPT (the default) or MBR, as Raspberry Pi OS has. */
  table?: 'gpt' | 'mbr';
  /** A 40 MiB FAT32 boot partition (mkfs.vfat -F 32), as OS images have, instead of an 8 MiB FAT12. */
  fat32?: boolean;
  /** mkfs.ext4 options for the root filesystem, in place of the default `-E lazy_itable_init=0,lazy_journal_init=0`. */
  ext4?: string[];
  /** A last partition of this many bytes of random data, of a type nothing reads (a vendor's firmware blob). */
  rawPartition?: number;
}

/** Where each partition of an OS-like image of `size` bytes lies, in bytes. */
export function osImageLayout(size: number, options: OsImageOptions = {}): { boot: [number, number]; root: [number, number]; raw: [number, number] | null } {
  const bootSize = options.fat32 === true ? 40 * MiB : 8 * MiB;
  const rootOffset = BOOT_OFFSET + bootSize;
  // The last MiB stays outside every partition: a GPT's backup lives there.
  const rawSize = options.rawPartition ?? 0;
  const rootSize = size - rootOffset - rawSize - MiB;
  return { boot: [BOOT_OFFSET, bootSize], root: [rootOffset, rootSize], raw: rawSize > 0 ? [rootOffset + rootSize, rawSize] : null };
}

/**
 * A small disk image laid out like an OS image: a partition table with a FAT boot partition
 * ("BOOT", holding files copied in with mtools, as this kernel has no vfat to mount) and an ext4
 * root partition ("rootfs", filled with mkfs.ext4 -d from a directory of text and random files),
 * with unused space that compresses to nothing and is left as holes in the file, as image
 * builders leave it (so bmaptool can map it). `size` must leave room for the partitions.
 */
export function osImage(dir: string, size: number, name = 'os.img', options: OsImageOptions = {}): string {
  const image = join(dir, name);
  const layout = osImageLayout(size, options);
  const sectors = ([offset, length]: [number, number]) => `start=${offset / 512}, size=${length / 512}`;
  execFileSync('truncate', ['-s', String(size), image]);
  const table =
    options.table === 'mbr'
      ? `label: dos\n${sectors(layout.boot)}, type=c\n${sectors(layout.root)}, type=83\n${layout.raw === null ? '' : `${sectors(layout.raw)}, type=da\n`}`
      : `label: gpt\n${sectors(layout.boot)}, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=boot\n${sectors(layout.root)}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root\n${layout.raw === null ? '' : `${sectors(layout.raw)}, type=8DA63339-0007-60C0-C436-083AC8230908, name=firmware\n`}`;
  execFileSync('sfdisk', ['--quiet', image], { input: table });

  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(layout.boot[1]), boot]);
  execFileSync('mkfs.vfat', [...(options.fat32 === true ? ['-F', '32', '-s', '1'] : []), '-n', 'BOOT', boot], { stdio: 'ignore' });
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
  execFileSync('truncate', ['-s', String(layout.root[1]), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', ...(options.ext4 ?? ['-E', 'lazy_itable_init=0,lazy_journal_init=0']), '-d', tree, root]);

  // 4 KiB blocks: conv=sparse leaves a hole only where a whole block is zeros.
  const place = (part: string, offset: number) => execFileSync('dd', [`if=${part}`, `of=${image}`, 'bs=4K', `seek=${offset / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  place(boot, layout.boot[0]);
  place(root, layout.root[0]);
  if (layout.raw !== null) {
    const raw = join(dir, `${name}.raw`);
    writeRandomFile(raw, layout.raw[1]);
    place(raw, layout.raw[0]);
  }
  return image;
}

/** Runs a shell pipeline (the reference tools that make fixtures: xz, zstd, zip…) in `dir`. */
export function sh(dir: string, script: string): void {
  execFileSync('sh', ['-c', script], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

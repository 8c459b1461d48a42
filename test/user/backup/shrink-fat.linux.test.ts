/**
 * Shrinking a FAT last partition on an image file, as the user: what is refused before the file
 * changes (a FAT32 already at its type's fewest clusters, errors fsck.fat finds, a boot sector
 * claiming more than its partition, a FAT12, a FAT32 backup boot sector of another layout), a
 * FAT32 backup boot sector that differs only outside its layout given the new size too, and what
 * the read-back of a shrunk file names.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { shrinkBackup, shrinkCheck } from '../../../user/backup/shrink.js';
import { cleanupLoops, scratchDir } from '../../support/loop-device.js';

afterAll(cleanupLoops);

const dir = scratchDir();
/** The partition starts 1 MiB in (sector 2048). */
const START = 2048;

/** An MBR image whose one partition, `size` bytes, holds a FAT made by mkfs.fat with `mkfs` and two files. */
function fatImage(name: string, size: number, mkfs: string[]): string {
  const image = join(dir, name);
  const part = `${image}.part`;
  execFileSync('truncate', ['-s', String(size), part]);
  execFileSync('mkfs.fat', [...mkfs, part], { stdio: 'ignore' });
  writeFileSync(join(dir, 'a.txt'), 'a file\n'.repeat(1000));
  execFileSync('mcopy', ['-i', part, join(dir, 'a.txt'), '::/a.txt']);
  execFileSync('truncate', ['-s', String(size + MiB), image]);
  execFileSync('sfdisk', ['-q', image], { input: `label: dos\nstart=${START}, type=c\n` });
  execFileSync('dd', [`if=${part}`, `of=${image}`, 'bs=1M', 'seek=1', 'conv=notrunc,sparse', 'status=none']);
  return image;
}

const digest = (file: string) => execFileSync('sha256sum', [file], { encoding: 'utf8' });

/** `bytes` written over the image at partition byte `offset`. */
function patch(image: string, offset: number, bytes: Buffer): void {
  execFileSync('dd', [`of=${image}`, 'bs=1', `seek=${START * 512 + offset}`, 'conv=notrunc', 'status=none'], {
    input: bytes,
  });
}

const u32 = (n: number) => Buffer.from(new Uint32Array([n]).buffer);

/** `length` bytes of the image at partition byte `offset`. */
function bytesAt(image: string, offset: number, length: number): Buffer {
  const fd = openSync(image, 'r');
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, START * 512 + offset);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** The image's partition copied out into a file of its own, with `boot` over its first sector when given. */
function partitionOf(image: string, boot?: Buffer): string {
  const part = `${image}.part-out`;
  execFileSync('dd', [`if=${image}`, `of=${part}`, 'bs=1M', 'skip=1', 'conv=sparse', 'status=none']);
  if (boot !== undefined) execFileSync('dd', [`of=${part}`, 'conv=notrunc', 'status=none'], { input: boot });
  return part;
}

/** Where mkfs.fat puts a FAT32's backup boot sector: sector 6. */
const BACKUP_BOOT = 6 * 512;

it('shrinks a FAT32 of 512-byte clusters to what it holds, and its read-back names what is wrong', async () => {
  const image = fatImage('fat32.img', 200 * MiB, ['-F', '32', '-s', '1']);
  // Its FATs (2 × 1.6 MiB) and the files, plus the 64 MiB margin, in whole MiB: 68 MiB after the 1 MiB before it.
  const shrunk = await shrinkBackup(image, 201 * MiB);
  expect(shrunk).toEqual({ before: 201 * MiB, after: 69 * MiB, fault: null });
  const expected = { partitions: [{ node: '', start: START, size: 68 * 2048, type: 'c' }], kind: 'fat' as const };
  expect(await shrinkCheck(image, { ...expected, blocks: 68 * 2048 })).toBeNull();
  expect(await shrinkCheck(image, { ...expected, blocks: 70_000 })).toMatch(/139264 sectors, not 70000/);
  // A free cluster count in FSInfo that is not the truth (sector 1 of a FAT32 made by mkfs.fat).
  patch(image, 512 + 488, u32(5));
  expect(await shrinkCheck(image, { ...expected, blocks: 68 * 2048 })).toMatch(
    /fsck.fat finds errors .*Free cluster summary wrong/s,
  );
  patch(image, 0, Buffer.alloc(512));
  expect(await shrinkCheck(image, { ...expected, blocks: 68 * 2048 })).toMatch(/no FAT filesystem reads back/);
});

it('refuses a FAT32 that would have too few clusters to stay FAT32, leaving the file as it was', async () => {
  // 4 KiB clusters in 257 MiB: just over the 65,525 clusters FAT32 needs.
  const image = fatImage('boundary.img', 257 * MiB, ['-F', '32', '-s', '8']);
  const before = digest(image);
  await expect(shrinkBackup(image, 258 * MiB)).rejects.toThrow(
    /was not shrunk: its FAT32 cannot be smaller than 257 MiB without becoming another FAT type \(FAT32 needs at least 65525 clusters of 4096 bytes\); the backup is kept as it is\./,
  );
  expect(digest(image)).toBe(before);
});

it('refuses a FAT that fsck.fat finds errors in, leaving the file as it was', async () => {
  const image = fatImage('errors.img', 200 * MiB, ['-F', '32', '-s', '1']);
  patch(image, 512 + 488, u32(5));
  const before = digest(image);
  await expect(shrinkBackup(image, 201 * MiB)).rejects.toThrow(
    /was not shrunk: fsck.fat finds errors in its FAT32 \(.*Free cluster summary wrong.*\); the backup is kept as it is\./s,
  );
  expect(digest(image)).toBe(before);
});

it('refuses a FAT boot sector that claims more sectors than its partition, leaving the file as it was', async () => {
  const image = fatImage('hostile.img', 64 * MiB, ['-F', '16']);
  // FAT16 of 64 MiB keeps its total in the 32-bit field; claim twice the partition.
  patch(image, 0x20, u32(2 * 64 * 2048));
  const before = digest(image);
  await expect(shrinkBackup(image, 65 * MiB)).rejects.toThrow(
    /holds no ext2\/3\/4 or FAT filesystem; --shrink shrinks only those, so the backup is kept as it is\./,
  );
  expect(digest(image)).toBe(before);
});

it('refuses a FAT12, leaving the file as it was', async () => {
  // Large enough to shrink were it FAT16: a few KiB used of 100 MiB.
  const image = fatImage('fat12.img', 100 * MiB, ['-F', '12']);
  const before = digest(image);
  await expect(shrinkBackup(image, 101 * MiB)).rejects.toThrow(
    /was not shrunk: its filesystem is FAT12, and Sluice shrinks only FAT16 and FAT32; the backup is kept as it is\./,
  );
  expect(digest(image)).toBe(before);
});

it('gives a FAT32 backup boot sector that differs outside its layout the new size, keeping its other bytes', async () => {
  const image = fatImage('backup-serial.img', 200 * MiB, ['-F', '32', '-s', '1']);
  // A volume serial number of its own: fsck.fat -n names the difference and passes.
  patch(image, BACKUP_BOOT + 0x43, u32(0x12345678));
  execFileSync('fsck.fat', ['-n', partitionOf(image)]);
  const altered = bytesAt(image, BACKUP_BOOT, 512);
  // fault null: the read-back's fsck.fat -n passes on the shrunk partition.
  expect(await shrinkBackup(image, 201 * MiB)).toEqual({ before: 201 * MiB, after: 69 * MiB, fault: null });
  const copy = bytesAt(image, BACKUP_BOOT, 512);
  expect(copy.readUInt32LE(0x20)).toBe(68 * 2048);
  expect(copy.readUInt32LE(0x43)).toBe(0x12345678);
  const outsideTotal = (sector: Buffer) => Buffer.concat([sector.subarray(0, 0x20), sector.subarray(0x24)]);
  expect(outsideTotal(copy).equals(outsideTotal(altered))).toBe(true);
  // The boot sector restored from its copy, as fsck.fat offers: a filesystem that fits the cut partition.
  const restored = partitionOf(image, copy);
  expect(statSync(restored).size).toBe(68 * MiB);
  execFileSync('fsck.fat', ['-n', restored]);
});

it('refuses a FAT32 whose backup boot sector places its clusters otherwise, leaving the file as it was', async () => {
  const image = fatImage('backup-layout.img', 200 * MiB, ['-F', '32', '-s', '1']);
  // Its copy says 2 sectors a cluster; fsck.fat -n names the difference and passes.
  patch(image, BACKUP_BOOT + 0x0d, Buffer.from([2]));
  execFileSync('fsck.fat', ['-n', partitionOf(image)]);
  const before = digest(image);
  await expect(shrinkBackup(image, 201 * MiB)).rejects.toThrow(
    /was not shrunk: its FAT32's backup boot sector \(sector 6\) places the FATs or clusters otherwise than its boot sector, .*runs past the cut partition; the backup is kept as it is\./,
  );
  expect(digest(image)).toBe(before);
});

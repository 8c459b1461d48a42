/**
 * What "every byte outside free space equals the image" means, checked with the tools' own view of
 * free space where there is one: an ext partition's free blocks as dumpe2fs lists them, and a FAT
 * partition's free clusters (which test/user/images/free-space/fat.test.ts holds to mtools' count).
 * The partitions themselves come from sfdisk, not from Sluice's parser.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeExtents, type Extent } from '../../common/domain/extents.js';
import { fatBootSector, fatFree } from '../../user/images/free-space/fat.js';
import { randomAccess } from '../../user/images/free-space/image-reader.js';

/** Where each partition of an image is, as sfdisk reads its table. */
export function sfdiskPartitions(image: string): Extent[] {
  const table = JSON.parse(execFileSync('sfdisk', ['--json', image], { encoding: 'utf8' })) as {
    partitiontable: { sectorsize?: number; partitions: { start: number; size: number }[] };
  };
  const sector = table.partitiontable.sectorsize ?? 512;
  return table.partitiontable.partitions.map((p) => [p.start * sector, p.size * sector]);
}

/**
 * Free blocks of the ext filesystem in `part` (a file holding just the partition), as dumpe2fs
 * (libext2fs, which works out uninitialised bitmaps itself) lists them: byte ranges, placed at
 * `offset`, one per run it lists.
 */
export function dumpe2fsFree(part: string, offset = 0): Extent[] {
  const out = execFileSync('dumpe2fs', [part], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const blockSize = Number(/^Block size:\s+(\d+)/m.exec(out)?.[1]);
  const ranges: Extent[] = [];
  for (const [, list] of out.matchAll(/^ {2}Free blocks: (.*)$/gm)) {
    for (const item of (list ?? '').split(', ').filter(Boolean)) {
      const [a, b = a] = item.split('-').map(Number);
      ranges.push([offset + (a ?? 0) * blockSize, ((b ?? 0) - (a ?? 0) + 1) * blockSize]);
    }
  }
  return ranges;
}

/** Whether a partition starting with `head` holds an ext2/3/4 superblock (its magic at 1024 + 0x38). */
function isExt(head: Buffer): boolean {
  return head.length >= 1082 && head.readUInt16LE(1024 + 0x38) === 0xef53;
}

/** `size` bytes at `offset` of `file`, copied to `out`; returns `out`. */
function slice(file: string, offset: number, size: number, out: string): string {
  execFileSync('dd', [
    `if=${file}`,
    `of=${out}`,
    'bs=1M',
    `skip=${offset}`,
    `count=${size}`,
    'iflag=skip_bytes,count_bytes',
    'status=none',
  ]);
  return out;
}

/** Free space of every ext and FAT partition of `image`, merged: what a flash may leave as the card had it. */
export async function imageFreeSpace(image: string, scratch: string): Promise<Extent[]> {
  const bytes = readFileSync(image);
  const free: Extent[] = [];
  for (const [offset, size] of sfdiskPartitions(image)) {
    const head = bytes.subarray(offset, offset + 2048);
    if (isExt(head)) {
      free.push(...dumpe2fsFree(slice(image, offset, size, join(scratch, 'free-space.part')), offset));
      continue;
    }
    const boot = fatBootSector(head, size);
    if (boot !== null)
      await fatFree(
        randomAccess((at, length) => Promise.resolve(bytes.subarray(at, at + length))),
        offset,
        boot,
        (extents) => free.push(...extents),
      );
  }
  return mergeExtents(free);
}

/** The 4 KiB blocks (as [offset, length] runs) where `device` differs from `image` outside `free`. */
export function differencesOutside(device: Buffer, image: Buffer, free: readonly Extent[]): Extent[] {
  const block = 4096;
  const out: [number, number][] = [];
  let f = 0;
  for (let at = 0; at < image.length; at += block) {
    const end = Math.min(at + block, image.length);
    if (device.compare(image, at, end, at, end) === 0) continue;
    while (f < free.length && (free[f]?.[0] ?? 0) + (free[f]?.[1] ?? 0) <= at) f++;
    const inFree = f < free.length && (free[f]?.[0] ?? 0) <= at && (free[f]?.[0] ?? 0) + (free[f]?.[1] ?? 0) >= end;
    if (inFree) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last[0] + last[1] === at) last[1] += end - at;
    else out.push([at, end - at]);
  }
  return out;
}

/**
 * Runs fsck (fsck.fat -n, e2fsck -fn) on each FAT and ext partition of `disk` (an image, or a
 * drive's backing file), placed where `image`'s table says; throws, with fsck's output, when one
 * is not clean. What a card that left free space out must still pass.
 */
export function fsckPartitions(disk: string, image: string, scratch: string): void {
  const bytes = readFileSync(image);
  for (const [offset, size] of sfdiskPartitions(image)) {
    const head = bytes.subarray(offset, offset + 2048);
    const ext = isExt(head);
    if (!ext && fatBootSector(head, size) === null) continue;
    const part = slice(disk, offset, size, join(scratch, 'fsck.part'));
    execFileSync(ext ? 'e2fsck' : 'fsck.fat', ext ? ['-fn', part] : ['-n', part], { stdio: 'pipe' });
  }
}

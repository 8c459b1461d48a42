import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extentBytes, intersectExtents, mergeExtents, type Extent } from '../../../../common/domain/extents.js';
import { KiB, MiB } from '../../../../common/domain/units.js';
import { findFreeSpace, MIN_FREE_RUN, type FreeSpace } from '../../../../user/images/free-space/find-free-space.js';
import { randomAccess, StreamedImage } from '../../../../user/images/free-space/image-reader.js';
import { osImage, osImageLayout, type OsImageOptions } from '../../../support/os-image.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-free-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SIZE = 96 * MiB;

/** What was found, one entry per partition in the order first found, its extents merged. */
function byPartition(found: readonly FreeSpace[]): FreeSpace[] {
  const merged = new Map<number, FreeSpace>();
  for (const f of found) {
    const seen = merged.get(f.reason.partition);
    merged.set(f.reason.partition, {
      reason: f.reason,
      extents: mergeExtents([...(seen?.extents ?? []), ...f.extents]),
    });
  }
  return [...merged.values()];
}

async function randomFree(bytes: Buffer): Promise<FreeSpace[]> {
  const found: FreeSpace[] = [];
  await findFreeSpace(
    randomAccess((offset, length) => Promise.resolve(bytes.subarray(offset, offset + length))),
    bytes.length,
    (free) => found.push(free),
  );
  return byPartition(found);
}

async function streamedFree(bytes: Buffer, chunk: number): Promise<FreeSpace[]> {
  const found: FreeSpace[] = [];
  const stream = new StreamedImage();
  let fed = 0;
  const finding = findFreeSpace(stream.read, bytes.length, (free) => {
    if ((free.extents[0]?.[0] ?? 0) < fed) throw new Error('found after the stream passed it');
    found.push(free);
  }).finally(() => stream.done());
  for (; fed < bytes.length && !stream.idle; fed += chunk) await stream.feed(bytes.subarray(fed, fed + chunk), fed);
  stream.end();
  await finding;
  return byPartition(found);
}

/** Each partition's files and checks, read straight from the image file (no mounting). */
function partitionState(path: string, options: OsImageOptions): string {
  const layout = osImageLayout(SIZE, options);
  const root = join(dir, 'root.part');
  execFileSync('dd', [
    `if=${path}`,
    `of=${root}`,
    'bs=64K',
    `skip=${layout.root[0]}`,
    `count=${layout.root[1]}`,
    'iflag=skip_bytes,count_bytes',
    'status=none',
  ]);
  execFileSync('e2fsck', ['-fn', root], { stdio: 'ignore' });
  const out = join(dir, 'rdump');
  rmSync(out, { recursive: true, force: true });
  execFileSync('mkdir', [out]);
  execFileSync('debugfs', ['-R', `rdump / ${out}`, root], { stdio: 'ignore' });
  execFileSync('fsck.fat', ['-n', bootPart(path, layout.boot)], { stdio: 'ignore' });
  const files = execFileSync(
    'sh',
    [
      '-c',
      `cd ${out} && find . -type f | sort | xargs sha256sum; mdir -/ -i ${path}@@${layout.boot[0]} ::; mtype -i ${path}@@${layout.boot[0]} ::/config.txt | sha256sum; mcopy -n -i ${path}@@${layout.boot[0]} ::/kernel.img - | sha256sum`,
    ],
    { encoding: 'utf8' },
  );
  return files;
}

/** The boot partition as a file of its own, for fsck.fat. */
function bootPart(path: string, [offset, length]: [number, number]): string {
  const part = join(dir, 'boot.part');
  execFileSync('dd', [
    `if=${path}`,
    `of=${part}`,
    'bs=64K',
    `skip=${offset}`,
    `count=${length}`,
    'iflag=skip_bytes,count_bytes',
    'status=none',
  ]);
  return part;
}

const images: [string, OsImageOptions][] = [
  ['GPT, FAT12 boot', {}],
  ['MBR, FAT32 boot', { table: 'mbr', fat32: true }],
  [
    'GPT, FAT32 boot, ext4 without flex_bg, and a raw firmware partition',
    { fat32: true, ext4: ['-O', '^flex_bg'], rawPartition: 8 * MiB },
  ],
];

describe('findFreeSpace: free space of listed partitions only, and garbage there changes no file', () => {
  images.forEach(([title, options], i) => {
    it(title, async () => {
      const path = osImage(dir, SIZE, `os${i}.img`, options);
      const bytes = readFileSync(path);
      const layout = osImageLayout(SIZE, options);
      const found = await randomFree(bytes);
      expect(found.map((f) => f.reason)).toEqual([
        { kind: 'free-space', partition: 1, label: 'BOOT', filesystem: options.fat32 === true ? 'FAT32' : 'FAT12' },
        { kind: 'free-space', partition: 2, label: 'rootfs', filesystem: 'ext4' },
      ]);
      const [boot, root] = found;
      expect(intersectExtents(boot?.extents ?? [], [layout.boot])).toEqual(boot?.extents);
      expect(intersectExtents(root?.extents ?? [], [layout.root])).toEqual(root?.extents);
      for (const [offset, length] of found.flatMap((f) => f.extents)) {
        expect(offset % (4 * KiB)).toBe(0);
        expect(length % (4 * KiB)).toBe(0);
        expect(length).toBeGreaterThanOrEqual(MIN_FREE_RUN);
      }
      // Most of each filesystem is free: the boot holds 2 MiB of files, the root about 3.
      expect(extentBytes(boot?.extents ?? [])).toBeGreaterThan(layout.boot[1] - 4 * MiB);
      expect(extentBytes(root?.extents ?? [])).toBeGreaterThan(layout.root[1] - 16 * MiB);
      expect(await streamedFree(bytes, 256 * KiB)).toEqual(found);

      const before = partitionState(path, options);
      const fd = openSync(path, 'r+');
      for (const [offset, length] of found.flatMap((f) => f.extents))
        writeSync(fd, randomBytes(length), 0, length, offset);
      closeSync(fd);
      expect(partitionState(path, options)).toEqual(before);
    });
  });

  it('a GPT whose checksums do not match is not believed: nothing is free', async () => {
    const bytes = readFileSync(osImage(dir, SIZE, 'crc.img'));
    expect(await randomFree(bytes)).toHaveLength(2);
    // A partition entry changed (its name), as a damaged or tampered table would be: the entries' CRC no longer matches.
    const damaged = Buffer.from(bytes);
    damaged[1024 + 56] = 0x5a;
    expect(await randomFree(damaged)).toEqual([]);
    // And the header's own CRC: its last usable sector moved.
    const header = Buffer.from(bytes);
    header[512 + 48] = (header[512 + 48] ?? 0) ^ 1;
    expect(await randomFree(header)).toEqual([]);
  });

  it('a partition listed over another one takes its ranges out of the other’s free space', async () => {
    const path = osImage(dir, SIZE, 'overlap.img', { table: 'mbr' });
    const layout = osImageLayout(SIZE, { table: 'mbr' });
    const clean = await randomFree(readFileSync(path));
    // A third entry over the middle of the root filesystem, as a hostile or broken table has.
    const overlap: Extent = [layout.root[0] + 32 * MiB, 16 * MiB];
    const bytes = readFileSync(path);
    bytes[446 + 32 + 4] = 0xda;
    bytes.writeUInt32LE(overlap[0] / 512, 446 + 32 + 8);
    bytes.writeUInt32LE(overlap[1] / 512, 446 + 32 + 12);
    const found = await randomFree(bytes);
    const root = found.find((f) => f.reason.partition === 2)?.extents ?? [];
    expect(intersectExtents(root, [overlap])).toEqual([]);
    expect(extentBytes(root)).toBeLessThan(extentBytes(clean[1]?.extents ?? []));
    expect(extentBytes(root)).toBeGreaterThan(extentBytes(clean[1]?.extents ?? []) - overlap[1] - MiB);
  });

  it('an image with no partition table (a bare filesystem) has no free space', async () => {
    const path = join(dir, 'bare.img');
    writeFileSync(path, Buffer.alloc(0));
    execFileSync('truncate', ['-s', String(64 * MiB), path]);
    execFileSync('mkfs.ext4', ['-q', '-F', path]);
    expect(await randomFree(readFileSync(path))).toEqual([]);
  });
});

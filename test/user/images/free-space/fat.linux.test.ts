import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeExtents, type Extent } from '../../../../common/domain/extents.js';
import { KiB, MiB } from '../../../../common/domain/units.js';
import { fatBootSector, fatFree } from '../../../../user/images/free-space/fat.js';
import { randomAccess, StreamedImage } from '../../../../user/images/free-space/image-reader.js';
import { writeRandomFile } from '../../../support/loop-device.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-fat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A FAT filesystem made by mkfs.vfat, with files copied in by mtools, one deleted to leave a hole. */
function mkfs(name: string, size: number, args: string[]): string {
  const path = join(dir, name);
  execFileSync('truncate', ['-s', String(size), path]);
  execFileSync('mkfs.vfat', [...args, path], { stdio: 'ignore' });
  const blob = join(dir, 'blob.bin');
  writeRandomFile(blob, 700 * KiB);
  writeFileSync(join(dir, 'text.txt'), 'config=1\n'.repeat(3000));
  execFileSync('mmd', ['-i', path, '::/boot', '::/boot/overlays']);
  for (const target of ['::/a.bin', '::/boot/b.bin', '::/boot/overlays/c.bin', '::/gone.bin', '::/z.bin'])
    execFileSync('mcopy', ['-i', path, blob, target]);
  execFileSync('mcopy', ['-i', path, join(dir, 'text.txt'), '::/boot/config.txt']);
  execFileSync('mdel', ['-i', path, '::/gone.bin']);
  return path;
}

/** Free bytes as mtools counts them (free clusters in the first FAT). */
function mtoolsFree(path: string): number {
  const out = execFileSync('mdir', ['-i', path, '::'], { encoding: 'utf8' });
  return Number(/([\d ]+) bytes free/.exec(out)?.[1]?.replace(/ /g, ''));
}

/** Every file's contents, by path, as mtools reads them. */
function contents(path: string): Map<string, string> {
  const out = join(dir, 'out');
  rmSync(out, { recursive: true, force: true });
  execFileSync('mcopy', ['-s', '-i', path, '::/', out]);
  const listing = execFileSync('find', [out, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n').sort();
  return new Map(
    listing.map((file) => [
      file.slice(out.length),
      execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0] ?? '',
    ]),
  );
}

async function ourFree(path: string, streamed: boolean): Promise<{ filesystem: string; free: Extent[] }> {
  const bytes = readFileSync(path);
  const boot = fatBootSector(bytes.subarray(0, 512), bytes.length);
  if (boot === null) throw new Error('no boot sector');
  const found: Extent[] = [];
  if (!streamed) {
    await fatFree(
      randomAccess((offset, length) => Promise.resolve(bytes.subarray(offset, offset + length))),
      0,
      boot,
      (e) => found.push(...e),
    );
  } else {
    const stream = new StreamedImage();
    let fed = 0;
    const reading = fatFree(stream.read, 0, boot, (extents) => {
      for (const [offset] of extents)
        if (offset < fed) throw new Error(`free range at ${offset} found only after the stream reached ${fed}`);
      found.push(...extents);
    }).finally(() => stream.done());
    for (; fed < bytes.length && !stream.idle; fed += 64 * KiB)
      await stream.feed(bytes.subarray(fed, fed + 64 * KiB), fed);
    stream.end();
    await reading;
  }
  return { filesystem: boot.filesystem, free: mergeExtents(found) };
}

const variants: [string, number, string[]][] = [
  ['FAT12', 4 * MiB, ['-F', '12']],
  ['FAT16', 64 * MiB, ['-F', '16']],
  ['FAT32', 300 * MiB, ['-F', '32']],
  ['FAT32', 128 * MiB, ['-F', '32', '-s', '1']],
  ['FAT16', 32 * MiB, ['-F', '16', '-f', '1', '-S', '1024']],
];

describe('FAT free clusters: what mtools counts, and garbage there changes nothing', () => {
  variants.forEach(([filesystem, size, args], i) => {
    it(`${filesystem} (mkfs.vfat ${args.join(' ')})`, async () => {
      const path = mkfs(`fs${i}.img`, size, args);
      const random = await ourFree(path, false);
      expect(random.filesystem).toBe(filesystem);
      expect(random.free.reduce((sum, [, length]) => sum + length, 0)).toBe(mtoolsFree(path));
      expect((await ourFree(path, true)).free).toEqual(random.free);
      // What a used card would hold there: random bytes. The filesystem must not notice.
      const before = contents(path);
      const fd = openSync(path, 'r+');
      for (const [offset, length] of random.free) writeSync(fd, randomBytes(length), 0, length, offset);
      closeSync(fd);
      execFileSync('fsck.fat', ['-n', path], { stdio: 'ignore' });
      expect(contents(path)).toEqual(before);
    });
  });

  it('a cluster free in one FAT copy but used in the other is not free', async () => {
    const path = mkfs('copies.img', 64 * MiB, ['-F', '16']);
    const bytes = readFileSync(path);
    const boot = fatBootSector(bytes.subarray(0, 512), bytes.length);
    if (boot === null) throw new Error('no boot sector');
    // Mark cluster 20000, far past the files, used (end of chain) in the second FAT only.
    const fd = openSync(path, 'r+');
    writeSync(
      fd,
      Buffer.from([0xff, 0xff]),
      0,
      2,
      (boot.reservedSectors + boot.fatSectors) * boot.bytesPerSector + 20000 * 2,
    );
    closeSync(fd);
    const { free } = await ourFree(path, false);
    const cluster = boot.dataOffset + 19998 * boot.clusterBytes;
    expect(free.some(([offset, length]) => offset <= cluster && cluster < offset + length)).toBe(false);
    expect(
      free.some(
        ([offset, length]) => offset <= cluster + boot.clusterBytes && cluster + boot.clusterBytes < offset + length,
      ),
    ).toBe(true);
  });
});

describe('FAT entries, read as they come', () => {
  it('bytes that arrive at an odd place in memory give the same free clusters', async () => {
    for (const [name, size, args] of [
      ['odd16.img', 64 * MiB, ['-F', '16']],
      ['odd32.img', 300 * MiB, ['-F', '32']],
    ] as const) {
      const bytes = readFileSync(mkfs(name, size, [...args]));
      const boot = fatBootSector(bytes.subarray(0, 512), bytes.length);
      if (boot === null) throw new Error('no boot sector');
      const found: Extent[] = [];
      // Each read is copied one byte into a larger buffer: a FAT16 or FAT32 entry then starts off its element size.
      const odd = (offset: number, length: number) => {
        const holder = Buffer.alloc(length + 1);
        bytes.copy(holder, 1, offset, offset + length);
        return Promise.resolve(holder.subarray(1));
      };
      await fatFree(randomAccess(odd), 0, boot, (e) => found.push(...e));
      expect(mergeExtents(found).reduce((sum, [, length]) => sum + length, 0)).toBe(mtoolsFree(join(dir, name)));
    }
  });

  it('a FAT32 entry whose reserved top 4 bits alone are set is free', async () => {
    const path = mkfs('reserved.img', 300 * MiB, ['-F', '32']);
    const bytes = readFileSync(path);
    const boot = fatBootSector(bytes.subarray(0, 512), bytes.length);
    if (boot === null) throw new Error('no boot sector');
    const before = (await ourFree(path, false)).free;
    // Cluster 60000, far past the files, in both FATs: free, with the bits the specification reserves set.
    for (let copy = 0; copy < boot.fats; copy++)
      bytes.writeUInt32LE(
        0xf0000000,
        (boot.reservedSectors + copy * boot.fatSectors) * boot.bytesPerSector + 60000 * 4,
      );
    writeFileSync(path, bytes);
    expect((await ourFree(path, false)).free).toEqual(before);
  });
});

describe('FAT boot sectors that do not add up are not read', () => {
  const boot = (): Buffer => readFileSync(mkfs('boot.img', 64 * MiB, ['-F', '16'])).subarray(0, 512);
  it.each([
    ['a filesystem larger than its partition', (b: Buffer) => b, 32 * MiB],
    ['a FAT too small for its clusters', (b: Buffer) => (b.writeUInt16LE(8, 0x16), b), 64 * MiB],
    ['an exFAT boot sector', (b: Buffer) => (b.write('EXFAT   ', 3, 'ascii'), b.fill(0, 0x0b, 0x40), b), 64 * MiB],
    ['no boot signature', (b: Buffer) => (b.writeUInt16LE(0, 510), b), 64 * MiB],
    ['zero sectors per cluster', (b: Buffer) => ((b[0x0d] = 0), b), 64 * MiB],
  ])('%s', (_title, damage, partitionSize) => {
    expect(fatBootSector(damage(Buffer.from(boot())), partitionSize)).toBeNull();
  });
});

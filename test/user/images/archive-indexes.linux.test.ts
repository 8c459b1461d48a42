import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { crc32, deflateRawSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobError } from '../../../common/domain/failure.js';
import type { ReadAt } from '../../../node/read-at.js';
import { readXzIndex } from '../../../user/images/formats/xz-index.js';
import { entryPlan, readSmallEntry, readZipArchive } from '../../../user/images/formats/zip-directory.js';
import { MAX_BMAP_BYTES } from '../../../user/images/formats/bmap-size.js';
import { httpRangeReader } from '../../../user/images/http/http-source.js';
import { MiB } from '../../../common/domain/units.js';
import { serveFiles } from '../../support/file-server.js';
import { writeZip, xzHeaderThenZeros, zipWithBmapBomb } from '../../support/hostile-images.js';
import { readZstdSize } from '../../../user/images/formats/zstd-size.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function reader(bytes: Buffer): ReadAt {
  return (position, length) => Promise.resolve(bytes.subarray(position, position + length));
}

const data = Buffer.concat([randomBytes(600_000), Buffer.alloc(2_000_000, 1)]);

describe('readXzIndex', () => {
  it('gives the exact size and every block of a multi-block, multi-stream file, as xz lists them', async () => {
    const one = execFileSync('xz', ['-c', '-T2', '--block-size=500KiB'], { input: data });
    const two = execFileSync('xz', ['-c'], { input: data.subarray(0, 1000) });
    const file = Buffer.concat([one, Buffer.alloc(8), two]);
    writeFileSync(join(dir, 'multi.xz'), file);
    const index = await readXzIndex(reader(file), file.length);
    expect(index.streams).toBe(2);
    expect(index.uncompressedSize).toBe(data.length + 1000);
    const listed = execFileSync('xz', ['--robot', '-lv', join(dir, 'multi.xz')], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.startsWith('block\t'))
      .map((line) => Number(line.split('\t')[4]));
    expect(index.blocks.map((b) => b.offset)).toEqual(listed);
  });

  it('calls a file without its end truncated', async () => {
    const file = execFileSync('xz', ['-c'], { input: data });
    await expect(readXzIndex(reader(file.subarray(0, file.length - 30)), file.length - 30)).rejects.toThrow(
      /truncated/,
    );
  });

  it('refuses an index that lists more blocks than the file holds', async () => {
    // A stream header, then an index of 100,000 empty records (two bytes each), its CRC and a
    // footer that fit: 200 KB of index for blocks that would need 1.2 MB.
    const records = Buffer.alloc(100_000 * 2, 0);
    const count = Buffer.from([0xa0, 0x8d, 0x06]); // 100,000 as a varint
    const body = Buffer.concat([Buffer.from([0]), count, records]);
    const index = Buffer.concat([body, Buffer.alloc((4 - ((body.length + 4) % 4)) % 4)]);
    const indexCrc = Buffer.alloc(4);
    indexCrc.writeUInt32LE(crc32(index) >>> 0);
    const footerFields = Buffer.alloc(6);
    footerFields.writeUInt32LE((index.length + 4) / 4 - 1, 0);
    const footer = Buffer.concat([Buffer.alloc(4), footerFields, Buffer.from('YZ')]);
    footer.writeUInt32LE(crc32(footerFields) >>> 0, 0);
    const header = execFileSync('xz', ['-c'], { input: Buffer.alloc(0) }).subarray(0, 12);
    const file = Buffer.concat([header, index, indexCrc, footer]);
    await expect(readXzIndex(reader(file), file.length)).rejects.toThrow(
      /it lists 100000 blocks, more than the 12 bytes before it can hold/,
    );
  });

  it('skips a MiB of stream padding in 64 KiB reads', async () => {
    const xz = execFileSync('xz', ['-c'], { input: data });
    const file = Buffer.concat([xz, Buffer.alloc(MiB)]);
    const reads: number[] = [];
    const index = await readXzIndex((position, length) => {
      reads.push(length);
      return reader(file)(position, length);
    }, file.length);
    expect(index.uncompressedSize).toBe(data.length);
    expect(reads.length).toBeLessThan(24);
  });

  it('gives up on 16 MiB of zeros after 256 reads, over HTTP too (was 23,814 range requests in 20 s)', async () => {
    const path = join(dir, 'padded.img.xz');
    xzHeaderThenZeros(path);
    const file = readFileSync(path);
    let reads = 0;
    const counted: ReadAt = (position, length) => {
      reads += 1;
      return reader(file)(position, length);
    };
    await expect(readXzIndex(counted, file.length)).rejects.toThrow(
      /index could not be found within 256 reads of its end/,
    );
    expect(reads).toBe(256);
    const server = await serveFiles([path], { ranges: true });
    try {
      const started = performance.now();
      await expect(readXzIndex(httpRangeReader(`${server.base}/padded.img.xz`), file.length)).rejects.toThrow(
        /within 256 reads/,
      );
      expect(server.requests()).toBe(256);
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      await server.close();
    }
  });
});

describe('readZstdSize', () => {
  it('sums the content sizes of every frame when each records one', async () => {
    writeFileSync(join(dir, 'a.bin'), data);
    execFileSync('zstd', ['-q', '-f', join(dir, 'a.bin'), '-o', join(dir, 'a.zst')]);
    const file = Buffer.concat([readFileSync(join(dir, 'a.zst')), readFileSync(join(dir, 'a.zst'))]);
    expect(readZstdSize((position, length) => file.subarray(position, position + length), file.length)).toBe(
      2 * data.length,
    );
  });

  it('says it does not know when a frame does not record its size (zstd from a pipe)', async () => {
    const file = execFileSync('zstd', ['-q', '-c'], { input: data });
    expect(readZstdSize((position, length) => file.subarray(position, position + length), file.length)).toBeNull();
  });
});

describe('readZipArchive', () => {
  writeFileSync(join(dir, 'disk.img'), data);
  writeFileSync(join(dir, 'small.img'), data.subarray(0, 1000));
  writeFileSync(join(dir, 'README'), 'read me');

  it('finds the largest image, its data offset and sizes, in a zip64 archive', async () => {
    execFileSync('zip', ['-q', '-fz', join(dir, 'images.zip'), 'README', 'small.img', 'disk.img'], { cwd: dir });
    const file = readFileSync(join(dir, 'images.zip'));
    const archive = await readZipArchive(reader(file), file.length, 'images.zip');
    expect(archive.image).toMatchObject({ name: 'disk.img', uncompressedSize: data.length, encrypted: false });
    expect(archive.choice).toMatch(/disk\.img, the largest of 2 images/);
    const plan = await entryPlan(reader(file), archive.image);
    expect(plan.dataOffset + plan.compressedSize).toBeLessThan(file.length);
  });

  it('names what an archive without an image holds', async () => {
    execFileSync('zip', ['-q', join(dir, 'docs.zip'), 'README'], { cwd: dir });
    const file = readFileSync(join(dir, 'docs.zip'));
    await expect(readZipArchive(reader(file), file.length, 'docs.zip')).rejects.toThrow(
      /docs\.zip holds no disk image .* it has 1 file: README/,
    );
  });

  it('refuses an encrypted image as unsupported', async () => {
    execFileSync('zip', ['-q', '-P', 'pw', join(dir, 'locked.zip'), 'disk.img'], { cwd: dir });
    const file = readFileSync(join(dir, 'locked.zip'));
    const refusal = await readZipArchive(reader(file), file.length, 'locked.zip').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(JobError);
    expect((refusal as JobError).failure.code).toBe('unsupported-format');
  });
});

describe('readSmallEntry: the directory’s sizes are hard limits', () => {
  async function bmapOf(path: string): Promise<Buffer> {
    const file = readFileSync(path);
    const archive = await readZipArchive(reader(file), file.length, 'test.zip');
    if (archive.bmapEntry === null) throw new Error('no bmap in the archive');
    return readSmallEntry(reader(file), archive.bmapEntry, MAX_BMAP_BYTES);
  }

  function zipWithBmap(path: string, bmap: Buffer, claims: { uncompressedSize?: number; crc?: number } = {}): void {
    const image = Buffer.alloc(4096);
    writeZip(path, [
      { name: 'os.img', method: 0, data: image, uncompressedSize: image.length, crc: crc32(image) },
      {
        name: '.meta/image.bmap',
        method: 8,
        data: deflateRawSync(bmap),
        uncompressedSize: claims.uncompressedSize ?? bmap.length,
        crc: claims.crc ?? crc32(bmap),
      },
    ]);
  }

  it('inflates no further than the declared size: 256 MiB declared as 4 KiB stops at 4 KiB', async () => {
    zipWithBmapBomb(join(dir, 'bomb.zip'), 256 * MiB);
    const before = process.memoryUsage().arrayBuffers;
    await expect(bmapOf(join(dir, 'bomb.zip'))).rejects.toThrow(
      /\.meta\/image\.bmap inflates to more than the 4096 bytes its directory entry declares/,
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * MiB);
  });

  it('refuses contents shorter than declared, or whose CRC-32 differs; reads them when both hold', async () => {
    const bmap = Buffer.from('<bmap version="2.0"></bmap>');
    zipWithBmap(join(dir, 'long.zip'), bmap, { uncompressedSize: bmap.length + 10 });
    await expect(bmapOf(join(dir, 'long.zip'))).rejects.toThrow(
      /holds 27 bytes, not the 37 its directory entry declares/,
    );
    zipWithBmap(join(dir, 'crc.zip'), bmap, { crc: crc32(bmap) ^ 1 });
    await expect(bmapOf(join(dir, 'crc.zip'))).rejects.toThrow(/\.meta\/image\.bmap does not match its CRC-32/);
    zipWithBmap(join(dir, 'good.zip'), bmap);
    expect((await bmapOf(join(dir, 'good.zip'))).equals(bmap)).toBe(true);
  });
});

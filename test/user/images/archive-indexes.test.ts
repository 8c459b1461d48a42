import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobError } from '../../../common/domain/failure.js';
import { readXzIndex, type ReadAt } from '../../../user/images/xz-index.js';
import { entryPlan, readZipArchive } from '../../../user/images/zip-directory.js';
import { readZstdSize } from '../../../user/images/zstd-size.js';

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
    await expect(readXzIndex(reader(file.subarray(0, file.length - 30)), file.length - 30)).rejects.toThrow(/truncated/);
  });
});

describe('readZstdSize', () => {
  it('sums the content sizes of every frame when each records one', async () => {
    writeFileSync(join(dir, 'a.bin'), data);
    execFileSync('zstd', ['-q', '-f', join(dir, 'a.bin'), '-o', join(dir, 'a.zst')]);
    const file = Buffer.concat([readFileSync(join(dir, 'a.zst')), readFileSync(join(dir, 'a.zst'))]);
    expect(readZstdSize((position, length) => file.subarray(position, position + length), file.length)).toBe(2 * data.length);
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
    await expect(readZipArchive(reader(file), file.length, 'docs.zip')).rejects.toThrow(/docs\.zip holds no disk image .* it has 1 file: README/);
  });

  it('refuses an encrypted image as unsupported', async () => {
    execFileSync('zip', ['-q', '-P', 'pw', join(dir, 'locked.zip'), 'disk.img'], { cwd: dir });
    const file = readFileSync(join(dir, 'locked.zip'));
    const refusal = await readZipArchive(reader(file), file.length, 'locked.zip').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(JobError);
    expect((refusal as JobError).failure.code).toBe('unsupported-format');
  });
});

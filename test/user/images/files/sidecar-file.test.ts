import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBmapFile } from '../../../../user/images/formats/block-maps.js';
import { expectedChecksum, listsBesideFile } from '../../../../user/images/files/checksums.js';
import { readSidecar } from '../../../../user/images/files/sidecar-file.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 1024;

function read(name: string): Promise<Buffer | null> {
  return readSidecar(join(dir, name), LIMIT, `The file ${name}`);
}

describe('readSidecar: a file next to an image, read only as a small regular file', () => {
  it('reads a regular file up to the limit, and says null when there is none', async () => {
    writeFileSync(join(dir, 'exact'), Buffer.alloc(LIMIT, 1));
    expect((await read('exact'))?.length).toBe(LIMIT);
    expect(await read('absent')).toBeNull();
  });

  it('refuses a larger file without reading it', async () => {
    writeFileSync(join(dir, 'large'), Buffer.alloc(LIMIT + 1));
    await expect(read('large')).rejects.toThrow(/The file large is 1025 bytes, too large to be one \(at most 1024\)/);
  });

  it('follows a link to a regular file (sidecars often are links), and refuses one to a device by what it opened', async () => {
    symlinkSync('/dev/zero', join(dir, 'zero'));
    symlinkSync(join(dir, 'exact'), join(dir, 'link'));
    await expect(read('zero')).rejects.toThrow(/The file zero is a device, not a regular file/);
    expect((await read('link'))?.equals(readFileSync(join(dir, 'exact')))).toBe(true);
  });

  it('refuses a FIFO at once, without waiting for a writer; a device and a directory too', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    mkdirSync(join(dir, 'directory'));
    await expect(read('fifo')).rejects.toThrow(/The file fifo is a FIFO, not a regular file/);
    await expect(readSidecar('/dev/zero', LIMIT, 'The file /dev/zero')).rejects.toThrow(
      /is a device, not a regular file/,
    );
    await expect(read('directory')).rejects.toThrow(/is a directory, not a regular file/);
  });
});

describe('checksum lists and block maps next to an image go through it', () => {
  it('a SHA256SUMS FIFO and an IMAGE.bmap linked to /dev/zero are errors, not waits or endless reads', async () => {
    const images = join(dir, 'images');
    mkdirSync(images);
    execFileSync('mkfifo', [join(images, 'SHA256SUMS')]);
    symlinkSync('/dev/zero', join(images, 'os.img.bmap'));
    await expect(expectedChecksum(undefined, () => listsBesideFile(join(images, 'os.img')))).rejects.toThrow(
      /checksum list \S+SHA256SUMS is a FIFO/,
    );
    await expect(readBmapFile(join(images, 'os.img.bmap'), false)).rejects.toThrow(
      /block map \S+os\.img\.bmap is a device, not a regular file/,
    );
    expect(await readBmapFile(join(images, 'other.img.bmap'), false)).toBeNull();
    await expect(readBmapFile(join(images, 'other.img.bmap'), true)).rejects.toThrow(
      /block map \S+other\.img\.bmap cannot be read: there is no such file/,
    );
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { detectPartitionTable, PARTITION_SNIFF_BYTES } from '../../../user/images/partition-table.js';
import { builtImageProbe } from '../../support/built-modules.js';

const { probeImage } = await builtImageProbe();

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-probe-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** A disk image file with a real partition table, made by sfdisk. */
function partitioned(name: string, script: string): string {
  const path = join(dir, name);
  writeFileSync(path, '');
  truncateSync(path, 8 * MiB);
  execFileSync('sfdisk', ['--quiet', path], { input: script });
  return path;
}

describe('probing an image', () => {
  it('names a raw image, its size and its GPT partition table', async () => {
    const path = partitioned('os.img', 'label: gpt\n,4MiB,L\n');
    const probed = await probeImage(path);
    expect(probed.info).toEqual({
      source: path,
      name: 'os.img',
      origin: 'file',
      format: 'raw',
      sourceSize: 8 * MiB,
      size: 8 * MiB,
      sizeExact: true,
      partitionTable: { type: 'gpt', partitions: [{ number: 1, offset: 1 * MiB, size: 4 * MiB, type: 'Linux filesystem', label: null }] },
      entry: null,
      blockMap: null,
      checksum: null,
    });
    expect(probed.local?.identity.size).toBe(8 * MiB);
  });

  it('finds a GPT on a 4Kn image too, where the header sits at byte 4096 (this sfdisk cannot make one, so the header is placed by hand)', () => {
    const head = new Uint8Array(PARTITION_SNIFF_BYTES);
    head.set(Buffer.from('EFI PART'), 4096);
    expect(detectPartitionTable(head)).toBe('gpt');
    expect(detectPartitionTable(head.subarray(0, 4096))).toBe('none');
  });

  it('finds an MBR', async () => {
    expect((await probeImage(partitioned('dos.img', 'label: dos\n,4MiB,c\n'))).info.partitionTable?.type).toBe('mbr');
  });

  it('does not take a FAT boot sector (0x55AA, no partition entries) for an MBR', async () => {
    const path = join(dir, 'fat.img');
    writeFileSync(path, '');
    truncateSync(path, 8 * MiB);
    execFileSync('mkfs.vfat', [path], { stdio: 'ignore' });
    expect((await probeImage(path)).info.partitionTable?.type).toBe('none');
  });

  it('names a compressed image by its content, with the size gzip hints at and the partition table of its decoded start', async () => {
    const raw = partitioned('os.img', 'label: dos\n,4MiB,c\n');
    const path = join(dir, 'os.bin');
    writeFileSync(path, gzipSync(readFileSync(raw)));
    expect((await probeImage(path)).info).toMatchObject({ format: 'gzip', size: 8 * MiB, sizeExact: false, partitionTable: { type: 'mbr', partitions: [{ type: 'FAT32 (LBA)', size: 4 * MiB }] } });
  });

  it('says which file is missing', async () => {
    const missing = join(dir, 'nope.img');
    await expect(probeImage(missing)).rejects.toMatchObject({ name: 'JobError', failure: { code: 'source-not-found', message: expect.stringContaining(missing) } });
  });

  it('refuses an empty file and a directory with a sentence each', async () => {
    const empty = join(dir, 'empty.img');
    writeFileSync(empty, '');
    await expect(probeImage(empty)).rejects.toMatchObject({ failure: { code: 'source-read-error', message: expect.stringContaining('empty') } });
    await expect(probeImage(dir)).rejects.toMatchObject({ failure: { code: 'source-read-error' } });
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extentBytes, intersectExtents, subtractExtents, type Extent } from '../../../common/domain/extents.js';
import { MiB } from '../../../common/domain/units.js';
import { randomAccess } from '../../../user/images/free-space/image-reader.js';
import { usedRanges } from '../../../user/backup/drive-map/used-ranges.js';
import { osImage, osImageLayout } from '../../support/os-image.js';
import { dumpe2fsFree } from '../../support/free-space.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-used-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SIZE = 96 * MiB;

/** The ranges a backup of `bytes` reads, through the same readers it asks the helper with. */
function used(bytes: Buffer): Promise<Extent[]> {
  return usedRanges(
    randomAccess((offset, length) => Promise.resolve(bytes.subarray(offset, offset + length))),
    bytes.length,
  );
}

/** Bytes of `partition` the backup reads. */
function readOf(ranges: readonly Extent[], partition: [number, number]): number {
  return extentBytes(intersectExtents(ranges, [partition]));
}

describe('the ranges a used-blocks backup reads', () => {
  const image = osImage(dir, SIZE, 'os.img', { fat32: true, rawPartition: 8 * MiB });
  const layout = osImageLayout(SIZE, { fat32: true, rawPartition: 8 * MiB });

  /** Where the root filesystem's group descriptors start, and how long each is. */
  const rootDescriptors = (bytes: Buffer) => {
    const sb = layout.root[0] + 1024;
    const blockSize = 1024 << bytes.readUInt32LE(sb + 0x18);
    const descSize = (bytes.readUInt32LE(sb + 0x60) & 0x80) !== 0 ? bytes.readUInt16LE(sb + 0xfe) : 32;
    return { descriptors: layout.root[0] + (bytes.readUInt32LE(sb + 0x14) + 1) * blockSize, descSize };
  };

  it('leaves out the free space of the FAT and ext4 partitions, and reads the tables, the gaps and an unknown partition whole', async () => {
    const ranges = await used(readFileSync(image));
    expect(readOf(ranges, [0, layout.boot[0]])).toBe(layout.boot[0]);
    expect(readOf(ranges, layout.boot)).toBeLessThan(layout.boot[1] / 2);
    expect(readOf(ranges, layout.root)).toBeLessThan(layout.root[1] / 2);
    const raw = layout.raw ?? [0, 0];
    expect(readOf(ranges, raw)).toBe(raw[1]);
    const end = raw[0] + raw[1];
    expect(readOf(ranges, [end, SIZE - end])).toBe(SIZE - end);
  });

  it('reads an ext4 partition whole when its superblock claims more blocks than the partition holds', async () => {
    const bytes = readFileSync(image);
    const sb = layout.root[0] + 1024;
    const blockSize = 1024 << bytes.readUInt32LE(sb + 0x18);
    bytes.writeUInt32LE(layout.root[1] / blockSize + 1, sb + 0x04);
    expect(readOf(await used(bytes), layout.root)).toBe(layout.root[1]);
  });

  it('reads an ext4 partition whole when a group descriptor puts its inode table outside the partition', async () => {
    const bytes = readFileSync(image);
    const { descriptors, descSize } = rootDescriptors(bytes);
    // The second group's inode table, far past the filesystem's last block.
    bytes.writeUInt32LE(0x7fff_0000, descriptors + descSize + 0x8);
    expect(readOf(await used(bytes), layout.root)).toBe(layout.root[1]);
  });

  it('reads an ext4 partition whole when a group descriptor puts its block bitmap outside the partition', async () => {
    const bytes = readFileSync(image);
    bytes.writeUInt32LE(0x7fff_0000, rootDescriptors(bytes).descriptors + 0x0);
    expect(readOf(await used(bytes), layout.root)).toBe(layout.root[1]);
  });

  it('reads a FAT partition whole when its boot sector claims more sectors than the partition holds', async () => {
    const bytes = readFileSync(image);
    const boot = layout.boot[0];
    bytes.writeUInt32LE(layout.boot[1] / 512 + 8, boot + 0x20);
    expect(readOf(await used(bytes), layout.boot)).toBe(layout.boot[1]);
  });

  it('agrees with dumpe2fs: every block it leaves out of the root is free there', async () => {
    const ranges = await used(readFileSync(image));
    const part = join(dir, 'root.part');
    execFileSync('dd', [
      `if=${image}`,
      `of=${part}`,
      'bs=1M',
      `skip=${layout.root[0]}`,
      `count=${layout.root[1]}`,
      'iflag=skip_bytes,count_bytes',
      'status=none',
    ]);
    const omitted = subtractExtents([layout.root], ranges);
    expect(extentBytes(omitted)).toBeGreaterThan(layout.root[1] / 2);
    expect(subtractExtents(omitted, dumpe2fsFree(part, layout.root[0]))).toEqual([]);
  });
});

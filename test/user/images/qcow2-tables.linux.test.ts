import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { KiB, MiB } from '../../../common/domain/units.js';
import { clusterKind, l2Entry, readQcow2, type Qcow2Image } from '../../../user/images/formats/qcow2.js';
import { compressedEntry, dataEntry, writeQcow2, type Qcow2Layout } from '../../support/hostile-images.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function read(path: string): Promise<Qcow2Image> {
  const file = readFileSync(path);
  return readQcow2(
    (position, length) => Promise.resolve(file.subarray(position, position + length)),
    file.length,
    'test.qcow2',
  );
}

/** qemu's own list of guest ranges that hold data, merged. */
function qemuData(path: string): { offset: number; length: number }[] {
  const map = JSON.parse(execFileSync('qemu-img', ['map', '--output=json', path], { encoding: 'utf8' })) as {
    start: number;
    length: number;
    data: boolean;
  }[];
  const merged: { offset: number; length: number }[] = [];
  for (const { start, length } of map.filter((e) => e.data)) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.offset + last.length === start) last.length += length;
    else merged.push({ offset: start, length });
  }
  return merged;
}

/** The guest ranges the tables say hold data (allocated or compressed clusters), merged. */
function dataRanges(image: Qcow2Image): { offset: number; length: number }[] {
  const ranges: { offset: number; length: number }[] = [];
  const perTable = image.clusterSize / 8;
  for (let c = 0; c < image.clusters; c++) {
    // Whole tables at a time where an L1 entry has none: a 256 GiB disk has 64 M clusters.
    if (image.l2Tables[Math.floor(c / perTable)] === null) {
      c += perTable - 1;
      continue;
    }
    const kind = clusterKind(l2Entry(image, c), image.version);
    if (kind === 'unallocated' || kind === 'zero') continue;
    const offset = c * image.clusterSize;
    const length = Math.min(image.clusterSize, image.virtualSize - offset);
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.offset + last.length === offset) last.length += length;
    else ranges.push({ offset, length });
  }
  return ranges;
}

function qemu(...script: string[]): void {
  execFileSync('sh', ['-c', script.join(' && ')], { cwd: dir, stdio: 'ignore' });
}

/** A 2 MiB disk of 4 KiB clusters (one L2 table's worth), its L1 table at 4 KiB, with what `layout` changes. */
async function refusal(layout: Partial<Qcow2Layout>): Promise<string> {
  const path = join(dir, 'crafted.qcow2');
  writeQcow2(path, {
    clusterBits: 12,
    virtualSize: 2 * MiB,
    l1At: 4 * KiB,
    l1: [0],
    l2: [],
    size: 64 * KiB,
    ...layout,
  });
  return read(path).then(
    () => 'accepted',
    (error: unknown) => String(error),
  );
}

describe('readQcow2: what qemu writes', () => {
  it('maps data, zero and unallocated clusters as qemu does', async () => {
    qemu(
      'qemu-img create -q -f qcow2 written.qcow2 64M',
      'qemu-io -f qcow2 -c "write -P 1 0 64k" -c "write -P 2 1M 128k" -c "write -z 2M 64k" -c "write -P 3 40M 4k" written.qcow2',
    );
    const image = await read(join(dir, 'written.qcow2'));
    expect(dataRanges(image)).toEqual(qemuData(join(dir, 'written.qcow2')));
    expect(dataRanges(image).reduce((sum, r) => sum + r.length, 0)).toBe(64 * KiB + 128 * KiB + 64 * KiB);
    // 64 MiB of 64 KiB clusters: one L2 table maps 512 MiB, so there is one.
    expect(image.l2Tables.filter((t) => t !== null)).toHaveLength(1);
  });

  it('accepts compressed clusters packed into each other’s last sectors, as qemu-img convert -c packs them', async () => {
    // 256 clusters of one repeated byte each compress to a few dozen bytes, several to a sector.
    writeFileSync(
      join(dir, 'bytes.img'),
      Buffer.concat(Array.from({ length: 256 }, (_, i) => Buffer.alloc(64 * KiB, (i % 255) + 1))),
    );
    qemu('qemu-img convert -c -O qcow2 bytes.img packed.qcow2');
    const image = await read(join(dir, 'packed.qcow2'));
    expect(dataRanges(image)).toEqual([{ offset: 0, length: 16 * MiB }]);
    expect(dataRanges(image)).toEqual(qemuData(join(dir, 'packed.qcow2')));
  });
});

describe('readQcow2: tables that claim what the file does not hold are refused', () => {
  it('two L1 entries sharing one L2 table', async () => {
    expect(
      await refusal({ virtualSize: 4 * MiB, l1: [8 * KiB, 8 * KiB], l2: [[8 * KiB, [dataEntry(12 * KiB)]]] }),
    ).toMatch(/the L2 table of L1 entry 1 is at file byte 8192, which also holds another table or cluster/);
  });

  it('an L2 table on the L1 table', async () => {
    expect(await refusal({ l1: [4 * KiB] })).toMatch(
      /the L2 table of L1 entry 0 is at file byte 4096, which also holds/,
    );
  });

  it('a data cluster inside an L2 table, or shared by two guest clusters', async () => {
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, [dataEntry(8 * KiB)]]] })).toMatch(
      /the data of guest cluster 0 is at file byte 8192, which also holds/,
    );
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, [dataEntry(12 * KiB), 0n, dataEntry(12 * KiB)]]] })).toMatch(
      /the data of guest cluster 2 is at file byte 12288/,
    );
  });

  it('a table or data cluster off a cluster boundary', async () => {
    expect(await refusal({ l1: [8 * KiB + 512] })).toMatch(
      /the L2 table of L1 entry 0 is at file byte 8704, which is not on a cluster boundary/,
    );
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, [dataEntry(12 * KiB + 512)]]] })).toMatch(
      /guest cluster 0 is at file byte 12800, which is not on a cluster boundary/,
    );
  });

  it('compressed clusters sharing data; sharing only the tail of a sector is allowed', async () => {
    const blob = deflateRawSync(Buffer.alloc(4 * KiB, 9));
    const at = 12 * KiB + 100;
    const data: [number, Buffer][] = [[at, blob]];
    expect(
      await refusal({
        l1: [8 * KiB],
        l2: [[8 * KiB, [compressedEntry(at, blob.length, 12), compressedEntry(at, blob.length, 12)]]],
        data,
      }),
    ).toMatch(/several compressed clusters share the data at file byte 12388/);
    // The second blob starts in the first one's last sector, right after it: as qemu writes them.
    const tail = at + blob.length;
    const next: [number, Buffer][] = [...data, [tail, blob]];
    const packed = [compressedEntry(at, blob.length, 12), compressedEntry(tail, blob.length, 12)];
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, packed]], data: next })).toBe('accepted');
    // Starting before the first one's last sector, it overlaps it.
    const overlapping = [compressedEntry(at, blob.length + 600, 12), compressedEntry(tail, blob.length, 12)];
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, overlapping]], data: next })).toMatch(
      /several compressed clusters share the data at file byte/,
    );
  });

  it('compressed data inside a table', async () => {
    expect(await refusal({ l1: [8 * KiB], l2: [[8 * KiB, [compressedEntry(8 * KiB + 64, 100, 12)]]] })).toMatch(
      /the compressed data of guest cluster 0 is at file byte 8256, inside another table or cluster/,
    );
  });

  it('a disk larger than a JavaScript number holds exactly', async () => {
    expect(await refusal({ virtualSize: 2 ** 60 })).toMatch(
      /claims a disk of 1152921504606846976 bytes, which is impossible/,
    );
  });
});

describe('readQcow2: unallocated clusters cost nothing', () => {
  it('a 256 GiB disk of 4 KiB clusters with one L2 table reads in milliseconds, holding that one table', async () => {
    const l1 = new Array<number>(131072).fill(0);
    l1[7] = 1028 * KiB;
    const path = join(dir, 'sparse.qcow2');
    writeQcow2(path, {
      clusterBits: 12,
      virtualSize: 256 * 1024 * MiB,
      l1At: 4 * KiB,
      l1,
      l2: [[1028 * KiB, [dataEntry(1032 * KiB)]]],
      size: 1036 * KiB,
    });
    const started = performance.now();
    const image = await read(path);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(image.clusters).toBe(64 * 1024 * 1024);
    expect(image.l2Tables.filter((t) => t !== null)).toHaveLength(1);
    expect(dataRanges(image)).toEqual([{ offset: 7 * 512 * 4 * KiB, length: 4 * KiB }]);
  });
});

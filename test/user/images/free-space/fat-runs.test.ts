/**
 * The FAT reader's free runs against the plainest reading of the same FATs: a cluster is free when
 * its entry is 0 (FAT32: its low 28 bits) in every copy. The FATs are made up here, cluster by
 * cluster, so that runs start and end at every place in a byte of the reader's bitmap, and the
 * copies sometimes disagree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeExtents, type Extent } from '../../../../common/domain/extents.js';
import { fatFree, type FatBootSector } from '../../../../user/images/free-space/fat.js';

const SECTOR = 512;
const CLUSTER = 2048;

/** Entries as runs of used and free clusters, the clusters one copy alone marks used, and how each copy's read lies in memory. */
const fatPlan = fc.record({
  filesystem: fc.constantFrom('FAT16' as const, 'FAT32' as const),
  runs: fc.array(fc.record({ used: fc.boolean(), length: fc.integer({ min: 1, max: 40 }) }), {
    minLength: 1,
    maxLength: 60,
  }),
  alone: fc.array(fc.record({ copy: fc.constantFrom(0, 1), cluster: fc.nat() }), { maxLength: 6 }),
  reservedBits: fc.array(fc.nat(), { maxLength: 4 }),
  partition: fc.constantFrom(0, 3 * SECTOR),
  oddCopies: fc.tuple(fc.boolean(), fc.boolean()),
});

function bootFor(filesystem: 'FAT16' | 'FAT32', clusters: number): FatBootSector {
  const width = filesystem === 'FAT32' ? 4 : 2;
  const fatSectors = Math.ceil(((clusters + 2) * width) / SECTOR);
  const reservedSectors = 1;
  return {
    filesystem,
    bytesPerSector: SECTOR,
    clusterBytes: CLUSTER,
    reservedSectors,
    fats: 2,
    fatSectors,
    clusters,
    dataOffset: (reservedSectors + 2 * fatSectors) * SECTOR,
  };
}

describe('FAT free runs', () => {
  it('are the clusters whose entry is 0 in both copies, however the runs fall', async () => {
    await fc.assert(
      fc.asyncProperty(fatPlan, async ({ filesystem, runs, alone, reservedBits, partition, oddCopies }) => {
        const used = runs.flatMap((r) => Array<boolean>(r.length).fill(r.used));
        const clusters = used.length;
        const boot = bootFor(filesystem, clusters);
        const width = filesystem === 'FAT32' ? 4 : 2;
        const image = Buffer.alloc(partition + boot.dataOffset);
        const fatAt = (copy: number) => partition + (boot.reservedSectors + copy * boot.fatSectors) * SECTOR;
        const write = (copy: number, cluster: number, value: number) =>
          width === 4
            ? image.writeUInt32LE(value, fatAt(copy) + cluster * 4)
            : image.writeUInt16LE(value, fatAt(copy) + cluster * 2);
        used.forEach((u, i) => {
          for (const copy of [0, 1]) if (u) write(copy, i + 2, 0xfff7);
        });
        // One copy alone marks a few more clusters used: either copy, so that no copy's word is the last.
        const usedSomewhere = new Set(alone.map(({ cluster }) => cluster % clusters));
        for (const { copy, cluster } of alone) write(copy, (cluster % clusters) + 2, 0xfff7);
        // FAT32's top 4 bits are reserved: set alone, the entry is still free.
        if (filesystem === 'FAT32')
          for (const n of reservedBits)
            if (!used[n % clusters] && !usedSomewhere.has(n % clusters))
              for (const copy of [0, 1]) write(copy, (n % clusters) + 2, 0xf0000000);

        const found: Extent[] = [];
        // Each copy is one read here; the ones chosen come back one byte into a larger buffer, so that an entry starts off its element size.
        const read = (offset: number, length: number) => {
          const odd = offset >= fatAt(1) ? oddCopies[1] : oddCopies[0];
          const holder = Buffer.alloc(length + 1, 0xaa);
          image.copy(holder, odd ? 1 : 0, offset, offset + length);
          return Promise.resolve(holder.subarray(odd ? 1 : 0, (odd ? 1 : 0) + length));
        };
        await fatFree(read, partition, boot, (e) => found.push(...e));

        const expected: Extent[] = [];
        used.forEach((u, i) => {
          if (!u && !usedSomewhere.has(i)) expected.push([partition + boot.dataOffset + i * CLUSTER, CLUSTER]);
        });
        expect(mergeExtents(found)).toEqual(mergeExtents(expected));
      }),
      { numRuns: 300 },
    );
  });
});

import { expect, it } from 'vitest';
import { BackupGrains } from '../../../user/backup/backup-grains.js';
import { Differences } from '../../../writer/compare.js';
import { GrainHashes } from '../../../writer/grain-hashes.js';
import { allocateJobMemory } from '../../../writer/job-memory.js';

const GRAIN = 256 * 1024;
const LENGTH = 16 * GRAIN + 1000;

/** An image of LENGTH bytes with used bytes in grains 1, 2 and (partly) 9, and the last partial grain. */
function image() {
  const memory = allocateJobMemory(LENGTH);
  const used: [number, number][] = [
    [GRAIN + 100, 2 * GRAIN - 200],
    [9 * GRAIN + 5000, 10],
    [16 * GRAIN, 1000],
  ];
  for (const [offset, size] of used) memory.bytes.fill(0xa5, offset, offset + size);
  const grains = new BackupGrains(GRAIN, used, LENGTH);
  const hashes = new GrainHashes(GRAIN, LENGTH, memory.hash);
  for (const [from, size] of grains.usedRuns(0, LENGTH)) hashes.record(memory.bytes.subarray(from, from + size), from);
  return { bytes: memory.bytes, grains, hashes };
}

it('hashes only the grains that hold used bytes', () => {
  const { grains } = image();
  expect(grains.usedRuns(0, LENGTH)).toEqual([
    [GRAIN, 2 * GRAIN],
    [9 * GRAIN, GRAIN],
    [16 * GRAIN, 1000],
  ]);
  // Relative to the buffer's offset, clipped to it.
  expect(grains.usedRuns(8 * GRAIN, 2 * GRAIN)).toEqual([[GRAIN, GRAIN]]);
});

it('names the offset of a used grain that differs and of free space that is not zero', () => {
  const { bytes, grains, hashes } = image();
  const clean = new Differences();
  grains.check(bytes, 0, hashes, clean);
  expect(clean.count).toBe(0);
  bytes[9 * GRAIN + 5003] = 0;
  bytes[5 * GRAIN + 17] = 1;
  const bad = new Differences();
  grains.check(bytes, 0, hashes, bad);
  expect(bad.noted).toEqual([5 * GRAIN, 9 * GRAIN]);
});

it('reads back all but the free grains the filesystem calls holes, and checks none of those', async () => {
  const { bytes, grains, hashes } = image();
  // The filesystem reports data in grain 5 (free space it allocated anyway) and nowhere else free.
  await grains.findHoles(async (from, to) => (from <= 5 * GRAIN && to > 5 * GRAIN ? [[5 * GRAIN + 4096, 4096]] : []));
  expect(grains.readRuns(0, LENGTH)).toEqual([
    [GRAIN, 2 * GRAIN],
    [5 * GRAIN, GRAIN],
    [9 * GRAIN, GRAIN],
    [16 * GRAIN, 1000],
  ]);
  bytes[12 * GRAIN] = 1; // a hole is not read, so what the buffer holds there is not looked at
  bytes[5 * GRAIN + 4096] = 1;
  const differences = new Differences();
  grains.check(bytes, 0, hashes, differences);
  expect(differences.noted).toEqual([5 * GRAIN]);
});

it('reads every grain back where the filesystem cannot say where its holes are', async () => {
  const { grains } = image();
  await grains.findHoles(async () => null);
  expect(grains.readRuns(0, LENGTH)).toEqual([[0, LENGTH]]);
});

it('never passes bytes it has no grain for, nor a read-back off the grain boundaries', () => {
  const { grains, hashes } = image();
  const past = new Differences();
  grains.check(Buffer.alloc(GRAIN), 17 * GRAIN, hashes, past);
  expect(past.noted).toEqual([17 * GRAIN]);
  expect(() => grains.check(Buffer.alloc(GRAIN), GRAIN + 512, hashes, new Differences())).toThrow(/grain/);
});
